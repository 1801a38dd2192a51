package people

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/google/uuid"
)

// The sign-in throttle. Failures (a wrong password, an unknown email, a disabled user, a wrong
// second factor) are rows in the database, so every `serve` process counts the same ones. An
// account takes AccountFailureLimit failures per ThrottleWindow, a client address
// AddressFailureLimit: a guesser spreading over accounts from one address is stopped by the
// second, and an account under attack never locks a colleague out of the same office address
// (its limit is ten times higher). A refused attempt is not a failure: it neither extends the
// wait nor checks anything.
const (
	ThrottleWindow      = 15 * time.Minute
	AccountFailureLimit = 10
	AddressFailureLimit = 100
)

// ThrottledError refuses a sign-in attempt: too many recent failures; retry after Wait, when
// the oldest failure that counts leaves the window.
type ThrottledError struct{ Wait time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed sign-in attempts; retry in %d s", RetrySeconds(e.Wait))
}

// RetrySeconds is a wait in whole seconds, rounded up (at least 1): a Retry-After.
func RetrySeconds(d time.Duration) int64 { return max(int64((d+time.Second-1)/time.Second), 1) }

// checkThrottle refuses an attempt for account from addr when either has too many failures
// within the window.
func (s *Service) checkThrottle(ctx context.Context, account, addr string) error {
	now := s.Now()
	since := now.Add(-ThrottleWindow)
	tx := s.Store.Read(ctx)
	var wait time.Duration
	acc, err := tx.AccountFailuresSince(account, since, AccountFailureLimit)
	if err != nil {
		return err
	}
	if len(acc) == AccountFailureLimit { // newest first: the last is the one whose leaving frees a try
		wait = acc[len(acc)-1].Add(ThrottleWindow).Sub(now)
	}
	ip, err := tx.AddressFailuresSince(addr, since, AddressFailureLimit)
	if err != nil {
		return err
	}
	if len(ip) == AddressFailureLimit {
		wait = max(wait, ip[len(ip)-1].Add(ThrottleWindow).Sub(now))
	}
	if wait > 0 {
		return &ThrottledError{Wait: wait}
	}
	return nil
}

// recordFailure counts a failed attempt for account from addr.
func (s *Service) recordFailure(ctx context.Context, account, addr string) error {
	now := s.Now()
	return s.Store.Read(ctx).InsertLoginFailure(account, addr, now, now.Add(-ThrottleWindow))
}

// guardSecondFactor refuses a second factor given in a session (step-up, turning TOTP off) when
// the user's account or c's address is throttled: the same limits as a sign-in's second factor.
func (s *Service) guardSecondFactor(ctx context.Context, userID uuid.UUID, c Client) error {
	u, err := s.Store.Read(ctx).GetUser(userID)
	if err != nil {
		return s.noUser(err)
	}
	return s.checkThrottle(ctx, u.Email, c.IP)
}

// secondFactorFailed counts err toward the throttle when it is a wrong code (the user's
// account, c's address) and returns err (joined with a failure to record it).
func (s *Service) secondFactorFailed(ctx context.Context, userID uuid.UUID, c Client, err error) error {
	if !errors.Is(err, ErrInvalidCode) {
		return err
	}
	u, uerr := s.Store.Read(ctx).GetUser(userID)
	if uerr != nil {
		return errors.Join(err, uerr)
	}
	return errors.Join(err, s.recordFailure(ctx, u.Email, c.IP))
}

// Password hashing costs: tests may lower them (SetHashParamsForTests); the dummy hash an
// unknown email is checked against is made with the costs in force, so it takes as long as a
// real one.
var (
	paramsMu   sync.Mutex
	dummy      string
	dummyOf    *argon2id.Params
	testParams *argon2id.Params
)

func currentHashParams() *argon2id.Params {
	paramsMu.Lock()
	defer paramsMu.Unlock()
	if testParams != nil {
		return testParams
	}
	return hashParams
}

// SetHashParamsForTests lowers argon2id's costs for a test binary (the race detector makes the
// real ones take seconds). Test harnesses only: nothing in production calls it.
func SetHashParamsForTests() {
	paramsMu.Lock()
	defer paramsMu.Unlock()
	testParams = &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}
}

// dummyHash is a hash of a password nobody has, checked for an unknown email so that answer
// takes the time a wrong password does.
func dummyHash() string {
	p := currentHashParams()
	paramsMu.Lock()
	defer paramsMu.Unlock()
	if dummyOf != p {
		pw, _ := NewPassword()
		h, err := argon2id.CreateHash(pw, p)
		if err != nil {
			panic(err)
		}
		dummy, dummyOf = h, p
	}
	return dummy
}
