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
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/store"
)

// Approvals from outside (issue 23): above the merchant's threshold a withdrawal waits for a
// second person — never its creator, never a token without a person — and the payout manager
// leaves it alone until then; a rejection cancels it and gives the balance back.

// approval is a withdrawal answer's approval object.
func approval(t *testing.T, r response) map[string]any {
	t.Helper()
	a, ok := r.JSON(t)["approval"].(map[string]any)
	require.True(t, ok, "no approval in %s", r.Body)
	delete(a, "createdBy") // who created it: checked apart (the dashboard's reason for a creator's Approve being off)
	return a
}

func TestWithdrawalApprovals(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.policyMerchant(200_000)
		bob := bearerHeader(e.personToken(e.member(p.id, "bob@shop.example", domain.RoleAdmin), "bob@shop.example"))
		vic := bearerHeader(e.personToken(e.member(p.id, "vic@shop.example", domain.RoleViewer), "vic@shop.example"))
		service := bearerHeader(e.roleToken(p.id, domain.RoleOwner))
		e.settings(p, map[string]any{"approvalThresholdCents": 10_000})
		create := func(cents int64, as []string) (string, response) {
			t.Helper()
			r := e.do(http.MethodPost, p.base+"/withdrawals", "", withdrawal(cents), as...)
			if as == nil {
				r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(cents))
			}
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			return r.JSON(t)["id"].(string), r
		}
		act := func(id, verb string, as []string) response {
			t.Helper()
			return e.do(http.MethodPost, p.base+"/withdrawals/"+id+"/"+verb, "", nil, as...)
		}
		forbidden := func(r response, code string) {
			t.Helper()
			require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
			got, typ, _ := r.errorFields(t)
			assert.Equal(t, code, got)
			assert.Equal(t, "permission_error", typ)
		}

		atThreshold, r := create(10_000, p.admin)
		assert.Equal(t, map[string]any{"required": false, "approvedBy": nil, "approvedAt": nil}, approval(t, r), "exactly the threshold: no approval")
		anns, r := create(10_001, p.admin)
		assert.Equal(t, map[string]any{"required": true, "approvedBy": nil, "approvedAt": nil}, approval(t, r), "one cent above: waits")
		assert.NotEmpty(t, r.JSON(t)["approval"].(map[string]any)["createdBy"], "its creator, a person, is named")
		assert.Equal(t, "pending", r.JSON(t)["status"])
		keys, _ := create(20_000, nil)

		r = e.do(http.MethodGet, p.base+"/withdrawals?awaitingApproval=true", "", nil, vic...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.ElementsMatch(t, []string{anns, keys}, ids(t, r), "the approvals queue")
		assert.Len(t, ids(t, e.do(http.MethodGet, p.base+"/withdrawals?awaitingApproval=false", "", nil, vic...)), 3)
		pending := func() []string {
			got, err := e.app.Store.Read(ctx).PendingWithdrawals(8453, 100)
			require.NoError(t, err)
			out := make([]string, len(got))
			for i, id := range got {
				out[i] = id.String()
			}
			return out
		}
		assert.Equal(t, []string{atThreshold}, pending(), "the payout manager sees none awaiting approval")

		forbidden(act(anns, "approve", p.admin), "approval_by_creator")
		forbidden(act(anns, "approve", service), "forbidden") // a service token is not a person, even an owner's
		forbidden(act(anns, "approve", vic), "forbidden")     // a viewer lacks withdrawals:write
		r = act(anns, "approve", bob)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		a := approval(t, r)
		assert.Equal(t, true, a["required"])
		assert.Equal(t, "bob@shop.example", a["approvedBy"])
		assert.NotNil(t, a["approvedAt"])
		assert.Equal(t, "pending", r.JSON(t)["status"], "approved: the payout manager sends it now")
		assert.ElementsMatch(t, []string{atThreshold, anns}, pending())
		r = e.do(http.MethodGet, withdrawalsPath+"/"+anns, p.key, nil)
		assert.Equal(t, "bob@shop.example", approval(t, r)["approvedBy"], "the secret-key API shows it too")

		for _, id := range []string{anns, atThreshold} {
			r = act(id, "approve", bob)
			require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
			code, _, _ := r.errorFields(t)
			assert.Equal(t, "invalid_state", code, "not awaiting an approval")
		}
		for _, id := range []string{uuid.NewString(), "nope"} {
			r = act(id, "approve", bob)
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
		}
		r = act(keys, "approve", p.admin) // a key the command line made created it: Ann may approve
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))

		// A key Ann makes from the dashboard acts for her: she cannot approve what it creates, or
		// one admin could mint a live key, withdraw with it and approve alone (review D2).
		r = e.do(http.MethodPost, p.base+"/api-keys", "", map[string]any{"mode": "live"}, p.admin...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		assert.Equal(t, "ann@shop.example", r.JSON(t)["key"].(map[string]any)["createdBy"], "the key names its maker")
		madeBy := map[string]any{}
		for _, k := range e.do(http.MethodGet, p.base+"/api-keys", "", nil, bob...).JSON(t)["data"].([]any) {
			k := k.(map[string]any)
			madeBy[k["prefix"].(string)] = k["createdBy"]
		}
		assert.Len(t, madeBy, 2)
		assert.Contains(t, madeBy, r.JSON(t)["key"].(map[string]any)["prefix"])
		for prefix, by := range madeBy {
			if prefix == r.JSON(t)["key"].(map[string]any)["prefix"] {
				assert.Equal(t, "ann@shop.example", by, "listed with its maker")
			} else {
				assert.Nil(t, by, "the command line's key names no person")
			}
		}
		r = e.do(http.MethodPost, withdrawalsPath, r.JSON(t)["secretKey"].(string), withdrawal(20_000))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		annsKey := r.JSON(t)["id"].(string)
		annID := e.do(http.MethodGet, p.base+"/withdrawals/"+anns, "", nil, bob...).JSON(t)["approval"].(map[string]any)["createdBy"]
		assert.Equal(t, annID, r.JSON(t)["approval"].(map[string]any)["createdBy"], "Ann's key's withdrawal names Ann")
		forbidden(act(annsKey, "approve", p.admin), "approval_by_creator")
		r = act(annsKey, "approve", bob)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Empty(t, ids(t, e.do(http.MethodGet, p.base+"/withdrawals?awaitingApproval=true", "", nil, vic...)))

		// A rejection cancels: the balance comes back at once.
		before := e.balance(p.id)
		rejected, _ := create(30_000, p.admin)
		assert.Equal(t, before-30_000, e.balance(p.id))
		forbidden(act(rejected, "reject", service), "forbidden")
		r = act(rejected, "reject", bob)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "cancelled", r.JSON(t)["status"])
		assert.Equal(t, before, e.balance(p.id), "the balance is restored")
		require.Equal(t, http.StatusConflict, act(rejected, "reject", bob).Status)
		require.Equal(t, http.StatusConflict, act(rejected, "approve", bob).Status)

		assert.Len(t, e.auditActions(p, "withdrawal.approved"), 3)
		rej := e.auditActions(p, "withdrawal.rejected")
		require.Len(t, rej, 1)
		assert.Equal(t, rejected, rej[0]["targetId"])
		assert.Equal(t, "bob@shop.example", rej[0]["actor"].(map[string]any)["label"])
	})
}

func ids(t *testing.T, r response) []string {
	t.Helper()
	var out []string
	for _, w := range r.JSON(t)["data"].([]any) {
		out = append(out, w.(map[string]any)["id"].(string))
	}
	return out
}

// testPersonToken is personToken in test mode (the devnet's money is test money).
func (e *env) testPersonToken(userID uuid.UUID, email string) string {
	e.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	sid := uuid.New()
	require.NoError(e.t, e.app.Store.InTx(ctx, func(tx *store.Tx) error {
		return tx.InsertSession(store.Session{ID: sid, UserID: userID, RefreshTokenHash: sid.String(), Mode: domain.ModeTest,
			CreatedAt: now, LastUsedAt: now, ExpiresAt: now.Add(time.Hour)})
	}))
	tok, _, err := e.app.Tokens.MintPerson(ctx, userID, email, sid, domain.ModeTest, nil, time.Minute)
	require.NoError(e.t, err)
	return tok
}

// On the devnet: a withdrawal above the threshold is never signed while it waits, however many
// rounds the payout manager runs; approved by a second admin, it is paid, once, exactly.
func TestApprovedWithdrawalIsPaidOnTheDevnet(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, b, func(c *config.Config) { c.Chains.Devnet = "127.0.0.1:0" })
			ctx := context.Background()
			var pm *payouts.Manager
			for _, m := range e.app.Payouts {
				if m.Info.ID == devnet.ChainID {
					pm = m
				}
			}
			require.NotNil(t, pm, "a payout manager for the devnet")
			eth, err := ethclient.Dial(e.app.Devnet.URL())
			require.NoError(t, err)
			t.Cleanup(eth.Close)

			m := e.merchant(merchantOpts{deposits: true, withdrawals: true, mode: domain.ModeTest})
			e.fundOn(m.SecretKey, 50_000, "eip155:1337")
			base := "/v1/merchants/" + m.Merchant.ID.String()
			ann := bearerHeader(e.testPersonToken(e.member(m.Merchant.ID, "ann@shop.example", domain.RoleAdmin), "ann@shop.example"))
			bob := bearerHeader(e.testPersonToken(e.member(m.Merchant.ID, "bob@shop.example", domain.RoleOwner), "bob@shop.example"))
			r := e.do(http.MethodPatch, base+"/payout-settings", "", map[string]any{"approvalThresholdCents": 1_000}, ann...)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))

			r = e.do(http.MethodGet, withdrawalsPath+"/estimate?amountInCents=1234&chainId=eip155:1337", m.SecretKey, nil)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			est := r.JSON(t)
			assert.Equal(t, "12340000", est["amountAsset"], "$12.34 of the devnet's USDC (6 decimals)")
			assert.Equal(t, true, est["hotWalletCanPay"])
			assert.NotNil(t, est["networkFeeNative"])

			k, err := crypto.GenerateKey()
			require.NoError(t, err)
			to := crypto.PubkeyToAddress(k.PublicKey)
			r = e.do(http.MethodPost, base+"/withdrawals", "", map[string]any{"amountInCents": 1234, "chainId": "eip155:1337",
				"recipientAddress": strings.ToLower(to.Hex())}, ann...)
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			id := r.JSON(t)["id"].(string)
			require.Equal(t, true, approval(t, r)["required"])
			usdc := common.HexToAddress(devnet.USDCAddress)
			received := func() *big.Int {
				b, err := devnet.TokenBalance(ctx, eth, usdc, to)
				require.NoError(t, err)
				return b
			}
			for range 3 {
				res, err := pm.Round(ctx)
				require.NoError(t, err)
				assert.Zero(t, res.Signed, "nothing signed while the approval waits")
				e.app.Devnet.Commit()
			}
			wid := uuid.MustParse(id)
			_, err = e.app.Store.Read(ctx).OutgoingForWithdrawal(wid)
			require.ErrorIs(t, err, store.ErrNotFound, "no payout transaction exists")
			assert.Zero(t, received().Sign())

			r = e.do(http.MethodPost, base+"/withdrawals/"+id+"/approve", "", nil, bob...)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var status string
			for i := 0; i < 60 && status != "completed"; i++ {
				_, err := pm.Round(ctx)
				require.NoError(t, err)
				e.app.Devnet.Commit()
				status = e.do(http.MethodGet, withdrawalsPath+"/"+id, m.SecretKey, nil).JSON(t)["status"].(string)
			}
			require.Equal(t, "completed", status)
			assert.Equal(t, "12340000", received().String(), "paid once, exactly")
		})
	}
}

// The guide shape renders approval too, and approve answers the withdrawal in that shape
// (validated against gen/guide-openapi.yaml).
func TestApprovalInTheGuideShape(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newShapedEnv(t, b, settlement.Guide)
			p := e.policyMerchant(0)
			require.NoError(t, e.app.Store.InTx(context.Background(), func(tx *store.Tx) error { // the guide's quotes differ: credit the ledger
				return tx.AppendLedger(p.id, domain.ModeLive, store.LedgerPaymentCredit, 50_000, nil, nil, time.Now())
			}))
			bob := bearerHeader(e.personToken(e.member(p.id, "bob@shop.example", domain.RoleAdmin), "bob@shop.example"))
			e.settings(p, map[string]any{"approvalThresholdCents": 1_000})
			r := e.do(http.MethodPost, withdrawalsPath, p.key, map[string]any{"amountInCents": 1_001, "chainId": 8453, "recipientAddress": recipient})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			assert.Equal(t, true, approval(t, r)["required"])
			id := r.JSON(t)["id"].(string)
			r = e.do(http.MethodPost, p.base+"/withdrawals/"+id+"/approve", "", nil, bob...)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			assert.EqualValues(t, 8453, r.JSON(t)["chainId"], "the guide's numeric chain id")
			assert.Equal(t, "bob@shop.example", approval(t, r)["approvedBy"])
		})
	}
}
