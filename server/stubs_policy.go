package server

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/gen"
)

// Stubs of issue 23's policy operations until they are built: each helper replaces its own.

func (h *handlers) ApproveMerchantWithdrawal(ctx context.Context, req gen.ApproveMerchantWithdrawalRequestObject) (gen.ApproveMerchantWithdrawalResponseObject, error) {
	return nil, errors.New("ApproveMerchantWithdrawal: not built yet")
}

func (h *handlers) CreateMerchantAddressBookEntry(ctx context.Context, req gen.CreateMerchantAddressBookEntryRequestObject) (gen.CreateMerchantAddressBookEntryResponseObject, error) {
	return nil, errors.New("CreateMerchantAddressBookEntry: not built yet")
}

func (h *handlers) DeleteMerchantAddressBookEntry(ctx context.Context, req gen.DeleteMerchantAddressBookEntryRequestObject) (gen.DeleteMerchantAddressBookEntryResponseObject, error) {
	return nil, errors.New("DeleteMerchantAddressBookEntry: not built yet")
}

func (h *handlers) EstimateWithdrawal(ctx context.Context, req gen.EstimateWithdrawalRequestObject) (gen.EstimateWithdrawalResponseObject, error) {
	return nil, errors.New("EstimateWithdrawal: not built yet")
}

func (h *handlers) GetMerchantPayoutSettings(ctx context.Context, req gen.GetMerchantPayoutSettingsRequestObject) (gen.GetMerchantPayoutSettingsResponseObject, error) {
	return nil, errors.New("GetMerchantPayoutSettings: not built yet")
}

func (h *handlers) ListMerchantAddressBook(ctx context.Context, req gen.ListMerchantAddressBookRequestObject) (gen.ListMerchantAddressBookResponseObject, error) {
	return nil, errors.New("ListMerchantAddressBook: not built yet")
}

func (h *handlers) RejectMerchantWithdrawal(ctx context.Context, req gen.RejectMerchantWithdrawalRequestObject) (gen.RejectMerchantWithdrawalResponseObject, error) {
	return nil, errors.New("RejectMerchantWithdrawal: not built yet")
}

func (h *handlers) UpdateMerchantPayoutSettings(ctx context.Context, req gen.UpdateMerchantPayoutSettingsRequestObject) (gen.UpdateMerchantPayoutSettingsResponseObject, error) {
	return nil, errors.New("UpdateMerchantPayoutSettings: not built yet")
}
