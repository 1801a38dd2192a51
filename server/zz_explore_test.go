package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/paymentsd/paymentsd/gen"
)

func TestExplore(t *testing.T) {
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	v, err := newValidator(doc)
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	for _, c := range []struct{ m, p, ct, body string }{
		{"POST", "/v1/external/secretkey-auth/payments", "application/json", `{"amount":399,"currency":"USD","orderId":"o"}`},
		{"POST", "/v1/external/secretkey-auth/payments", "application/json", `{"amount":100000001,"currency":"USD","orderId":"o"}`},
		{"POST", "/v1/external/secretkey-auth/payments", "application/json", `{"amount":1000,"currency":"USD"}`},
		{"POST", "/v1/external/secretkey-auth/payments", "application/json", `{"currency":"USD","orderId":"o"}`},
		{"POST", "/v1/external/secretkey-auth/payments", "application/json", `{"amount":1000,"currency":"USD","orderId":"o","redirectUrl":"not a uri"}`},
		{"POST", "/v1/external/secretkey-auth/payments", "application/json", `{"amount":1000,"currency":"EUR","orderId":"o"}`},
		{"POST", "/v1/external/secretkey-auth/payments", "text/plain", `{"amount":1000,"currency":"USD","orderId":"o"}`},
		{"POST", "/v1/external/secretkey-auth/payments", "application/json", ``},
		{"POST", "/v1/external/secretkey-auth/payments", "application/json", `{bad`},
		{"POST", "/v1/external/secretkey-auth/withdrawals", "application/json", `{"amountInCents":50,"chainId":"eip155:8453","recipientAddress":"0x9858effd232b4033e47d90003d41ec34ecaeda94"}`},
		{"POST", "/v1/external/secretkey-auth/withdrawals", "application/json", `{"amountInCents":500,"chainId":"eip155:8453","recipientAddress":"0x0000000000000000000000000000000000000000"}`},
		{"POST", "/v1/external/secretkey-auth/withdrawals", "application/json", `{"amountInCents":500,"chainId":"eip155:999","recipientAddress":"0x9858effd232b4033e47d90003d41ec34ecaeda94"}`},
		{"GET", "/v1/external/secretkey-auth/payments?limit=0", "", ``},
		{"GET", "/v1/external/secretkey-auth/payments?limit=", "", ``},
		{"GET", "/v1/external/secretkey-auth/payments?limit=abc", "", ``},
		{"GET", "/v1/external/secretkey-auth/payments?limit=1001", "", ``},
		{"GET", "/v1/external/secretkey-auth/payments?offset=-1", "", ``},
		{"GET", "/v1/external/secretkey-auth/payments?limit=10", "", ``},
		{"GET", "/v1/external/chains?limit=0", "", ``},
		{"GET", "/nope", "", ``},
	} {
		var req *http.Request
		if c.body != "" || c.m == "POST" {
			req = httptest.NewRequest(c.m, c.p, strings.NewReader(c.body))
		} else {
			req = httptest.NewRequest(c.m, c.p, nil)
		}
		if c.ct != "" {
			req.Header.Set("Content-Type", c.ct)
		}
		ctx := e.NewContext(req, httptest.NewRecorder())
		err := v.middleware(func(echo.Context) error { return nil })(ctx)
		ae := classify(err)
		if ae == nil { fmt.Printf("%s %s %s -> nil (err=%v)\n", c.m, c.p, c.body, err); continue }
		fmt.Printf("%s %s %s %s\n   -> %d %s %s param=%q msg=%q\n", c.m, c.p, c.ct, c.body, ae.Status, ae.Type, ae.Code, ae.Param, ae.Message)
	}
}
