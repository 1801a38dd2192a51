package domain

// GaslessFeePayer is who bears the gas of relaying a customer's signed transfer (a payment made
// without gas, issue 24): a merchant's setting.
type GaslessFeePayer string

// Who bears a gasless payment's relay gas.
const (
	// GaslessFeeMerchant: the customer signs the quote's amount; the relay's gas cost, from its
	// receipt, is charged to the merchant with the merchant fee at settlement. The default.
	GaslessFeeMerchant GaslessFeePayer = "merchant"
	// GaslessFeeBuyer: the customer signs the quote's amount plus the chain's gasless fee
	// (Chain.GaslessFeeCents in the token); it is counted in the payment's convenience fee.
	GaslessFeeBuyer GaslessFeePayer = "buyer"
)

// Valid reports whether p is one of the payers.
func (p GaslessFeePayer) Valid() bool { return p == GaslessFeeMerchant || p == GaslessFeeBuyer }

// Or is p, or the default (the merchant) when p is unset.
func (p GaslessFeePayer) Or() GaslessFeePayer {
	if p == "" {
		return GaslessFeeMerchant
	}
	return p
}
