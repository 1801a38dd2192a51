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
)

// InvalidInputError is a 400 with a machine code and the offending field.
type InvalidInputError struct {
	Code    string // invalid_amount | parameter_invalid | parameter_missing | insufficient_balance | chain_not_supported
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
func Invalid(code, param, format string, args ...any) error {
	return &InvalidInputError{Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// StateError refuses an operation that the entity's current state does not allow.
type StateError struct {
	Entity, ID, State, Op string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("%s %s is %s: cannot %s", e.Entity, e.ID, e.State, e.Op)
}
