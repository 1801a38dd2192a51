package payments

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// AssignCustomerTransfers attributes transfers to customers' reusable deposit addresses: to the
// open deposit using the address, or to a new deposit recorded for the customer when none is
// open, so a customer who pays to their old address keeps crediting the merchant.
func (o *OnChain) AssignCustomerTransfers(ctx context.Context, chainID int64, limit int) error {
	s := o.Payments
	ts, err := s.Store.Read(ctx).UnassignedTransfers(chainID, limit)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range ts {
		if err := o.assign(ctx, t); err != nil {
			// The transfer stays recorded and unattributed, retried next round; the others go on.
			s.Log.ErrorContext(ctx, "attribute a transfer to a customer's deposit", "tx", t.TxHash, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (o *OnChain) assign(ctx context.Context, t store.Transfer) error {
	s := o.Payments
	pid, err := s.Store.Read(ctx).OpenPaymentAt(t.DepositAddressID)
	if errors.Is(err, store.ErrNotFound) {
		if pid, err = o.openCustomerDeposit(ctx, t); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.AssignTransfer(t.ID, pid) })
	if errors.Is(err, store.ErrConflict) {
		return nil // attributed by another process meanwhile
	}
	return err
}

func (o *OnChain) openCustomerDeposit(ctx context.Context, t store.Transfer) (uuid.UUID, error) {
	s := o.Payments
	rd := s.Store.Read(ctx)
	addr, err := rd.DepositAddressByID(t.DepositAddressID)
	if err != nil {
		return uuid.Nil, err
	}
	if addr.CustomerRefID == nil {
		return uuid.Nil, fmt.Errorf("transfer %s: deposit address %s belongs to no customer and no payment", t.ID, addr.Address)
	}
	m, err := rd.GetMerchant(addr.MerchantID)
	if err != nil {
		return uuid.Nil, err
	}
	// The deposit is of the address's mode (a customer's reusable address is per mode). Money of
	// the other mode arriving there is not counted by it; once it expires the transfer is
	// credited in its own chain's mode, announced to that mode's endpoints.
	m.Mode = addr.Mode
	if cm := o.Payments.Catalog.ChainMode(t.ChainID); cm != addr.Mode {
		s.Log.WarnContext(ctx, "a transfer of the other mode reached a customer's reusable address", "chain", t.ChainID,
			"tx", t.TxHash, "address_mode", addr.Mode, "transfer_mode", cm)
	}
	order := "auto-" + t.TxHash[:18] // a deposit the customer made without asking: named after its transaction
	// Recorded even if the merchant has turned deposits off since: the money arrived and is theirs.
	m.DepositsEnabled = true
	created, err := s.Create(ctx, m, CreateInput{Type: domain.TypeDeposit, Currency: "USD", OrderID: order,
		CustomerRefID: addr.CustomerRefID}, nil)
	if err != nil {
		return uuid.Nil, fmt.Errorf("record a deposit for customer %q's transfer %s: %w", *addr.CustomerRefID, t.TxHash, err)
	}
	s.Log.InfoContext(ctx, "deposit recorded for a transfer to a customer's address", "payment", created.Payment.ID,
		"customer_ref_id", *addr.CustomerRefID, "tx", t.TxHash)
	return created.Payment.ID, nil
}
