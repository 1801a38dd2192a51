package tests

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Refunds on the devnet, from the outside in: a payment overpaid from a devnet account, the
// excess asked back on the checkout and claimed with that account's EIP-712 signature, paid by
// the payout manager — the recipient's balance on chain is exactly the excess; a typed address
// sent only once a second member approves it; a refund that bears its network fee.

type devnetEnv struct {
	*env
	eth *ethclient.Client
}

func newDevnetEnv(t *testing.T, backend string) devnetEnv {
	e := newEnvWith(t, backend, func(c *config.Config) {
		c.Chains = config.Chains{Devnet: "127.0.0.1:0", WatchInterval: 50 * time.Millisecond} // blocks mined by the test
	})
	require.Len(t, e.app.Watchers, 1)
	require.Len(t, e.app.Payouts, 1)
	eth, err := ethclient.Dial(e.app.Devnet.URL())
	require.NoError(t, err)
	t.Cleanup(eth.Close)
	return devnetEnv{e, eth}
}

// advance mines a block and runs the watcher and the payout manager once each.
func (d devnetEnv) advance() {
	d.t.Helper()
	d.app.Devnet.Commit()
	_, err := d.app.Watchers[0].Round(context.Background())
	require.NoError(d.t, err)
	_, err = d.app.Payouts[0].Round(context.Background())
	require.NoError(d.t, err)
}

// until advances the chain until done says so.
func (d devnetEnv) until(what string, done func() bool) {
	d.t.Helper()
	for range 80 {
		if done() {
			return
		}
		d.advance()
	}
	d.t.Fatalf("%s: not within 80 blocks", what)
}

func (d devnetEnv) usdc(who common.Address) *big.Int {
	d.t.Helper()
	b, err := devnet.TokenBalance(context.Background(), d.eth, common.HexToAddress(devnet.USDCAddress), who)
	require.NoError(d.t, err)
	return b
}

// testMemberToken mints a test-mode access token in a new session of a member.
func (e *env) testMemberToken(merchantID uuid.UUID, email string, role domain.Role) []string {
	e.t.Helper()
	ctx, now, sid := context.Background(), time.Now().UTC(), uuid.New()
	uid := e.member(merchantID, email, role)
	require.NoError(e.t, e.app.Store.InTx(ctx, func(tx *store.Tx) error {
		return tx.InsertSession(store.Session{ID: sid, UserID: uid, RefreshTokenHash: sid.String(), Mode: domain.ModeTest,
			CreatedAt: now, LastUsedAt: now, ExpiresAt: now.Add(time.Hour)})
	}))
	tok, _, err := e.app.Tokens.MintPerson(ctx, uid, email, sid, domain.ModeTest, nil, time.Minute)
	require.NoError(e.t, err)
	return bearerHeader(tok)
}

func freshAddress(t *testing.T) common.Address {
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	return crypto.PubkeyToAddress(k.PublicKey)
}

func TestRefundsOnTheDevnet(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			d := newDevnetEnv(t, backend)
			ctx := context.Background()
			m := d.merchant(merchantOpts{mode: domain.ModeTest})
			key, mid := m.SecretKey, m.Merchant.ID
			d.app.Refunds.Policy = testPolicy{offer: true}

			// Account 3 pays $10.00 in devnet USDC and 1.234567 USDC too much.
			created := d.createPayment(key, payment(1_000))
			pid, secret := created["paymentId"].(string), created["secret"].(string)
			var quote map[string]any
			for _, q := range created["payment"].(map[string]any)["quotes"].([]any) {
				if q := q.(map[string]any); q["chainId"] == "eip155:1337" && q["token"].(map[string]any)["symbol"] == "USDC" {
					quote = q
				}
			}
			require.NotNil(t, quote)
			due, ok := new(big.Int).SetString(quote["expectedAmountAsset"].(string), 10)
			require.True(t, ok)
			excess := big.NewInt(1_234_567)
			payer, err := devnet.AccountKey(3)
			require.NoError(t, err)
			deposit := common.HexToAddress(quote["depositAddress"].(map[string]any)["address"].(string))
			_, err = devnet.Pay(ctx, d.eth, payer, devnet.USDCAddress, deposit, new(big.Int).Add(due, excess))
			require.NoError(t, err)
			d.until("payment completed", func() bool {
				return d.do(http.MethodGet, paymentsPath+"/"+pid, key, nil).JSON(t)["status"] == "completed"
			})

			// The checkout offers the excess back; the customer asks and claims it with the paying
			// account's signature, to an address of their choice.
			pay := []string{"X-Service-Payment-Secret", secret}
			v := d.do(http.MethodGet, checkoutPath(pid), "", nil, pay...).JSON(t)
			assert.Equal(t, excess.String(), v["overpaymentRefund"].(map[string]any)["excessAmountAsset"])
			r := d.do(http.MethodPost, checkoutPath(pid, "/overpayment-refund"), "", nil, pay...)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			id, claimSecret := claimLink(t, r.JSON(t)["claimUrl"].(string))
			view := d.do(http.MethodGet, claimPath+id, "", nil, "X-Service-Refund-Secret", claimSecret).JSON(t)
			assert.Equal(t, []any{strings.ToLower(devnet.AccountAddress(3).Hex())}, view["payerAddresses"])
			to := freshAddress(t)
			r = d.do(http.MethodPost, claimPath+id+"/claim", "", map[string]any{"recipientAddress": strings.ToLower(to.Hex()),
				"signature": signClaim(t, payer, id, devnet.ChainID, to)}, "X-Service-Refund-Secret", claimSecret)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			d.until("overpayment refund completed", func() bool { return d.refundOf(key, id)["status"] == "completed" })
			assert.Equal(t, excess.String(), d.usdc(to).String(), "exactly the excess, on chain")
			got := d.refundOf(key, id)
			assert.Equal(t, excess.String(), got["receipt"].(map[string]any)["settledAmountAsset"])
			assert.Equal(t, []string{"refund.created", "refund.pending", "refund.processing", "refund.completed"}, d.refundEvents(id))

			// A typed address is sent only once a second member approves it.
			ana := d.testMemberToken(mid, "ana@shop.example", domain.RoleAdmin)
			ben := d.testMemberToken(mid, "ben@shop.example", domain.RoleAdmin)
			base := "/v1/merchants/" + mid.String()
			r = d.do(http.MethodPost, base+"/payments/"+pid+"/refunds", "", map[string]any{"amountInCents": 200}, ana...)
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			id2, secret2 := claimLink(t, r.JSON(t)["claimUrl"].(string))
			typed := freshAddress(t)
			r = d.do(http.MethodPost, claimPath+id2+"/claim", "", map[string]any{"recipientAddress": strings.ToLower(typed.Hex())},
				"X-Service-Refund-Secret", secret2)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			for range 5 {
				d.advance()
			}
			assert.Equal(t, "pending", d.refundOf(key, id2)["status"], "never sent while its approval waits")
			_, err = d.app.Store.Read(ctx).OutgoingForRefund(uuid.MustParse(id2))
			assert.ErrorIs(t, err, store.ErrNotFound, "nothing signed")
			requireRefused(t, d.do(http.MethodPost, base+"/refunds/"+id2+"/approve", "", nil, ana...), 403, "approval_by_creator")
			require.Equal(t, http.StatusOK, d.do(http.MethodPost, base+"/refunds/"+id2+"/approve", "", nil, ben...).Status)
			d.until("approved refund completed", func() bool { return d.refundOf(key, id2)["status"] == "completed" })
			assert.Equal(t, "2000000", d.usdc(typed).String())

			// A refund that bears its network fee: the customer receives the amount less the fee.
			third := freshAddress(t)
			r = d.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 100, "recipientAddress": strings.ToLower(third.Hex()),
				"subtractNetworkFee": true})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			id3 := r.JSON(t)["id"].(string)
			d.until("fee-bearing refund completed", func() bool { return d.refundOf(key, id3)["status"] == "completed" })
			got = d.refundOf(key, id3)
			fee, ok := new(big.Int).SetString(got["networkFeeAsset"].(string), 10)
			require.True(t, ok)
			assert.Positive(t, fee.Sign())
			want := new(big.Int).Sub(big.NewInt(1_000_000), fee)
			assert.Equal(t, want.String(), d.usdc(third).String())
			assert.Equal(t, want.String(), got["receipt"].(map[string]any)["settledAmountAsset"])
			o, err := d.app.Store.Read(ctx).OutgoingForRefund(uuid.MustParse(id3))
			require.NoError(t, err)
			assert.Equal(t, "1", o.RateUSD, "the price it was sent at, for the books")
			assert.EqualValues(t, 123+200+100, d.do(http.MethodGet, paymentsPath+"/"+pid, key, nil).JSON(t)["amountRefundedCents"])
		})
	}
}
