package payments

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/store"
)

// gaslessCharge is what relaying the customer's signed transfer (issue 24, a payment made
// without gas) adds to a completed payment's settlement: the buyer's relay fee (in the signed
// value: counted in the due and the convenience fee), or the relay's gas the merchant bears
// (with the merchant fee).
type gaslessCharge struct {
	FeeCents  int64
	FeeUnits  decimal.Decimal
	CostCents int64
}

// terms adds the charge to a settlement's terms (nil: none).
func (c *gaslessCharge) terms(t *money.Terms) {
	if c == nil {
		return
	}
	if t.Due != nil && c.FeeCents > 0 {
		d := *t.Due
		d.ConvenienceFeeCents += c.FeeCents
		d.Units = d.Units.Add(c.FeeUnits)
		t.Due = &d
	}
	t.RelayCostCents = c.CostCents
}

// signedQuotes maps each token to the quote a relay among a payment's transfers was signed for
// (evaluate settles that token's transfers on it).
func signedQuotes(tx *store.Tx, paymentID uuid.UUID, ts []store.Transfer) (map[string]uuid.UUID, error) {
	hashes := make([]string, 0, len(ts))
	for _, t := range ts {
		hashes = append(hashes, t.TxHash)
	}
	relays, err := tx.RelayedGaslessByTx(paymentID, hashes)
	if err != nil || len(relays) == 0 {
		return nil, err
	}
	out := map[string]uuid.UUID{}
	for _, g := range relays { // oldest first: the first relayed decides (one is in flight at a time)
		if _, ok := out[g.TokenID]; !ok {
			out[g.TokenID] = g.QuoteID
		}
	}
	return out, nil
}

// gaslessCharge finds the relayed authorization among the transfers completing p on v's quote
// and what it charges. A buyer's fee counts only on the quote it was signed for (evaluate settles
// on that quote once the relay's transfer is among the payment's) and when the confirmed amount
// covers it (else the units are simply part of what arrived); the merchant's
// cost is the relay transaction's gas from its receipt, in cents rounded up at the chain's native
// price — nothing when no price can be had (logged).
func (o *OnChain) gaslessCharge(ctx context.Context, p domain.Payment, v verdict) (*gaslessCharge, error) {
	if v.quote == nil || p.Type != domain.TypePayment {
		return nil, nil
	}
	var hashes []string
	for _, t := range v.counted {
		hashes = append(hashes, t.TxHash)
	}
	relays, err := o.Payments.Store.Read(ctx).RelayedGaslessByTx(p.ID, hashes)
	if err != nil || len(relays) == 0 {
		return nil, err
	}
	g := relays[0]
	q := *v.quote
	if g.FeePaidBy == domain.GaslessFeeBuyer {
		if g.QuoteID != q.ID || g.FeeCents == 0 || v.confirmed.LessThan(q.ExpectedAmountAsset.Add(g.FeeAsset)) {
			return nil, nil
		}
		return &gaslessCharge{FeeCents: g.FeeCents, FeeUnits: g.FeeAsset}, nil
	}
	facts, err := o.Chains.TxFacts(ctx, g.ChainID, g.MinedHash)
	if err != nil {
		return nil, err
	}
	c, ok := o.Payments.Catalog.Chain(g.ChainID)
	if !ok {
		c = q.Token.Chain
	}
	price, err := o.nativePrice(ctx, p, g.ChainID)
	var cents int64
	if err == nil {
		cents, err = money.GasCostCents(facts.TotalCostWei, c.NativeDecimals, price)
	}
	if err != nil {
		o.Payments.Log.WarnContext(ctx, "the relay's gas of a payment made without gas is not charged to the merchant: no price",
			"chain", chains.CAIP2(g.ChainID), "tx", strings.ToLower(g.MinedHash), "err", err)
		return nil, nil
	}
	return &gaslessCharge{CostCents: cents}, nil
}
