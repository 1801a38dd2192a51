package money

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// Due is what a fixed-amount payment's quote asks for.
type Due struct {
	AmountCents         int64           // the payment's amount: the merchant's price
	ConvenienceFeeCents int64           // the quote's chain fee, added on top for the buyer
	Units               decimal.Decimal // the quote's expected amount: UnitsToQuote(amount + fee)
}

// Terms are what the amounts of a settlement are computed from: the quote it settles on (its
// due, the token's decimals, the rate) and what arrived.
type Terms struct {
	Due            *Due            // nil: a deposit, or a transfer credited on its own — worth what arrived
	Received       decimal.Decimal // smallest units counted for the settlement
	Decimals       int32           // the token's
	Rate           decimal.Decimal // USD per whole token, the quote's
	MerchantFeeBps int64
	// RelayCostCents is the gas of relaying the customer's signed transfer when the merchant
	// bears it (issue 24, a payment made without gas): charged with the merchant fee when the
	// payment is paid in full, never beyond the credit.
	RelayCostCents int64
}

// Outcome says how what arrived compares with what was due.
type Outcome string

// Outcomes.
const (
	Paid      Outcome = "paid"      // the quote's amount, exactly
	Overpaid  Outcome = "overpaid"  // more than the quote's amount: the excess is credited too
	Underpaid Outcome = "underpaid" // less: what arrived is credited (at expiry), with no convenience fee
	Deposited Outcome = "deposited" // no amount was due: what arrived is the amount
)

// Amounts are every amount of a settled payment, in cents unless named otherwise.
type Amounts struct {
	Outcome             Outcome
	AmountInCents       int64 // a payment's amount; a deposit's is the value of what arrived
	AmountDueCents      int64 // amount + convenience fee; a deposit's equals its amount
	ConvenienceFeeCents int64 // the quote's, when paid in full; 0 for deposits and underpayments
	MerchantFeeCents    int64 // FeeCents of the credit, plus the relay cost the merchant bears (RelayCostCents)
	SwapFeeCents        int64 // 0: settled in the quoted token, no swap
	CreditCents         int64 // what the merchant is owed before the merchant fee
	NetCents            int64 // CreditCents − MerchantFeeCents: the ledger credit
	SettledUSD          decimal.Decimal
	ExcessUnits         decimal.Decimal // received beyond the quote's amount
	ExcessCents         int64           // its value, credited
	ShortUnits          decimal.Decimal // still missing of the quote's amount
}

// Settle computes every amount of a settlement; the manual settlement, the watcher's (completed
// or expired short) and a transfer credited on its own all go through it, so they cannot
// disagree by a cent. Values follow ValueCents (rounded down: never credit more than arrived):
//
//   - paid or overpaid: the merchant is credited the payment's amount plus the value of the
//     excess units (the funds arrived and are the merchant's to refund; the convenience fee the
//     buyer paid on top is not the merchant's); the merchant fee is on that total;
//   - underpaid: the value of what arrived, merchant fee on it, no convenience fee;
//   - deposited: the value of what arrived is the amount, due and credit.
//
// A payment made without gas whose relay the merchant pays for (Terms.RelayCostCents) has that
// cost added to its merchant fee when paid in full, up to the credit (the net is never negative);
// a buyer who pays the relay pays it in the due (Due.ConvenienceFeeCents and Due.Units).
//
// SettledUSD (the receipt's) is the value of everything received, rounded down to the cent. A
// value over MaxSettledCents is ErrBeyondLimit.
func Settle(t Terms) (Amounts, error) {
	if t.MerchantFeeBps < 0 || t.MerchantFeeBps > 10_000 {
		return Amounts{}, fmt.Errorf("money: merchant fee %d bps is not within 0..10000", t.MerchantFeeBps)
	}
	gross, err := ValueCents(t.Received, t.Decimals, t.Rate)
	if err != nil {
		return Amounts{}, err
	}
	a := Amounts{SettledUSD: decimal.New(gross, -2), ExcessUnits: decimal.Zero, ShortUnits: decimal.Zero}
	switch d := t.Due; {
	case d == nil:
		a.Outcome, a.AmountInCents, a.AmountDueCents, a.CreditCents = Deposited, gross, gross, gross
	case t.Received.LessThan(d.Units):
		a.Outcome, a.AmountInCents, a.AmountDueCents, a.CreditCents = Underpaid, d.AmountCents, d.AmountCents+d.ConvenienceFeeCents, gross
		a.ShortUnits = d.Units.Sub(t.Received)
	default:
		a.Outcome, a.AmountInCents, a.AmountDueCents = Paid, d.AmountCents, d.AmountCents+d.ConvenienceFeeCents
		a.ConvenienceFeeCents = d.ConvenienceFeeCents
		if a.ExcessUnits = t.Received.Sub(d.Units); a.ExcessUnits.IsPositive() {
			a.Outcome = Overpaid
			if a.ExcessCents, err = ValueCents(a.ExcessUnits, t.Decimals, t.Rate); err != nil {
				return Amounts{}, err
			}
		}
		a.CreditCents = d.AmountCents + a.ExcessCents
		if a.CreditCents+a.ConvenienceFeeCents > gross {
			// Cannot happen with a due made by UnitsToQuote or UnitsToReceive (rounded up, so
			// worth at least its cents): a due that claims more cents than its units are worth is
			// refused.
			return Amounts{}, fmt.Errorf("money: %s units at %s are worth %d cents, less than the %d cents credited and charged",
				t.Received, t.Rate, gross, a.CreditCents+a.ConvenienceFeeCents)
		}
	}
	if t.RelayCostCents < 0 {
		return Amounts{}, fmt.Errorf("money: relay cost %d cents is negative", t.RelayCostCents)
	}
	a.MerchantFeeCents = FeeCents(a.CreditCents, t.MerchantFeeBps)
	if a.Outcome == Paid || a.Outcome == Overpaid {
		a.MerchantFeeCents += min(t.RelayCostCents, a.CreditCents-a.MerchantFeeCents)
	}
	a.NetCents = a.CreditCents - a.MerchantFeeCents
	return a, nil
}
