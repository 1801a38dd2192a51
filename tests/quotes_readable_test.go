package tests

import (
	"fmt"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
)

// readableDue is each volatile token's quote for a due (cents) at the static prices (ETH $3,000,
// BNB $600, AVAX $30, POL $0.50), worked by hand: the exact amount, then the fewest decimals
// whose rounding up adds less than half a cent.
var readableDue = map[string]string{
	"ETH/1150":  "3834000000000000",     // 0.0038333… → 0.003834 ($11.502); 0.00384 would be $11.52
	"ETH/1005":  "3350000000000000",     // 0.00335 exactly
	"BNB/1010":  "16840000000000000",    // 0.0168333… → 0.01684 ($10.104); 0.0169 would be $10.14
	"AVAX/1010": "336700000000000000",   // 0.336666… → 0.3367 ($10.101); 0.337 would be $10.11
	"POL/1005":  "20100000000000000000", // 20.1 exactly
}

// checkReadableQuote checks a quote's expectedAmountAsset for its due: a volatile token's as
// worked out in readableDue, a stablecoin's (at 1.00) the due's whole cents, unchanged.
func checkReadableQuote(t *testing.T, q map[string]any, due int64) {
	t.Helper()
	tok := q["token"].(map[string]any)
	want, volatile := readableDue[fmt.Sprintf("%s/%d", tok["symbol"], due)]
	if !volatile {
		assert.Equal(t, "stablecoin", tok["type"], "%s/%d is not in readableDue", tok["symbol"], due)
		assert.Equal(t, "1", fmt.Sprint(q["rateUsdAsset"]))
		want = decimal.New(due, int32(tok["decimals"].(float64))-2).String()
	}
	assert.Equal(t, want, q["expectedAmountAsset"], "%s %s for %d cents", q["chainId"], tok["symbol"], due)
}
