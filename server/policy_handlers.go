package server

import (
	"time"

	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/policy"
)

// The payout policy's dashboard operations (issue 23): the settings, the address book, and the
// approval or rejection of a withdrawal awaiting one. The rules themselves are package policy's.

func (h *handlers) GetMerchantPayoutSettings(ctx context.Context, _ gen.GetMerchantPayoutSettingsRequestObject) (gen.GetMerchantPayoutSettingsResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	s, err := h.policy.SettingsOf(ctx, m.ID, m.Mode)
	if err != nil {
		return nil, err
	}
	return gen.GetMerchantPayoutSettings200JSONResponse(payoutSettingsOut(s, h.policy.Now())), nil
}

func (h *handlers) UpdateMerchantPayoutSettings(ctx context.Context, req gen.UpdateMerchantPayoutSettingsRequestObject) (gen.UpdateMerchantPayoutSettingsResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	c := policy.SettingsChange{AllowlistOnly: b.AllowlistOnly, AddressCoolingOffHours: b.AddressCoolingOffHours,
		RefundClaimDays: b.RefundClaimDays, OfferOverpaymentRefund: b.OfferOverpaymentRefunds}
	if c.ApprovalThresholdCents, c.ClearApprovalThreshold, err = nullableCents("approvalThresholdCents", b.ApprovalThresholdCents); err != nil {
		return nil, err
	}
	if c.DailyLimitCents, c.ClearDailyLimit, err = nullableCents("dailyLimitCents", b.DailyLimitCents); err != nil {
		return nil, err
	}
	s, err := h.policy.UpdateSettings(ctx, m.ID, m.Mode, c)
	if err != nil {
		return nil, err
	}
	return gen.UpdateMerchantPayoutSettings200JSONResponse(payoutSettingsOut(s, h.policy.Now())), nil
}

// nullableCents reads a member that may be absent (nil, false), null (nil, true) or an integer.
func nullableCents(param string, raw json.RawMessage) (*int64, bool, error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, true, nil
	}
	var v int64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, false, domain.Invalid(domain.CodeParameterInvalid, param, "%s must be an integer number of cents or null", param)
	}
	return &v, false, nil
}

// payoutSettingsOut renders the settings as of now: a loosening's stricter rules only while they
// still apply.
func payoutSettingsOut(s domain.PayoutSettings, now time.Time) gen.PayoutSettings {
	out := gen.PayoutSettings{ApprovalThresholdCents: s.ApprovalThresholdCents, AllowlistOnly: s.AllowlistOnly,
		AddressCoolingOffHours: s.AddressCoolingOffHours, DailyLimitCents: s.DailyLimitCents, RefundClaimDays: s.RefundClaimDays,
		OfferOverpaymentRefunds: s.OfferOverpaymentRefund, UpdatedAt: s.UpdatedAt}
	if s.Stricter != nil && s.StricterUntil != nil && now.Before(*s.StricterUntil) {
		r := s.Stricter
		out.StricterPolicy = &gen.PayoutPolicyRules{ApprovalThresholdCents: r.ApprovalThresholdCents, AllowlistOnly: r.AllowlistOnly,
			AddressCoolingOffHours: r.AddressCoolingOffHours, DailyLimitCents: r.DailyLimitCents}
		out.StricterPolicyUntil = s.StricterUntil
	}
	return out
}

func (h *handlers) ListMerchantAddressBook(ctx context.Context, _ gen.ListMerchantAddressBookRequestObject) (gen.ListMerchantAddressBookResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	list, err := h.policy.AddressBook(ctx, m)
	if err != nil {
		return nil, err
	}
	out := gen.AddressBookList{Data: make([]gen.AddressBookEntry, len(list))}
	for i, e := range list {
		out.Data[i] = addressBookEntryOut(e)
	}
	return gen.ListMerchantAddressBook200JSONResponse(out), nil
}

func (h *handlers) CreateMerchantAddressBookEntry(ctx context.Context, req gen.CreateMerchantAddressBookEntryRequestObject) (gen.CreateMerchantAddressBookEntryResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	chainID, err := chains.ParseCAIP2(req.Body.ChainId)
	if err != nil {
		return nil, domain.Invalid(domain.CodeParameterInvalid, "chainId", "%v", err)
	}
	e, err := h.policy.AddAddress(ctx, m, policy.NewAddress{Label: req.Body.Label, ChainID: chainID, Address: req.Body.Address})
	if err != nil {
		return nil, err
	}
	return gen.CreateMerchantAddressBookEntry201JSONResponse(addressBookEntryOut(e)), nil
}

func (h *handlers) DeleteMerchantAddressBookEntry(ctx context.Context, req gen.DeleteMerchantAddressBookEntryRequestObject) (gen.DeleteMerchantAddressBookEntryResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.policy.RemoveAddress(ctx, m, req.EntryId); err != nil {
		return nil, err
	}
	return gen.DeleteMerchantAddressBookEntry204Response{}, nil
}

func addressBookEntryOut(e domain.AddressBookEntry) gen.AddressBookEntry {
	return gen.AddressBookEntry{Id: e.ID, Label: e.Label, ChainId: chains.CAIP2(e.ChainID), Address: e.Address,
		CreatedAt: e.CreatedAt, UsableAt: e.UsableAt, CreatedBy: e.CreatedByEmail}
}

// ApproveMerchantWithdrawal approves a withdrawal awaiting a second person's approval, as the
// person the token names (a service token is refused: an approval is a person's).
func (h *handlers) ApproveMerchantWithdrawal(ctx context.Context, req gen.ApproveMerchantWithdrawalRequestObject) (gen.ApproveMerchantWithdrawalResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	w, err := h.policy.ApproveWithdrawal(ctx, m, req.WithdrawalId)
	if err != nil {
		return nil, err
	}
	return h.render.Withdrawal(w, http.StatusOK), nil
}

// RejectMerchantWithdrawal rejects (cancels) a withdrawal awaiting an approval.
func (h *handlers) RejectMerchantWithdrawal(ctx context.Context, req gen.RejectMerchantWithdrawalRequestObject) (gen.RejectMerchantWithdrawalResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	w, err := h.policy.RejectWithdrawal(ctx, m, req.WithdrawalId)
	if err != nil {
		return nil, err
	}
	return h.render.Withdrawal(w, http.StatusOK), nil
}
