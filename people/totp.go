package people

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"image/png"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/store"
)

// TOTP second factor (RFC 6238: SHA-1, 6 digits, 30-second steps, one step of clock skew either
// way). The secret is sealed at rest with PAYMENTS_SECRETS_KEY. A code is accepted once: the
// step it was accepted for is stored, and a code of that step or an earlier one is refused
// (RFC 6238 §5.2). Recovery codes are 10 random codes shown once, kept as SHA-256 hashes, each
// usable once.

// Errors of the second factor.
var (
	ErrInvalidCode     = errors.New("the code is wrong, expired or already used")
	ErrTOTPEnabled     = errors.New("a second factor is already set up; disable it first")
	ErrTOTPNotEnrolled = errors.New("no second factor is being set up: enroll first")
	ErrNoSecondFactor  = errors.New("this user has no second factor")
)

const (
	totpPeriod        = 30
	totpSkew          = 1
	recoveryCodeCount = 10
	totpIssuer        = "paymentsd"
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// Enrollment is a TOTP secret waiting for its first code.
type Enrollment struct {
	Secret     string // base32
	OtpauthURI string
	QRCodePNG  string // data: URI of a PNG
}

// EnrollTOTP makes a new secret for the person (replacing one not yet confirmed). A person with a
// second factor already (a passkey) needs a recent one: a stolen access token must not add a
// factor of its own and step up with it.
func (s *Service) EnrollTOTP(ctx context.Context, p dashauth.Person) (Enrollment, error) {
	userID := p.UserID
	tx := s.Store.Read(ctx)
	u, err := tx.GetUser(userID)
	if err != nil {
		return Enrollment{}, s.noUser(err)
	}
	st, err := tx.UserTOTP(userID)
	if err != nil {
		return Enrollment{}, err
	}
	if st.SecretSealed != nil {
		return Enrollment{}, ErrTOTPEnabled
	}
	if err := s.requireRecentFactor(ctx, p, "setting up TOTP"); err != nil {
		return Enrollment{}, err
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: totpIssuer, AccountName: u.Email, Period: totpPeriod, Digits: otp.DigitsSix,
		Algorithm: otp.AlgorithmSHA1, SecretSize: 20})
	if err != nil {
		return Enrollment{}, err
	}
	img, err := key.Image(240, 240)
	if err != nil {
		return Enrollment{}, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return Enrollment{}, err
	}
	sealed, err := s.seal(key.Secret())
	if err != nil {
		return Enrollment{}, err
	}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.SetPendingTOTP(userID, sealed, s.Now()) }); err != nil {
		return Enrollment{}, err
	}
	return Enrollment{Secret: key.Secret(), OtpauthURI: key.URL(), QRCodePNG: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())}, nil
}

// ConfirmTOTP turns the enrolled secret on with a first code and returns the recovery codes
// (shown once). Like EnrollTOTP it needs a recent second factor when the person has one.
func (s *Service) ConfirmTOTP(ctx context.Context, p dashauth.Person, code string) ([]string, error) {
	userID := p.UserID
	if has, err := s.HasTOTP(ctx, userID); err != nil {
		return nil, err
	} else if has {
		return nil, ErrTOTPEnabled
	}
	if err := s.requireRecentFactor(ctx, p, "setting up TOTP"); err != nil {
		return nil, err
	}
	codes := make([]string, recoveryCodeCount)
	hashes := make([]string, recoveryCodeCount)
	for i := range codes {
		c, err := newRecoveryCode()
		if err != nil {
			return nil, err
		}
		codes[i], hashes[i] = c, TokenHash(c)
	}
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		st, err := tx.UserTOTP(userID)
		if err != nil {
			return s.noUser(err)
		}
		if st.SecretSealed != nil {
			return ErrTOTPEnabled
		}
		if st.PendingSealed == nil {
			return ErrTOTPNotEnrolled
		}
		secret, err := s.open(*st.PendingSealed)
		if err != nil {
			return err
		}
		step, ok := s.matchStep(secret, code, st.LastStep)
		if !ok {
			return ErrInvalidCode
		}
		if err := tx.ConfirmTOTP(userID, *st.PendingSealed, step, s.Now()); err != nil {
			return err
		}
		if err := tx.ReplaceRecoveryCodes(userID, hashes, s.Now()); err != nil {
			return err
		}
		return auditUser(ctx, tx, userID, audit.TOTPEnabled, map[string]any{"recovery_codes_issued": recoveryCodeCount})
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// DisableTOTP turns the second factor off, with a current code (or a recovery code), under the
// sign-in's throttle like StepUp: refused first when throttled, a wrong code counted.
func (s *Service) DisableTOTP(ctx context.Context, userID uuid.UUID, code string, c Client) error {
	if err := s.guardSecondFactor(ctx, userID, c); err != nil {
		return err
	}
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := s.useSecondFactor(ctx, tx, userID, code); err != nil {
			return err
		}
		if err := tx.DisableTOTP(userID, s.Now()); err != nil {
			return err
		}
		return auditUser(ctx, tx, userID, audit.TOTPDisabled, map[string]any{"method": codeFactor(code)})
	})
	return s.secondFactorFailed(ctx, userID, c, err)
}

// HasTOTP reports whether the user has a second factor.
func (s *Service) HasTOTP(ctx context.Context, userID uuid.UUID) (bool, error) {
	st, err := s.Store.Read(ctx).UserTOTP(userID)
	if err != nil {
		return false, s.noUser(err)
	}
	return st.SecretSealed != nil, nil
}

// useSecondFactor spends a TOTP code (six digits) or a recovery code of the user; a recovery
// code spent is recorded in the audit log (a team wants to know one of its members used one).
func (s *Service) useSecondFactor(ctx context.Context, tx *store.Tx, userID uuid.UUID, code string) error {
	st, err := tx.UserTOTP(userID)
	if err != nil {
		return s.noUser(err)
	}
	if st.SecretSealed == nil {
		return ErrNoSecondFactor
	}
	code = strings.TrimSpace(code)
	if isTOTPCode(code) {
		secret, err := s.open(*st.SecretSealed)
		if err != nil {
			return err
		}
		step, ok := s.matchStep(secret, code, st.LastStep)
		if !ok {
			return ErrInvalidCode
		}
		// Conditional on the stored step: of two concurrent uses of one code only one passes.
		used, err := tx.UseTOTPStep(userID, step)
		if err != nil {
			return err
		}
		if !used {
			return ErrInvalidCode
		}
		return nil
	}
	used, err := tx.UseRecoveryCode(userID, TokenHash(normalizeRecoveryCode(code)), s.Now())
	if err != nil {
		return err
	}
	if !used {
		return ErrInvalidCode
	}
	return auditUser(ctx, tx, userID, audit.RecoveryCodeUsed, nil)
}

// matchStep finds the time step (now, or one either side) whose code is code, later than
// lastStep (a step already used is refused: the code was seen).
func (s *Service) matchStep(secret, code string, lastStep int64) (int64, bool) {
	if !isTOTPCode(code) {
		return 0, false
	}
	now := s.Now().Unix() / totpPeriod
	found, step := 0, int64(0)
	for d := int64(-totpSkew); d <= totpSkew; d++ {
		st := now + d
		want, err := totp.GenerateCodeCustom(secret, time.Unix(st*totpPeriod, 0).UTC(), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && st > lastStep {
			found, step = 1, st
		}
	}
	return step, found == 1
}

func isTOTPCode(code string) bool {
	if len(code) != 6 {
		return false
	}
	for _, r := range code {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// newRecoveryCode is 10 random base32 characters (50 bits) as xxxxx-xxxxx.
func newRecoveryCode() (string, error) {
	b := make([]byte, 7)
	if _, err := readRandom(b); err != nil {
		return "", err
	}
	c := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))[:10]
	return c[:5] + "-" + c[5:], nil
}

// normalizeRecoveryCode accepts a recovery code in any letter case, with or without its dash.
func normalizeRecoveryCode(code string) string {
	c := strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(code))
	if len(c) != 10 {
		return c
	}
	return c[:5] + "-" + c[5:]
}

func (s *Service) seal(secret string) (string, error) {
	if s.Sealer == nil {
		return "", errNoSealer
	}
	return s.Sealer.Seal([]byte(secret))
}

func (s *Service) open(sealed string) (string, error) {
	if s.Sealer == nil {
		return "", errNoSealer
	}
	b, err := s.Sealer.Open(sealed)
	return string(b), err
}

// noUser translates a missing user (a token of a deleted user) to ErrNoUser.
func (s *Service) noUser(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrNoUser
	}
	return err
}
