package txmgr

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/store"
)

// Fees are today's tip and fee cap for a new transaction (Caps).
func (m *Manager) Fees(ctx context.Context) (tip, feeCap *big.Int, err error) {
	if tip, err = m.Chain.SuggestGasTipCap(ctx); err != nil {
		return nil, nil, err
	}
	base, err := m.Chain.HeaderBaseFee(ctx)
	if err != nil {
		return nil, nil, err
	}
	tip, feeCap = Caps(tip, base)
	return tip, feeCap, nil
}

// Reserved is what a sender's signed, not yet mined transactions will take of its native
// balance: their value and their gas at their newest fee cap. Mined ones are already paid.
func Reserved(open []store.OutgoingTx) decimal.Decimal {
	out := decimal.Zero
	for _, x := range open {
		if x.Status != store.OutgoingSigned || len(x.Attempts) == 0 {
			continue
		}
		feeCap := x.Attempts[len(x.Attempts)-1].FeeCap
		out = out.Add(x.TxValue).Add(feeCap.Mul(decimal.NewFromInt(x.GasLimit)))
	}
	return out
}

// HotShort says why the hot wallet cannot pay a new transaction's native value and gas at
// feeCap now ("" when it can), counting what its signed transactions not yet mined will take.
func (m *Manager) HotShort(ctx context.Context, o store.OutgoingTx, feeCap *big.Int) (string, error) {
	addr := m.Wallet.Address()
	eth, err := m.Chain.BalanceAt(ctx, addr, nil)
	if err != nil {
		return "", err
	}
	open, err := m.Store.Read(ctx).OpenOutgoingTxs(m.Info.ID, addr.Hex())
	if err != nil {
		return "", err
	}
	need := decimal.NewFromBigInt(GasCost(feeCap, o.GasLimit), 0).Add(o.TxValue).Add(Reserved(open))
	have := decimal.NewFromBigInt(eth, 0)
	if have.LessThan(need) {
		return fmt.Sprintf("the hot wallet %s holds %s wei of the native token; the payouts signed and this one need %s with gas",
			strings.ToLower(addr.Hex()), have, need), nil
	}
	return "", nil
}
