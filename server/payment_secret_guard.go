package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/domain"
)

const (
	paymentSecretPrefix = "/v1/external/payment-secret-auth/payments/"
	paymentSecretHeader = "X-Service-Payment-Secret"
)

// limiters hands out one token bucket per key, the least recently used forgotten first.
type limiters struct {
	mu    sync.Mutex
	cache *lru.Cache[string, *rate.Limiter]
	every rate.Limit
	burst int
}

func newLimiters(perSecond float64, burst int) *limiters {
	c, _ := lru.New[string, *rate.Limiter](20_000)
	return &limiters{cache: c, every: rate.Limit(perSecond), burst: burst}
}

// reserve takes a token for key now; the reservation's delay says how long until it is free.
func (l *limiters) reserve(key string, now time.Time) *rate.Reservation {
	l.mu.Lock()
	lim, ok := l.cache.Get(key)
	if !ok {
		lim = rate.NewLimiter(l.every, l.burst)
		l.cache.Add(key, lim)
	}
	l.mu.Unlock()
	return lim.ReserveN(now, 1)
}

// takeAll takes a token from every bucket or, when any has none now, from none (a refused
// request spends nothing) and says how long until all of them have one.
func takeAll(now time.Time, rs ...*rate.Reservation) (bool, time.Duration) {
	var wait time.Duration
	for _, r := range rs {
		wait = max(wait, r.DelayFrom(now))
	}
	if wait == 0 {
		return true, 0
	}
	for _, r := range rs {
		r.CancelAt(now)
	}
	return false, wait
}

// clientKey is the client's address as the server saw it (clientIPExtractor: the TCP peer, or
// the X-Forwarded-For address a trusted proxy vouches for), parsed: never a header's raw text.
// An IPv6 client is keyed by its /64 — one subscriber's network — since it can pick any of the
// 2^64 addresses in it and would otherwise have a failure budget per address.
func clientKey(c echo.Context) string {
	ip, err := netip.ParseAddr(c.RealIP())
	if err != nil {
		return "unparsed"
	}
	if ip = ip.Unmap(); ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// rateLimitedError is a 429 with the wait.
type rateLimitedError struct{ wait time.Duration }

func (e *rateLimitedError) Error() string {
	return fmt.Sprintf("Too many requests; retry in %d s.", retrySeconds(e.wait))
}

func retrySeconds(d time.Duration) int64 { return max(int64((d+time.Second-1)/time.Second), 1) }

// paymentSecretGuard rate-limits and authenticates whatever a payment's secret opens: the
// payment-secret API (the operations whose security scheme is PaymentSecret) and the checkout
// page's devnet test-wallet payment.
//
// Every well-formed request is looked up (one read by primary key, the secret compared in
// constant time with its stored hash) before any budget is consulted: a correct secret is
// answered whatever others did, subject only to its payment's request budget (a page polling
// too fast). Only an opened payment spends that budget, so knowing a payment id does not lock its
// customer out. A failure (unknown payment or wrong secret: the same answer) spends one token of
// its client's and one of the payment id's failure budgets — both or, when either is empty,
// neither, and then it is a 429 instead of the 404. Looking up before limiting is deliberate:
// only the lookup tells a correct secret from a guess, so it is what keeps a correct secret
// answerable behind a proxy or NAT a guesser shares. A failure costs one primary-key read (an
// unknown id; a known id's wrong secret also loads its payment before the compare). The failure
// budgets are back pressure on misbehaving clients, not what stops guessing — a limited guess is
// still checked, and 256 random bits are what make guessing pointless. Keys are parsed (a UUID,
// an IP address): no client string becomes a key.
type paymentSecretGuard struct {
	openPayment                     func(ctx context.Context, paymentID, secret string) (domain.Payment, error)
	perPayment                      *limiters // an opened payment's requests
	reports                         *limiters // an opened payment's transaction reports (each reads a chain)
	clientFailures, paymentFailures *limiters // failed secrets per client address, per payment id
}

func newPaymentSecretGuard(svc *checkout.Service) *paymentSecretGuard {
	if svc == nil {
		return nil
	}
	return newGuard(svc.Open)
}

// newGuard sets the budgets: an opened payment 5 requests/s (burst 20), of which transaction
// reports one per 2 s (burst 10: a page reports a hash, then again every few seconds while it is
// not mined); failures 1/s (burst 20) per client address and one per 10 s (burst 20) per payment
// id — a payment has one customer, and one with a mangled link gives up long before 20 tries.
func newGuard(open func(ctx context.Context, paymentID, secret string) (domain.Payment, error)) *paymentSecretGuard {
	return &paymentSecretGuard{openPayment: open, perPayment: newLimiters(5, 20), reports: newLimiters(0.5, 10),
		clientFailures: newLimiters(1, 20), paymentFailures: newLimiters(0.1, 20)}
}

// isReport says whether a request reads a chain on the customer's word: a transaction report
// (reportCheckoutTransaction) or a signed transfer to relay (submitCheckoutGaslessPayment).
func isReport(c echo.Context) bool {
	r := c.Request()
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, paymentSecretPrefix) &&
		(strings.HasSuffix(r.URL.Path, "/transactions") || strings.HasSuffix(r.URL.Path, "/gasless-payments"))
}

// open authenticates a payment-secret API request (the payment id from its path).
func (g *paymentSecretGuard) open(c echo.Context) (domain.Payment, error) {
	raw, _, _ := strings.Cut(strings.TrimPrefix(c.Request().URL.Path, paymentSecretPrefix), "/")
	return g.openID(c, raw)
}

// openID authenticates a request for payment rawID by its X-Service-Payment-Secret and returns
// the payment. Every answer is `Cache-Control: no-store` and `Referrer-Policy: no-referrer`.
func (g *paymentSecretGuard) openID(c echo.Context, rawID string) (domain.Payment, error) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	secret := strings.TrimSpace(c.Request().Header.Get(paymentSecretHeader))
	if secret == "" || strings.HasPrefix(secret, "sk_") {
		return domain.Payment{}, domain.ErrInvalidPaymentSecret // no lookup: costs nothing, counts nothing
	}
	id, err := uuid.Parse(rawID)
	if err != nil || len(rawID) != 36 {
		return domain.Payment{}, domain.ErrPaymentNotFound // likewise
	}
	limited := func(ok bool, wait time.Duration) error {
		if ok {
			return nil
		}
		h.Set("Retry-After", fmt.Sprint(retrySeconds(wait)))
		return &rateLimitedError{wait}
	}
	p, err := g.openPayment(c.Request().Context(), id.String(), secret)
	now := time.Now()
	if errors.Is(err, domain.ErrPaymentNotFound) {
		failures := []*rate.Reservation{g.clientFailures.reserve(clientKey(c), now), g.paymentFailures.reserve(id.String(), now)}
		if lerr := limited(takeAll(now, failures...)); lerr != nil {
			return domain.Payment{}, lerr
		}
		return domain.Payment{}, err
	}
	if err != nil {
		return domain.Payment{}, err
	}
	budgets := []*rate.Reservation{g.perPayment.reserve(p.ID.String(), now)}
	if g.reports != nil && isReport(c) {
		budgets = append(budgets, g.reports.reserve(p.ID.String(), now))
	}
	if err := limited(takeAll(now, budgets...)); err != nil {
		return domain.Payment{}, err
	}
	return p, nil
}
