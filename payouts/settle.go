package payouts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
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
			return abandonPayout(record, res, func(tx *store.Tx) error {
				_, err := m.Core.UpdateWithdrawalTx(tx, *o.WithdrawalID, func(w *domain.Withdrawal) error {
					w.ErrorMessage = &reason
					return w.TransitionTo(domain.WithdrawalFailed)
				})
				return err
			})
		},
	}
}

// payoutEnd is what a payout's end gives its withdrawal or refund: the chain's receipt, or why
// it failed (reverted, or abandoned) with the amount back in the balance.
type payoutEnd struct {
	Token   domain.Token
	Hash    string
	Block   int64
	Time    time.Time
	Sender  string
	GasUsed int64
	Cost    decimal.Decimal // native smallest unit
	CostUSD int64           // USD millionths; 0 without a price
	Failure string          // "" when it succeeded
	At      time.Time
}

// endPayout records a withdrawal's or refund's payout reaching the chain's depth: apply moves
// the entity (completed with a receipt from e, or failed with e.Failure) in the transaction that
// records the outcome; what names it in the failure and the logs ("withdrawal", "refund").
func (m *Manager) endPayout(ctx context.Context, o store.OutgoingTx, f txmgr.Final, record txmgr.Record, res *RoundResult,
	what string, id uuid.UUID, apply func(tx *store.Tx, e payoutEnd) error) error {
	tok, ok := m.Catalog.Tokens[o.TokenID]
	if !ok {
		return fmt.Errorf("payout %s: token %s is not in the catalogue", o.ID, o.TokenID)
	}
	e := payoutEnd{Token: tok, Hash: f.Hash, Block: f.Receipt.BlockNumber.Int64(), Time: time.Unix(int64(f.Block.Time), 0).UTC(),
		Sender: strings.ToLower(o.Sender), GasUsed: int64(f.Receipt.GasUsed), At: m.Now()}
	e.Cost, e.CostUSD = m.gasCost(ctx, f)
	if !f.Succeeded {
		e.Failure = fmt.Sprintf("the %s transaction %s reverted on chain (block %d, status 0); the amount is back in the balance", what, f.Hash, e.Block)
	}
	if err := record(func(tx *store.Tx) error { return apply(tx, e) }); err != nil {
		return err
	}
	if f.Succeeded {
		res.Completed++
		m.Log.Info(what+" paid", what, id, "chain", chains.CAIP2(m.Info.ID), "tx", f.Hash, "block", e.Block)
	} else {
		res.Failed++
		m.Log.Error(what+" failed on chain (status 0)", what, id, "tx", f.Hash, "block", e.Block)
	}
	return nil
}

// abandonPayout fails a withdrawal or refund whose payout can never be mined (a development
// chain restarted): apply fails it with reason, committed with the outcome.
func abandonPayout(record txmgr.Record, res *RoundResult, apply func(tx *store.Tx) error) error {
	err := record(apply)
	if err == nil {
		res.Failed++
	}
	return err
}

// settle completes a withdrawal whose payout reached the chain's depth, with a receipt from the
// chain, or fails it when the payout reverted (the lifecycle core books the reversal).
func (m *Manager) settle(ctx context.Context, o store.OutgoingTx, f txmgr.Final, record txmgr.Record, res *RoundResult) error {
	return m.endPayout(ctx, o, f, record, res, "withdrawal", *o.WithdrawalID, func(tx *store.Tx, e payoutEnd) error {
		_, err := m.Core.UpdateWithdrawalTx(tx, *o.WithdrawalID, func(w *domain.Withdrawal) error {
			if e.Failure != "" {
				w.ErrorMessage = &e.Failure
				return w.TransitionTo(domain.WithdrawalFailed)
			}
			w.Receipt = &domain.WithdrawalReceipt{WithdrawalID: w.ID, Token: e.Token, SettledAmountAsset: o.AmountAsset,
				SettledAmountUSD: decimal.New(w.AmountInCents, -2), TxHash: e.Hash, TxBlockNumber: e.Block, TxTimestamp: e.Time,
				TxSenderAddress: e.Sender, TxGasUsed: e.GasUsed, TxTotalCost: e.Cost, TxTotalCostUSDFractions: e.CostUSD,
				TxIsSponsored: false, ProcessedBy: domain.ProcessedByCron, CreatedAt: e.At}
			return w.TransitionTo(domain.WithdrawalCompleted)
		})
		return err
	})
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
