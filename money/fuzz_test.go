package money

// Fuzz targets: Number's JSON round trip, the settlement's invariants (the quote's rounding has
// its own, FuzzUnitsToQuote, in readable_test.go). Run with scripts/fuzz.sh.

import (
	"encoding/json"
	"errors"
	"math/big"
	"testing"

	"github.com/shopspring/decimal"
)

// FuzzNumberRoundTrip: any decimal parsed from the fuzz string marshals as a bare JSON number
// and unmarshals back, bare or quoted, bare or in an object, to the same value and text.
// UnmarshalJSON never panics on the raw fuzz bytes either.
func FuzzNumberRoundTrip(f *testing.F) {
	f.Add("3456.789012345678")
	f.Fuzz(func(t *testing.T, s string) {
		var junk Number
		_ = junk.UnmarshalJSON([]byte(s))

		d, err := decimal.NewFromString(s)
		if err != nil || d.Exponent() > 1000 || d.Exponent() < -1000 {
			return // not a decimal, or one whose text would be absurdly long
		}
		in := NewNumber(d)
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("marshal %s: %v", d, err)
		}
		if len(b) == 0 || b[0] == '"' || !json.Valid(b) {
			t.Fatalf("%s marshals to %s, not a bare JSON number", d, b)
		}
		for _, form := range [][]byte{b, []byte(`"` + string(b) + `"`)} {
			var out Number
			if err := json.Unmarshal(form, &out); err != nil {
				t.Fatalf("unmarshal %s: %v", form, err)
			}
			if !out.Equal(d) || out.String() != in.String() {
				t.Fatalf("%s -> %s -> %s", d, form, out)
			}
		}
		var obj struct {
			Rate  Number  `json:"rate"`
			Price *Number `json:"price"`
		}
		ob, err := json.Marshal(struct {
			Rate  Number  `json:"rate"`
			Price *Number `json:"price"`
		}{in, &in})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(ob, &obj); err != nil || obj.Price == nil || !obj.Rate.Equal(d) || !obj.Price.Equal(d) {
			t.Fatalf("%s in an object: %s -> %+v (%v)", d, ob, obj, err)
		}
	})
}

// FuzzSettle: for any amount, fee, rate, decimals and any amount received around the quote's,
// UnitsToReceive asks for the least whole number of units worth the amount due, a payout of it
// sends the most units worth at most it, and the settlement keeps its invariants
// (checkInvariants: nothing credited that did not arrive, fee + net = credit, every rounding as
// written) on those least units and on the quote's readable amount (UnitsToQuote), which paid
// exactly completes the payment with the due as its value.
func FuzzSettle(f *testing.F) {
	f.Add(int64(1000), int64(5), "1", uint8(6), int64(5_000_000), uint16(100))
	f.Add(int64(1000), int64(0), "3000", uint8(18), int64(1_668_333_333_333_333), uint16(100))
	f.Add(int64(1050), int64(150), "3456.789012345678", uint8(18), int64(-1), uint16(250))
	f.Add(int64(400), int64(10), "1", uint8(18), int64(1), uint16(10_000))
	f.Fuzz(func(t *testing.T, cents, fee int64, rateText string, decimals uint8, extra int64, bps uint16) {
		rate, err := decimal.NewFromString(rateText)
		if err != nil || !rate.IsPositive() || rate.Exponent() < -30 || rate.Exponent() > 10 ||
			cents < 0 || cents > 100_000_000 || fee < 0 || fee > 10_000 || decimals > 36 || bps > 10_000 {
			return // outside what a quote can hold
		}
		d := int32(decimals)
		units, err := UnitsToReceive(cents+fee, rate, d)
		if err != nil {
			t.Fatal(err)
		}
		exact := exactUnits(cents+fee, rate, d)
		if u := units.Rat(); u.Cmp(exact) < 0 || new(big.Rat).Sub(u, big.NewRat(1, 1)).Cmp(exact) >= 0 {
			t.Fatalf("receive %d cents at %s (%d decimals): %s is not the ceiling of %s", cents+fee, rate, d, units, exact.FloatString(30))
		}
		sent, err := UnitsToSend(cents+fee, rate, d)
		if err != nil {
			t.Fatal(err)
		}
		if s := sent.Rat(); s.Cmp(exact) > 0 || new(big.Rat).Add(s, big.NewRat(1, 1)).Cmp(exact) <= 0 {
			t.Fatalf("send %d cents at %s (%d decimals): %s is not the floor of %s", cents+fee, rate, d, sent, exact.FloatString(30))
		}
		quoted, err := UnitsToQuote(cents+fee, rate, d)
		if err != nil {
			t.Fatal(err)
		}
		// The settlement keeps its invariants on the least units owed and on the quote's
		// readable amount alike; the quote's, paid exactly, is paid in full and no more.
		for _, owed := range []decimal.Decimal{units, quoted} {
			received := owed.Add(decimal.NewFromInt(extra))
			if received.IsNegative() {
				received = decimal.Zero
			}
			for _, due := range []*Due{{AmountCents: cents, ConvenienceFeeCents: fee, Units: owed}, nil} {
				terms := Terms{Due: due, Received: received, Decimals: d, Rate: rate, MerchantFeeBps: int64(bps)}
				a, err := Settle(terms)
				if errors.Is(err, ErrBeyondLimit) {
					continue
				}
				if err != nil {
					t.Fatalf("%+v: %v", terms, err)
				}
				checkInvariants(t, terms, a)
			}
		}
		exactly, err := Settle(Terms{Due: &Due{AmountCents: cents, ConvenienceFeeCents: fee, Units: quoted}, Received: quoted,
			Decimals: d, Rate: rate, MerchantFeeBps: int64(bps)})
		if errors.Is(err, ErrBeyondLimit) {
			return
		}
		if err != nil || exactly.Outcome != Paid || exactly.CreditCents != cents || exactly.ConvenienceFeeCents != fee {
			t.Fatalf("%d+%d cents at %s (%d decimals), the quote's %s paid exactly: %+v, %v", cents, fee, rate, d, quoted, exactly, err)
		}
		// Within half a cent of the due (the rule, whenever the token's decimals allow it), the
		// receipt says the due to the cent: the rounding never shows up as money.
		value := exactCents(quoted, d, rate)
		if value.Sub(value, big.NewRat(cents+fee, 1)).Cmp(big.NewRat(1, 2)) < 0 && !exactly.SettledUSD.Equal(decimal.New(cents+fee, -2)) {
			t.Fatalf("%d+%d cents at %s (%d decimals), the quote's %s paid exactly settles %s USD", cents, fee, rate, d, quoted, exactly.SettledUSD)
		}
	})
}
