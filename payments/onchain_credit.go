package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
)

// CreditUncounted credits, one by one, a chain's confirmed transfers that their (final)
// payment's settlement did not count, at the rate of the payment's quote for the token (the
// market price when the payment had none), and announces each as payment.late_transfer. It
// returns how many it credited.
func (o *OnChain) CreditUncounted(ctx context.Context, chainID int64, limit int) (int, error) {
	s := o.Payments
	ts, err := s.Store.Read(ctx).UncreditedTransfers(chainID, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, t := range ts {
		if err := o.creditOne(ctx, t); err != nil {
			// One transfer that cannot be credited now (no price, say) must not hold up the rest.
			s.Log.ErrorContext(ctx, "credit a transfer on its own", "tx", t.TxHash, "log_index", t.LogIndex, "err", err)
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// creditOne credits one uncounted transfer (see CreditUncounted).
func (o *OnChain) creditOne(ctx context.Context, t store.Transfer) error {
	s := o.Payments
	p, err := s.Store.Read(ctx).PaymentByID(*t.PaymentID, s.Catalog)
	if err != nil {
		return err
	}
	if r := p.Receipt; r != nil && r.ProcessedBy != nil && *r.ProcessedBy == domain.ProcessedByManual && r.TxHash != nil &&
		strings.EqualFold(*r.TxHash, t.TxHash) {
		// The operator settled the payment with this very transaction: its credit holds it.
		return s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.MarkCredited([]uuid.UUID{t.ID}, s.Now()) })
	}
	q, reason, err := o.creditQuote(ctx, p, t)
	if err != nil {
		return err
	}
	a, err := s.transferAmounts(q, t.Amount)
	if err != nil {
		return fmt.Errorf("transfer %s: %w", t.ID, err)
	}
	net := a.NetCents
	note := lifecycle.TransferNote{ChainID: chains.CAIP2(t.ChainID), TxHash: t.TxHash, LogIndex: t.LogIndex, TokenID: t.TokenID,
		AmountAsset: t.Amount.String(), Reason: reason}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := s.Core.CreditTransferTx(tx, p.ID, t.ID, net, note)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return nil // credited by another process meanwhile
	}
	if err != nil {
		return err
	}
	s.Log.InfoContext(ctx, "transfer credited on its own", "payment", p.ID, "tx", t.TxHash, "log_index", t.LogIndex,
		"reason", reason, "credited_cents", net)
	return nil
}

// creditQuote is the rate a transfer is credited at, and why it was not counted.
func (o *OnChain) creditQuote(ctx context.Context, p domain.Payment, t store.Transfer) (domain.Quote, string, error) {
	reason := "after_settlement"
	if t.BlockTime.After(p.ExpiresAt) {
		reason = "after_expiry"
	}
	for _, q := range p.Quotes {
		if q.Token.ID == t.TokenID {
			if p.Receipt != nil && p.Receipt.QuoteID != q.ID {
				reason = "other_token"
			}
			return q, reason, nil
		}
	}
	tok, ok := o.Payments.Catalog.Tokens[t.TokenID]
	if !ok {
		return domain.Quote{}, "", fmt.Errorf("transfer %s: token %s is not in the catalogue", t.ID, t.TokenID)
	}
	rate, err := o.Payments.Prices.PriceUSD(ctx, pricing.Asset{Symbol: tok.Symbol, MarketAPIID: tok.MarketAPIID, Stablecoin: tok.Type == domain.Stablecoin})
	if err != nil {
		return domain.Quote{}, "", err
	}
	return domain.Quote{Token: tok, RateUSDAsset: rate}, "unquoted_token", nil
}
