// Package money owns the exact number types that cross the wire: decimal rates and prices that
// must travel as JSON numbers without ever passing through a binary float.
package money

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Number is a decimal that marshals as a bare JSON number ("1234.5678", not "\"1234.5678\"")
// and unmarshals from a JSON number or decimal string, keeping every digit. shopspring's own
// MarshalJSON quotes by default and is switched by a package-level global, which would leak
// between the two response shapes; this type keeps the choice local.
type Number struct {
	decimal.Decimal
}

// NewNumber wraps a decimal.
func NewNumber(d decimal.Decimal) Number { return Number{Decimal: d} }

// MarshalJSON writes the exact decimal text as a JSON number.
func (n Number) MarshalJSON() ([]byte, error) {
	return []byte(n.Decimal.String()), nil
}

// UnmarshalJSON accepts 12.5 or "12.5".
func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	d, err := decimal.NewFromString(string(b))
	if err != nil {
		return fmt.Errorf("money: invalid decimal %q: %w", b, err)
	}
	n.Decimal = d
	return nil
}

// WholeTokens writes an amount in a token's smallest unit as whole tokens, exactly, without
// trailing zeros ("18500000", 6 → "18.5"; never an exponent).
func WholeTokens(units decimal.Decimal, decimals int32) string {
	out := units.Shift(-decimals).StringFixed(decimals)
	if decimals > 0 {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	return out
}
