package tests

import (
	"context"
	"github.com/paymentsd/paymentsd/domain"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/gen/client"
	"github.com/paymentsd/paymentsd/settlement"
)

// recipient is an address nobody here controls (0x9858…, the spec's example, is the test xpub's first deposit
// address: withdrawing to it is refused, see TestWithdrawalRecipientsTheServiceControls).
const recipient = "0x5aeda56215b167893e80b4fe645ba6d5bab767de"

func withdrawal(amount int64, extra ...any) map[string]any {
	m := map[string]any{"amountInCents": amount, "chainId": "eip155:8453", "recipientAddress": recipient}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

// fund credits a merchant's live balance with at least cents by settling a deposit of USDC on
// Base (fundOn).
func (e *env) fund(key string, cents int64) { e.fundOn(key, cents, "eip155:8453") }

func (e *env) balance(m uuid.UUID) int64 { return e.modeBalance(m, domain.ModeLive) }

func TestWithdrawalBounds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		e.fund(m.SecretKey, 250_000_000)
		start := e.balance(m.Merchant.ID)
		require.GreaterOrEqual(t, start, int64(200_000_100))
		cases := []struct {
			amount int64
			status int
		}{{99, 400}, {100, 201}, {100000000, 201}, {100000001, 400}, {0, 400}}
		spent := int64(0)
		api := e.api(m.SecretKey)
		for _, c := range cases {
			res, err := api.CreateWithdrawalWithResponse(context.Background(), &client.CreateWithdrawalParams{},
				client.CreateWithdrawalJSONRequestBody{AmountInCents: c.amount, ChainId: "eip155:8453", RecipientAddress: recipient})
			require.NoError(t, err)
			require.Equal(t, c.status, res.StatusCode(), "amount %d: %s", c.amount, res.Body)
			if c.status == 201 {
				spent += c.amount
				w := res.JSON201
				require.NotNil(t, w)
				assert.Equal(t, client.WithdrawalStatusPending, w.Status)
				assert.Nil(t, w.ErrorMessage)
				assert.Nil(t, w.Receipt)
				assert.Contains(t, string(res.Body), `"errorMessage":null`, "null, not absent, on creation")
				assert.Equal(t, client.CurrencyUSD, w.Currency)
				assert.Equal(t, "eip155:8453", w.ChainId)
				assert.Equal(t, w.CreatedAt, w.UpdatedAt)
				continue
			}
			require.NotNil(t, res.JSON400)
			assert.EqualValues(t, "invalid_amount", res.JSON400.Error.Code)
			assert.Equal(t, "amountInCents", *res.JSON400.Error.Param)
		}
		assert.Equal(t, start-spent, e.balance(m.Merchant.ID), "failed requests change nothing")
	})
}

func TestWithdrawalValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		off := e.merchant(merchantOpts{name: "No Withdrawals"})
		r := e.do(http.MethodPost, withdrawalsPath, off.SecretKey, withdrawal(500))
		require.Equal(t, 403, r.Status)
		code, typ, _ := r.errorFields(t)
		assert.EqualValues(t, "withdrawals_disabled", code)
		assert.EqualValues(t, "permission_error", typ)

		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		r = e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(500))
		require.Equal(t, 409, r.Status, "a valid request the balance refuses: the account's state, not the input")
		code, _, param := r.errorFields(t)
		assert.EqualValues(t, "insufficient_balance", code)
		assert.Equal(t, "amountInCents", param)

		e.fund(m.SecretKey, 10_000)
		funded := e.balance(m.Merchant.ID)
		// Narrow the merchant's configuration to Base only: Ethereum is then not supported.
		cfg, err := e.app.Merchants.WithdrawalConfig(context.Background(), m.Merchant.ID)
		require.NoError(t, err)
		cfg.ChainIDs = []int64{8453}
		require.NoError(t, e.app.Merchants.SetWithdrawalConfig(context.Background(), cfg))
		r = e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(500, "chainId", "eip155:1"))
		require.Equal(t, 400, r.Status, string(r.Body))
		code, _, param = r.errorFields(t)
		assert.EqualValues(t, "chain_not_supported", code)
		assert.Equal(t, "chainId", param)
		// The devnet is a chain the service knows (in the enum) but this process does not serve it.
		r = e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(500, "chainId", "eip155:1337"))
		require.Equal(t, 400, r.Status, string(r.Body))
		code, _, param = r.errorFields(t)
		assert.EqualValues(t, "chain_not_supported", code, "the devnet passes the schema and is refused by the service")
		assert.Equal(t, "chainId", param)

		bad := []struct {
			field string
			value any
		}{
			{"chainId", "eip155:999999"}, {"chainId", strings.Repeat("9", 42)}, {"chainId", 8453},
			{"recipientAddress", "0x123"}, {"recipientAddress", "9858effd232b4033e47d90003d41ec34ecaeda94"},
			{"recipientAddress", "0x0000000000000000000000000000000000000000"},
			{"orderId", strings.Repeat("o", 256)}, {"customMetadata", strings.Repeat("m", 2049)}, {"currency", "EUR"},
		}
		for _, b := range bad {
			r := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(500, b.field, b.value))
			require.Equal(t, 400, r.Status, "%s=%v: %s", b.field, b.value, r.Body)
			code, _, param := r.errorFields(t)
			assert.EqualValues(t, "parameter_invalid", code, b.field)
			assert.Equal(t, b.field, param)
		}
		for _, missing := range []string{"amountInCents", "chainId", "recipientAddress"} {
			body := withdrawal(500)
			delete(body, missing)
			r := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, body)
			require.Equal(t, 400, r.Status)
			code, _, param := r.errorFields(t)
			assert.EqualValues(t, "parameter_missing", code)
			assert.Equal(t, missing, param)
		}
		assert.Equal(t, funded, e.balance(m.Merchant.ID), "no rejected request moved money")

		// Upper-case and mixed-case addresses are accepted and stored lowercase; limits at the edge pass.
		r = e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(100, "recipientAddress", "0x5AEDA56215b167893e80B4fE645BA6d5Bab767DE",
			"orderId", strings.Repeat("o", 255), "customMetadata", strings.Repeat("m", 2048), "currency", "USD"))
		require.Equal(t, 201, r.Status, string(r.Body))
		w := r.JSON(t)
		assert.Equal(t, recipient, w["recipientAddress"])
		assert.Equal(t, strings.Repeat("o", 255), w["orderId"])
	})
}

func TestWithdrawalReadsAndIsolation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "A"})
		b := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "B"})
		e.fund(a.SecretKey, 5_000)
		ctx := context.Background()
		apiA, apiB := e.api(a.SecretKey), e.api(b.SecretKey)
		var ids []string
		for _, amt := range []int64{100, 200, 300} {
			res, err := apiA.CreateWithdrawalWithResponse(ctx, &client.CreateWithdrawalParams{},
				client.CreateWithdrawalJSONRequestBody{AmountInCents: amt, ChainId: "eip155:8453", RecipientAddress: recipient})
			require.NoError(t, err)
			require.NotNil(t, res.JSON201, string(res.Body))
			ids = append(ids, res.JSON201.Id.String())
		}
		got, err := apiA.GetWithdrawalWithResponse(ctx, ids[0])
		require.NoError(t, err)
		require.NotNil(t, got.JSON200)
		assert.EqualValues(t, 100, got.JSON200.AmountInCents)
		for _, p := range []string{ids[0], uuid.NewString(), "nope"} {
			res, err := apiB.GetWithdrawalWithResponse(ctx, p)
			require.NoError(t, err)
			require.NotNil(t, res.JSON404, p)
			assert.EqualValues(t, "withdrawal_not_found", res.JSON404.Error.Code)
		}
		var r response
		r = e.do(http.MethodGet, withdrawalsPath+"?limit=2", a.SecretKey, nil)
		require.Equal(t, 200, r.Status)
		body := r.JSON(t)
		data := body["data"].([]any)
		require.Len(t, data, 2)
		assert.Equal(t, ids[2], data[0].(map[string]any)["id"], "newest first")
		assert.Equal(t, map[string]any{"total": 3.0, "limit": 2.0, "offset": 0.0, "hasMore": true, "totalPages": 2.0, "currentPage": 1.0}, body["pagination"])
		r = e.do(http.MethodGet, withdrawalsPath+"?status=completed", a.SecretKey, nil)
		assert.Empty(t, r.JSON(t)["data"])
		r = e.do(http.MethodGet, withdrawalsPath+"?status=pending&offset=1&limit=1000", a.SecretKey, nil)
		assert.Len(t, r.JSON(t)["data"], 2)
		r = e.do(http.MethodGet, withdrawalsPath, b.SecretKey, nil)
		assert.Empty(t, r.JSON(t)["data"])
		for _, bad := range []string{"?limit=0", "?limit=1001", "?offset=-1", "?status=expired"} {
			r := e.do(http.MethodGet, withdrawalsPath+bad, a.SecretKey, nil)
			require.Equal(t, 400, r.Status, bad)
		}
	})
}

// TestConcurrentWithdrawalsNeverOverdraw fires parallel withdrawals whose sum exceeds the
// balance: exactly as many succeed as the balance covers, and the balance never goes negative.
func TestConcurrentWithdrawalsNeverOverdraw(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		e.fund(m.SecretKey, 1_000)
		start := e.balance(m.Merchant.ID)
		const n = 24
		var wg sync.WaitGroup
		statuses := make([]int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(100)).Status
			}()
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			require.Contains(t, []int{201, 409}, s)
			if s == 201 {
				created++
			}
		}
		assert.Equal(t, int(start/100), created, "exactly the covered withdrawals succeed")
		assert.Equal(t, start-int64(created)*100, e.balance(m.Merchant.ID))
		assert.GreaterOrEqual(t, e.balance(m.Merchant.ID), int64(0))
	})
}

// TestWithdrawalChainIsAnyCatalogueChain: the withdrawal chainId of both specs lists no chains
// (an operator's catalogue file adds chains with no code, so no enum can list them): any
// catalogue chain passes the schema, and a chain outside the catalogue is refused by the service
// with parameter_invalid, as the schema's enum refused it before.
func TestWithdrawalChainIsAnyCatalogueChain(t *testing.T) {
	e := newEnv(t, "sqlite")
	for file, id := range map[string]func(int64) any{
		specFiles[settlement.Schema]: func(n int64) any { return chains.CAIP2(n) },
		specFiles[settlement.Guide]:  func(n int64) any { return n },
	} {
		doc, err := openapi3.NewLoader().LoadFromFile(file)
		require.NoError(t, err)
		schema := doc.Components.Schemas["CreateWithdrawalRequest"].Value.Properties["chainId"].Value
		assert.Empty(t, schema.Enum, file)
		for _, c := range append(e.app.Catalog.Chains, domain.Chain{ID: 7777}) {
			assert.NoError(t, schema.VisitJSON(id(c.ID)), "%s: chain %d passes the schema", file, c.ID)
		}
	}
	m := e.merchant(merchantOpts{withdrawals: true})
	r := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(500, "chainId", "eip155:7777"))
	require.Equal(t, 400, r.Status, string(r.Body))
	code, _, param := r.errorFields(t)
	assert.EqualValues(t, "parameter_invalid", code)
	assert.Equal(t, "chainId", param)
	assert.Contains(t, string(r.Body), "not in this service's catalogue")
}
