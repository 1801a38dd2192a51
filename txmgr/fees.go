package txmgr

import "math/big"

// Fee math as pure functions: inputs to outputs, no I/O, so every boundary has a table test.
// Amounts are wei per gas as big.Int: exact at any size, never floats.

// bumpNum/bumpDen is the least raise of a replacement's tip and fee cap: +12.5 %, since geth
// refuses a replacement under +10 % and other nodes round differently.
const (
	bumpNum = 1125
	bumpDen = 1000
)

// Caps are the fees of a new transaction: today's tip, and a fee cap of twice the base fee plus
// the tip, which survives about six full blocks of base-fee rises (+12.5 % each) before it no longer
// clears the base fee.
func Caps(tip, baseFee *big.Int) (tipCap, feeCap *big.Int) {
	feeCap = new(big.Int).Mul(baseFee, big.NewInt(2))
	return new(big.Int).Set(tip), feeCap.Add(feeCap, tip)
}

// MinBump is the least a replacement may offer for an old tip or fee cap: old × 1.125 rounded
// up, plus one (so even a zero or tiny value strictly rises).
func MinBump(old *big.Int) *big.Int {
	up := new(big.Int).Mul(old, big.NewInt(bumpNum))
	up.Add(up, big.NewInt(bumpDen-1)) // ceiling of the division below, for old ≥ 0
	up.Quo(up, big.NewInt(bumpDen))
	return up.Add(up, big.NewInt(1))
}

// Bump is the fees of a replacement of an attempt signed at (oldTip, oldCap), given today's
// fees (tip, feeCap, from Caps): each at least MinBump of the old, never below today's, and the
// fee cap never below the tip (a node refuses a cap under the tip).
func Bump(oldTip, oldCap, tip, feeCap *big.Int) (newTip, newCap *big.Int) {
	newTip, newCap = maxOf(MinBump(oldTip), tip), maxOf(MinBump(oldCap), feeCap)
	if newCap.Cmp(newTip) < 0 {
		newCap = new(big.Int).Set(newTip)
	}
	return newTip, newCap
}

// CapToBalance fits a transaction's fees to what a sender holds for gas (a deposit address
// whose gas was topped up): the fee cap is what balance affords for gasLimit, up to today's
// feeCap; the tip is at most the cap. ok is false when that cap no longer clears the base fee
// (read back from Caps: (feeCap - tip) / 2), which is returned for the message.
func CapToBalance(tip, feeCap, balance *big.Int, gasLimit int64) (newTip, newCap, baseFee *big.Int, ok bool) {
	baseFee = new(big.Int).Sub(feeCap, tip)
	baseFee.Quo(baseFee, big.NewInt(2))
	if gasLimit <= 0 {
		return tip, feeCap, baseFee, false
	}
	newCap = new(big.Int).Set(feeCap)
	if afford := new(big.Int).Quo(balance, big.NewInt(gasLimit)); afford.Cmp(newCap) < 0 {
		newCap = afford
	}
	if newCap.Cmp(baseFee) <= 0 {
		return tip, newCap, baseFee, false
	}
	newTip = new(big.Int).Set(tip)
	if newTip.Cmp(newCap) > 0 {
		newTip.Set(newCap)
	}
	return newTip, newCap, baseFee, true
}

// GasCost is what gasLimit gas at feeCap takes from the sender at most.
func GasCost(feeCap *big.Int, gasLimit int64) *big.Int {
	return new(big.Int).Mul(feeCap, big.NewInt(gasLimit))
}

func maxOf(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return new(big.Int).Set(a)
	}
	return new(big.Int).Set(b)
}
