package withdrawals

import (
	"errors"
	"strings"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/recipients"
	"github.com/paymentsd/paymentsd/store"
)

// checkRecipient refuses a lowercase recipient the service controls or that cannot spend
// (package recipients: the rules withdrawals and refunds share).
func (s *Service) checkRecipient(tx *store.Tx, recipient string) error {
	return s.CheckRecipient(tx, recipient, "recipientAddress")
}

// CheckRecipient is checkRecipient for another request's field (param): the address book
// saves only addresses a withdrawal could be sent to.
func (s *Service) CheckRecipient(tx *store.Tx, recipient, param string) error {
	err := recipients.Checker{Catalog: s.Catalog, Controlled: s.Controlled}.Check(tx, recipient, "a withdrawal")
	var in *domain.InvalidInputError
	if param != "recipientAddress" && errors.As(err, &in) {
		// The shared checker names the payout's field; say the request's own.
		return domain.Invalid(in.Code, param, "%s", strings.Replace(in.Message, "recipientAddress", param, 1))
	}
	return err
}
