package payouts

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/txmgr"
)

// Refunds are paid exactly as withdrawals are: one logical payout transaction each, signed and
// stored with the refund's move to processing, broadcast after the commit, completed or failed by
// the transaction's outcome. Their amount is fixed in the token when they are created; a refund
// that subtracts the network fee sends that amount less the fee its transaction may cost.

// sendRefunds signs and sends the refunds the hot wallet can fund, oldest first: pending, with a
// recipient, no approval waiting (store.PendingRefunds; the lifecycle core refuses to sign one
// whose approval waits, whatever reads it).
func (m *Manager) sendRefunds(ctx context.Context, res *RoundResult) error {
	ids, err := m.Store.Read(ctx).PendingRefunds(m.Info.ID, 1000)
	if err != nil || len(ids) == 0 {
		return err
	}
	return m.signEach(ctx, "refund", ids, m.sendRefund, res)
}

// sendRefund signs one refund's payout, or says why it waits.
func (m *Manager) sendRefund(ctx context.Context, id uuid.UUID) (signed bool, reason string, err error) {
	r, err := m.Store.Read(ctx).RefundByID(id, m.Catalog)
	if err != nil {
		return false, "", err
	}
	if !r.Sendable() {
		return false, "", nil
	}
	if short, err := m.tokenShort(ctx, r.Token, r.AmountAsset); err != nil || short != "" {
		return false, short, err
	}
	rate := "0" // recorded for the books only: the amount was fixed at creation
	if p, err := m.Prices.PriceUSD(ctx, pricing.Asset{Symbol: r.Token.Symbol, MarketAPIID: r.Token.MarketAPIID, Stablecoin: r.Token.Type == domain.Stablecoin}); err == nil {
		rate = p.String()
	}
	o := store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Sender: strings.ToLower(m.Wallet.Address().Hex()),
		Kind: store.TxPayout, RefundID: &r.ID, TokenID: r.Token.ID, Recipient: *r.RecipientAddress, AmountAsset: r.AmountAsset,
		RateUSD: rate, CreatedAt: m.Now()}
	if err := m.transfer(ctx, &o, r.Token, 0); err != nil {
		return false, "", err
	}
	tip, feeCap, err := m.tx.Fees(ctx)
	if err != nil {
		return false, "", err
	}
	var fee *decimal.Decimal
	if r.SubtractNetworkFee {
		f, err := m.feeInToken(ctx, r.Token, txmgr.GasCost(feeCap, o.GasLimit))
		if err != nil {
			return false, "", err
		}
		fee = &f
		if !r.AmountAsset.GreaterThan(f) {
			return false, "", m.failRefund(ctx, r.ID, fmt.Sprintf("the network fee of %s %s (smallest unit) is not less than the refund's %s: nothing was sent; the amount is back in the balance",
				f, r.Token.Symbol, r.AmountAsset))
		}
		o.AmountAsset = r.AmountAsset.Sub(f)
		if err := m.transfer(ctx, &o, r.Token, uint64(o.GasLimit)); err != nil {
			return false, "", err
		}
	}
	if short, err := m.tx.HotShort(ctx, o, feeCap); err != nil || short != "" {
		return false, short, err
	}
	first, err := m.tx.SignAndStore(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		_, err := m.Core.UpdateRefundTx(tx, r.ID, func(r *domain.Refund) error {
			r.NetworkFeeAsset = fee
			return r.TransitionTo(domain.RefundProcessing)
		})
		return err
	})
	var te *domain.TransitionError
	if errors.As(err, &te) {
		return false, "", nil // cancelled meanwhile: nothing signed survives the rollback
	}
	if err != nil {
		return false, "", err
	}
	m.Log.Info("refund payout signed and stored", "refund", r.ID, "chain", chains.CAIP2(m.Info.ID), "nonce", o.Nonce, "tx", first.Hash,
		"amount", o.AmountAsset.String(), "token", r.Token.ID)
	if !m.tx.PauseAfterSign(ctx, first) {
		return true, "", nil
	}
	return true, "", m.tx.Broadcast(ctx, o, first)
}

// feeInToken is a native fee in the refund's token: as is for the native coin, at the two USD
// prices (rounded up) for an ERC-20.
func (m *Manager) feeInToken(ctx context.Context, tok domain.Token, fee *big.Int) (decimal.Decimal, error) {
	wei := decimal.NewFromBigInt(fee, 0)
	if tok.AssetType == domain.Native {
		return wei, nil
	}
	native, err := m.nativePrice(ctx)
	if err != nil {
		return decimal.Zero, err
	}
	price, err := m.Prices.PriceUSD(ctx, pricing.Asset{Symbol: tok.Symbol, MarketAPIID: tok.MarketAPIID, Stablecoin: tok.Type == domain.Stablecoin})
	if err != nil {
		return decimal.Zero, err
	}
	return money.GasFeeInToken(wei, m.Info.NativeDecimals, native, tok.Decimals, price)
}

// failRefund fails a pending refund nothing was signed for (its fee exceeds it): the lifecycle
// core books the reversal.
func (m *Manager) failRefund(ctx context.Context, id uuid.UUID, why string) error {
	_, err := m.Core.UpdateRefund(ctx, id, func(r *domain.Refund) error {
		r.ErrorMessage = &why
		return r.TransitionTo(domain.RefundFailed)
	})
	var te *domain.TransitionError
	if errors.As(err, &te) {
		return nil // cancelled meanwhile
	}
	if err == nil {
		m.Log.Warn("refund failed before signing", "refund", id, "reason", why)
	}
	return err
}

// settleRefund completes a refund whose payout reached the chain's depth, with a receipt from the
// chain (what the customer received: the amount sent), or fails it when the payout reverted.
func (m *Manager) settleRefund(ctx context.Context, o store.OutgoingTx, f txmgr.Final, record txmgr.Record, res *RoundResult) error {
	return m.endPayout(ctx, o, f, record, res, "refund", *o.RefundID, func(tx *store.Tx, e payoutEnd) error {
		_, err := m.Core.UpdateRefundTx(tx, *o.RefundID, func(r *domain.Refund) error {
			if e.Failure != "" {
				r.ErrorMessage = &e.Failure
				return r.TransitionTo(domain.RefundFailed)
			}
			r.Receipt = &domain.RefundReceipt{RefundID: r.ID, Token: e.Token, SettledAmountAsset: o.AmountAsset, TxHash: e.Hash,
				TxBlockNumber: e.Block, TxTimestamp: e.Time, TxSenderAddress: e.Sender, TxGasUsed: e.GasUsed, TxTotalCost: e.Cost,
				TxTotalCostUSDFractions: e.CostUSD, CreatedAt: e.At}
			return r.TransitionTo(domain.RefundCompleted)
		})
		return err
	})
}

// abandonRefund fails a refund whose payout can never be mined (a development chain restarted).
func (m *Manager) abandonRefund(o store.OutgoingTx, reason string, record txmgr.Record, res *RoundResult) error {
	return abandonPayout(record, res, func(tx *store.Tx) error {
		_, err := m.Core.UpdateRefundTx(tx, *o.RefundID, func(r *domain.Refund) error {
			r.ErrorMessage = &reason
			return r.TransitionTo(domain.RefundFailed)
		})
		return err
	})
}
