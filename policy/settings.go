package policy

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// The bounds of the settings (openapi.yaml's UpdatePayoutSettingsRequest says the same; checked
// here too, so no caller writes what the API would refuse).
const (
	maxPolicyCents     = 100_000_000_000 // $1 billion: a threshold or limit above is a typo
	maxCoolingOffHours = 720             // 30 days
	maxRefundClaimDays = 365
)

// SettingsChange is a PATCH of the payout settings: a nil field keeps its value; a Clear flag
// turns the approval threshold or the daily limit off (null in the request).
type SettingsChange struct {
	ApprovalThresholdCents *int64
	ClearApprovalThreshold bool
	AllowlistOnly          *bool
	AddressCoolingOffHours *int32
	DailyLimitCents        *int64
	ClearDailyLimit        bool
	RefundClaimDays        *int32
	OfferOverpaymentRefund *bool
}

// SettingsOf reads a merchant's payout settings of a mode (the defaults when never changed).
func (s *Service) SettingsOf(ctx context.Context, merchantID uuid.UUID, mode domain.Mode) (domain.PayoutSettings, error) {
	return s.Settings(s.Store.Read(ctx), merchantID, mode)
}

// UpdateSettings applies c to a merchant's payout settings and audits the values before and
// after, in one transaction. An invalid value changes nothing (400 parameter_invalid naming it).
// New withdrawals and refunds see the new settings; one already waiting for an approval keeps
// waiting.
func (s *Service) UpdateSettings(ctx context.Context, merchantID uuid.UUID, mode domain.Mode, c SettingsChange) (domain.PayoutSettings, error) {
	if err := c.check(); err != nil {
		return domain.PayoutSettings{}, err
	}
	var out domain.PayoutSettings
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		// The merchant's row serialises two changes at once: each applies its fields to what the
		// other wrote, so neither loses the other's.
		if _, err := tx.LockMerchant(merchantID); err != nil {
			return err
		}
		before, err := s.Settings(tx, merchantID, mode)
		if err != nil {
			return err
		}
		now := s.Now()
		after := pendLoosening(before, c.apply(before), now)
		after.UpdatedAt = &now
		if err := tx.PutPayoutSettings(after); err != nil {
			return err
		}
		out = after
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.PayoutSettingsUpdated, TargetType: audit.TargetMerchant,
			TargetID: merchantID.String(), Details: map[string]any{"mode": string(after.Mode), "before": settingsDetails(before), "after": settingsDetails(after)}})
	})
	return out, err
}

func (c SettingsChange) check() error {
	switch {
	case c.ApprovalThresholdCents != nil && (*c.ApprovalThresholdCents < 0 || *c.ApprovalThresholdCents > maxPolicyCents):
		return domain.Invalid(domain.CodeParameterInvalid, "approvalThresholdCents", "approvalThresholdCents must be between 0 and %d cents, or null (off)", int64(maxPolicyCents))
	case c.AddressCoolingOffHours != nil && (*c.AddressCoolingOffHours < 0 || *c.AddressCoolingOffHours > maxCoolingOffHours):
		return domain.Invalid(domain.CodeParameterInvalid, "addressCoolingOffHours", "addressCoolingOffHours must be between 0 and %d", maxCoolingOffHours)
	case c.DailyLimitCents != nil && (*c.DailyLimitCents < 1 || *c.DailyLimitCents > maxPolicyCents):
		return domain.Invalid(domain.CodeParameterInvalid, "dailyLimitCents", "dailyLimitCents must be between 1 and %d cents, or null (off)", int64(maxPolicyCents))
	case c.RefundClaimDays != nil && (*c.RefundClaimDays < 1 || *c.RefundClaimDays > maxRefundClaimDays):
		return domain.Invalid(domain.CodeParameterInvalid, "refundClaimDays", "refundClaimDays must be between 1 and %d", maxRefundClaimDays)
	case c.ApprovalThresholdCents != nil && c.ClearApprovalThreshold, c.DailyLimitCents != nil && c.ClearDailyLimit:
		return domain.Invalid(domain.CodeParameterInvalid, "", "a value and null at once") // the API cannot send both
	}
	return nil
}

func (c SettingsChange) apply(s domain.PayoutSettings) domain.PayoutSettings {
	switch {
	case c.ClearApprovalThreshold:
		s.ApprovalThresholdCents = nil
	case c.ApprovalThresholdCents != nil:
		v := *c.ApprovalThresholdCents
		s.ApprovalThresholdCents = &v
	}
	switch {
	case c.ClearDailyLimit:
		s.DailyLimitCents = nil
	case c.DailyLimitCents != nil:
		v := *c.DailyLimitCents
		s.DailyLimitCents = &v
	}
	if c.AllowlistOnly != nil {
		s.AllowlistOnly = *c.AllowlistOnly
	}
	if c.AddressCoolingOffHours != nil {
		s.AddressCoolingOffHours = *c.AddressCoolingOffHours
	}
	if c.RefundClaimDays != nil {
		s.RefundClaimDays = *c.RefundClaimDays
	}
	if c.OfferOverpaymentRefund != nil {
		s.OfferOverpaymentRefund = *c.OfferOverpaymentRefund
	}
	return s
}

// pendLoosening makes a change that loosens the rules in force (the allowlist off, a shorter
// cooling-off, a higher or no threshold or daily limit) wait out the cooling-off period in force:
// until then the strictest of the old and new rules applies (domain.PayoutSettings.Effective).
// Without it one admin — or whoever holds their session — could turn every guard off and move
// money the next second; with it the team has the cooling-off period to notice (the change is in
// the audit log). Two loosenings in a row keep the strictest rules and the later end. A change
// that only tightens applies at once and keeps a pending wait.
func pendLoosening(before, after domain.PayoutSettings, now time.Time) domain.PayoutSettings {
	inForce := before.Effective(now)
	rules := inForce.Rules()
	pending := before.StricterUntil != nil && now.Before(*before.StricterUntil)
	if !after.Rules().LooserThan(rules) || rules.AddressCoolingOffHours == 0 {
		if !pending {
			after.Stricter, after.StricterUntil = nil, nil
		}
		return after
	}
	until := now.Add(time.Duration(rules.AddressCoolingOffHours) * time.Hour)
	if pending && before.StricterUntil.After(until) {
		until = *before.StricterUntil
	}
	after.Stricter, after.StricterUntil = &rules, &until
	return after
}

// settingsDetails is what the audit log keeps of the settings (the API's field names).
func settingsDetails(s domain.PayoutSettings) map[string]any {
	return map[string]any{"approvalThresholdCents": s.ApprovalThresholdCents, "allowlistOnly": s.AllowlistOnly,
		"addressCoolingOffHours": s.AddressCoolingOffHours, "dailyLimitCents": s.DailyLimitCents,
		"refundClaimDays": s.RefundClaimDays, "offerOverpaymentRefunds": s.OfferOverpaymentRefund,
		"stricterPolicy": s.Stricter, "stricterPolicyUntil": s.StricterUntil}
}
