package settlement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
)

// Shape is a documented wire form of the API: the typed schema or the guide examples.
type Shape string

// The two shapes of the API's responses.
const (
	Schema Shape = "schema"
	Guide  Shape = "guide"
)

// ParseShape validates a --response-shape value.
func ParseShape(s string) (Shape, error) {
	switch sh := Shape(strings.ToLower(strings.TrimSpace(s))); sh {
	case Schema, Guide:
		return sh, nil
	}
	return "", fmt.Errorf("response shape must be one of schema, guide (got %q)", s)
}

// PaymentLimits is the create-payment bounds of the contract form this shape serves (the
// numbers are the domain's: domain/limits.go).
func (s Shape) PaymentLimits() domain.PaymentLimits {
	if s == Guide {
		return domain.GuidePaymentLimits
	}
	return domain.SchemaPaymentLimits
}

// SpecYAML is the shape's OpenAPI document: validation source and GET /openapi.yaml.
func (s Shape) SpecYAML(schemaYAML []byte) []byte {
	if s == Guide {
		return gen.GuideOpenAPIYAML
	}
	return schemaYAML
}

// Response is a body rendered in a shape with its status. It satisfies every generated
// strict-server response interface, so handlers stay shape-agnostic.
type Response struct {
	Status int
	Body   any
}

// Encode renders the body to the exact bytes sent (and stored for idempotent replays).
func (r Response) Encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(r.Body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (r Response) write(w http.ResponseWriter) error {
	body, err := r.Encode()
	if err != nil {
		return err
	}
	return Raw{Status: r.Status, Body: body}.write(w)
}

// Raw is a response already encoded: the outcome a create committed together with its
// Idempotency-Key, sent byte for byte as a replay will send it.
type Raw struct {
	Status int
	Body   []byte
}

func (r Raw) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(r.Status)
	_, err := w.Write(r.Body)
	return err
}

// VisitCreatePaymentResponse writes the response.
func (r Raw) VisitCreatePaymentResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitCreateWithdrawalResponse writes the response.
func (r Raw) VisitCreateWithdrawalResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetPaymentResponse writes the response (a payment answered from the cache).
func (r Raw) VisitGetPaymentResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitCreatePaymentResponse writes the response.
func (r Response) VisitCreatePaymentResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitListPaymentsResponse writes the response.
func (r Response) VisitListPaymentsResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetPaymentResponse writes the response.
func (r Response) VisitGetPaymentResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitCreateWithdrawalResponse writes the response.
func (r Response) VisitCreateWithdrawalResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitListWithdrawalsResponse writes the response.
func (r Response) VisitListWithdrawalsResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetWithdrawalResponse writes the response.
func (r Response) VisitGetWithdrawalResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitListChainsResponse writes the response.
func (r Response) VisitListChainsResponse(w http.ResponseWriter) error { return r.write(w) }

// Renderer turns domain results into responses of one shape.
type Renderer struct {
	Shape Shape
	// ClaimURL gives a refund awaiting its address its claim link; nil renders none.
	ClaimURL ClaimURL
}

// CreatedPayment renders the create-payment response.
func (rd Renderer) CreatedPayment(p domain.Payment, secret, url string) Response {
	var payment any = Payment(p)
	if rd.Shape == Guide {
		payment = GuidePayment(p)
	}
	return Response{http.StatusCreated, struct {
		PaymentURL string `json:"paymentUrl"`
		Secret     string `json:"secret"`
		PaymentID  string `json:"paymentId"`
		Payment    any    `json:"payment"`
	}{url, secret, p.ID.String(), payment}}
}

// Payment renders one payment.
func (rd Renderer) Payment(p domain.Payment) Response {
	if rd.Shape == Guide {
		return Response{http.StatusOK, GuidePayment(p)}
	}
	return Response{http.StatusOK, Payment(p)}
}

// PaymentList renders a page of payments.
func (rd Renderer) PaymentList(ps []domain.Payment, page domain.Page) Response {
	data := make([]any, len(ps))
	for i, p := range ps {
		data[i] = rd.Payment(p).Body
	}
	return list(data, page)
}

// Withdrawal renders one withdrawal with the given status (201 on creation, 200 on reads).
func (rd Renderer) Withdrawal(w domain.Withdrawal, status int) Response {
	if rd.Shape == Guide {
		return Response{status, GuideWithdrawal(w, false)}
	}
	return Response{status, Withdrawal(w)}
}

// WithdrawalList renders a page of withdrawals; the guide uses compact receipt forms here.
func (rd Renderer) WithdrawalList(ws []domain.Withdrawal, page domain.Page) Response {
	data := make([]any, len(ws))
	for i, w := range ws {
		if rd.Shape == Guide {
			data[i] = GuideWithdrawal(w, true)
		} else {
			data[i] = Withdrawal(w)
		}
	}
	return list(data, page)
}

// ChainList renders a page of chains.
func (rd Renderer) ChainList(cs []domain.Chain, page domain.Page) Response {
	data := make([]any, len(cs))
	for i, c := range cs {
		if rd.Shape == Guide {
			data[i] = GuideChain(c)
		} else {
			data[i] = Chain(c)
		}
	}
	return list(data, page)
}

func list(data []any, page domain.Page) Response {
	return Response{http.StatusOK, struct {
		Data       []any          `json:"data"`
		Pagination gen.Pagination `json:"pagination"`
	}{data, Pagination(page, len(data))}}
}

// SchemaRequest rewrites a request body validated against the shape's spec into the typed-schema
// form the generated handlers bind: the guide's numeric withdrawal chainId becomes CAIP-2.
// Other bodies pass through unchanged.
func (s Shape) SchemaRequest(operationID string, body []byte) ([]byte, error) {
	if s != Guide || operationID != "createWithdrawal" || len(body) == 0 {
		return body, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body, nil // not an object: validation has already answered
	}
	raw, ok := m["chainId"]
	if !ok {
		return body, nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return body, nil
	}
	// An integral id spelled 8453.0 or 8.453e3 is the same number: write it canonically.
	text := n.String()
	if r, ok := new(big.Rat).SetString(text); ok && r.IsInt() && r.Num().IsInt64() {
		text = r.Num().String()
	}
	caip, err := json.Marshal("eip155:" + text)
	if err != nil {
		return nil, err
	}
	m["chainId"] = caip
	return json.Marshal(m)
}

// Objects renders single payments and withdrawals as GET answers them, encoded: the object of
// an event's webhook body (lifecycle.Renderer).
type Objects struct {
	Shape    Shape
	ClaimURL ClaimURL
}

// Payment encodes a payment as GET /payments/{id} answers it.
func (o Objects) Payment(p domain.Payment) ([]byte, error) { return Renderer(o).Payment(p).Encode() }

// Withdrawal encodes a withdrawal as GET /withdrawals/{id} answers it.
func (o Objects) Withdrawal(w domain.Withdrawal) ([]byte, error) {
	return Renderer(o).Withdrawal(w, http.StatusOK).Encode()
}

// VisitGetCheckoutResponse writes the response.
func (r Response) VisitGetCheckoutResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitSelectCheckoutQuoteResponse writes the response.
func (r Response) VisitSelectCheckoutQuoteResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitRefreshCheckoutQuotesResponse writes the response.
func (r Response) VisitRefreshCheckoutQuotesResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetCheckoutQuoteQRResponse writes the response.
func (r Response) VisitGetCheckoutQuoteQRResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetMerchantBalanceResponse writes the response.
func (r Response) VisitGetMerchantBalanceResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetMerchantWithdrawalConfigResponse writes the response.
func (r Response) VisitGetMerchantWithdrawalConfigResponse(w http.ResponseWriter) error {
	return r.write(w)
}

// VisitUpdateMerchantWithdrawalConfigResponse writes the response.
func (r Response) VisitUpdateMerchantWithdrawalConfigResponse(w http.ResponseWriter) error {
	return r.write(w)
}

// VisitGetMerchantAcceptedAssetsResponse writes the response.
func (r Response) VisitGetMerchantAcceptedAssetsResponse(w http.ResponseWriter) error {
	return r.write(w)
}

// VisitSetMerchantAcceptedAssetsResponse writes the response.
func (r Response) VisitSetMerchantAcceptedAssetsResponse(w http.ResponseWriter) error {
	return r.write(w)
}

// VisitCreateMerchantWithdrawalResponse writes the response.
func (r Raw) VisitCreateMerchantWithdrawalResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitCancelMerchantWithdrawalResponse writes the response.
func (r Raw) VisitCancelMerchantWithdrawalResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitListMerchantWithdrawalsResponse writes the response.
func (r Response) VisitListMerchantWithdrawalsResponse(w http.ResponseWriter) error {
	return r.write(w)
}

// VisitGetMerchantWithdrawalResponse writes the response.
func (r Response) VisitGetMerchantWithdrawalResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitListMerchantPaymentsResponse writes the response.
func (r Response) VisitListMerchantPaymentsResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetMerchantPaymentResponse writes the response (a payment answered from the cache, or
// freshly encoded).
func (r Raw) VisitGetMerchantPaymentResponse(w http.ResponseWriter) error { return r.write(w) }
