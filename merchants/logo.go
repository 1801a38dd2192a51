package merchants

import "github.com/paymentsd/paymentsd/domain"

// CheckLogoURL refuses a merchant logo URL that is not an absolute https URL with a host: the
// checkout page loads it in the customer's browser, where anything else is mixed content, a
// local file, or a script URL. The error is a *domain.InvalidInputError of param logoUrl.
func CheckLogoURL(raw string) error {
	return domain.CheckWebURL("logoUrl", raw, "https")
}
