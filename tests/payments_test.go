package tests

import (
	"context"
	"encoding/json"
	"github.com/paymentsd/paymentsd/domain"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/gen/client"
	"github.com/paymentsd/paymentsd/payments"
)

func TestCreatePaymentAmountBounds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		key := e.merchant(merchantOpts{}).SecretKey
		api := e.api(key)
		// A fractional cent is not an amount (the typed client cannot even send one).
		r := e.do(http.MethodPost, paymentsPath, key, `{"amount": 400.5, "currency": "USD", "orderId": "o"}`)
		require.Equal(t, 400, r.Status)
		cases := []struct {
			amount int64
			status int
		}{{399, 400}, {400, 201}, {100000000, 201}, {100000001, 400}, {0, 400}, {-1, 400}}
		for _, c := range cases {
			amount := c.amount
			res, err := api.CreatePaymentWithResponse(context.Background(), &client.CreatePaymentParams{},
				client.CreatePaymentJSONRequestBody{Amount: &amount, Currency: client.CurrencyUSD, OrderId: "order-1"})
			require.NoError(t, err)
			require.Equal(t, c.status, res.StatusCode(), "amount %d: %s", c.amount, res.Body)
			if c.status == 201 {
				require.NotNil(t, res.JSON201)
				assert.Equal(t, c.amount, res.JSON201.Payment.AmountInCents)
				continue
			}
			require.NotNil(t, res.JSON400)
			assert.EqualValues(t, "invalid_amount", res.JSON400.Error.Code)
			assert.EqualValues(t, "invalid_request_error", res.JSON400.Error.Type)
			require.NotNil(t, res.JSON400.Error.Param)
			assert.EqualValues(t, "amount", *res.JSON400.Error.Param)
		}
	})
}

func TestCreatePaymentFieldLimits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		key := e.merchant(merchantOpts{deposits: true}).SecretKey
		long := func(n int) string { return strings.Repeat("a", n) }
		url := func(n int) string { return "https://x.example/" + long(n-len("https://x.example/")) }
		cases := []struct {
			field string
			value any
			ok    bool
		}{
			{"orderId", long(255), true}, {"orderId", long(256), false},
			{"customerRefId", long(255), true}, {"customerRefId", long(256), false},
			{"redirectUrl", url(2048), true}, {"redirectUrl", url(2049), false}, {"redirectUrl", "not a url", false},
			{"customMetadata", long(2048), true}, {"customMetadata", long(2049), false},
			{"currency", "EUR", false}, {"type", "refund", false}, {"orderId", "nul\x00byte", false},
		}
		for _, c := range cases {
			r := e.do(http.MethodPost, paymentsPath, key, payment(1000, c.field, c.value))
			if c.ok {
				require.Equal(t, 201, r.Status, "%s len %v: %s", c.field, c.value, r.Body)
				continue
			}
			require.Equal(t, 400, r.Status, "%s=%.20v: %s", c.field, c.value, r.Body)
			code, _, param := r.errorFields(t)
			assert.EqualValues(t, "parameter_invalid", code, c.field)
			assert.Equal(t, c.field, param)
		}
		// Missing required fields name themselves.
		for _, missing := range []string{"orderId", "currency"} {
			body := payment(1000)
			delete(body, missing)
			r := e.do(http.MethodPost, paymentsPath, key, body)
			require.Equal(t, 400, r.Status)
			code, _, param := r.errorFields(t)
			assert.EqualValues(t, "parameter_missing", code)
			assert.Equal(t, missing, param)
		}
		r := e.do(http.MethodPost, paymentsPath, key, map[string]any{"currency": "USD", "orderId": "o"})
		require.Equal(t, 400, r.Status, "a payment without amount: %s", r.Body)
		r = e.do(http.MethodPost, paymentsPath, key, `{"amount": 1000,`)
		require.Equal(t, 400, r.Status, "malformed JSON")
		r = e.do(http.MethodPost, paymentsPath, key, nil)
		require.Equal(t, 400, r.Status, "no body")
	})
}

func TestCreatePaymentShape(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		res := e.createPayment(m.SecretKey, payment(1000, "redirectUrl", "https://shop.example/thanks", "customMetadata", `{"cart":"42"}`))
		p := res["payment"].(map[string]any)
		id := p["id"].(string)
		assert.Equal(t, id, res["paymentId"])
		secret := res["secret"].(string)
		assert.Equal(t, "https://pay.example.test/pay/"+id+"#secret="+secret, res["paymentUrl"], "secret travels in the fragment")
		assert.EqualValues(t, "pending", p["status"])
		assert.Nil(t, p["receipt"])
		assert.Equal(t, m.Merchant.ID.String(), p["merchantId"])
		assert.Equal(t, "Acme Coffee", p["merchantShortName"])
		assert.Equal(t, "USD", p["currency"])
		assert.EqualValues(t, 1000, p["amountInCents"])
		assert.EqualValues(t, 1000, p["amountMerchantNetCents"])
		for _, f := range []string{"convenienceFeeCents", "merchantFeeCents", "swapFeeCents"} {
			assert.Nil(t, p[f], "%s is null until settlement", f)
		}
		quotes := p["quotes"].([]any)
		require.NotEmpty(t, quotes)
		addr := p["depositAddress"].(map[string]any)["address"].(string)
		assert.Equal(t, "0x9858effd232b4033e47d90003d41ec34ecaeda94", addr, "index 0 of the test xpub")
		cheapest := int64(-1)
		seen := map[string]bool{}
		for _, q := range quotes {
			q := q.(map[string]any)
			tok := q["token"].(map[string]any)
			seen[q["chainId"].(string)+"/"+tok["symbol"].(string)] = true
			assert.Equal(t, addr, q["depositAddress"].(map[string]any)["address"])
			due := int64(q["amountDueCents"].(float64))
			if cheapest < 0 || due < cheapest {
				cheapest = due
			}
			checkReadableQuote(t, q, due)
			assert.EqualValues(t, "active", q["status"])
		}
		assert.EqualValues(t, cheapest, p["amountDueCents"], "provisional amount due is the cheapest quote's")
		assert.True(t, seen["eip155:1/USDC"] && seen["eip155:8453/ETH"] && seen["eip155:56/USDT"], "one quote per chain and token: %v", seen)
		// Ethereum's convenience fee is added on its quotes.
		for _, q := range quotes {
			q := q.(map[string]any)
			if q["chainId"] == "eip155:1" {
				assert.EqualValues(t, 1150, q["amountDueCents"])
			}
		}
		// The secret is stored only as a hash.
		var stored []byte
		require.NoError(t, e.rawDB().Raw("SELECT secret_hash FROM payments WHERE id = ?", id).Row().Scan(&stored))
		assert.NotContains(t, string(stored), secret)
		assert.Len(t, stored, 32)
	})
}

func TestDeposits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		off := e.merchant(merchantOpts{name: "No Deposits"})
		r := e.do(http.MethodPost, paymentsPath, off.SecretKey, map[string]any{"type": "deposit", "currency": "USD", "orderId": "d1"})
		require.Equal(t, 403, r.Status)
		code, typ, _ := r.errorFields(t)
		assert.EqualValues(t, "deposits_disabled", code)
		assert.EqualValues(t, "permission_error", typ)

		on := e.merchant(merchantOpts{deposits: true, name: "Deposits"})
		dep := func(ref string) map[string]any {
			body := map[string]any{"type": "deposit", "currency": "USD", "orderId": "d"}
			if ref != "" {
				body["customerRefId"] = ref
			}
			return e.createPayment(on.SecretKey, body)["payment"].(map[string]any)
		}
		a1, a2, b1, anon := dep("alice"), dep("alice"), dep("bob"), dep("")
		addr := func(p map[string]any) string { return p["depositAddress"].(map[string]any)["address"].(string) }
		assert.Equal(t, addr(a1), addr(a2), "same customer, same address")
		assert.NotEqual(t, addr(a1), addr(b1))
		assert.NotEqual(t, addr(a1), addr(anon))
		assert.Nil(t, a1["depositAddress"].(map[string]any)["paymentId"], "a shared address belongs to no single payment")
		assert.Equal(t, anon["id"], anon["depositAddress"].(map[string]any)["paymentId"])
		assert.EqualValues(t, "deposit", a1["type"])
		assert.EqualValues(t, 0, a1["amountInCents"])
		for _, q := range a1["quotes"].([]any) {
			assert.Nil(t, q.(map[string]any)["amountDueCents"], "a deposit's quotes have no fixed amount")
		}
		// Another merchant's customer with the same reference gets its own address.
		other := e.merchant(merchantOpts{deposits: true, name: "Other"})
		o := e.createPayment(other.SecretKey, map[string]any{"type": "deposit", "currency": "USD", "orderId": "d", "customerRefId": "alice"})
		assert.NotEqual(t, addr(a1), addr(o["payment"].(map[string]any)))
		// Deposits ignore amount bounds only when amount is absent; an amount given is still checked.
		r = e.do(http.MethodPost, paymentsPath, on.SecretKey, map[string]any{"type": "deposit", "currency": "USD", "orderId": "d", "amount": 5000})
		require.Equal(t, 201, r.Status)
		assert.EqualValues(t, 0, r.JSON(t)["payment"].(map[string]any)["amountInCents"], "amount is ignored for deposits")
	})
}

func TestGetPaymentAndIsolation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.api(e.merchant(merchantOpts{name: "A"}).SecretKey)
		b := e.api(e.merchant(merchantOpts{name: "B"}).SecretKey)
		amount := int64(500)
		created, err := a.CreatePaymentWithResponse(ctx, &client.CreatePaymentParams{},
			client.CreatePaymentJSONRequestBody{Amount: &amount, Currency: client.CurrencyUSD, OrderId: "o"})
		require.NoError(t, err)
		require.NotNil(t, created.JSON201, string(created.Body))
		id := created.JSON201.PaymentId.String()
		got, err := a.GetPaymentWithResponse(ctx, id)
		require.NoError(t, err)
		require.NotNil(t, got.JSON200, string(got.Body))
		assert.Equal(t, created.JSON201.Payment.Id, got.JSON200.Id)
		assert.Equal(t, created.JSON201.Payment.Quotes, got.JSON200.Quotes, "a read returns what creation returned")
		for _, pid := range []string{id, uuid.NewString(), "not-a-uuid"} {
			r, err := b.GetPaymentWithResponse(ctx, pid)
			require.NoError(t, err)
			require.Equal(t, 404, r.StatusCode(), pid)
			require.NotNil(t, r.JSON404)
			assert.EqualValues(t, "payment_not_found", r.JSON404.Error.Code)
			assert.EqualValues(t, "not_found_error", r.JSON404.Error.Type)
		}
		list, err := b.ListPaymentsWithResponse(ctx, &client.ListPaymentsParams{})
		require.NoError(t, err)
		require.NotNil(t, list.JSON200)
		assert.Zero(t, list.JSON200.Pagination.Total, "B sees none of A's payments")
	})
}

func TestListPayments(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, name: "Zebra Shop"})
		other := e.merchant(merchantOpts{name: "Other"})
		e.createPayment(other.SecretKey, payment(777))
		var ids []string
		for _, amt := range []int64{500, 2500, 1500, 400, 9000} {
			ids = append(ids, e.createPayment(m.SecretKey, payment(amt))["paymentId"].(string))
		}
		dep := e.createPayment(m.SecretKey, map[string]any{"type": "deposit", "currency": "USD", "orderId": "d"})
		depAddr := dep["payment"].(map[string]any)["depositAddress"].(map[string]any)["address"].(string)
		txHash := "0x" + strings.Repeat("ab", 32)
		_, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: uuid.MustParse(ids[1]), TxHash: txHash}, nil)
		require.NoError(t, err)

		api := e.api(m.SecretKey)
		list := func(q string) ([]map[string]any, map[string]any) {
			params := listParams(t, q)
			res, err := api.ListPaymentsWithResponse(context.Background(), &params)
			require.NoError(t, err)
			require.Equal(t, 200, res.StatusCode(), "%s: %s", q, res.Body)
			require.NotNil(t, res.JSON200)
			var body map[string]any
			require.NoError(t, json.Unmarshal(res.Body, &body))
			var out []map[string]any
			for _, p := range body["data"].([]any) {
				out = append(out, p.(map[string]any))
			}
			return out, body["pagination"].(map[string]any)
		}
		amounts := func(ps []map[string]any) []int64 {
			var out []int64
			for _, p := range ps {
				out = append(out, int64(p["amountInCents"].(float64)))
			}
			return out
		}
		all, pg := list("")
		assert.Len(t, all, 6)
		assert.Equal(t, map[string]any{"total": 6.0, "limit": 100.0, "offset": 0.0, "hasMore": false, "totalPages": 1.0, "currentPage": 1.0}, pg)
		assert.Equal(t, dep["paymentId"], all[0]["id"], "newest first by default")

		ps, _ := list("?type=payment&sortBy=amountInCents&sortOrder=ASC")
		assert.Equal(t, []int64{400, 500, 1500, 2500, 9000}, amounts(ps))
		ps, _ = list("?type=payment&sortBy=amountInCents&sortOrder=DESC")
		assert.Equal(t, []int64{9000, 2500, 1500, 500, 400}, amounts(ps))
		ps, _ = list("?type=payment&sortBy=createdAt&sortOrder=ASC")
		assert.Equal(t, []int64{500, 2500, 1500, 400, 9000}, amounts(ps))
		ps, _ = list("?type=deposit")
		assert.Len(t, ps, 1)
		ps, _ = list("?status=completed")
		require.Len(t, ps, 1)
		assert.Equal(t, ids[1], ps[0]["id"])
		assert.NotNil(t, ps[0]["receipt"])
		ps, _ = list("?status=expired")
		assert.Empty(t, ps)

		ps, pg = list("?type=payment&sortBy=amountInCents&sortOrder=ASC&limit=2&offset=2")
		assert.Equal(t, []int64{1500, 2500}, amounts(ps))
		assert.Equal(t, map[string]any{"total": 5.0, "limit": 2.0, "offset": 2.0, "hasMore": true, "totalPages": 3.0, "currentPage": 2.0}, pg)
		ps, pg = list("?type=payment&limit=2&offset=4")
		assert.Len(t, ps, 1)
		assert.Equal(t, false, pg["hasMore"])
		assert.EqualValues(t, 3, pg["currentPage"])
		ps, _ = list("?offset=100")
		assert.Empty(t, ps)

		// Search: payment id, deposit address (any case, prefix), tx hash, sender, short name.
		ps, _ = list("?search=" + ids[2])
		require.Len(t, ps, 1)
		assert.Equal(t, ids[2], ps[0]["id"])
		ps, _ = list("?search=" + strings.ToUpper(depAddr[:2]) + strings.ToUpper(depAddr[2:20]))
		require.Len(t, ps, 1)
		assert.Equal(t, dep["paymentId"], ps[0]["id"])
		ps, _ = list("?search=" + txHash)
		require.Len(t, ps, 1)
		assert.Equal(t, ids[1], ps[0]["id"])
		ps, _ = list("?search=ebra")
		assert.Len(t, ps, 6, "the merchant short name matches all its payments")
		ps, _ = list("?search=nothing-matches%25")
		assert.Empty(t, ps)

		for _, bad := range []string{"?limit=0", "?limit=1001", "?offset=-1", "?sortBy=id", "?sortOrder=up", "?status=done", "?type=refund", "?limit=", "?limit=abc", "?search="} {
			r := e.do(http.MethodGet, paymentsPath+bad, m.SecretKey, nil)
			require.Equal(t, 400, r.Status, bad)
			code, _, param := r.errorFields(t)
			assert.EqualValues(t, "parameter_invalid", code, bad)
			assert.NotEmpty(t, param, bad)
		}
		for _, good := range []string{"?limit=1", "?limit=1000", "?offset=0"} {
			r := e.do(http.MethodGet, paymentsPath+good, m.SecretKey, nil)
			require.Equal(t, 200, r.Status, good)
		}
	})
}

func TestSettleCompletesPaymentAndCreditsBalance(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{withdrawals: true})
		id := uuid.MustParse(e.createPayment(m.SecretKey, payment(10050))["paymentId"].(string))
		tx := "0x" + strings.Repeat("0c", 32)
		p, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: id, TxHash: tx}, nil)
		require.NoError(t, err)
		assert.EqualValues(t, "completed", p.Status)
		r := e.do(http.MethodGet, paymentsPath+"/"+id.String(), m.SecretKey, nil)
		require.Equal(t, 200, r.Status)
		body := r.JSON(t)
		assert.EqualValues(t, 101, body["merchantFeeCents"], "1% of 10050 rounds half up to 101")
		assert.EqualValues(t, 0, body["swapFeeCents"])
		assert.EqualValues(t, 10050-101, body["amountMerchantNetCents"])
		rec := body["receipt"].(map[string]any)
		assert.EqualValues(t, "manual", rec["processedBy"])
		assert.Equal(t, tx, rec["txHash"])
		assert.Equal(t, body["amountDueCents"], rec["selectedQuote"].(map[string]any)["amountDueCents"])
		assert.EqualValues(t, "used", rec["selectedQuote"].(map[string]any)["status"])
		assert.EqualValues(t, float64(body["amountDueCents"].(float64))-10050, body["convenienceFeeCents"])
		balance, err := e.app.Store.Read(context.Background()).AvailableBalance(m.Merchant.ID, domain.ModeLive)
		require.NoError(t, err)
		assert.EqualValues(t, 10050-101, balance)

		_, err = e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: id, TxHash: tx}, nil)
		require.Error(t, err, "a completed payment cannot be settled again")
		balance, _ = e.app.Store.Read(context.Background()).AvailableBalance(m.Merchant.ID, domain.ModeLive)
		assert.EqualValues(t, 10050-101, balance, "and the balance is credited once")
	})
}

// listParams turns a test's readable query string into the generated client's typed parameters.
func listParams(t *testing.T, q string) client.ListPaymentsParams {
	t.Helper()
	var p client.ListPaymentsParams
	vals, err := url.ParseQuery(strings.TrimPrefix(q, "?"))
	require.NoError(t, err)
	for k, v := range vals {
		switch val := v[0]; k {
		case "type":
			pt := client.PaymentType(val)
			p.Type = &pt
		case "status":
			st := client.PaymentStatus(val)
			p.Status = &st
		case "search":
			p.Search = &val
		case "sortBy":
			sb := client.ListPaymentsParamsSortBy(val)
			p.SortBy = &sb
		case "sortOrder":
			so := client.ListPaymentsParamsSortOrder(val)
			p.SortOrder = &so
		case "limit", "offset":
			n, err := strconv.ParseInt(val, 10, 32)
			require.NoError(t, err)
			n32 := int32(n)
			if k == "limit" {
				p.Limit = &n32
			} else {
				p.Offset = &n32
			}
		default:
			t.Fatalf("unknown list parameter %q", k)
		}
	}
	return p
}
