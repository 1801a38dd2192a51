package tests

import (
	"context"
	"crypto/ecdsa"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/refunds"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/store"
)

// The customer's claim of a refund (the refund-claim API behind the hosted page) and the
// checkout's overpayment refund, on both databases, every answer checked against openapi.yaml.

const claimPath = "/v1/external/refund-claim-auth/refunds/"

// testPolicy stands in for the merchant's payout policy (package policy): an approval above
// threshold cents, and the overpayment offer.
type testPolicy struct {
	threshold *int64
	offer     bool
}

func (p testPolicy) Check(_ context.Context, _ *store.Tx, _ domain.Merchant, o domain.Outflow) (domain.PolicyDecision, error) {
	return domain.PolicyDecision{ApprovalRequired: p.threshold != nil && o.Cents > *p.threshold}, nil
}

func (p testPolicy) Settings(_ *store.Tx, id uuid.UUID, mode domain.Mode) (domain.PayoutSettings, error) {
	s := domain.DefaultPayoutSettings(id, mode)
	s.OfferOverpaymentRefund = p.offer
	return s, nil
}

// claimLink splits a claimUrl into the refund id and its secret (the fragment).
func claimLink(t *testing.T, claimURL string) (id, secret string) {
	t.Helper()
	u, err := url.Parse(claimURL)
	require.NoError(t, err)
	return strings.TrimPrefix(u.Path, "/refund/"), u.Fragment
}

// payFrom records, as the watcher would, a transfer from payer to the payment's deposit address.
func (e *env) payFrom(key, paymentID string, payer common.Address) {
	e.t.Helper()
	p := e.do(http.MethodGet, paymentsPath+"/"+paymentID, key, nil).JSON(e.t)
	addr := p["depositAddress"].(map[string]any)
	pid := uuid.MustParse(paymentID)
	now := time.Now().UTC()
	require.NoError(e.t, e.app.Store.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := tx.RecordTransfer(store.Transfer{ID: uuid.New(), ChainID: 8453, TxHash: "0x" + strings.ReplaceAll(paymentID, "-", "")[:24] + strings.ToLower(payer.Hex()[2:]), LogIndex: 0,
			BlockNumber: 1, BlockHash: "0x" + strings.Repeat("5", 64), BlockTime: now,
			TokenID: "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", From: strings.ToLower(payer.Hex()),
			To: addr["address"].(string), Amount: decimal.NewFromInt(1), DepositAddressID: uuid.MustParse(addr["id"].(string)),
			PaymentID: &pid, CreatedAt: now})
		return err
	}))
}

// signClaim signs refund id's claim naming recipient on chainID as a wallet does (v 27/28).
func signClaim(t *testing.T, key *ecdsa.PrivateKey, id string, chainID int64, recipient common.Address) string {
	t.Helper()
	hash, _, err := apitypes.TypedDataAndHash(refunds.TypedData(uuid.MustParse(id), chainID, recipient))
	require.NoError(t, err)
	sig, err := crypto.Sign(hash, key)
	require.NoError(t, err)
	sig[64] += 27
	return hexutil.Encode(sig)
}

func TestRefundClaims(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{name: "Claims Shop"})
		key := m.SecretKey
		payer, err := crypto.GenerateKey()
		require.NoError(t, err)
		payerAddr := crypto.PubkeyToAddress(payer.PublicKey)
		pid, _, _ := e.settledPayment(key, 3_000, 0, payerAddr)
		start := e.balance(m.Merchant.ID)
		create := func(cents int) (string, string) {
			r := e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": cents})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			return claimLink(t, r.JSON(t)["claimUrl"].(string))
		}
		id, secret := create(1_000)
		hdr := func(s string) []string { return []string{"X-Service-Refund-Secret", s} }

		// The claim page's view, by the secret only.
		requireRefused(t, e.do(http.MethodGet, claimPath+id, "", nil), 401, "invalid_refund_secret")
		requireRefused(t, e.do(http.MethodGet, claimPath+id, "", nil, hdr("rcs_wrong")...), 404, "refund_not_found")
		requireRefused(t, e.do(http.MethodGet, claimPath+uuid.NewString(), "", nil, hdr(secret)...), 404, "refund_not_found")
		r := e.do(http.MethodGet, claimPath+id, "", nil, hdr(secret)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		v := r.JSON(t)
		assert.Equal(t, "awaiting_address", v["status"])
		assert.Equal(t, "Claims Shop", v["merchantDisplayName"])
		assert.Equal(t, "10000000", v["amountAsset"])
		assert.Equal(t, []any{strings.ToLower(payerAddr.Hex())}, v["payerAddresses"])
		assert.Equal(t, "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", v["tokenAddress"])
		td := v["typedData"].(map[string]any)
		assert.Equal(t, map[string]any{"name": "paymentsd refund", "version": "1", "chainId": float64(8453)}, td["domain"])
		assert.Equal(t, map[string]any{"refundId": id, "recipient": "0x0000000000000000000000000000000000000000", "chainId": float64(8453)}, td["message"])
		assert.Equal(t, "RefundClaim", td["primaryType"])
		assert.Equal(t, []any{map[string]any{"name": "refundId", "type": "string"}, map[string]any{"name": "recipient", "type": "address"},
			map[string]any{"name": "chainId", "type": "uint256"}}, td["types"].(map[string]any)["RefundClaim"])

		// A signature proves a paying address only for the refund, recipient and chain it names.
		to := common.HexToAddress(recipient)
		stranger, err := crypto.GenerateKey()
		require.NoError(t, err)
		claim := func(body map[string]any) response {
			return e.do(http.MethodPost, claimPath+id+"/claim", "", body, hdr(secret)...)
		}
		requireRefused(t, claim(map[string]any{"recipientAddress": recipient, "signature": signClaim(t, stranger, id, 8453, to)}), 400, "signature_invalid")
		requireRefused(t, claim(map[string]any{"recipientAddress": recipient, "signature": signClaim(t, payer, id, 1, to)}), 400, "signature_invalid")
		requireRefused(t, claim(map[string]any{"recipientAddress": recipient, "signature": signClaim(t, payer, uuid.NewString(), 8453, to)}), 400, "signature_invalid")
		other := common.HexToAddress("0x1111111111111111111111111111111111111111")
		requireRefused(t, claim(map[string]any{"recipientAddress": recipient, "signature": signClaim(t, payer, id, 8453, other)}), 400, "signature_invalid")
		r = claim(map[string]any{"recipientAddress": recipient, "signature": signClaim(t, payer, id, 8453, to)})
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "pending", r.JSON(t)["status"])
		assert.Equal(t, recipient, r.JSON(t)["recipientAddress"])
		got := e.refundOf(key, id)
		assert.Equal(t, "payer_signature", got["recipientSource"])
		assert.Equal(t, false, got["approval"].(map[string]any)["required"], "a payer's proof needs no approval")
		assert.Nil(t, got["claimUrl"], "no link once claimed")
		requireRefused(t, claim(map[string]any{"recipientAddress": recipient}), 409, "invalid_state")
		assert.Equal(t, []string{"refund.created", "refund.pending"}, e.refundEvents(id))
		sendable, err := e.app.Store.Read(context.Background()).PendingRefunds(8453, 10)
		require.NoError(t, err)
		assert.Equal(t, []uuid.UUID{uuid.MustParse(id)}, sendable)

		// A typed address: recorded, and waits for a team member's approval.
		id2, secret2 := create(500)
		requireRefused(t, e.do(http.MethodGet, claimPath+id2, "", nil, hdr(secret)...), 404, "refund_not_found")
		typed := func(addr string) response {
			return e.do(http.MethodPost, claimPath+id2+"/claim", "", map[string]any{"recipientAddress": addr}, hdr(secret2)...)
		}
		requireRefused(t, typed("0x9858effd232b4033e47d90003d41ec34ecaeda94"), 400, "recipient_not_allowed")
		r = typed(recipient)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		got = e.refundOf(key, id2)
		assert.Equal(t, "pending", got["status"])
		assert.Equal(t, "typed_address", got["recipientSource"])
		assert.Equal(t, true, got["approval"].(map[string]any)["required"])
		sendable, err = e.app.Store.Read(context.Background()).PendingRefunds(8453, 10)
		require.NoError(t, err)
		assert.Equal(t, []uuid.UUID{uuid.MustParse(id)}, sendable, "never sent while its approval waits")
		assert.Equal(t, start-1_500, e.balance(m.Merchant.ID))

		// An unclaimed refund expires: cancelled, the balance restored; a late claim is refused.
		id3, secret3 := create(250)
		e.app.Refunds.Now = func() time.Time { return time.Now().UTC().Add(31 * 24 * time.Hour) }
		requireRefused(t, e.do(http.MethodPost, claimPath+id3+"/claim", "", map[string]any{"recipientAddress": recipient}, hdr(secret3)...), 409, "invalid_state")
		n, err := e.app.Refunds.ExpireClaims(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Equal(t, "cancelled", e.refundOf(key, id3)["status"])
		assert.Equal(t, start-1_500, e.balance(m.Merchant.ID))
		n, err = e.app.Refunds.ExpireClaims(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 0, n, "once")
		assert.Equal(t, []string{"refund.created", "refund.cancelled"}, e.refundEvents(id3))
	})
}

func TestOverpaymentRefund(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		pid, secret, settled := e.settledPayment(m.SecretKey, 2_000, 1_234_567) // 1.234567 USDC too much
		exact, exactSecret, _ := e.settledPayment(m.SecretKey, 2_000, 0)
		pay := func(id, s string) []string { return []string{"X-Service-Payment-Secret", s} }
		view := func() map[string]any {
			r := e.do(http.MethodGet, checkoutPath(pid), "", nil, pay(pid, secret)...)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			return r.JSON(t)
		}
		ask := func(id, s string) response {
			return e.do(http.MethodPost, checkoutPath(id, "/overpayment-refund"), "", nil, pay(id, s)...)
		}

		// Not offered by the merchant's settings (the default).
		assert.Nil(t, view()["overpaymentRefund"])
		requireRefused(t, ask(pid, secret), 409, "payment_not_refundable")

		e.app.Refunds.Policy = testPolicy{offer: true}
		assert.Equal(t, map[string]any{"excessAmountAsset": "1234567", "tokenSymbol": "USDC", "tokenDecimals": float64(6), "refundId": nil},
			view()["overpaymentRefund"])
		r := ask(pid, secret)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		o := r.JSON(t)
		assert.Equal(t, "1234567", o["amountAsset"], "exactly the excess")
		id, claimSecret := claimLink(t, o["claimUrl"].(string))
		assert.Equal(t, o["refundId"], id)
		assert.NotEmpty(t, claimSecret)
		again := ask(pid, secret)
		require.Equal(t, http.StatusOK, again.Status)
		assert.Equal(t, id, again.JSON(t)["refundId"], "once per payment")
		assert.Equal(t, id, view()["overpaymentRefund"].(map[string]any)["refundId"])
		got := e.refundOf(m.SecretKey, id)
		assert.Equal(t, "awaiting_address", got["status"])
		assert.EqualValues(t, 123, got["amountInCents"], "valued at the payment's rate, rounded down")
		assert.Equal(t, "overpaid", got["reason"])
		assert.Nil(t, got["approval"].(map[string]any)["approvedBy"])
		assert.Equal(t, settled.String(), "21284567")

		// A payment paid exactly has nothing to give back.
		r = e.do(http.MethodGet, checkoutPath(exact), "", nil, pay(exact, exactSecret)...)
		assert.Nil(t, r.JSON(t)["overpaymentRefund"])
		requireRefused(t, ask(exact, exactSecret), 409, "payment_not_refundable")

		// Cancelled by the merchant: the customer may ask again, and gets a new one.
		require.Equal(t, http.StatusOK, e.do(http.MethodPost, refundsPath+"/"+id+"/cancel", m.SecretKey, nil).Status)
		r = ask(pid, secret)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.NotEqual(t, id, r.JSON(t)["refundId"])
	})
}

// Wrong claim secrets are throttled per refund (one customer, 20 tries) as the checkout's
// payment secrets are, and the right secret is still answered.
func TestRefundClaimSecretsAreThrottled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		pid, _, _ := e.settledPayment(m.SecretKey, 1_000, 0)
		r := e.do(http.MethodPost, paymentRefundsPath(pid), m.SecretKey, map[string]any{"amountInCents": 100})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		id, secret := claimLink(t, r.JSON(t)["claimUrl"].(string))
		limited := false
		for i := range 25 {
			r := e.do(http.MethodGet, claimPath+id, "", nil, "X-Service-Refund-Secret", "rcs_guess"+strconv.Itoa(i))
			if r.Status == http.StatusTooManyRequests {
				limited = true
				assert.NotEmpty(t, r.Header.Get("Retry-After"))
				break
			}
			requireRefused(t, r, 404, "refund_not_found")
		}
		assert.True(t, limited, "guessing is throttled")
		r = e.do(http.MethodGet, claimPath+id, "", nil, "X-Service-Refund-Secret", secret)
		assert.Equal(t, http.StatusOK, r.Status, "the customer's own secret still works: %s", r.Body)
	})
}

// The guide shape serves refunds as the typed schema does (its spec carries the same Refund),
// and its payments show amountRefundedCents.
func TestRefundsInTheGuideShape(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newShapedEnv(t, backend, settlement.Guide)
			m := e.merchant(merchantOpts{})
			pid, _, _ := e.settledPayment(m.SecretKey, 1_000, 0)
			r := e.do(http.MethodPost, paymentRefundsPath(pid), m.SecretKey, map[string]any{"amountInCents": 100, "recipientAddress": recipient})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			id := r.JSON(t)["id"].(string)
			assert.Equal(t, http.StatusOK, e.do(http.MethodGet, refundsPath+"/"+id, m.SecretKey, nil).Status)
			assert.Equal(t, http.StatusOK, e.do(http.MethodGet, refundsPath, m.SecretKey, nil).Status)
			p := e.do(http.MethodGet, paymentsPath+"/"+pid, m.SecretKey, nil)
			require.Equal(t, http.StatusOK, p.Status)
			assert.EqualValues(t, 100, p.JSON(t)["amountRefundedCents"])
		})
	}
}
