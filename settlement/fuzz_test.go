package settlement

// Fuzz targets for the shape conversions. Run with scripts/fuzz.sh.

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"regexp"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
)

var fuzzOperations = []string{"createWithdrawal", "createPayment", "listPayments", "getWithdrawal", ""}

// jsonValue decodes one JSON value with numbers kept as their text.
func jsonValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// FuzzSchemaRequest: SchemaRequest never panics or fails on arbitrary bytes. The schema shape,
// and every operation but createWithdrawal, return the body unchanged. For a guide
// createWithdrawal body that is a JSON object with a numeric chainId n, the output is a JSON
// object whose chainId is the string "eip155:"+n and whose other members are the input's.
// Other guide bodies (not an object, no chainId, a chainId that is not a number) are left as
// they are. Validation runs first in production, so a chainId of another type never gets here.
func FuzzSchemaRequest(f *testing.F) {
	f.Add([]byte(`{"amountInCents":500,"chainId":8453,"recipientAddress":"0x9858effd232b4033e47d90003d41ec34ecaeda94"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, op := range fuzzOperations {
			for _, shape := range []Shape{Schema, Guide} {
				out, err := shape.SchemaRequest(op, body)
				if err != nil {
					t.Fatalf("%s %q: error %v on %q", shape, op, err, body)
				}
				if shape == Schema || op != "createWithdrawal" {
					if !bytes.Equal(out, body) {
						t.Fatalf("%s %q changed the body: %q -> %q", shape, op, body, out)
					}
				}
			}
		}

		out, _ := Guide.SchemaRequest("createWithdrawal", body)
		var in map[string]json.RawMessage
		if json.Unmarshal(body, &in) != nil || in == nil {
			if !bytes.Equal(out, body) {
				t.Fatalf("not an object, yet changed: %q -> %q", body, out)
			}
			return
		}
		raw, present := in["chainId"]
		if !present {
			if !bytes.Equal(out, body) {
				t.Fatalf("no chainId, yet changed: %q -> %q", body, out)
			}
			return
		}
		chain, err := jsonValue(raw)
		if err != nil {
			t.Fatalf("chainId %q of an object json.Unmarshal accepted does not decode: %v", raw, err)
		}
		n, numeric := chain.(json.Number)
		if !numeric {
			// A string, null, bool, array or object chainId: out of contract (see above).
			return
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil || got == nil {
			t.Fatalf("output is not a JSON object (%v): %q -> %q", err, body, out)
		}
		// An integral id (8453, 8453.0, 8.453e3) is written canonically; anything else verbatim.
		want := n.String()
		if r, ok := new(big.Rat).SetString(want); ok && r.IsInt() && r.Num().IsInt64() {
			want = r.Num().String()
		}
		var caip string
		if err := json.Unmarshal(got["chainId"], &caip); err != nil || caip != "eip155:"+want {
			t.Fatalf("chainId %s became %s, want \"eip155:%s\"", n, got["chainId"], want)
		}
		if len(got) != len(in) {
			t.Fatalf("members changed: %d in, %d out: %q -> %q", len(in), len(got), body, out)
		}
		for k, v := range in {
			if k == "chainId" {
				continue
			}
			w, ok := got[k]
			if !ok {
				t.Fatalf("member %q dropped: %q -> %q", k, body, out)
			}
			a, errA := jsonValue(v)
			b, errB := jsonValue(w)
			if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("member %q changed: %s -> %s", k, v, w)
			}
		}
	})
}

// guideRatePattern is the guide spec's pattern for Quote.rateUsdAsset.
var guideRatePattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// fuzzDecimal parses s, skipping exponents that would make the decimal text absurdly long.
func fuzzDecimal(s string) (decimal.Decimal, bool) {
	d, err := decimal.NewFromString(s)
	if err != nil || d.Exponent() > 1000 || d.Exponent() < -1000 {
		return decimal.Decimal{}, false
	}
	return d, true
}

// rawMember returns one member of a JSON object's text.
func rawMember(t *testing.T, b []byte, path ...string) json.RawMessage {
	t.Helper()
	raw := json.RawMessage(b)
	for _, k := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s is not an object: %v", raw, err)
		}
		raw = m[k]
	}
	return raw
}

// exactNumber checks that raw is a bare JSON number whose text is exactly d.
func exactNumber(t *testing.T, what string, raw json.RawMessage, d decimal.Decimal) {
	t.Helper()
	if len(raw) == 0 || raw[0] == '"' || !json.Valid(raw) {
		t.Fatalf("%s is %s, not a bare JSON number", what, raw)
	}
	back, err := decimal.NewFromString(string(raw))
	if err != nil || !back.Equal(d) {
		t.Fatalf("%s %s does not parse back to %s (%v)", what, raw, d, err)
	}
}

// FuzzGuideQuoteRate: for any decimal, the guide quote's rateUsdAsset string and the schema
// quote's bare-number rateUsdAsset (and the token price in both) parse back to the same value,
// exactly, with no float on the way.
func FuzzGuideQuoteRate(f *testing.F) {
	f.Add("3456.789012345678901234567891")
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := fuzzDecimal(s)
		if !ok {
			return
		}
		q := domain.Quote{RateUSDAsset: d, TokenPriceUSD: &d, ExpectedAmountAsset: decimal.NewFromInt(1),
			Token: domain.Token{Chain: domain.Chain{ID: 8453}}}

		g := GuideQuote(q)
		back, err := decimal.NewFromString(g.RateUSDAsset)
		if err != nil || !back.Equal(d) {
			t.Fatalf("guide rateUsdAsset %q does not parse back to %s (%v)", g.RateUSDAsset, d, err)
		}
		if !d.IsNegative() && !guideRatePattern.MatchString(g.RateUSDAsset) {
			t.Fatalf("guide rateUsdAsset %q does not match the guide spec's pattern", g.RateUSDAsset)
		}
		gb, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		var rate string
		if err := json.Unmarshal(rawMember(t, gb, "rateUsdAsset"), &rate); err != nil || rate != g.RateUSDAsset {
			t.Fatalf("guide JSON rateUsdAsset is %s, want the string %q", rawMember(t, gb, "rateUsdAsset"), g.RateUSDAsset)
		}
		exactNumber(t, "guide token.tokenPriceUsd", rawMember(t, gb, "token", "tokenPriceUsd"), d)

		sb, err := json.Marshal(Quote(q, domain.DepositAddress{}))
		if err != nil {
			t.Fatal(err)
		}
		exactNumber(t, "schema rateUsdAsset", rawMember(t, sb, "rateUsdAsset"), d)
		exactNumber(t, "schema token.tokenPriceUsd", rawMember(t, sb, "token", "tokenPriceUsd"), d)
	})
}
