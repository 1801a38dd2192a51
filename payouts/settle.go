package payouts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/txmgr"
)

// hooks are what a payout's end does to its withdrawal or refund, and a sweep batch's to the
// sweeps it carries, committed with the transaction's outcome. A deposit address's own sweep and
// a gas top-up need none: their sweep moves on by the transaction's status (advanceSweeps).
func (m *Manager) hooks(res *RoundResult) txmgr.Hooks {
	return txmgr.Hooks{
		Final: func(ctx context.Context, o store.OutgoingTx, f txmgr.Final, record txmgr.Record) error {
			if isBatch(o) {
				return m.settleBatch(ctx, o, f, record, res)
			}
			if o.RefundID != nil {
				return m.settleRefund(ctx, o, f, record, res)
			}
			if isRelay(o) {
				return m.settleRelay(ctx, o, f, record)
			}
			if o.WithdrawalID == nil {
				return record(nil)
			}
			return m.settle(ctx, o, f, record, res)
		},
		Abandoned: func(ctx context.Context, o store.OutgoingTx, reason string, record txmgr.Record) error {
			if isBatch(o) {
				return m.abandonBatch(ctx, o, reason, record)
			}
			if o.RefundID != nil {
				return m.abandonRefund(o, reason, record, res)
			}
			if isRelay(o) {
				return m.abandonRelay(ctx, o, reason, record)
			}
			if o.WithdrawalID == nil {
				return record(nil) // a sweep: the transfers it covered were orphaned with their chain
			}
			// The withdrawal fails with the amount restored.
			err := record(func(tx *store.Tx) error {
				_, err := m.Core.UpdateWithdrawalTx(tx, *o.WithdrawalID, func(w *domain.Withdrawal) error {
					w.ErrorMessage = &reason
					return w.TransitionTo(domain.WithdrawalFailed)
				})
				return err
			})
			if err == nil {
				res.Failed++
			}
			return err
		},
	}
}

// settle completes a withdrawal whose payout reached the chain's depth, with a receipt from the
// chain, or fails it when the payout reverted (the lifecycle core books the reversal).
func (m *Manager) settle(ctx context.Context, o store.OutgoingTx, f txmgr.Final, record txmgr.Record, res *RoundResult) error {
	now := m.Now()
	rc, hash := f.Receipt, f.Hash
	block := rc.BlockNumber.Int64()
	tok, ok := m.Catalog.Tokens[o.TokenID]
	if !ok {
		return fmt.Errorf("payout %s: token %s is not in the catalogue", o.ID, o.TokenID)
	}
	cost, costUSD := m.gasCost(ctx, f)
	err := record(func(tx *store.Tx) error {
		_, err := m.Core.UpdateWithdrawalTx(tx, *o.WithdrawalID, func(w *domain.Withdrawal) error {
			if !f.Succeeded {
				msg := fmt.Sprintf("the payout transaction %s reverted on chain (block %d, status 0); the amount is back in the balance", hash, block)
				w.ErrorMessage = &msg
				return w.TransitionTo(domain.WithdrawalFailed)
			}
			w.Receipt = &domain.WithdrawalReceipt{WithdrawalID: w.ID, Token: tok, SettledAmountAsset: o.AmountAsset,
				SettledAmountUSD: decimal.New(w.AmountInCents, -2), TxHash: hash, TxBlockNumber: block,
				TxTimestamp: time.Unix(int64(f.Block.Time), 0).UTC(), TxSenderAddress: strings.ToLower(o.Sender), TxGasUsed: int64(rc.GasUsed),
				TxTotalCost: cost, TxTotalCostUSDFractions: costUSD, TxIsSponsored: false, ProcessedBy: domain.ProcessedByCron, CreatedAt: now}
			return w.TransitionTo(domain.WithdrawalCompleted)
		})
		return err
	})
	if err != nil {
		return err
	}
	if f.Succeeded {
		res.Completed++
		m.Log.Info("withdrawal paid", "withdrawal", *o.WithdrawalID, "chain", chains.CAIP2(m.Info.ID), "tx", hash, "block", block)
	} else {
		res.Failed++
		m.Log.Error("withdrawal failed on chain (status 0)", "withdrawal", *o.WithdrawalID, "tx", hash, "block", block)
	}
	return nil
}

// gasCost is what a mined payout cost, in the native smallest unit and in USD millionths (0 when
// no price is available: a reported cost, never guessed).
func (m *Manager) gasCost(ctx context.Context, f txmgr.Final) (decimal.Decimal, int64) {
	cost := money.GasCost(f.Receipt.GasUsed, f.Receipt.EffectiveGasPrice)
	costUSD := int64(0)
	if p, err := m.nativePrice(ctx); err == nil {
		if fr, err := money.GasCostUSDFractions(cost, m.Info.NativeDecimals, p); err == nil {
			costUSD = fr
		}
	}
	return cost, costUSD
}

func (m *Manager) nativePrice(ctx context.Context) (decimal.Decimal, error) {
	t, ok := m.Catalog.NativeToken(m.Info.ID)
	if !ok {
		return decimal.Zero, fmt.Errorf("no native token for %s", chains.CAIP2(m.Info.ID))
	}
	return m.Prices.PriceUSD(ctx, pricing.Asset{Symbol: t.Symbol, MarketAPIID: t.MarketAPIID})
}
