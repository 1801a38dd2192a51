package tests

import (
	"context"
	"crypto/ecdsa"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/store"
)

// Review of issue 23's refunds against the payout policy: the address book binds every address a
// team member (or a secret key) names, not only a withdrawal's.

// With allowlistOnly on, a secret key cannot withdraw to an address of its choosing; nor may it
// refund a payment to one (a refund's recipientAddress is the merchant's choice, not the
// customer's proof). A saved address past its cooling-off is allowed; a customer's claim is not
// bound by the address book.
func TestRefundRecipientFollowsTheAllowlist(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := e.policyMerchant(100_000)
		pid, _, _ := e.settledPayment(p.key, 5_000, 0)
		e.settings(p, map[string]any{"allowlistOnly": true})
		start := e.balance(p.id)

		refused(t, e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 1_000, "recipientAddress": recipient}),
			"recipient_not_in_address_book", "recipientAddress")
		refused(t, e.do(http.MethodPost, "/v1/merchants/"+p.id.String()+"/payments/"+pid+"/refunds", "",
			map[string]any{"amountInCents": 1_000, "recipientAddress": recipient}, p.admin...),
			"recipient_not_in_address_book", "recipientAddress")
		assert.Equal(t, start, e.balance(p.id), "nothing debited")

		book := p.base + "/address-book"
		r := e.do(http.MethodPost, book, "", map[string]any{"label": "Customer", "chainId": "eip155:8453", "address": recipient}, p.admin...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		refused(t, e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 1_000, "recipientAddress": recipient}),
			"recipient_cooling_off", "recipientAddress")

		e.settings(p, map[string]any{"addressCoolingOffHours": 0})
		e.waitOutLoosening(time.Minute)
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, book+"/"+r.JSON(t)["id"].(string), "", nil, p.admin...).Status)
		r = e.do(http.MethodPost, book, "", map[string]any{"label": "Customer", "chainId": "eip155:8453", "address": recipient}, p.admin...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		r = e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 1_000, "recipientAddress": recipient})
		require.Equal(t, http.StatusCreated, r.Status, "a saved, usable address: %s", r.Body)

		// Without an address the refund waits for its customer's claim, which the address book does not bind.
		r = e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 500})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		id, secret := claimLink(t, r.JSON(t)["claimUrl"].(string))
		r = e.do(http.MethodPost, claimPath+id+"/claim", "", map[string]any{"recipientAddress": "0x1111111111111111111111111111111111111111"},
			"X-Service-Refund-Secret", secret)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		got := e.refundOf(p.key, id)
		assert.Equal(t, "typed_address", got["recipientSource"])
		assert.Equal(t, true, got["approval"].(map[string]any)["required"], "a typed address still waits for a person")
	})
}

// A signature proves a paying address only if that address paid: a sender whose transfer the
// payment's settlement counted. Anyone can send a unit of the token to a deposit address the
// watcher still follows (a week past the payment's expiry): such a late transfer, credited on its
// own or not yet, makes its sender no payer — or whoever holds the claim link (a viewer, a leaked
// secret key that made the refund) would claim it with their own key, no approval asked.
func TestLateTransferSenderIsNoPayer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		key := m.SecretKey
		payer, err := crypto.GenerateKey()
		require.NoError(t, err)
		payerAddr := crypto.PubkeyToAddress(payer.PublicKey)
		pid, _, _ := e.settledPayment(key, 3_000, 0, payerAddr)

		late, err := crypto.GenerateKey()
		require.NoError(t, err)
		lateAddr := crypto.PubkeyToAddress(late.PublicKey)
		e.payFrom(key, pid, lateAddr) // after the settlement: not counted, not credited yet
		credited, err := crypto.GenerateKey()
		require.NoError(t, err)
		creditedAddr := crypto.PubkeyToAddress(credited.PublicKey)
		e.payFrom(key, pid, creditedAddr)
		e.creditOnItsOwn(pid, creditedAddr) // as CreditUncounted credits a late transfer

		r := e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 1_000})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		id, secret := claimLink(t, r.JSON(t)["claimUrl"].(string))
		hdr := []string{"X-Service-Refund-Secret", secret}
		v := e.do(http.MethodGet, claimPath+id, "", nil, hdr...)
		require.Equal(t, http.StatusOK, v.Status, string(v.Body))
		assert.Equal(t, []any{strings.ToLower(payerAddr.Hex())}, v.JSON(t)["payerAddresses"], "only the sender the settlement counted")

		for _, k := range []*ecdsa.PrivateKey{late, credited} {
			to := crypto.PubkeyToAddress(k.PublicKey)
			requireRefused(t, e.do(http.MethodPost, claimPath+id+"/claim", "", map[string]any{"recipientAddress": strings.ToLower(to.Hex()),
				"signature": signClaim(t, k, id, 8453, to)}, hdr...), 400, "signature_invalid")
		}
		assert.Equal(t, "awaiting_address", e.refundOf(key, id)["status"], "nothing changed")
		r = e.do(http.MethodPost, claimPath+id+"/claim", "", map[string]any{"recipientAddress": strings.ToLower(payerAddr.Hex()),
			"signature": signClaim(t, payer, id, 8453, payerAddr)}, hdr...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "payer_signature", e.refundOf(key, id)["recipientSource"])
	})
}

// creditOnItsOwn credits the payment's transfer from sender as a late transfer is credited
// (a transfer_credit in the ledger), as payments.OnChain.CreditUncounted does.
func (e *env) creditOnItsOwn(paymentID string, sender common.Address) {
	e.t.Helper()
	ts, err := e.app.Store.Read(context.Background()).PaymentTransfers(uuid.MustParse(paymentID))
	require.NoError(e.t, err)
	for _, tr := range ts {
		if strings.EqualFold(tr.From, sender.Hex()) {
			require.NoError(e.t, e.app.Store.InTx(context.Background(), func(tx *store.Tx) error {
				_, err := e.app.Core.CreditTransferTx(tx, *tr.PaymentID, tr.ID, 1, lifecycle.TransferNote{ChainID: "eip155:8453",
					TxHash: tr.TxHash, TokenID: tr.TokenID, AmountAsset: tr.Amount.String(), Reason: "late"})
				return err
			}))
			return
		}
	}
	e.t.Fatalf("no transfer from %s", sender.Hex())
}

// The excess is given back once: the dashboard hides "Refund the overpaid amount" once a live
// refund of exactly the excess exists (the checkout's included), and the checkout's offer
// likewise answers the merchant's refund of it instead of making a second one.
func TestOverpaidExcessIsNotRefundedTwice(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		e.app.Refunds.Policy = testPolicy{offer: true}
		pid, secret, _ := e.settledPayment(m.SecretKey, 2_000, 1_234_567)
		pay := []string{"X-Service-Payment-Secret", secret}
		r := e.do(http.MethodPost, paymentRefundsPath(pid), m.SecretKey, map[string]any{"amountAsset": "1234567", "recipientAddress": recipient})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		merchants := r.JSON(t)["id"].(string)
		start := e.balance(m.Merchant.ID)

		v := e.do(http.MethodGet, checkoutPath(pid), "", nil, pay...)
		require.Equal(t, http.StatusOK, v.Status, string(v.Body))
		assert.Equal(t, merchants, v.JSON(t)["overpaymentRefund"].(map[string]any)["refundId"], "the excess is already being refunded")
		r = e.do(http.MethodPost, checkoutPath(pid, "/overpayment-refund"), "", nil, pay...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, merchants, r.JSON(t)["refundId"], "no second refund of the excess")
		assert.Equal(t, start, e.balance(m.Merchant.ID))
		list := e.do(http.MethodGet, refundsPath+"?paymentId="+pid, m.SecretKey, nil).JSON(t)
		assert.EqualValues(t, 1, list["pagination"].(map[string]any)["total"])

		// Once the merchant's is cancelled, the customer may ask for it.
		require.Equal(t, http.StatusOK, e.do(http.MethodPost, refundsPath+"/"+merchants+"/cancel", m.SecretKey, nil).Status)
		r = e.do(http.MethodPost, checkoutPath(pid, "/overpayment-refund"), "", nil, pay...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.NotEqual(t, merchants, r.JSON(t)["refundId"])
	})
}

// The address book is partitioned by mode as the withdrawal configuration's chains are: an entry
// names a chain, and a token acting in test mode neither saves, lists nor removes an address on
// a live chain — test traffic (a test-mode service token, say) never opens the live allowlist.
func TestAddressBookIsPartitionedByMode(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := e.policyMerchant(100_000)
		e.settings(p, map[string]any{"allowlistOnly": true, "addressCoolingOffHours": 0})
		e.waitOutLoosening(time.Minute)
		tok, _, err := e.app.Tokens.MintService(context.Background(), p.id, domain.ModeTest, domain.RoleAdmin, time.Minute)
		require.NoError(t, err)
		test := bearerHeader(tok)
		book := p.base + "/address-book"

		r := e.do(http.MethodPost, book, "", map[string]any{"label": "Mine", "chainId": "eip155:8453", "address": recipient}, test...)
		require.Equal(t, http.StatusBadRequest, r.Status, "a live chain from a test-mode token: %s", r.Body)
		code, _, param := r.errorFields(t)
		assert.Equal(t, "chain_not_supported", code)
		assert.Equal(t, "chainId", param)
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000)), "recipient_not_in_address_book", "recipientAddress")

		r = e.do(http.MethodPost, book, "", map[string]any{"label": "Live", "chainId": "eip155:8453", "address": recipient}, p.admin...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		live := r.JSON(t)["id"].(string)
		r = e.do(http.MethodPost, book, "", map[string]any{"label": "Test", "chainId": "eip155:84532", "address": recipient}, test...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		testEntry := r.JSON(t)["id"].(string)

		ids := func(hdr []string) []string {
			r := e.do(http.MethodGet, book, "", nil, hdr...)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var out []string
			for _, it := range r.JSON(t)["data"].([]any) {
				out = append(out, it.(map[string]any)["id"].(string))
			}
			return out
		}
		assert.Equal(t, []string{testEntry}, ids(test))
		assert.Equal(t, []string{live}, ids(p.admin))
		requireRefused(t, e.do(http.MethodDelete, book+"/"+live, "", nil, test...), 404, "resource_not_found")
		assert.Equal(t, []string{live}, ids(p.admin), "the live entry stays")
		r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	})
}
