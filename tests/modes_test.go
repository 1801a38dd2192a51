package tests

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// Live and test modes (issue 20), tried as the attacker of the review did: one deployment serving
// mainnets and testnets, a merchant with a test key and a live key, paid with test money,
// drained with every key and token it has.

const (
	sepolia     = "eip155:11155111"
	baseSepolia = "eip155:84532"
)

// fundOn credits a merchant's balance with at least cents by settling a deposit of USDC on
// chain (a CAIP-2 id) through the operator's manual settlement, the way the watcher would.
func (e *env) fundOn(key string, cents int64, chain string) string {
	e.t.Helper()
	id := e.createPayment(key, map[string]any{"type": "deposit", "currency": "USD", "orderId": "funding"})["paymentId"].(string)
	r := e.do(http.MethodGet, paymentsPath+"/"+id, key, nil)
	require.Equal(e.t, http.StatusOK, r.Status, string(r.Body))
	var quote uuid.UUID
	decimals := int32(6)
	for _, q := range r.JSON(e.t)["quotes"].([]any) {
		q := q.(map[string]any)
		if q["chainId"] == chain && q["token"].(map[string]any)["symbol"] == "USDC" {
			quote = uuid.MustParse(q["id"].(string))
			decimals = int32(q["token"].(map[string]any)["decimals"].(float64))
		}
	}
	require.NotEqual(e.t, uuid.Nil, quote, "no USDC quote on %s", chain)
	gross := decimal.NewFromInt(cents).Mul(decimal.NewFromInt(10000)).Div(decimal.NewFromInt(9900)).Ceil()
	amount := gross.Shift(decimals - 2)
	_, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: uuid.MustParse(id), QuoteID: &quote,
		TxHash: "0x" + strings.Repeat("2", 64), AmountAsset: &amount}, nil)
	require.NoError(e.t, err)
	return id
}

func (e *env) modeBalance(m uuid.UUID, mode domain.Mode) int64 {
	e.t.Helper()
	b, err := e.app.Store.Read(context.Background()).AvailableBalance(m, mode)
	require.NoError(e.t, err)
	return b
}

// quoteChains lists the chains a payment is quoted on, and whether each is a testnet.
func quoteChains(t *testing.T, p map[string]any) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, q := range p["quotes"].([]any) {
		q := q.(map[string]any)
		out[q["chainId"].(string)] = q["token"].(map[string]any)["chain"].(map[string]any)["isTestnet"].(bool)
	}
	return out
}

func TestModesNeverMix(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true, mode: domain.ModeTest})
		require.True(t, strings.HasPrefix(m.SecretKey, "sk_test_"), m.SecretKey)
		live, err := e.app.Merchants.CreateKey(ctx, m.Merchant.ID, domain.ModeLive)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(live.SecretKey, "sk_live_"))
		testKey, liveKey := m.SecretKey, live.SecretKey

		// A test key's payment is quoted on test chains only, a live key's on live chains only;
		// both say which mode they are in.
		tp := e.createPayment(testKey, payment(10_000))
		lp := e.createPayment(liveKey, payment(10_000))
		assert.Equal(t, false, tp["payment"].(map[string]any)["livemode"])
		assert.Equal(t, true, lp["payment"].(map[string]any)["livemode"])
		tc, lc := quoteChains(t, tp["payment"].(map[string]any)), quoteChains(t, lp["payment"].(map[string]any))
		require.NotEmpty(t, tc)
		require.NotEmpty(t, lc)
		for c, testnet := range tc {
			assert.True(t, testnet, "a test payment is quoted on %s", c)
		}
		for c, testnet := range lc {
			assert.False(t, testnet, "a live payment is quoted on %s", c)
		}

		// Another mode's object is unknown, like another merchant's; lists show one mode.
		tid, lid := tp["paymentId"].(string), lp["paymentId"].(string)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodGet, paymentsPath+"/"+lid, testKey, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodGet, paymentsPath+"/"+tid, liveKey, nil).Status)
		assert.Equal(t, http.StatusOK, e.do(http.MethodGet, paymentsPath+"/"+tid, testKey, nil).Status)
		list := e.do(http.MethodGet, paymentsPath, testKey, nil).JSON(t)["data"].([]any)
		require.Len(t, list, 1)
		assert.Equal(t, tid, list[0].(map[string]any)["id"])

		// Test money: a $1,000 test deposit funds the test balance and nothing else.
		e.fundOn(testKey, 100_000, baseSepolia)
		assert.GreaterOrEqual(t, e.modeBalance(m.Merchant.ID, domain.ModeTest), int64(100_000))
		assert.Zero(t, e.modeBalance(m.Merchant.ID, domain.ModeLive))

		// Drained with every key: the live key has nothing; the test key cannot reach a live chain.
		r := e.do(http.MethodPost, withdrawalsPath, liveKey, withdrawal(9_000))
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, _ := r.errorFields(t)
		assert.Equal(t, "insufficient_balance", code)
		r = e.do(http.MethodPost, withdrawalsPath, liveKey, withdrawal(9_000, "chainId", sepolia))
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		code, _, param := r.errorFields(t)
		assert.Equal(t, "chain_not_supported", code)
		assert.Equal(t, "chainId", param)
		r = e.do(http.MethodPost, withdrawalsPath, testKey, withdrawal(9_000))
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "chain_not_supported", code, "test money never pays out on Base")
		assert.Zero(t, e.modeBalance(m.Merchant.ID, domain.ModeLive))

		// The test key withdraws test money on a test chain; the withdrawal says so.
		r = e.do(http.MethodPost, withdrawalsPath, testKey, withdrawal(9_000, "chainId", sepolia))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		w := r.JSON(t)
		assert.Equal(t, false, w["livemode"])
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodGet, withdrawalsPath+"/"+w["id"].(string), liveKey, nil).Status)
		assert.Equal(t, http.StatusOK, e.do(http.MethodGet, withdrawalsPath+"/"+w["id"].(string), testKey, nil).Status)
		assert.Empty(t, e.do(http.MethodGet, withdrawalsPath, liveKey, nil).JSON(t)["data"])

		// The same Idempotency-Key in both modes is two requests, never a replay across modes.
		idem := []string{"Idempotency-Key", "order-7"}
		r1 := e.do(http.MethodPost, paymentsPath, testKey, payment(1_000), idem...)
		r2 := e.do(http.MethodPost, paymentsPath, liveKey, payment(1_000), idem...)
		require.Equal(t, http.StatusCreated, r1.Status, string(r1.Body))
		require.Equal(t, http.StatusCreated, r2.Status, string(r2.Body))
		assert.NotEqual(t, r1.JSON(t)["paymentId"], r2.JSON(t)["paymentId"])
		assert.Empty(t, r2.Header.Get("Idempotent-Replayed"))
	})
}

// The dashboard acts in its token's mode: its balance shows both modes, its lists and its
// withdrawal configuration only its own.
func TestDashboardActsInItsTokensMode(t *testing.T) {
	forEachBackendAndIssuer(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		e.fundOn(m.SecretKey, 5_000, "eip155:8453")
		test, err := e.app.Merchants.CreateKey(context.Background(), m.Merchant.ID, domain.ModeTest)
		require.NoError(t, err)
		e.fundOn(test.SecretKey, 70_000, sepolia)
		base := "/v1/merchants/" + m.Merchant.ID.String()
		liveTok := e.modeToken(m.Merchant.ID, domain.ModeLive, dashauth.ScopeWrite)
		testTok := e.modeToken(m.Merchant.ID, domain.ModeTest, dashauth.ScopeWrite)

		for _, c := range []struct {
			tok              string
			mode             string
			available, other int64
		}{{liveTok, "live", 5_000, 70_000}, {testTok, "test", 70_000, 5_000}} {
			r := e.do(http.MethodGet, base+"/balance", "", nil, bearerHeader(c.tok)...)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			b := r.JSON(t)
			assert.Equal(t, c.mode, b["mode"])
			assert.InDelta(t, c.available, b["availableInCents"], 1)
			modes := b["modes"].(map[string]any)
			assert.InDelta(t, c.available, modes[c.mode].(map[string]any)["availableInCents"], 1)
			other := map[string]string{"live": "test", "test": "live"}[c.mode]
			assert.InDelta(t, c.other, modes[other].(map[string]any)["availableInCents"], 1)

			// The configuration lists this mode's chains only.
			r = e.do(http.MethodGet, base+"/withdrawals/config", "", nil, bearerHeader(c.tok)...)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			for _, id := range r.JSON(t)["chainIds"].([]any) {
				chainID, err := chains.ParseCAIP2(id.(string))
				require.NoError(t, err)
				assert.Equal(t, domain.Mode(c.mode), e.app.Catalog.ChainMode(chainID), "%s listed in %s mode", id, c.mode)
			}
		}

		// A withdrawal from the test-mode dashboard spends test money on a test chain only.
		r := e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(60_000), bearerHeader(testTok)...)
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		r = e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(60_000, "chainId", sepolia), bearerHeader(testTok)...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		wid := r.JSON(t)["id"].(string)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodGet, base+"/withdrawals/"+wid, "", nil, bearerHeader(liveTok)...).Status)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodPost, base+"/withdrawals/"+wid+"/cancel", "", nil, bearerHeader(liveTok)...).Status,
			"a live token cannot cancel a test withdrawal")
		r = e.do(http.MethodGet, base+"/withdrawals", "", nil, bearerHeader(liveTok)...)
		assert.Empty(t, r.JSON(t)["data"])
		assert.InDelta(t, 5_000, e.modeBalance(m.Merchant.ID, domain.ModeLive), 1, "live money untouched")

		// A test-mode token changes only test chains of the configuration.
		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", map[string]any{"chainIds": []string{"eip155:8453"}}, bearerHeader(testTok)...)
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", map[string]any{"chainIds": []string{sepolia}}, bearerHeader(testTok)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, []any{sepolia}, r.JSON(t)["chainIds"])
		r = e.do(http.MethodGet, base+"/withdrawals/config", "", nil, bearerHeader(liveTok)...)
		assert.Contains(t, r.JSON(t)["chainIds"], "eip155:8453", "the live chains stay")
		// The token, the limits and the enabled flag govern live payouts: a live token only.
		for _, body := range []map[string]any{{"minAmountInCents": 500}, {"withdrawalsEnabled": false}, {"tokenSymbol": "USDT"}} {
			r = e.do(http.MethodPatch, base+"/withdrawals/config", "", body, bearerHeader(testTok)...)
			require.Equal(t, http.StatusForbidden, r.Status, "%v: %s", body, r.Body)
		}
		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", map[string]any{"minAmountInCents": 500}, bearerHeader(liveTok)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))

		// Accepted assets: each mode's token sets its own part; the other's stays.
		r = e.do(http.MethodPut, base+"/accepted-assets", "", map[string]any{"assets": []string{"eip155:8453/USDC"}}, bearerHeader(liveTok)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		r = e.do(http.MethodPut, base+"/accepted-assets", "", map[string]any{"assets": []string{"eip155:8453/USDC"}}, bearerHeader(testTok)...)
		require.Equal(t, http.StatusBadRequest, r.Status, "a live token id from a test token: %s", r.Body)
		r = e.do(http.MethodPut, base+"/accepted-assets", "", map[string]any{"assets": []string{sepolia + "/USDC"}}, bearerHeader(testTok)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		lp := e.createPayment(m.SecretKey, payment(1_000))["payment"].(map[string]any)
		assert.Len(t, lp["quotes"], 1, "the live selection survived the test token's change")
		tp := e.createPayment(test.SecretKey, payment(1_000))["payment"].(map[string]any)
		require.Len(t, tp["quotes"], 1)
		assert.Equal(t, sepolia, tp["quotes"].([]any)[0].(map[string]any)["chainId"])
		r = e.do(http.MethodPut, base+"/accepted-assets", "", map[string]any{"default": true}, bearerHeader(testTok)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Len(t, e.createPayment(m.SecretKey, payment(1_000))["payment"].(map[string]any)["quotes"], 1, "a test reset leaves live alone")
		assert.Greater(t, len(e.createPayment(test.SecretKey, payment(1_000))["payment"].(map[string]any)["quotes"].([]any)), 1)
	})
}

// A test credit never funds a live payout, under any race: concurrent live withdrawals see only
// the live balance, whatever test withdrawals run beside them.
func TestModesUnderRace(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		test, err := e.app.Merchants.CreateKey(context.Background(), m.Merchant.ID, domain.ModeTest)
		require.NoError(t, err)
		e.fundOn(m.SecretKey, 1_000, "eip155:8453")
		e.fundOn(test.SecretKey, 1_000_000, sepolia)
		liveStart, testStart := e.modeBalance(m.Merchant.ID, domain.ModeLive), e.modeBalance(m.Merchant.ID, domain.ModeTest)

		var wg sync.WaitGroup
		var mu sync.Mutex
		created := map[bool]int{}
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key, body := m.SecretKey, withdrawal(100)
				isTest := i%2 == 1
				if isTest {
					key, body = test.SecretKey, withdrawal(100, "chainId", sepolia)
				}
				r := e.do(http.MethodPost, withdrawalsPath, key, body)
				mu.Lock()
				defer mu.Unlock()
				if r.Status == http.StatusCreated {
					created[isTest]++
				} else {
					assert.Equal(t, http.StatusConflict, r.Status, string(r.Body))
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, int(liveStart/100), created[false], "live withdrawals are bounded by the live balance alone")
		assert.Equal(t, 20, created[true])
		assert.Equal(t, liveStart-int64(created[false])*100, e.modeBalance(m.Merchant.ID, domain.ModeLive))
		assert.GreaterOrEqual(t, e.modeBalance(m.Merchant.ID, domain.ModeLive), int64(0))
		assert.Equal(t, testStart-2_000, e.modeBalance(m.Merchant.ID, domain.ModeTest))
	})
}

// A deployment that serves no chain of a mode refuses that mode's payments clearly (403), and
// never quotes the other mode's chains instead.
func TestModeNotServed(t *testing.T) {
	e := newEnvWith(t, "sqlite", func(c *config.Config) { c.Networks = chains.Mainnet })
	m := e.merchant(merchantOpts{mode: domain.ModeTest})
	r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1_000))
	require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
	code, typ, _ := r.errorFields(t)
	assert.Equal(t, "mode_not_served", code)
	assert.Equal(t, "permission_error", typ)
	assert.Zero(t, e.countPayments())
}

// Withdrawals to an address the service controls or that cannot spend are refused before
// anything is debited: before this, a withdrawal to one's own open payment's deposit address
// "completed" that payment — a self-paid sale.
func TestWithdrawalRecipientsTheServiceControls(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		e.fund(m.SecretKey, 50_000)
		open := e.createPayment(m.SecretKey, payment(10_000))["payment"].(map[string]any)
		deposit := open["quotes"].([]any)[0].(map[string]any)["depositAddress"].(map[string]any)["address"].(string)
		cfg, err := e.app.Merchants.WithdrawalConfig(context.Background(), m.Merchant.ID)
		require.NoError(t, err)
		usdcBase := "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
		before := e.modeBalance(m.Merchant.ID, domain.ModeLive)
		for _, to := range []string{
			deposit, strings.ToUpper(deposit[:2]) + strings.ToUpper(deposit[2:]), // any deposit address, any case
			cfg.BackendWalletAddress, // the service's own wallet
			usdcBase,                 // a token contract
			"0x0000000000000000000000000000000000000001", "0x0000000000000000000000000000000000000100", // precompiles
			"0x000000000000000000000000000000000000ffff",
			"0x000F3df6D732807Ef1319fB7B8bB8522d0Beac02", // EIP-4788's system contract
		} {
			r := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(1_000, "recipientAddress", strings.Replace(to, "0X", "0x", 1)))
			require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", to, r.Body)
			code, _, param := r.errorFields(t)
			assert.Equal(t, "recipient_not_allowed", code, to)
			assert.Equal(t, "recipientAddress", param)
		}
		assert.Equal(t, before, e.modeBalance(m.Merchant.ID, domain.ModeLive), "nothing debited")
		r := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(1_000, "recipientAddress", "0x0000000000000000000000000000000000010000"))
		require.Equal(t, http.StatusCreated, r.Status, "the first address past the reserved range: %s", r.Body)
	})
}

// A live customer paying again to their reusable address, with no deposit open there, gets a
// live deposit recorded (the address's mode), never a test one.
func TestCustomerAddressKeepsItsMode(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		m := e.merchant(merchantOpts{deposits: true})
		first := e.createPayment(m.SecretKey, map[string]any{"type": "deposit", "currency": "USD", "orderId": "d-1", "customerRefId": "cust-1"})
		p := first["payment"].(map[string]any)
		addr := p["depositAddress"].(map[string]any)
		_, err := e.app.Payments.Settle(ctx, payments.SettleInput{PaymentID: uuid.MustParse(first["paymentId"].(string)),
			QuoteID: ptr(uuid.MustParse(p["quotes"].([]any)[0].(map[string]any)["id"].(string))), TxHash: "0x" + strings.Repeat("3", 64),
			AmountAsset: ptr(decimal.NewFromInt(1))}, nil)
		require.NoError(t, err)

		usdc, ok := e.app.Catalog.AcceptedToken(8453, "USDC")
		require.True(t, ok)
		now := time.Now().UTC()
		tr := store.Transfer{ID: uuid.Must(uuid.NewV7()), ChainID: 8453, TxHash: "0x" + strings.Repeat("4", 64), LogIndex: 0, BlockNumber: 1,
			BlockHash: "0xb", BlockTime: now, TokenID: usdc.ID, From: "0x1", To: addr["address"].(string), Amount: decimal.NewFromInt(5_000_000),
			DepositAddressID: uuid.MustParse(addr["id"].(string)), Status: store.TransferConfirmed, CreatedAt: now, UpdatedAt: now}
		require.NoError(t, e.app.Store.InTx(ctx, func(tx *store.Tx) error { _, err := tx.RecordTransfer(tr); return err }))
		require.NoError(t, e.app.OnChain.AssignCustomerTransfers(ctx, 8453, 10))

		list := e.do(http.MethodGet, paymentsPath+"?type=deposit", m.SecretKey, nil).JSON(t)["data"].([]any)
		require.Len(t, list, 2, "the recorded deposit is a live one, listed with the live key")
		auto := list[0].(map[string]any)
		assert.Equal(t, true, auto["livemode"])
		assert.Equal(t, addr["address"], auto["depositAddress"].(map[string]any)["address"], "at the customer's address")
		for c, testnet := range quoteChains(t, auto) {
			assert.False(t, testnet, "quoted on %s", c)
		}
	})
}

func ptr[T any](v T) *T { return &v }
