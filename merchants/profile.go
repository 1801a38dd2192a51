package merchants

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Profile bounds (the API's UpdateMerchantProfileRequest states the same).
const (
	MaxDisplayNameRunes = 80
	MaxLogoURLBytes     = 2048
)

var accentColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// ProfileChange is a dashboard's change of the branding: nil fields stay; ClearLogo and
// ClearAccent remove theirs.
type ProfileChange = store.MerchantProfile

// CheckProfile refuses what the checkout page must never show: a display name that is empty,
// longer than 80 characters or carries control or bidirectional characters; a logo that is not
// an https URL of at most 2048 bytes; an accent that is not #rrggbb (the page sets it as a CSS
// custom property, so nothing but a colour may get there). The accent is returned lower-cased.
func CheckProfile(c *ProfileChange) error {
	if c.DisplayName != nil {
		name := strings.TrimSpace(*c.DisplayName)
		if n := utf8.RuneCountInString(name); n < 1 || n > MaxDisplayNameRunes {
			return domain.Invalid(domain.CodeParameterInvalid, "displayName", "displayName must be 1 to %d characters", MaxDisplayNameRunes)
		}
		if err := domain.CheckText("displayName", name); err != nil {
			return err
		}
		c.DisplayName = &name
	}
	if c.LogoURL != nil {
		if len(*c.LogoURL) > MaxLogoURLBytes {
			return domain.Invalid(domain.CodeParameterInvalid, "logoUrl", "logoUrl must be at most %d bytes", MaxLogoURLBytes)
		}
		if err := CheckLogoURL(*c.LogoURL); err != nil {
			return err
		}
	}
	if c.AccentColor != nil {
		if !accentColor.MatchString(*c.AccentColor) {
			return domain.Invalid(domain.CodeParameterInvalid, "accentColor", "accentColor must be #rrggbb")
		}
		lower := strings.ToLower(*c.AccentColor)
		c.AccentColor = &lower
	}
	if c.GaslessFeePaidBy != "" && !c.GaslessFeePaidBy.Valid() {
		return domain.Invalid(domain.CodeParameterInvalid, "gaslessFeePaidBy", "gaslessFeePaidBy must be merchant or buyer")
	}
	return nil
}

// UpdateProfile checks and applies a change of the merchant's branding (shared by both modes)
// and returns the merchant after it. Authenticated keys are forgotten so the secret-key API's
// payment bodies show the new logo at once.
func (s *Service) UpdateProfile(ctx context.Context, id uuid.UUID, c ProfileChange) (domain.Merchant, error) {
	if err := CheckProfile(&c); err != nil {
		return domain.Merchant{}, err
	}
	var out domain.Merchant
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		before, err := tx.GetMerchant(id)
		if err != nil {
			return err
		}
		if err := tx.UpdateMerchantProfile(id, c); err != nil {
			return err
		}
		if out, err = tx.GetMerchant(id); err != nil {
			return err
		}
		details := profileChanges(before, out)
		if details == nil {
			return nil // nothing changed: nothing to record
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: id, Action: audit.ProfileUpdated, TargetType: audit.TargetMerchant,
			TargetID: id.String(), Details: details})
	})
	if errors.Is(err, store.ErrNotFound) {
		return domain.Merchant{}, domain.ErrMerchantNotFound
	}
	if err != nil {
		return domain.Merchant{}, err
	}
	s.keys().flush()
	return out, nil
}

// profileChanges is the audit log's account of a profile change: the fields changed and their
// new values (nil: removed), a logo by its host only (a URL's path or query may carry a token);
// nil when nothing changed.
func profileChanges(before, after domain.Merchant) map[string]any {
	var fields []string
	details := map[string]any{}
	if text(before.DisplayName) != text(after.DisplayName) {
		fields = append(fields, "displayName")
		details["displayName"] = after.DisplayName
	}
	if text(before.LogoURL) != text(after.LogoURL) {
		fields = append(fields, "logoUrl")
		var host *string
		if after.LogoURL != nil {
			h := audit.URLHost(*after.LogoURL)
			host = &h
		}
		details["logoHost"] = host
	}
	if text(before.AccentColor) != text(after.AccentColor) {
		fields = append(fields, "accentColor")
		details["accentColor"] = after.AccentColor
	}
	if before.GaslessFeePaidBy.Or() != after.GaslessFeePaidBy.Or() {
		fields = append(fields, "gaslessFeePaidBy")
		details["gaslessFeePaidBy"] = string(after.GaslessFeePaidBy.Or())
	}
	if len(fields) == 0 {
		return nil
	}
	details["fields"] = fields
	return details
}

// text is a nullable text's value ("" for nil).
func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
