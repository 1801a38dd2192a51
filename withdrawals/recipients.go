package withdrawals

import (
	"github.com/paymentsd/paymentsd/recipients"
	"github.com/paymentsd/paymentsd/store"
)

// checkRecipient refuses a lowercase recipient the service controls or that cannot spend
// (package recipients: the rules withdrawals and refunds share).
func (s *Service) checkRecipient(tx *store.Tx, recipient string) error {
	return recipients.Checker{Catalog: s.Catalog, Controlled: s.Controlled}.Check(tx, recipient, "a withdrawal")
}
