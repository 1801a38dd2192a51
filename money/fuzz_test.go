package money

// Fuzz target for Number's JSON round trip. Run with scripts/fuzz.sh.

import (
	"encoding/json"
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
