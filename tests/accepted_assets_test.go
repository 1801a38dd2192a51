package tests

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

const (
	baseUSDCID = "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
	l1ETHID    = "eip155:1/slip44:60"
)

// quotedTokens lists the token ids and CAIP-2 chain ids of a payment body's quotes.
func quotedTokens(t *testing.T, p map[string]any) (tokens, chainIDs []string) {
	t.Helper()
	for _, q := range p["quotes"].([]any) {
		qm := q.(map[string]any)
		tokens = append(tokens, qm["token"].(map[string]any)["id"].(string))
		chainIDs = append(chainIDs, qm["chainId"].(string))
	}
	return tokens, chainIDs
}

func TestAcceptedAssetsNarrowQuotes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		picky := e.merchant(merchantOpts{deposits: true, name: "Picky"})
		plain := e.merchant(merchantOpts{deposits: true, name: "Plain"})
		ids, err := e.app.Merchants.ParseAssets("eip155:8453/USDC,eip155:1/ETH")
		require.NoError(t, err)
		require.NoError(t, e.app.Merchants.SetAcceptedAssets(ctx, picky.Merchant.ID, ids))

		var served []string // a live key's quotes: every served token of a live chain
		for _, tk := range e.app.Catalog.MerchantTokens(domain.AcceptedAssets{}) {
			if domain.ChainMode(tk.Chain).Live() {
				served = append(served, tk.ID)
			}
		}
		require.Len(t, served, 21, "every seeded mainnet token is served (networks all, static prices)")

		// A payment and a deposit of the restricted merchant: exactly the two chosen quotes,
		// in quote order (chain id, native first, symbol), also when read back.
		for _, body := range []map[string]any{payment(1000), payment(1000, "type", "deposit", "customerRefId", "c-1")} {
			res := e.createPayment(picky.SecretKey, body)
			p := res["payment"].(map[string]any)
			tokens, chainIDs := quotedTokens(t, p)
			assert.Equal(t, []string{l1ETHID, baseUSDCID}, tokens, "%v", body["type"])
			assert.Equal(t, []string{"eip155:1", "eip155:8453"}, chainIDs)
			if body["type"] == nil {
				// amountDueCents is the cheapest quote's: Base's 5-cent fee, not Ethereum's 150.
				assert.EqualValues(t, 1005, p["amountDueCents"])
			}
			got := e.do(http.MethodGet, paymentsPath+"/"+res["paymentId"].(string), picky.SecretKey, nil)
			require.Equal(t, 200, got.Status, string(got.Body))
			again, _ := quotedTokens(t, got.JSON(t))
			assert.Equal(t, tokens, again)
		}

		// Another merchant still gets every served token, for payments and deposits.
		for _, body := range []map[string]any{payment(1000), payment(1000, "type", "deposit")} {
			tokens, _ := quotedTokens(t, e.createPayment(plain.SecretKey, body)["payment"].(map[string]any))
			assert.Equal(t, served, tokens, "%v", body["type"])
		}

		// Back to the default: every served token again.
		require.NoError(t, e.app.Merchants.ResetAcceptedAssets(ctx, picky.Merchant.ID))
		tokens, _ := quotedTokens(t, e.createPayment(picky.SecretKey, payment(1000))["payment"].(map[string]any))
		assert.Equal(t, served, tokens)
	})
}

// A selection this deployment no longer serves (here a token added to the catalogue after the
// process loaded it; likewise a deprecated token or a chain outside --networks) quotes nothing:
// the create fails as when no price can be had, today a 500, and nothing is stored.
func TestAcceptedAssetsUnservedSelection(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		const late = "eip155:8453/erc20:0x00000000000000000000000000000000000000a1"
		db := e.rawDB()
		require.NoError(t, db.Exec(`INSERT INTO tokens (id, chain_id, symbol, market_api_id, contract_address, decimals, type, asset_type, status)
			VALUES (?, 8453, 'LATE', 'late', '0x00000000000000000000000000000000000000a1', 6, 'stablecoin', 'erc20', 'active')`, late).Error)
		require.NoError(t, db.Exec(`INSERT INTO merchant_accepted_assets (merchant_id, token_id) VALUES (?, ?)`, m.Merchant.ID, late).Error)

		acc, err := e.app.Merchants.AcceptedAssets(context.Background(), m.Merchant.ID)
		require.NoError(t, err)
		assert.False(t, acc.Default)
		assert.Empty(t, acc.Tokens)
		assert.Equal(t, []string{late}, acc.Unserved)

		before := e.countPayments()
		r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000))
		require.Equal(t, http.StatusServiceUnavailable, r.Status, string(r.Body))
		code, _, _ := r.errorFields(t)
		assert.EqualValues(t, "no_chain_available", code)
		assert.Contains(t, r.JSON(t)["error"].(map[string]any)["message"], "change the accepted assets", "retrying cannot help: say what can")
		assert.Equal(t, before, e.countPayments(), "nothing stored")
	})
}
