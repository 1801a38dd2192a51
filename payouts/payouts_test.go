package payouts_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

func forEachBackend(t *testing.T, fn func(t *testing.T, backend string)) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) { fn(t, b) })
	}
}

// A payout end to end in each kind of token — USDC, USDT (whose transfer returns nothing) and
// native ETH — with the chain's own balances and every receipt field checked.
func TestPayoutEndToEnd(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		for _, tc := range []struct {
			symbol, token string
			units         *big.Int // $12.34 in the token's smallest unit
		}{
			{"USDC", devnet.USDCAddress, big.NewInt(12_340_000)},
			{"USDT", devnet.USDTAddress, big.NewInt(12_340_000)},
			{"ETH", "", new(big.Int).Div(new(big.Int).Mul(big.NewInt(1234), new(big.Int).Exp(big.NewInt(10), big.NewInt(16), nil)), big.NewInt(3000))},
		} {
			t.Run(tc.symbol, func(t *testing.T) {
				f := newFixture(t, opts{backend: backend})
				f.fund(10_000)
				f.setToken(tc.symbol)
				hot := f.m.Wallet.Address()
				assert.Equal(t, devnet.AccountAddress(devnet.HotWalletAccount), hot, "the devnet's development hot wallet")
				hotBefore := f.tokenBalance(tc.token, hot)
				w, to := f.withdraw(1234)
				assert.Equal(t, int64(10_000-100-1234), f.balance(), "debited at creation (the $100 credit is net of the 1% fee)")

				res := f.round()
				assert.Equal(t, 1, res.Signed)
				got := f.withdrawal(w.ID)
				assert.Equal(t, domain.WithdrawalProcessing, got.Status)
				o, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
				require.NoError(t, err)
				require.Len(t, o.Attempts, 1)
				require.NotNil(t, o.Attempts[0].BroadcastAt, "broadcast after the commit")
				assert.Equal(t, tc.units.String(), o.AmountAsset.String())

				f.settleAll(w.ID)
				got = f.withdrawal(w.ID)
				require.Equal(t, domain.WithdrawalCompleted, got.Status)
				assert.Equal(t, tc.units.String(), f.tokenBalance(tc.token, to).String(), "the recipient got the amount, once")

				r := got.Receipt
				require.NotNil(t, r)
				rc, err := f.eth.TransactionReceipt(f.ctx, common.HexToHash(r.TxHash))
				require.NoError(t, err)
				assert.Equal(t, types.ReceiptStatusSuccessful, rc.Status)
				header, err := f.eth.HeaderByNumber(f.ctx, rc.BlockNumber)
				require.NoError(t, err)
				chainTx, _, err := f.eth.TransactionByHash(f.ctx, rc.TxHash)
				require.NoError(t, err)
				sender, err := types.Sender(types.LatestSignerForChainID(chainTx.ChainId()), chainTx)
				require.NoError(t, err)
				assert.Equal(t, strings.ToLower(o.Attempts[0].Hash), r.TxHash)
				assert.Equal(t, rc.BlockNumber.Int64(), r.TxBlockNumber)
				assert.Equal(t, int64(header.Time), r.TxTimestamp.Unix())
				assert.Equal(t, strings.ToLower(sender.Hex()), r.TxSenderAddress)
				assert.Equal(t, strings.ToLower(hot.Hex()), r.TxSenderAddress)
				assert.Equal(t, int64(rc.GasUsed), r.TxGasUsed)
				cost := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
				assert.Equal(t, cost.String(), r.TxTotalCost.String())
				assert.Equal(t, new(big.Int).Quo(new(big.Int).Mul(cost, big.NewInt(3000)), big.NewInt(1e12)).Int64(), r.TxTotalCostUSDFractions,
					"the cost at the devnet's 18 native decimals and ETH's $3000, in USD millionths, rounded down")
				assert.False(t, r.TxIsSponsored)
				assert.Equal(t, domain.ProcessedByCron, r.ProcessedBy)
				assert.Equal(t, tc.units.String(), r.SettledAmountAsset.String())
				assert.Equal(t, "12.34", r.SettledAmountUSD.StringFixed(2))
				assert.Equal(t, w.Token.ID, r.Token.ID)

				// The hot wallet paid the amount (and, for ETH, the gas too).
				spent := new(big.Int).Sub(hotBefore, f.tokenBalance(tc.token, hot))
				want := new(big.Int).Set(tc.units)
				if tc.token == "" {
					want.Add(want, cost)
				}
				assert.Equal(t, want.String(), spent.String())
				evs, err := f.a.Store.Read(f.ctx).EntityEvents(w.ID)
				require.NoError(t, err)
				var types_ []string
				for _, e := range evs {
					types_ = append(types_, string(e.Type))
				}
				assert.Equal(t, []string{"withdrawal.created", "withdrawal.processing", "withdrawal.completed"}, types_)
				o, err = f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
				require.NoError(t, err)
				assert.Equal(t, store.OutgoingConfirmed, o.Status)
			})
		}
	})
}
