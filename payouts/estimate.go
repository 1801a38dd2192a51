package payouts

import (
	"context"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/txmgr"
)

// Estimate is what a withdrawal would pay out now on the manager's chain (nothing reserved).
type Estimate struct {
	AmountAsset decimal.Decimal // smallest unit, as the payout computes it (convert)
	Rate        decimal.Decimal // USD per whole token
	// NetworkFee is the expected fee (gas × (base fee + tip)) in the native coin's smallest
	// unit, and in cents at the native coin's price (rounded up); nil when no hot wallet key
	// lets the chain estimate the gas.
	NetworkFee      *decimal.Decimal
	NetworkFeeCents *int64
	HotWalletCanPay bool
	HotWallet       string // "" when this chain has no hot wallet key
}

// estimateRecipient stands for the withdrawal's recipient when estimating gas: an address that
// holds nothing of the token costs the most to pay (its balance slot goes from zero), so the
// estimate is an upper bound for a real recipient.
var estimateRecipient = common.HexToAddress("0x00000000000000000000000000000000000e5715")

// Estimate converts cents of tok as the payout would, and, when the chain has a hot wallet,
// estimates the payout's gas and fee and whether the hot wallet could fund it now (the token
// amount, and the native coin for the value and gas at the fee cap a payout reserves, counting
// the transactions it has signed but not yet seen mined). It reads the chain and the prices;
// it never reads or changes the manager's round state, so it is safe beside the running loop.
func (m *Manager) Estimate(ctx context.Context, tok domain.Token, cents int64) (Estimate, error) {
	units, rate, err := m.convert(ctx, tok, cents)
	if err != nil {
		return Estimate{}, err
	}
	out := Estimate{AmountAsset: units, Rate: rate}
	if m.Wallet == nil {
		return out, nil
	}
	out.HotWallet = strings.ToLower(m.Wallet.Address().Hex())
	short, err := m.tokenShort(ctx, tok, units)
	if err != nil {
		return Estimate{}, err
	}
	gas := int64(21_000)
	if short == "" {
		// The payout's own gas estimate (a node cannot estimate a transfer the wallet cannot make).
		o, err := m.payout(ctx, domain.Withdrawal{ID: uuid.Nil, Token: tok, RecipientAddress: strings.ToLower(estimateRecipient.Hex())}, units, rate)
		if err != nil {
			return Estimate{}, err
		}
		gas = o.GasLimit
	} else if tok.AssetType == domain.ERC20 {
		gas = 80_000 // a typical ERC-20 transfer to a fresh holder with the payout's margin
	}
	tip, err := m.Chain.SuggestGasTipCap(ctx)
	if err != nil {
		return Estimate{}, err
	}
	base, err := m.Chain.HeaderBaseFee(ctx)
	if err != nil {
		return Estimate{}, err
	}
	_, feeCap := txmgr.Caps(tip, base)
	fee := decimal.NewFromBigInt(txmgr.GasCost(new(big.Int).Add(base, tip), gas), 0)
	out.NetworkFee = &fee
	if price, err := m.nativePrice(ctx); err == nil {
		c := fee.Shift(-m.Info.NativeDecimals).Mul(price).Shift(2).Ceil().IntPart()
		out.NetworkFeeCents = &c
	}
	if short != "" {
		return out, nil
	}
	eth, err := m.Chain.BalanceAt(ctx, m.Wallet.Address(), nil)
	if err != nil {
		return Estimate{}, err
	}
	open, err := m.Store.Read(ctx).OpenOutgoingTxs(m.Info.ID, m.Wallet.Address().Hex())
	if err != nil {
		return Estimate{}, err
	}
	value := decimal.Zero
	if tok.AssetType == domain.Native {
		value = units
	}
	need := decimal.NewFromBigInt(txmgr.GasCost(feeCap, gas), 0).Add(value).Add(txmgr.Reserved(open))
	out.HotWalletCanPay = !decimal.NewFromBigInt(eth, 0).LessThan(need)
	return out, nil
}
