package payments

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// SettleInput is the operator's manual settlement of a payment (`paymentsd payments settle`).
type SettleInput struct {
	PaymentID   uuid.UUID
	QuoteID     *uuid.UUID       // default: the payment's cheapest quote
	TxHash      string           // 0x + 64 hex
	AmountAsset *decimal.Decimal // smallest unit; default the quote's expected amount; required for deposits
}

var txHashRE = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)

// MaxSettledCents caps what one settlement may be worth (10^14 cents, a trillion dollars): far
// above any real payment, and low enough that int64 ledger sums and NUMERIC(20,2) receipts never
// overflow.
const MaxSettledCents = 100_000_000_000_000

// Settle completes a pending or processing payment on one of its quotes: the receipt is
// attached (processedBy manual), fees are finalised and the merchant's net is credited to the
// ledger, all in one transaction. Any other status is refused with a StateError.
func (s *Service) Settle(ctx context.Context, in SettleInput) (domain.Payment, error) {
	if !txHashRE.MatchString(in.TxHash) {
		return domain.Payment{}, domain.Invalid("parameter_invalid", "tx-hash", "transaction hash must be 0x followed by 64 hex digits")
	}
	hash := strings.ToLower(in.TxHash)
	var out domain.Payment
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		cat, err := chains.Catalog(tx, s.Networks)
		if err != nil {
			return err
		}
		p, err := tx.LockPayment(in.PaymentID, cat)
		if errors.Is(err, store.ErrNotFound) {
			return domain.ErrPaymentNotFound
		}
		if err != nil {
			return err
		}
		if p.Status != "pending" && p.Status != "processing" {
			return &domain.StateError{Entity: "payment", ID: p.ID.String(), State: p.Status, Op: "settle"}
		}
		q, err := pickQuote(p, in.QuoteID)
		if err != nil {
			return err
		}
		if err := s.finalise(&p, q, in.AmountAsset, hash); err != nil {
			return err
		}
		if err := tx.SettlePayment(p, q.ID, s.Now()); err != nil {
			if errors.Is(err, store.ErrConflict) { // settled by someone else since we read it
				return &domain.StateError{Entity: "payment", ID: p.ID.String(), State: "no longer open", Op: "settle"}
			}
			return err
		}
		id := p.ID
		if err := tx.AppendLedger(p.Merchant.ID, store.LedgerPaymentCredit, p.AmountMerchantNetCents, &id, nil, s.Now()); err != nil {
			return err
		}
		out, err = tx.GetPayment(p.Merchant.ID, p.ID, cat)
		return err
	})
	return s.present(out), err
}

func pickQuote(p domain.Payment, id *uuid.UUID) (domain.Quote, error) {
	if id != nil {
		for _, q := range p.Quotes {
			if q.ID == *id {
				return q, nil
			}
		}
		return domain.Quote{}, domain.Invalid("parameter_invalid", "quote", "quote %s does not belong to payment %s", id, p.ID)
	}
	var best *domain.Quote
	for i, q := range p.Quotes {
		if q.AmountDueCents == nil {
			if best == nil {
				best = &p.Quotes[i]
			}
			continue
		}
		if best == nil || best.AmountDueCents == nil || *q.AmountDueCents < *best.AmountDueCents {
			best = &p.Quotes[i]
		}
	}
	if best == nil {
		return domain.Quote{}, fmt.Errorf("payment %s has no quotes", p.ID)
	}
	return *best, nil
}

// finalise fixes the paid quote's amounts and fees. A deposit's amount is what arrived, valued
// at the quote's rate and rounded down to the cent (never credit more than was received).
func (s *Service) finalise(p *domain.Payment, q domain.Quote, amountAsset *decimal.Decimal, txHash string) error {
	settled := q.ExpectedAmountAsset
	if amountAsset != nil {
		settled = *amountAsset
	}
	if p.Type == TypeDeposit && amountAsset == nil {
		return domain.Invalid("parameter_missing", "amount-asset", "a deposit settles with the amount received (--amount-asset)")
	}
	if !settled.IsPositive() || !settled.Equal(settled.Truncate(0)) {
		return domain.Invalid("parameter_invalid", "amount-asset", "amount must be a positive integer in the token's smallest unit")
	}
	if p.Type == TypePayment && settled.LessThan(q.ExpectedAmountAsset) {
		return domain.Invalid("parameter_invalid", "amount-asset", "amount %s is below the quote's expected %s", settled, q.ExpectedAmountAsset)
	}
	usd := settled.Shift(-q.Token.Decimals).Mul(q.RateUSDAsset).Round(2)
	if usd.Shift(2).GreaterThan(decimal.NewFromInt(MaxSettledCents)) {
		// Beyond any real payment, and beyond what the ledger's int64 cents could sum safely.
		return domain.Invalid("parameter_invalid", "amount-asset", "settled value %s USD exceeds the %d-cent limit", usd, MaxSettledCents)
	}
	if p.Type == TypeDeposit {
		// Credit no more than arrived: round down, and report the same figure on the receipt.
		p.AmountInCents = settled.Shift(-q.Token.Decimals).Mul(q.RateUSDAsset).Shift(2).Truncate(0).IntPart()
		usd = decimal.New(p.AmountInCents, -2)
		due := p.AmountInCents
		p.AmountDueCents = due
	} else {
		p.AmountDueCents = *q.AmountDueCents
	}
	fee := q.ConvenienceFeeCents
	if p.Type == TypeDeposit {
		fee = 0 // a deposit's buyer chose the amount; nothing was added on top
	}
	// Merchant fee rounds half up to the cent.
	merchantFee := decimal.NewFromInt(p.AmountInCents).Mul(decimal.NewFromInt(s.MerchantFeeBps)).Div(decimal.NewFromInt(10_000)).Round(0).IntPart()
	swapFee := int64(0) // settled in the quoted token: no swap
	p.ConvenienceFeeCents, p.MerchantFeeCents, p.SwapFeeCents = &fee, &merchantFee, &swapFee
	p.AmountMerchantNetCents = p.AmountInCents - merchantFee - swapFee
	p.Status = "completed"
	processedBy := "manual"
	now := s.Now()
	p.Receipt = &domain.PaymentReceipt{PaymentID: p.ID, QuoteID: q.ID, Token: q.Token, SettledAmountAsset: settled,
		SettledAmountUSD: usd, TxHash: &txHash, ProcessedBy: &processedBy,
		RequiredConfirmations: q.Token.Chain.RequiredConfirmations, Confirmations: q.Token.Chain.RequiredConfirmations, CreatedAt: now}
	return nil
}
