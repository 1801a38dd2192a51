package domain

import (
	"errors"
	"fmt"
)

// Sentinel errors. The HTTP layer maps them to statuses in one table (server/errors.go).
var (
	ErrPaymentNotFound    = errors.New("payment not found")
	ErrWithdrawalNotFound = errors.New("withdrawal not found")
	ErrMerchantNotFound   = errors.New("merchant not found")
	ErrDepositsDisabled   = errors.New("deposits are not enabled for this merchant")
	ErrWithdrawalsOff     = errors.New("withdrawals are not enabled for this merchant")
	ErrInvalidAPIKey      = errors.New("invalid or missing secret key")
	ErrPriceUnavailable   = errors.New("price unavailable")
	ErrNoQuotableTokens   = errors.New("no enabled chain and token can quote this payment")
	// ErrAcceptedAssetsUnserved is ErrNoQuotableTokens because the merchant's selection names
	// only tokens this deployment does not serve: retrying cannot help, editing the selection can.
	ErrAcceptedAssetsUnserved = fmt.Errorf("%w: none of the merchant's accepted assets is served by this deployment", ErrNoQuotableTokens)
	// The checkout (payment-secret API).
	ErrInvalidPaymentSecret = errors.New("send the payment's secret in X-Service-Payment-Secret (a merchant secret key is never one)")
	ErrPaymentNotOpen       = errors.New("the payment is not open")
	ErrQuoteNotActive       = errors.New("the quote is not active")
	ErrQuoteNotFound        = errors.New("the payment has no such quote")
	// ErrGaslessUnavailable: a payment without gas could not be checked because the quote's
	// chain did not answer (503: retry, or pay the normal way).
	ErrGaslessUnavailable = errors.New("the quote's chain cannot be read now to check the authorization")
	// ErrGaslessInProgress: the payment has a signed transfer accepted or being relayed already;
	// a second would be relayed too and pay twice (409 gasless_in_progress).
	ErrGaslessInProgress = errors.New("a signed payment for this payment is already being relayed")
	// The dashboard (bearer tokens).
	ErrInvalidToken = errors.New("invalid, expired or missing bearer token")
	ErrForbidden    = errors.New("this token does not act for this merchant with this permission")
	ErrLiveOnly     = errors.New("only a live-mode token may do this")
	// ErrLiveKeyNeedsAdmin: a live secret key withdraws through the secret-key API, so only a
	// role that may move money (admin, owner) makes one; a developer makes test keys.
	ErrLiveKeyNeedsAdmin = errors.New("a live secret key can move money (withdrawals through the secret-key API), so making one needs the admin role; developers make test keys")
	// Roles and second factors (issue 22): a person's second factor is not recent enough for an
	// `x-second-factor: recent` operation, or the merchant requires one and the person has none.
	ErrStepUpRequired       = errors.New("confirm your second factor again (POST /v1/auth/step-up) to do this")
	ErrSecondFactorRequired = errors.New("this merchant requires a second factor: set one up before acting for it")
	// Merchants' keys and webhook endpoints (the dashboard and the operator's CLI).
	ErrAPIKeyNotFound          = errors.New("no such secret key")
	ErrWebhookEndpointNotFound = errors.New("no such webhook endpoint")
	ErrWebhookEventNotFound    = errors.New("no such webhook event")
	ErrRotationInProgress      = errors.New("the endpoint's previous secret still signs")
	ErrTooManyEndpoints        = errors.New("too many webhook endpoints")

	// The team (issue 22).
	ErrMemberNotFound     = errors.New("no such member of this merchant")
	ErrInvitationNotFound = errors.New("no such pending invitation")
	ErrLastOwner          = errors.New("a merchant keeps at least one owner: make another member owner first")
	ErrAlreadyMember      = errors.New("this person is already a member; change their role instead")
	// The dashboard's data operations (issue 22).
	ErrPayoutEstimateUnavailable = errors.New("this process cannot estimate a payout on this chain now (its RPC, a price, or its payouts are not available here)")
)

// ErrorCode is the machine-readable `error.code` of an API error body.
type ErrorCode string

// Error codes. Every code the API answers with is one of these; nothing maps errors by text.
const (
	CodeInvalidAmount        ErrorCode = "invalid_amount"
	CodeParameterInvalid     ErrorCode = "parameter_invalid"
	CodeParameterMissing     ErrorCode = "parameter_missing"
	CodeChainNotSupported    ErrorCode = "chain_not_supported"
	CodeInsufficientBalance  ErrorCode = "insufficient_balance"
	CodeInvalidState         ErrorCode = "invalid_state"
	CodeInvalidAPIKey        ErrorCode = "invalid_api_key"
	CodeDepositsDisabled     ErrorCode = "deposits_disabled"
	CodeWithdrawalsDisabled  ErrorCode = "withdrawals_disabled"
	CodePaymentNotFound      ErrorCode = "payment_not_found"
	CodeWithdrawalNotFound   ErrorCode = "withdrawal_not_found"
	CodeResourceNotFound     ErrorCode = "resource_not_found"
	CodeMethodNotAllowed     ErrorCode = "method_not_allowed"
	CodeIdempotencyKeyReused ErrorCode = "idempotency_key_reused"
	CodeIdempotencyKeyInUse  ErrorCode = "idempotency_key_in_use"
	CodeRequestTooLarge      ErrorCode = "request_too_large"
	CodeRequestTimeout       ErrorCode = "request_timeout"
	CodeUnsupportedMediaType ErrorCode = "unsupported_media_type"
	CodeRateLimited          ErrorCode = "rate_limited"
	CodeInvalidPaymentSecret ErrorCode = "invalid_payment_secret"
	CodePaymentNotOpen       ErrorCode = "payment_not_open"
	CodeQuoteNotActive       ErrorCode = "quote_not_active"
	CodeGaslessInProgress    ErrorCode = "gasless_in_progress"
	CodeInvalidToken         ErrorCode = "invalid_token"
	CodeForbidden            ErrorCode = "forbidden"
	// Roles and second factors (issue 22).
	CodeStepUpRequired       ErrorCode = "step_up_required"
	CodeSecondFactorRequired ErrorCode = "second_factor_required"
	CodeLimitReached         ErrorCode = "limit_reached"
	CodeRecipientNotAllowed  ErrorCode = "recipient_not_allowed"
	CodeModeNotServed        ErrorCode = "mode_not_served"
	CodeNoChainAvailable     ErrorCode = "no_chain_available"
	CodePriceUnavailable     ErrorCode = "price_unavailable"
	CodeInternal             ErrorCode = "internal_error"
	// Sign-in and sessions (issue 22).
	CodeInvalidCredentials ErrorCode = "invalid_credentials"
	CodeTooManyAttempts    ErrorCode = "too_many_attempts"
	CodeInvalidSession     ErrorCode = "invalid_session"
	CodeInvalidCode        ErrorCode = "invalid_code"
	CodeInvalidInvitation  ErrorCode = "invalid_invitation"
	// The team (issue 22).
	CodeLastOwner     ErrorCode = "last_owner"
	CodeAlreadyMember ErrorCode = "already_member"
)

// ModeNotServedError refuses a payment in a mode this deployment serves no chain of (a live key
// where only testnets and the devnet are served, or the other way round).
type ModeNotServedError struct{ Mode Mode }

func (e *ModeNotServedError) Error() string {
	return fmt.Sprintf("this deployment serves no %s-mode chain: a %s key can create no payments here", e.Mode, e.Mode)
}

// InvalidInputError is a 400 with a machine code and the offending field.
type InvalidInputError struct {
	Code    ErrorCode
	Param   string
	Message string
}

func (e *InvalidInputError) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return fmt.Sprintf("%s: %s", e.Param, e.Message)
}

// Invalid builds an InvalidInputError.
func Invalid(code ErrorCode, param, format string, args ...any) error {
	return &InvalidInputError{Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// InsufficientBalanceError refuses a valid withdrawal that the merchant's available balance
// cannot cover: the request is well formed, the account's state says no (409, not 400).
type InsufficientBalanceError struct {
	RequestedCents, AvailableCents int64
}

func (e *InsufficientBalanceError) Error() string {
	return fmt.Sprintf("amountInCents %d exceeds the available balance of %d cents", e.RequestedCents, e.AvailableCents)
}
