package tests

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// The checkout's transaction reports (issue 24), from the outside: a page reports the hash its
// wallet sent and the server reads the transaction from the devnet at once. A hash nobody sent and
// a transaction not mined yet are 202 and change nothing; a mined one is recorded before the
// watcher sees it (the payment is processing at once, its receipt says processedBy frontend) and
// the watcher's sight of it adds nothing; a report racing the watcher leaves one transfer; another
// payment's transaction, or one to another recipient, records nothing; a reported transfer whose
// block the watcher does not find is un-counted.

type reportEnv struct {
	devnetEnv
	key string
}

func newReportEnv(t *testing.T, backend string, wait time.Duration) reportEnv {
	e := newEnvWith(t, backend, func(c *config.Config) {
		c.Chains = config.Chains{Devnet: "127.0.0.1:0", WatchInterval: 50 * time.Millisecond, ReportWait: wait} // blocks mined by the test
	})
	require.Len(t, e.app.Watchers, 1)
	eth, err := ethclient.Dial(e.app.Devnet.URL())
	require.NoError(t, err)
	t.Cleanup(eth.Close)
	d := devnetEnv{e, eth}
	return reportEnv{d, d.merchant(merchantOpts{mode: domain.ModeTest}).SecretKey}
}

// checkoutPayment is a new $10.00 payment: its id, secret, and its devnet quote of symbol.
type checkoutPayment struct {
	id, secret, quoteID string
	due                 *big.Int
	deposit             common.Address
}

func (r reportEnv) newPayment(symbol string) checkoutPayment {
	r.t.Helper()
	created := r.createPayment(r.key, payment(1_000))
	p := checkoutPayment{id: created["paymentId"].(string), secret: created["secret"].(string)}
	for _, q := range created["payment"].(map[string]any)["quotes"].([]any) {
		if q := q.(map[string]any); q["chainId"] == "eip155:1337" && q["token"].(map[string]any)["symbol"] == symbol {
			p.quoteID = q["id"].(string)
			p.due, _ = new(big.Int).SetString(q["expectedAmountAsset"].(string), 10)
			p.deposit = common.HexToAddress(q["depositAddress"].(map[string]any)["address"].(string))
		}
	}
	require.NotEmpty(r.t, p.quoteID, "no devnet %s quote", symbol)
	return p
}

// pay sends the payment's amount of its token from a devnet account (not mined yet).
func (r reportEnv) pay(account int, symbol string, to common.Address, amount *big.Int) string {
	r.t.Helper()
	key, err := devnet.AccountKey(account)
	require.NoError(r.t, err)
	token := ""
	if symbol == "USDC" {
		token = devnet.USDCAddress
	}
	h, err := devnet.Pay(context.Background(), r.eth, key, token, to, amount)
	require.NoError(r.t, err)
	return strings.ToLower(h.Hex())
}

func (r reportEnv) report(p checkoutPayment, hash string) response {
	r.t.Helper()
	return r.do(http.MethodPost, checkoutPath(p.id, "/transactions"), "", map[string]any{"quoteId": p.quoteID, "txHash": hash},
		"X-Service-Payment-Secret", p.secret)
}

func (r reportEnv) status(p checkoutPayment) string {
	r.t.Helper()
	return r.do(http.MethodGet, paymentsPath+"/"+p.id, r.key, nil).JSON(r.t)["status"].(string)
}

func (r reportEnv) transfers(p checkoutPayment) []store.Transfer {
	r.t.Helper()
	ts, err := r.app.Store.Read(context.Background()).PaymentTransfers(uuid.MustParse(p.id))
	require.NoError(r.t, err)
	return ts
}

func (r reportEnv) watch() {
	r.t.Helper()
	_, err := r.app.Watchers[0].Round(context.Background())
	require.NoError(r.t, err)
}

func (r reportEnv) processedBy(p checkoutPayment) any {
	r.t.Helper()
	receipt, _ := r.do(http.MethodGet, paymentsPath+"/"+p.id, r.key, nil).JSON(r.t)["receipt"].(map[string]any)
	require.NotNil(r.t, receipt, "a completed payment has a receipt")
	return receipt["processedBy"]
}

func TestCheckoutTransactionReports(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			r := newReportEnv(t, backend, 0)
			a := r.newPayment("USDC")

			// A hash nobody sent: 202 pending, nothing recorded, nothing changed.
			forged := "0x" + strings.Repeat("ab", 32)
			res := r.report(a, forged)
			require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
			body := res.JSON(t)
			assert.Equal(t, "pending", body["status"])
			assert.Equal(t, []any{}, body["transfers"])
			assert.Nil(t, body["blockNumber"])
			assert.EqualValues(t, devnet.ChainID, body["evmChainId"])

			// Sent, not mined yet: 202 pending (no wait configured), the payment still pending.
			hash := r.pay(3, "USDC", a.deposit, a.due)
			res = r.report(a, "0x"+strings.ToUpper(hash[2:10])+hash[10:]) // any case: the hash is hex
			require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
			assert.Equal(t, "pending", res.JSON(t)["status"])
			assert.Equal(t, "pending", r.status(a))
			assert.Empty(t, r.transfers(a))

			// Mined, the watcher not run: recorded at once, the payment processing.
			r.app.Devnet.Commit()
			res = r.report(a, hash)
			require.Equal(t, http.StatusOK, res.Status, string(res.Body))
			body = res.JSON(t)
			assert.Equal(t, "recorded", body["status"])
			assert.Equal(t, hash, body["txHash"])
			assert.NotNil(t, body["blockNumber"])
			got := body["transfers"].([]any)
			require.Len(t, got, 1)
			tr := got[0].(map[string]any)
			assert.Equal(t, "USDC", tr["tokenSymbol"])
			assert.Equal(t, a.due.String(), tr["amountAsset"])
			assert.Equal(t, "seen", tr["status"])
			assert.Equal(t, "processing", r.status(a))
			require.Len(t, r.transfers(a), 1)
			assert.True(t, r.transfers(a)[0].Reported)

			// Reported again: the same answer, nothing added. The watcher then sees it: nothing
			// added either; it confirms it, and the receipt says the page's report processed it.
			res = r.report(a, hash)
			require.Equal(t, http.StatusOK, res.Status, string(res.Body))
			assert.Len(t, res.JSON(t)["transfers"], 1)
			r.until("payment completed", func() bool { return r.status(a) == "completed" })
			require.Len(t, r.transfers(a), 1)
			assert.Equal(t, "frontend", r.processedBy(a))

			// Final: the same hash still answers what was recorded; another one is a 409.
			res = r.report(a, hash)
			require.Equal(t, http.StatusOK, res.Status, string(res.Body))
			assert.Equal(t, "confirmed", res.JSON(t)["transfers"].([]any)[0].(map[string]any)["status"])
			requireRefused(t, r.report(a, forged), http.StatusConflict, "payment_not_open")

			// Another payment's transaction, and one to another recipient: mined, recorded
			// nothing for this payment, which stays pending.
			b, c := r.newPayment("USDC"), r.newPayment("USDC")
			other := r.pay(4, "USDC", b.deposit, b.due)
			elsewhere := r.pay(4, "USDC", freshAddress(t), c.due)
			r.app.Devnet.Commit()
			for _, h := range []string{other, elsewhere} {
				res = r.report(c, h)
				require.Equal(t, http.StatusOK, res.Status, string(res.Body))
				assert.Equal(t, "no_transfer", res.JSON(t)["status"])
				assert.Equal(t, []any{}, res.JSON(t)["transfers"])
			}
			assert.Empty(t, r.transfers(c))
			assert.Equal(t, "pending", r.status(c))
			assert.Empty(t, r.transfers(b), "another payment's transfer is its watcher's to record")

			// The wrong quote, a malformed hash, no secret.
			requireRefused(t, r.do(http.MethodPost, checkoutPath(c.id, "/transactions"), "",
				map[string]any{"quoteId": uuid.NewString(), "txHash": hash}, "X-Service-Payment-Secret", c.secret), http.StatusNotFound, "resource_not_found")
			requireRefused(t, r.do(http.MethodPost, checkoutPath(c.id, "/transactions"), "",
				map[string]any{"quoteId": c.quoteID, "txHash": "0x1234"}, "X-Service-Payment-Secret", c.secret), http.StatusBadRequest, "parameter_invalid")
			res = r.do(http.MethodPost, checkoutPath(c.id, "/transactions"), "", map[string]any{"quoteId": c.quoteID, "txHash": hash})
			assert.Equal(t, http.StatusUnauthorized, res.Status, string(res.Body))
		})
	}
}

// A report racing the watcher over the same mined transaction (native ETH): one transfer
// whoever wins, and the receipt says frontend either way; a payment never reported is the
// watcher's (cron).
func TestCheckoutTransactionReportRacesTheWatcher(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			r := newReportEnv(t, backend, 0)
			for range 3 {
				p := r.newPayment("ETH")
				hash := r.pay(5, "ETH", p.deposit, p.due)
				r.app.Devnet.Commit()
				var wg sync.WaitGroup
				var res response
				wg.Add(2)
				go func() { defer wg.Done(); res = r.report(p, hash) }()
				go func() {
					defer wg.Done()
					_, err := r.app.Watchers[0].Round(context.Background())
					assert.NoError(t, err)
				}()
				wg.Wait()
				require.Equal(t, http.StatusOK, res.Status, string(res.Body))
				assert.Equal(t, "recorded", res.JSON(t)["status"])
				tr := res.JSON(t)["transfers"].([]any)
				require.Len(t, tr, 1)
				assert.EqualValues(t, -1, tr[0].(map[string]any)["logIndex"], "a native transfer")
				r.until("payment completed", func() bool { return r.status(p) == "completed" })
				require.Len(t, r.transfers(p), 1, "one transfer, whoever recorded it first")
			}

			// The watcher first: the report finds it recorded and marks it reported (the page did
			// report it before the payment completed): the receipt says frontend all the same.
			p := r.newPayment("USDC")
			hash := r.pay(5, "USDC", p.deposit, p.due)
			r.app.Devnet.Commit()
			r.watch()
			require.Len(t, r.transfers(p), 1)
			assert.False(t, r.transfers(p)[0].Reported)
			res := r.report(p, hash)
			require.Equal(t, http.StatusOK, res.Status, string(res.Body))
			assert.Equal(t, "recorded", res.JSON(t)["status"])
			r.until("payment completed", func() bool { return r.status(p) == "completed" })
			require.Len(t, r.transfers(p), 1)
			assert.True(t, r.transfers(p)[0].Reported)
			assert.Equal(t, "frontend", r.processedBy(p))

			// Never reported: the watcher's receipt (cron); a report after completion changes nothing.
			p = r.newPayment("USDC")
			hash = r.pay(5, "USDC", p.deposit, p.due)
			r.until("payment completed", func() bool { return r.status(p) == "completed" })
			assert.Equal(t, "cron", r.processedBy(p))
			res = r.report(p, hash)
			require.Equal(t, http.StatusOK, res.Status, string(res.Body))
			assert.Equal(t, "cron", r.processedBy(p))
			require.Len(t, r.transfers(p), 1)
		})
	}
}

// A report waited for: a transaction in the node's pool is waited for (PAYMENTS_TX_REPORT_WAIT)
// and recorded once mined, in the same request; a hash nobody sent is answered at once.
func TestCheckoutTransactionReportWaitsForItsBlock(t *testing.T) {
	r := newReportEnv(t, "sqlite", 10*time.Second)
	p := r.newPayment("USDC")
	start := time.Now()
	res := r.report(p, "0x"+strings.Repeat("cd", 32))
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	assert.Less(t, time.Since(start), 2*time.Second, "a hash nobody sent is not waited for")

	hash := r.pay(3, "USDC", p.deposit, p.due)
	go func() {
		time.Sleep(500 * time.Millisecond)
		r.app.Devnet.Commit()
	}()
	res = r.report(p, hash)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	assert.Equal(t, "recorded", res.JSON(t)["status"])
	assert.Equal(t, "processing", r.status(p))
}

// A transfer recorded from a report whose block the watcher then finds replaced (a reorg between
// the report and the scan) is un-counted: the payment is pending again.
func TestReportedTransferOrphanedByTheScan(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			r := newReportEnv(t, backend, 0)
			ctx := context.Background()
			r.watch()
			p := r.newPayment("USDC")
			cur, err := r.app.Store.Read(ctx).Cursor(devnet.ChainID)
			require.NoError(t, err)
			key, err := crypto.GenerateKey()
			require.NoError(t, err)
			pid := uuid.MustParse(p.id)
			pay, err := r.app.Store.Read(ctx).PaymentByID(pid, r.app.Catalog)
			require.NoError(t, err)
			tok := pay.Quotes[0].Token
			for _, q := range pay.Quotes {
				if q.ID.String() == p.quoteID {
					tok = q.Token
				}
			}
			require.NoError(t, r.app.Store.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.RecordTransfer(store.Transfer{ID: uuid.New(), ChainID: devnet.ChainID, TxHash: "0x" + strings.Repeat("ef", 32),
					LogIndex: 0, BlockNumber: cur.Number + 1, BlockHash: "0x" + strings.Repeat("0d", 32), BlockTime: time.Now(), TokenID: tok.ID,
					From: strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex()), To: strings.ToLower(p.deposit.Hex()),
					Amount: decimal.NewFromBigInt(p.due, 0), DepositAddressID: pay.DepositAddress.ID, PaymentID: &pid, Reported: true, CreatedAt: time.Now()})
				return err
			}))
			_, err = r.app.OnChain.Reconcile(ctx, pid)
			require.NoError(t, err)
			require.Equal(t, "processing", r.status(p))
			r.advance()
			ts := r.transfers(p)
			require.Len(t, ts, 1)
			assert.Equal(t, store.TransferOrphaned, ts[0].Status)
			assert.Equal(t, "pending", r.status(p))
		})
	}
}
