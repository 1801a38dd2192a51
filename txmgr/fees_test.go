package txmgr_test

import (
	"math/big"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"

	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/txmgr"
)

func n(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

// 2^256 - 1: the largest fee a transaction can carry.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

func TestCaps(t *testing.T) {
	for _, c := range []struct {
		name, tip, base, wantCap string
	}{
		{"zero base fee", "1000000000", "0", "1000000000"},
		{"zero tip", "0", "7", "14"},
		{"typical", "1500000000", "30000000000", "61500000000"},
		{"huge base fee", maxUint256.String(), maxUint256.String(), new(big.Int).Mul(maxUint256, big.NewInt(3)).String()},
	} {
		t.Run(c.name, func(t *testing.T) {
			tip, base := n(c.tip), n(c.base)
			gotTip, gotCap := txmgr.Caps(tip, base)
			assert.Equal(t, c.tip, gotTip.String())
			assert.Equal(t, c.wantCap, gotCap.String())
			assert.Equal(t, c.tip, tip.String(), "inputs untouched")
			assert.Equal(t, c.base, base.String(), "inputs untouched")
		})
	}
}

func TestMinBump(t *testing.T) {
	for _, c := range []struct{ old, want string }{
		{"0", "1"},                   // zero still rises
		{"1", "3"},                   // ceil(1.125) + 1
		{"8", "10"},                  // 8 × 1.125 = 9 exactly: no rounding up, + 1
		{"9", "12"},                  // 10.125 → 11, + 1
		{"1000", "1126"},             // exactly +12.5 %, + 1
		{"1000000000", "1125000001"}, // 1 gwei
		{"1000000001", "1125000003"}, // 1125000001.125 → 1125000002, + 1
	} {
		got := txmgr.MinBump(n(c.old))
		assert.Equal(t, c.want, got.String(), "MinBump(%s)", c.old)
		// geth's own rule: a replacement must be ≥ +10 % of the old.
		tenPct := new(big.Int).Quo(new(big.Int).Mul(n(c.old), big.NewInt(110)), big.NewInt(100))
		assert.Positive(t, got.Cmp(tenPct), "MinBump(%s) clears geth's +10 %%", c.old)
	}
	// Huge values: exact, no overflow past 256 bits.
	got := txmgr.MinBump(maxUint256)
	want := new(big.Int).Mul(maxUint256, big.NewInt(1125))
	want.Add(want, big.NewInt(999)).Quo(want, big.NewInt(1000)).Add(want, big.NewInt(1))
	assert.Equal(t, want.String(), got.String())
	assert.Greater(t, got.BitLen(), 256)
}

func TestBump(t *testing.T) {
	for _, c := range []struct {
		name                        string
		oldTip, oldCap, tip, feeCap string
		wantTip, wantCap            string
	}{
		{"fees unchanged: the minimum raise", "1000", "3000", "1000", "3000", "1126", "3376"},
		{"today's fees higher: today's", "1000", "3000", "2000", "9000", "2000", "9000"},
		{"base fee fell: still the minimum raise over the old", "1000", "3000", "1000", "1500", "1126", "3376"},
		{"tip rose past the raise, cap did not", "1000", "3000", "1200", "3100", "1200", "3376"},
		{"cap rose past the raise, tip did not", "1000", "3000", "900", "5000", "1126", "5000"},
		{"exactly the raise today: equal, not more", "1000", "3000", "1126", "3376", "1126", "3376"},
		{"tip over the cap: the cap lifted to the tip", "1000", "1000", "5000", "1200", "5000", "5000"},
		{"zero old fees (tip floor): still rises", "0", "0", "0", "0", "1", "1"},
		{"huge old fees", maxUint256.String(), maxUint256.String(), "1", "1",
			txmgr.MinBump(maxUint256).String(), txmgr.MinBump(maxUint256).String()},
	} {
		t.Run(c.name, func(t *testing.T) {
			oldTip, oldCap, tip, feeCap := n(c.oldTip), n(c.oldCap), n(c.tip), n(c.feeCap)
			gotTip, gotCap := txmgr.Bump(oldTip, oldCap, tip, feeCap)
			assert.Equal(t, c.wantTip, gotTip.String(), "tip")
			assert.Equal(t, c.wantCap, gotCap.String(), "fee cap")
			assert.GreaterOrEqual(t, gotCap.Cmp(gotTip), 0, "the cap is never under the tip")
			assert.Equal(t, c.tip, tip.String(), "today's tip untouched")
			assert.Equal(t, c.feeCap, feeCap.String(), "today's cap untouched")
			gotTip.SetInt64(-1) // the results are fresh values, not aliases of the inputs
			assert.Equal(t, c.tip, tip.String())
			assert.Equal(t, c.oldTip, oldTip.String())
		})
	}
}

func TestCapToBalance(t *testing.T) {
	for _, c := range []struct {
		name                       string
		tip, feeCap, balance       string
		gas                        int64
		wantTip, wantCap, wantBase string
		ok                         bool
	}{
		// feeCap 2100 = 2 × base 1000 + tip 100.
		{"enough gas: today's fees", "100", "2100", "2100000", 1000, "100", "2100", "1000", true},
		{"more than enough", "100", "2100", "99999999", 1000, "100", "2100", "1000", true},
		{"base fee rose: the cap what the gas affords", "100", "2100", "1500000", 1000, "100", "1500", "1000", true},
		{"affords one wei over the base fee", "100", "2100", "1001000", 1000, "100", "1001", "1000", true},
		{"affords exactly the base fee: fails", "100", "2100", "1000000", 1000, "100", "1000", "1000", false},
		{"affords less than the base fee: fails", "100", "2100", "999999", 1000, "100", "999", "1000", false},
		{"tip cut to the cap", "2000", "4000", "1500000", 1000, "1500", "1500", "1000", true},
		{"rounding down: never a cap the gas cannot pay", "100", "2100", "1500999", 1000, "100", "1500", "1000", true},
		{"zero gas limit: refused, no division by zero", "100", "2100", "1", 0, "100", "2100", "1000", false},
		{"zero balance", "100", "2100", "0", 21000, "100", "0", "1000", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tip, cap, base, ok := txmgr.CapToBalance(n(c.tip), n(c.feeCap), n(c.balance), c.gas)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.wantBase, base.String(), "base fee")
			assert.Equal(t, c.wantCap, cap.String(), "fee cap")
			if ok {
				assert.Equal(t, c.wantTip, tip.String(), "tip")
				assert.LessOrEqual(t, tip.Cmp(cap), 0, "the tip is never over the cap")
				cost := txmgr.GasCost(cap, c.gas)
				assert.LessOrEqual(t, cost.Cmp(n(c.balance)), 0, "the gas at the cap is affordable")
			}
		})
	}
}

func TestReserved(t *testing.T) {
	att := func(feeCap int64) store.TxAttempt { return store.TxAttempt{FeeCap: decimal.NewFromInt(feeCap)} }
	open := []store.OutgoingTx{
		// signed: value + gas at the newest attempt's cap (3 × 21000 + 5)
		{Status: store.OutgoingSigned, TxValue: decimal.NewFromInt(5), GasLimit: 21000, Attempts: []store.TxAttempt{att(1), att(3)}},
		// mined: paid already
		{Status: store.OutgoingMined, TxValue: decimal.NewFromInt(1000), GasLimit: 21000, Attempts: []store.TxAttempt{att(9)}},
		// a conflict: not counted (an operator looks)
		{Status: store.OutgoingConflict, TxValue: decimal.NewFromInt(1000), GasLimit: 21000, Attempts: []store.TxAttempt{att(9)}},
		// signed without attempts (never stored so): nothing to count
		{Status: store.OutgoingSigned, TxValue: decimal.NewFromInt(1000), GasLimit: 21000},
		// a huge value stays exact
		{Status: store.OutgoingSigned, TxValue: decimal.NewFromBigInt(maxUint256, 0), GasLimit: 1, Attempts: []store.TxAttempt{att(0)}},
	}
	want := new(big.Int).Add(maxUint256, big.NewInt(3*21000+5))
	assert.Equal(t, want.String(), txmgr.Reserved(open).String())
	assert.True(t, txmgr.Reserved(nil).IsZero())
}

func TestGasCost(t *testing.T) {
	assert.Equal(t, "42000000000000", txmgr.GasCost(big.NewInt(2e9), 21000).String())
	assert.Equal(t, "0", txmgr.GasCost(big.NewInt(2e9), 0).String())
	assert.Equal(t, new(big.Int).Mul(maxUint256, big.NewInt(30_000_000)).String(), txmgr.GasCost(maxUint256, 30_000_000).String())
}
