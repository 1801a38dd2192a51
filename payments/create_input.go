package payments

import "github.com/paymentsd/paymentsd/domain"

// checkStrings refuses the text fields of a new payment that would not show as what they look like
// (domain.CheckText) and a redirectUrl that is not an http(s) URL with a host; the API's schema
// checks lengths, this holds for every caller.
func (in CreateInput) checkStrings() error {
	if err := domain.CheckText("orderId", in.OrderID); err != nil {
		return err
	}
	// Checked for a payment too, which ignores it: the value was sent, and it is refused the same.
	if err := domain.CheckOptionalText("customerRefId", in.CustomerRefID); err != nil {
		return err
	}
	if in.RedirectURL != nil {
		return domain.CheckWebURL("redirectUrl", *in.RedirectURL, "https", "http")
	}
	return nil
}
