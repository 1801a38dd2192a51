package tests

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// The dashboard's data operations of issue 22: payments with their timeline, transfers and
// deliveries, the overview, the profile, the CSV exports — for the token's merchant and mode
// only, every refusal in the documented body (e.do validates each answer against the spec).

func TestDashboardPaymentsForTheTeam(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, name: "A"})
		b := e.merchant(merchantOpts{deposits: true, name: "B"})
		read := bearerHeader(e.token(a.Merchant.ID, dashauth.ScopeRead))
		base := "/v1/merchants/" + a.Merchant.ID.String()
		created := e.createPayment(a.SecretKey, payment(2500, "orderId", "team-1"))
		id := created["paymentId"].(string)
		funded := e.fundOn(a.SecretKey, 1000, "eip155:8453")

		r := e.do(http.MethodGet, base+"/payments?limit=1&sortOrder=ASC", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		list := r.JSON(t)
		assert.EqualValues(t, 2, list["pagination"].(map[string]any)["total"])
		assert.Equal(t, id, list["data"].([]any)[0].(map[string]any)["id"])
		r = e.do(http.MethodGet, base+"/payments?status=completed", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, funded, r.JSON(t)["data"].([]any)[0].(map[string]any)["id"])
		r = e.do(http.MethodGet, base+"/payments?limit=0", "", nil, read...)
		assert.Equal(t, http.StatusBadRequest, r.Status, "the secret-key list's validation")

		// The read is the secret-key read.
		secretRead := e.do(http.MethodGet, paymentsPath+"/"+id, a.SecretKey, nil)
		r = e.do(http.MethodGet, base+"/payments/"+id, "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.JSONEq(t, string(secretRead.Body), string(r.Body))

		r = e.do(http.MethodGet, base+"/payments/"+funded+"/events", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		evs := r.JSON(t)["data"].([]any)
		require.GreaterOrEqual(t, len(evs), 2)
		first, last := evs[0].(map[string]any), evs[len(evs)-1].(map[string]any)
		assert.Equal(t, "payment.created", first["type"])
		assert.Equal(t, "pending", first["data"].(map[string]any)["status"])
		assert.Equal(t, "payment.completed", last["type"])
		assert.Equal(t, "0x"+strings.Repeat("2", 64), last["data"].(map[string]any)["txHash"])

		// A transfer recorded for the payment, with its explorer link.
		var addr struct {
			ID      uuid.UUID
			Address string
		}
		require.NoError(t, e.rawDB().Raw("SELECT a.id, a.address FROM deposit_addresses a JOIN payments p ON p.deposit_address_id = a.id WHERE p.id = ?", id).
			Scan(&addr).Error)
		addrID, depositAddr := addr.ID, addr.Address
		pid := uuid.MustParse(id)
		tr := store.Transfer{ID: uuid.Must(uuid.NewV7()), ChainID: 8453, TxHash: "0x" + strings.Repeat("ab", 32), LogIndex: 3,
			BlockNumber: 100, BlockHash: "0x" + strings.Repeat("cd", 32), BlockTime: time.Now().UTC().Truncate(time.Second),
			TokenID: "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", From: "0x" + strings.Repeat("11", 20),
			To: depositAddr, Amount: decimal.NewFromInt(25_000_000), DepositAddressID: addrID, PaymentID: &pid,
			Status: store.TransferSeen, CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
		require.NoError(t, e.app.Store.InTx(context.Background(), func(tx *store.Tx) error { _, err := tx.RecordTransfer(tr); return err }))
		r = e.do(http.MethodGet, base+"/payments/"+id+"/transfers", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		ts := r.JSON(t)["data"].([]any)
		require.Len(t, ts, 1, string(r.Body))
		got := ts[0].(map[string]any)
		assert.Equal(t, "eip155:8453", got["chainId"])
		assert.Equal(t, "25000000", got["amountAsset"])
		assert.Equal(t, "25", got["amount"])
		assert.Equal(t, "USDC", got["tokenSymbol"])
		assert.Equal(t, "seen", got["status"])
		if u, ok := got["explorerUrl"].(string); ok {
			assert.True(t, strings.HasSuffix(u, "/tx/"+tr.TxHash), u)
		}

		r = e.do(http.MethodGet, base+"/payments/"+id+"/deliveries?limit=5", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Empty(t, r.JSON(t)["data"], "no endpoint: no delivery")

		// Another merchant's token: 403; its own path with A's payment: 404; another mode: 404.
		bRead := bearerHeader(e.token(b.Merchant.ID, dashauth.ScopeRead))
		r = e.do(http.MethodGet, base+"/payments/"+id, "", nil, bRead...)
		assert.Equal(t, http.StatusForbidden, r.Status)
		bBase := "/v1/merchants/" + b.Merchant.ID.String()
		testRead := bearerHeader(e.modeToken(a.Merchant.ID, domain.ModeTest, dashauth.ScopeRead))
		for _, sub := range []string{"", "/events", "/transfers", "/deliveries"} {
			r = e.do(http.MethodGet, bBase+"/payments/"+id+sub, "", nil, bRead...)
			assert.Equal(t, http.StatusNotFound, r.Status, "B's path, A's payment%s", sub)
			code, _, _ := r.errorFields(t)
			assert.Equal(t, "payment_not_found", code)
			r = e.do(http.MethodGet, base+"/payments/"+id+sub, "", nil, testRead...)
			assert.Equal(t, http.StatusNotFound, r.Status, "a test token, a live payment%s", sub)
			r = e.do(http.MethodGet, base+"/payments/not-a-uuid"+sub, "", nil, read...)
			assert.Equal(t, http.StatusNotFound, r.Status, "a malformed id%s", sub)
		}
		r = e.do(http.MethodGet, bBase+"/payments", "", nil, bRead...)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Empty(t, r.JSON(t)["data"])
		r = e.do(http.MethodGet, base+"/payments", "", nil, testRead...)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Empty(t, r.JSON(t)["data"], "a test token sees no live payment")
		r = e.do(http.MethodGet, base+"/payments", "", nil)
		assert.Equal(t, http.StatusUnauthorized, r.Status)
	})
}

func TestDashboardOverview(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, name: "A"})
		base := "/v1/merchants/" + a.Merchant.ID.String()
		read := bearerHeader(e.token(a.Merchant.ID, dashauth.ScopeRead))
		e.fundOn(a.SecretKey, 1000, "eip155:8453")
		e.fundOn(a.SecretKey, 2000, "eip155:8453")
		e.createPayment(a.SecretKey, payment(2500))

		r := e.do(http.MethodGet, base+"/overview", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		o := r.JSON(t)
		assert.Equal(t, "live", o["mode"])
		assert.EqualValues(t, e.balance(a.Merchant.ID), o["availableInCents"])
		st := o["paymentsByStatus"].(map[string]any)
		assert.EqualValues(t, 2, st["completed"])
		assert.EqualValues(t, 1, st["pending"])
		assert.EqualValues(t, 0, st["expired"], "every status present")
		bt := o["balancesByToken"].([]any)
		require.Len(t, bt, 1)
		tok := bt[0].(map[string]any)
		assert.Equal(t, "eip155:8453", tok["chainId"])
		assert.Equal(t, "USDC", tok["tokenSymbol"])
		assert.EqualValues(t, 2, tok["payments"])
		assert.EqualValues(t, e.balance(a.Merchant.ID), tok["receivedInCents"])
		assert.Equal(t, "30320000", tok["receivedAmountAsset"], "1011 + 2021 cents of USDC, exactly")
		vol := o["volume30d"].([]any)
		require.Len(t, vol, 30)
		today := time.Now().UTC().Format(time.DateOnly)
		lastDay := vol[29].(map[string]any)
		assert.Equal(t, today, lastDay["date"])
		assert.EqualValues(t, 2, lastDay["count"])
		assert.EqualValues(t, e.balance(a.Merchant.ID), lastDay["amountInCents"])
		assert.Equal(t, time.Now().UTC().AddDate(0, 0, -29).Format(time.DateOnly), vol[0].(map[string]any)["date"])
		assert.EqualValues(t, 0, vol[0].(map[string]any)["count"], "a day without payments is a zero")

		r = e.do(http.MethodGet, base+"/overview", "", nil, bearerHeader(e.modeToken(a.Merchant.ID, domain.ModeTest, dashauth.ScopeRead))...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		o = r.JSON(t)
		assert.Equal(t, "test", o["mode"])
		assert.EqualValues(t, 0, o["availableInCents"])
		assert.Empty(t, o["balancesByToken"])
		assert.EqualValues(t, 0, o["paymentsByStatus"].(map[string]any)["completed"])

		b := e.merchant(merchantOpts{name: "B"})
		r = e.do(http.MethodGet, base+"/overview", "", nil, bearerHeader(e.token(b.Merchant.ID, dashauth.ScopeRead))...)
		assert.Equal(t, http.StatusForbidden, r.Status)
	})
}

func TestDashboardProfileBrandsTheCheckout(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, name: "Acme"})
		base := "/v1/merchants/" + a.Merchant.ID.String()
		read := bearerHeader(e.token(a.Merchant.ID, dashauth.ScopeRead))
		write := bearerHeader(e.token(a.Merchant.ID, dashauth.ScopeWrite))

		r := e.do(http.MethodGet, base+"/profile", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "Acme", r.JSON(t)["displayName"], "the short name until one is set")
		assert.Nil(t, r.JSON(t)["accentColor"])

		r = e.do(http.MethodPatch, base+"/profile", "", map[string]any{"displayName": "Acme Coffee"}, read...)
		assert.Equal(t, http.StatusForbidden, r.Status, "a read token cannot write")

		// Create the payment first: its checkout must show a later change too.
		created := e.createPayment(a.SecretKey, payment(2500))
		id, secret := created["paymentId"].(string), created["secret"].(string)
		patch := map[string]any{"displayName": "  Acme Coffee ☕ ", "logoUrl": "https://acme.example/logo.png", "accentColor": "#0A7CFF"}
		r = e.do(http.MethodPatch, base+"/profile", "", patch, write...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		p := r.JSON(t)
		assert.Equal(t, "Acme Coffee ☕", p["displayName"], "trimmed")
		assert.Equal(t, "https://acme.example/logo.png", p["logoUrl"])
		assert.Equal(t, "#0a7cff", p["accentColor"], "lower-cased")

		r = e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		v := r.JSON(t)
		assert.Equal(t, "Acme Coffee ☕", v["merchantDisplayName"])
		assert.Equal(t, "Acme", v["merchantName"])
		assert.Equal(t, "#0a7cff", v["accentColor"])
		assert.Equal(t, "https://acme.example/logo.png", v["merchantLogoUrl"])
		// The secret-key read shows the new logo at once (the payment cache keys on it).
		r = e.do(http.MethodGet, paymentsPath+"/"+id, a.SecretKey, nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, "https://acme.example/logo.png", r.JSON(t)["merchantLogoUrl"])

		for name, bad := range map[string]map[string]any{
			"empty name":        {"displayName": ""},
			"blank name":        {"displayName": "   "},
			"81 characters":     {"displayName": strings.Repeat("é", 81)},
			"control character": {"displayName": "Acme\u0007"},
			"bidi override":     {"displayName": "Acme\u202e"},
			"http logo":         {"logoUrl": "http://acme.example/logo.png"},
			"javascript logo":   {"logoUrl": "javascript:alert(1)"},
			"long logo":         {"logoUrl": "https://acme.example/" + strings.Repeat("a", 2048)},
			"named colour":      {"accentColor": "red"},
			"short colour":      {"accentColor": "#fff"},
			"css injection":     {"accentColor": "#000000;background:url(x)"},
			"unknown member":    {"colour": "#000000"},
			"number name":       {"displayName": 5},
		} {
			r = e.do(http.MethodPatch, base+"/profile", "", bad, write...)
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", name, r.Body)
		}
		r = e.do(http.MethodPatch, base+"/profile", "", map[string]any{"displayName": strings.Repeat("é", 80)}, write...)
		assert.Equal(t, http.StatusOK, r.Status, "80 characters: %s", r.Body)

		r = e.do(http.MethodPatch, base+"/profile", "", map[string]any{"logoUrl": nil, "accentColor": nil}, write...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Nil(t, r.JSON(t)["logoUrl"])
		assert.Nil(t, r.JSON(t)["accentColor"])
		r = e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Nil(t, r.JSON(t)["accentColor"])

		b := e.merchant(merchantOpts{name: "B"})
		r = e.do(http.MethodPatch, base+"/profile", "", map[string]any{"displayName": "Mine"},
			bearerHeader(e.token(b.Merchant.ID, dashauth.ScopeWrite))...)
		assert.Equal(t, http.StatusForbidden, r.Status)
	})
}

// exportCSV fetches an export and parses it.
func (e *env) exportCSV(path string, hdr []string) ([][]string, response) {
	e.t.Helper()
	r := e.do(http.MethodGet, path, "", nil, hdr...)
	if r.Status != http.StatusOK {
		return nil, r
	}
	rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	require.NoError(e.t, err, string(r.Body))
	return rows, r
}

func TestDashboardExportPaymentsCSV(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "A"})
		base := "/v1/merchants/" + a.Merchant.ID.String()
		read := bearerHeader(e.token(a.Merchant.ID, dashauth.ScopeRead))
		hostile := []string{"=cmd|' /C calc'!A0", "+1", "-5", "@x", "\tx", "\rx", `quo"te`, "line\nbreak", "plain"}
		ids := map[string]string{}
		for _, o := range hostile {
			id := e.createPayment(a.SecretKey, payment(2500))["paymentId"].(string)
			// Stored directly: the API refuses control characters in an orderId, an import may not have.
			require.NoError(t, e.rawDB().Exec("UPDATE payments SET order_id = ? WHERE id = ?", o, id).Error)
			ids[id] = o
		}
		funded := e.fundOn(a.SecretKey, 1000, "eip155:8453")
		from := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
		to := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)

		rows, r := e.exportCSV(base+"/exports/payments.csv?from="+from+"&to="+to, read)
		require.NotNil(t, rows, "%d %s", r.Status, r.Body)
		assert.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
		assert.True(t, strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="payments-`), r.Header.Get("Content-Disposition"))
		assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		require.Len(t, rows, 1+len(hostile)+1)
		head := rows[0]
		col := map[string]int{}
		for i, h := range head {
			col[h] = i
		}
		for _, row := range rows {
			for _, cell := range row {
				if cell != "" {
					assert.NotContains(t, "=+-@\t\r", cell[:1], "cell %q", cell)
				}
			}
		}
		for _, row := range rows[1:] {
			id := row[col["id"]]
			if id == funded {
				assert.Equal(t, "completed", row[col["status"]])
				assert.Equal(t, "eip155:8453", row[col["chainId"]])
				assert.Equal(t, "USDC", row[col["tokenSymbol"]])
				assert.Equal(t, "10110000", row[col["amountAsset"]])
				assert.Equal(t, "10.11", row[col["amountAssetUnits"]])
				assert.Equal(t, "0x"+strings.Repeat("2", 64), row[col["txHash"]])
				continue
			}
			o, ok := ids[id]
			require.True(t, ok, id)
			want := o
			if strings.ContainsAny(o[:1], "=+-@\t\r") {
				want = "'" + o
			}
			assert.Equal(t, want, row[col["orderId"]], "orderId %q", o)
			assert.Equal(t, "2500", row[col["amountInCents"]])
			assert.Equal(t, "pending", row[col["status"]])
		}

		// Dates; the range is [from, to).
		rows, r = e.exportCSV(base+"/exports/payments.csv?from="+time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)+
			"&to="+time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly), read)
		require.NotNil(t, rows, string(r.Body))
		assert.Len(t, rows, 1, "only the header")
		rows, r = e.exportCSV(base+"/exports/payments.csv?from=2025-01-01&to=2026-01-02", read)
		require.NotNil(t, rows, "366 days is allowed: %s", r.Body)

		// Another mode's token sees none of them.
		rows, _ = e.exportCSV(base+"/exports/payments.csv?from="+from+"&to="+to,
			bearerHeader(e.modeToken(a.Merchant.ID, domain.ModeTest, dashauth.ScopeRead)))
		assert.Len(t, rows, 1)

		for name, q := range map[string]string{
			"no from":         "to=" + to,
			"no to":           "from=" + from,
			"bad from":        "from=yesterday&to=" + to,
			"bad to":          "from=" + from + "&to=2026-13-01",
			"to before from":  "from=" + to + "&to=" + from,
			"empty range":     "from=" + from + "&to=" + from,
			"367 days":        "from=2025-01-01&to=2026-01-03",
			"empty from":      "from=&to=" + to,
			"timezone offset": "from=2026-01-01T00:00:00%2B01:00&to=2027-01-02T00:00:00Z",
		} {
			r = e.do(http.MethodGet, base+"/exports/payments.csv?"+q, "", nil, read...)
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", name, r.Body)
			assert.Equal(t, "application/json", strings.Split(r.Header.Get("Content-Type"), ";")[0])
		}

		b := e.merchant(merchantOpts{name: "B"})
		r = e.do(http.MethodGet, base+"/exports/payments.csv?from="+from+"&to="+to, "", nil, bearerHeader(e.token(b.Merchant.ID, dashauth.ScopeRead))...)
		assert.Equal(t, http.StatusForbidden, r.Status)

		// Withdrawals.
		e.fund(a.SecretKey, 5000)
		w := e.do(http.MethodPost, withdrawalsPath, a.SecretKey, withdrawal(1000, "orderId", "-2+3"))
		require.Equal(t, http.StatusCreated, w.Status, string(w.Body))
		rows, r = e.exportCSV(base+"/exports/withdrawals.csv?from="+from+"&to="+to, read)
		require.NotNil(t, rows, "%d %s", r.Status, r.Body)
		assert.True(t, strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="withdrawals-`))
		require.Len(t, rows, 2)
		assert.Equal(t, "id", rows[0][0])
		assert.Equal(t, w.JSON(t)["id"], rows[1][0])
		assert.Contains(t, rows[1], "'-2+3")
		assert.Contains(t, rows[1], "pending")
		assert.Contains(t, rows[1], "1000")
		r = e.do(http.MethodGet, base+"/exports/withdrawals.csv?from=x&to=y", "", nil, read...)
		assert.Equal(t, http.StatusBadRequest, r.Status)
	})
}

// The test event and a payment's deliveries, through the API: the endpoint of the token's merchant
// and mode only; a read token cannot send.
func TestDashboardWebhookTestAndPaymentDeliveries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, name: "A"})
		b := e.merchant(merchantOpts{name: "B"})
		read := bearerHeader(e.token(a.Merchant.ID, dashauth.ScopeRead))
		write := bearerHeader(e.token(a.Merchant.ID, dashauth.ScopeWrite))
		base := "/v1/merchants/" + a.Merchant.ID.String()
		r := e.do(http.MethodPost, base+"/webhooks", "", map[string]any{"url": "https://93.184.215.14/hook", "events": []string{"payment.created"}}, write...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		epID := r.JSON(t)["endpoint"].(map[string]any)["id"].(string)

		r = e.do(http.MethodPost, base+"/webhooks/"+epID+"/test", "", nil, write...)
		require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
		sent := r.JSON(t)
		eventID := sent["eventId"].(string)
		assert.True(t, strings.HasPrefix(eventID, "evt_"))
		r = e.do(http.MethodGet, base+"/webhooks/deliveries?eventId="+eventID, "", nil, write...) // developers:read
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		ds := r.JSON(t)["data"].([]any)
		require.Len(t, ds, 1)
		assert.Equal(t, sent["deliveryId"], ds[0].(map[string]any)["id"])
		assert.Equal(t, epID, ds[0].(map[string]any)["endpointId"])

		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPost, base+"/webhooks/"+epID+"/test", "", nil, read...).Status, "a read token")
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodPost, base+"/webhooks/"+uuid.NewString()+"/test", "", nil, write...).Status)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodPost, base+"/webhooks/nope/test", "", nil, write...).Status)
		testWrite := bearerHeader(e.modeToken(a.Merchant.ID, domain.ModeTest, dashauth.ScopeWrite))
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodPost, base+"/webhooks/"+epID+"/test", "", nil, testWrite...).Status, "another mode's endpoint")
		bBase := "/v1/merchants/" + b.Merchant.ID.String()
		r = e.do(http.MethodPost, bBase+"/webhooks/"+epID+"/test", "", nil, bearerHeader(e.token(b.Merchant.ID, dashauth.ScopeWrite))...)
		assert.Equal(t, http.StatusNotFound, r.Status, "another merchant's endpoint")

		// A payment's deliveries: its payment.created, not the test event nor another payment's.
		p1 := e.createPayment(a.SecretKey, payment(2500))["paymentId"].(string)
		e.createPayment(a.SecretKey, payment(2600))
		r = e.do(http.MethodGet, base+"/payments/"+p1+"/deliveries", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		ds = r.JSON(t)["data"].([]any)
		require.Len(t, ds, 1, string(r.Body))
		evID := ds[0].(map[string]any)["eventId"].(string)
		r = e.do(http.MethodGet, base+"/payments/"+p1+"/events", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, evID, r.JSON(t)["data"].([]any)[0].(map[string]any)["id"])
		r = e.do(http.MethodGet, base+"/payments/"+p1+"/deliveries?limit=0", "", nil, read...)
		assert.Equal(t, http.StatusBadRequest, r.Status)
	})
}

// The withdrawal estimate refuses what creating the withdrawal refuses; with no payout manager
// for the chain in this process (no RPC here) a valid request is 503 no_chain_available. The
// estimate itself is tested against a devnet in the payouts package.
func TestDashboardWithdrawalEstimate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{withdrawals: true, name: "A"})
		off := e.merchant(merchantOpts{name: "Off"})
		base := "/v1/merchants/" + a.Merchant.ID.String() + "/withdrawals/estimate"
		read := bearerHeader(e.token(a.Merchant.ID, dashauth.ScopeRead))
		r := e.do(http.MethodGet, base+"?amountInCents=1000&chainId=eip155:8453", "", nil, read...)
		assert.Equal(t, http.StatusServiceUnavailable, r.Status, string(r.Body))
		code, _, _ := r.errorFields(t)
		assert.Equal(t, "no_chain_available", code)
		for q, want := range map[string]string{
			"amountInCents=1&chainId=eip155:8453":         "invalid_amount",
			"amountInCents=999999999&chainId=eip155:8453": "invalid_amount",
			"amountInCents=1000&chainId=eip155:999999":    "parameter_invalid",
			"amountInCents=1000&chainId=base":             "parameter_invalid",
			"amountInCents=abc&chainId=eip155:8453":       "parameter_invalid",
			"chainId=eip155:8453":                         "parameter_missing",
			"amountInCents=1000&chainId=eip155:84532":     "chain_not_supported",
		} {
			r = e.do(http.MethodGet, base+"?"+q, "", nil, read...)
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", q, r.Body)
			if want != "" {
				code, _, _ := r.errorFields(t)
				assert.Contains(t, []string{want, "parameter_invalid"}, code, q)
			}
		}
		r = e.do(http.MethodGet, base+"?amountInCents=1000&chainId=eip155:8453", "", nil,
			bearerHeader(e.modeToken(a.Merchant.ID, domain.ModeTest, dashauth.ScopeRead))...)
		assert.Equal(t, http.StatusBadRequest, r.Status, "a test token, a mainnet chain: %s", r.Body)
		r = e.do(http.MethodGet, "/v1/merchants/"+off.Merchant.ID.String()+"/withdrawals/estimate?amountInCents=1000&chainId=eip155:8453", "", nil,
			bearerHeader(e.token(off.Merchant.ID, dashauth.ScopeRead))...)
		assert.Equal(t, http.StatusForbidden, r.Status)
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "withdrawals_disabled", code)
		r = e.do(http.MethodGet, base+"?amountInCents=1000&chainId=eip155:8453", "", nil, bearerHeader(e.token(off.Merchant.ID, dashauth.ScopeRead))...)
		assert.Equal(t, http.StatusForbidden, r.Status, "another merchant's token")
	})
}
