package policy

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// maxAddressBookEntries bounds a merchant's address book (its list is answered whole).
const maxAddressBookEntries = 500

// NewAddress is an address to save.
type NewAddress struct {
	Label   string
	ChainID int64
	Address string // any letter case; saved lowercase
}

// The address book is partitioned by mode, as the withdrawal configuration's chains are: an
// entry names a chain, a chain belongs to one mode, and a request acting in one mode (m.Mode)
// sees, saves and removes that mode's entries only — test traffic never opens the live allowlist.

// AddressBook lists a merchant's saved recipients on chains of m's mode, newest first.
func (s *Service) AddressBook(ctx context.Context, m domain.Merchant) ([]domain.AddressBookEntry, error) {
	all, err := s.Store.Read(ctx).AddressBook(m.ID)
	out := []domain.AddressBookEntry{}
	for _, e := range all {
		if s.Catalog.ChainMode(e.ChainID) == m.Mode.Norm() {
			out = append(out, e)
		}
	}
	return out, err
}

// AddAddress saves a recipient for a chain, usable for withdrawals once the merchant's
// cooling-off period (as it is now) has passed. The address is checked as a withdrawal's
// recipient would be; a listed (sanctioned) one is refused and the attempt audited. Audited.
func (s *Service) AddAddress(ctx context.Context, m domain.Merchant, in NewAddress) (domain.AddressBookEntry, error) {
	merchantID := m.ID
	label := strings.TrimSpace(in.Label)
	if label == "" || utf8.RuneCountInString(label) > 100 {
		return domain.AddressBookEntry{}, domain.Invalid(domain.CodeParameterInvalid, "label", "label must be 1 to 100 characters")
	}
	if err := domain.CheckText("label", label); err != nil {
		return domain.AddressBookEntry{}, err
	}
	if _, known := s.Catalog.Chain(in.ChainID); !known {
		return domain.AddressBookEntry{}, domain.Invalid(domain.CodeParameterInvalid, "chainId", "chain %s is not in this service's catalogue (GET /v1/external/chains)", chains.CAIP2(in.ChainID))
	}
	if cm := s.Catalog.ChainMode(in.ChainID); cm != m.Mode.Norm() {
		return domain.AddressBookEntry{}, domain.Invalid(domain.CodeChainNotSupported, "chainId", "chain %s is a %s-mode chain and this token acts in %s mode: each mode saves addresses for its own chains",
			chains.CAIP2(in.ChainID), cm, m.Mode.Norm())
	}
	addr := in.Address
	if !common.IsHexAddress(addr) || !strings.HasPrefix(addr, "0x") || common.HexToAddress(addr) == (common.Address{}) {
		return domain.AddressBookEntry{}, domain.Invalid(domain.CodeParameterInvalid, "address", "address must be a 0x-prefixed 20-byte hex address, not the zero address")
	}
	addr = strings.ToLower(addr)
	if s.Sanctions.Contains(addr) {
		s.auditSanctioned(ctx, merchantID, audit.TargetAddressBook, in.ChainID, addr, 0)
		return domain.AddressBookEntry{}, domain.Refuse(domain.CodeRecipientSanctioned, "address", "%s is on this service's sanctions list: it cannot be saved (the attempt is in the audit log)", addr)
	}
	var out domain.AddressBookEntry
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if s.Withdrawals != nil {
			if err := s.Withdrawals.CheckRecipient(tx, addr, "address"); err != nil {
				return err
			}
		}
		// The merchant's row serialises additions: the bound holds under concurrent requests.
		if _, err := tx.LockMerchant(merchantID); err != nil {
			return err
		}
		n, err := tx.CountAddressBook(merchantID)
		if err != nil {
			return err
		}
		if n >= maxAddressBookEntries {
			return domain.Refuse(domain.CodeLimitReached, "address", "the address book holds at most %d entries: remove one first", maxAddressBookEntries)
		}
		set, err := s.Settings(tx, merchantID, m.Mode)
		if err != nil {
			return err
		}
		now := s.Now()
		set = set.Effective(now) // a shortened cooling-off applies only once the old one is waited out
		actor := audit.ActorFrom(ctx)
		out = domain.AddressBookEntry{ID: uuid.Must(uuid.NewV7()), MerchantID: merchantID, Label: label, ChainID: in.ChainID, Address: addr,
			CreatedAt: now, UsableAt: now.Add(time.Duration(set.AddressCoolingOffHours) * time.Hour), CreatedBy: audit.PersonOf(ctx)}
		if out.CreatedBy != nil {
			out.CreatedByEmail = &actor.Label
		}
		if err := tx.InsertAddressBookEntry(out); errors.Is(err, store.ErrConflict) {
			return domain.ErrAddressExists
		} else if err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.AddressBookAdded, TargetType: audit.TargetAddressBook,
			TargetID: out.ID.String(), Details: map[string]any{"label": label, "chainId": chains.CAIP2(in.ChainID), "address": addr,
				"usableAt": out.UsableAt.UTC().Format(time.RFC3339)}})
	})
	return out, err
}

// RemoveAddress deletes one of a merchant's saved recipients of m's mode; withdrawals already
// created keep theirs. Unknown, malformed, other merchants' and other modes' ids are
// ErrAddressBookNotFound. Audited.
func (s *Service) RemoveAddress(ctx context.Context, m domain.Merchant, id string) error {
	eid, err := uuid.Parse(id)
	if err != nil {
		return domain.ErrAddressBookNotFound
	}
	merchantID := m.ID
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		e, err := tx.AddressBookEntry(merchantID, eid)
		if errors.Is(err, store.ErrNotFound) || (err == nil && s.Catalog.ChainMode(e.ChainID) != m.Mode.Norm()) {
			return domain.ErrAddressBookNotFound
		}
		if err != nil {
			return err
		}
		e, err = tx.DeleteAddressBookEntry(merchantID, eid)
		if errors.Is(err, store.ErrNotFound) {
			return domain.ErrAddressBookNotFound
		}
		if err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.AddressBookRemoved, TargetType: audit.TargetAddressBook,
			TargetID: e.ID.String(), Details: map[string]any{"label": e.Label, "chainId": chains.CAIP2(e.ChainID), "address": e.Address}})
	})
}
