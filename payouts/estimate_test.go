package payouts_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
)

// The estimate converts exactly as the payout then does, prices the gas, and says whether the
// hot wallet could pay: a funded devnet wallet can, an empty fresh key cannot.
func TestEstimateIsWhatThePayoutSends(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend})
		f.fund(10_000)
		f.setToken("USDC")
		tok, ok := f.a.Catalog.Tokens[devnetUSDC(f)]
		require.True(t, ok)
		est, err := f.m.Estimate(f.ctx, tok, 1234)
		require.NoError(t, err)
		assert.Equal(t, "12340000", est.AmountAsset.String())
		assert.Equal(t, "1", est.Rate.String())
		require.NotNil(t, est.NetworkFee)
		assert.True(t, est.NetworkFee.IsPositive())
		assert.True(t, est.HotWalletCanPay)
		assert.Equal(t, strings.ToLower(f.m.Wallet.Address().Hex()), est.HotWallet)

		w, _ := f.withdraw(1234)
		f.round()
		o, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
		require.NoError(t, err)
		assert.Equal(t, est.AmountAsset.String(), o.AmountAsset.String(), "the estimate is the payout's amount")

		empty, _ := newFixtureWithHotWallet(t, backend)
		est, err = empty.m.Estimate(empty.ctx, tok, 1234)
		require.NoError(t, err)
		assert.False(t, est.HotWalletCanPay, "an empty hot wallet")
		assert.Equal(t, "12340000", est.AmountAsset.String())
	})
}

func devnetUSDC(f *fixture) string {
	for id, t := range f.a.Catalog.Tokens {
		if t.Chain.ID == devnet.ChainID && t.Symbol == "USDC" {
			return id
		}
	}
	return ""
}
