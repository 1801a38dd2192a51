package money

import (
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNumberMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"integer", "3000", `3000`},
		{"many decimals kept", "3456.789012345678", `3456.789012345678`},
		{"more digits than a float64 holds", "12345678901234567890.123456789012345678", `12345678901234567890.123456789012345678`},
		{"tiny", "0.000000000000000001", `0.000000000000000001`},
		{"just under one", "0.999999", `0.999999`},
		{"negative", "-1.5", `-1.5`},
		{"zero", "0", `0`},
		{"value a float would round (0.1+0.2 style)", "0.30000000000000001", `0.30000000000000001`},
		{"big integer beyond 2^53", "9007199254740993", `9007199254740993`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNumber(decimal.RequireFromString(tc.in))
			b, err := json.Marshal(n)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
			assert.True(t, json.Valid(b), "bare JSON number")

			// Inside an object and through a pointer, still a bare number.
			b, err = json.Marshal(struct {
				Rate  Number  `json:"rate"`
				Price *Number `json:"price"`
			}{n, &n})
			require.NoError(t, err)
			assert.Equal(t, `{"rate":`+tc.want+`,"price":`+tc.want+`}`, string(b))
		})
	}
}

func TestNumberMarshalJSONNilPointerIsNull(t *testing.T) {
	b, err := json.Marshal(struct {
		Price *Number `json:"price"`
	}{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"price":null}`, string(b))
}

func TestNumberUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"number", `3456.789012345678`, "3456.789012345678"},
		{"quoted string", `"3456.789012345678"`, "3456.789012345678"},
		{"integer number", `3000`, "3000"},
		{"quoted integer", `"3000"`, "3000"},
		{"beyond float64 precision, as number", `12345678901234567890.123456789012345678`, "12345678901234567890.123456789012345678"},
		{"beyond float64 precision, as string", `"0.30000000000000001"`, "0.30000000000000001"},
		{"exponent form", `1e2`, "100"},
		{"negative", `-0.5`, "-0.5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n Number
			require.NoError(t, json.Unmarshal([]byte(tc.in), &n))
			assert.True(t, decimal.RequireFromString(tc.want).Equal(n.Decimal), "got %s", n.String())
			assert.Equal(t, tc.want, n.String())
		})
	}
}

func TestNumberUnmarshalJSONInObject(t *testing.T) {
	var v struct {
		Rate  Number  `json:"rate"`
		Price *Number `json:"price"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"rate":"1.000001","price":3456.789012345678}`), &v))
	assert.Equal(t, "1.000001", v.Rate.String())
	require.NotNil(t, v.Price)
	assert.Equal(t, "3456.789012345678", v.Price.String())
}

func TestNumberUnmarshalJSONErrors(t *testing.T) {
	for _, in := range []string{`"abc"`, `"12.5x"`, `""`, `true`, `"1.2.3"`, `{}`, `[]`} {
		t.Run(in, func(t *testing.T) {
			var n Number
			err := n.UnmarshalJSON([]byte(in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "money: invalid decimal")
		})
	}
	// Through encoding/json too.
	var n Number
	require.Error(t, json.Unmarshal([]byte(`"garbage"`), &n))
}

func TestNumberRoundTrip(t *testing.T) {
	for _, s := range []string{"3456.789012345678", "0.000000000000000001", "100000000", "-42.4200"} {
		t.Run(s, func(t *testing.T) {
			in := NewNumber(decimal.RequireFromString(s))
			b, err := json.Marshal(in)
			require.NoError(t, err)
			var out Number
			require.NoError(t, json.Unmarshal(b, &out))
			assert.True(t, in.Equal(out.Decimal), "%s != %s", in, out)
			assert.Equal(t, in.String(), out.String())
		})
	}
}

func TestNumberPointerUnmarshalsNullAsNil(t *testing.T) {
	v := struct {
		Price *Number `json:"price"`
	}{Price: &Number{}}
	require.NoError(t, json.Unmarshal([]byte(`{"price":null}`), &v))
	assert.Nil(t, v.Price)
}
