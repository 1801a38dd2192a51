package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/metrics"
)

// idempotent makes POSTs carrying an Idempotency-Key safe to retry. The key travels
// in the context as a Guard, which the operation's service claims and seals inside the
// transaction of its effect (the handler renders the outcome there); a key already committed
// makes that claim fail, and the stored answer is replayed (or 409 for another request).
// Answers that took no effect are handled here:
//   - a domain refusal (4xx, e.g. insufficient_balance) is stored in a transaction of its own
//     so a retry gets the same answer;
//   - a 5xx stores nothing: the effect rolled back, and the retry runs afresh;
//   - a concurrent duplicate that lost the race replays the winner's outcome.
//
// Every replay is counted in paymentsd_idempotent_replays_total.
func idempotent(keeper *idempotency.Keeper, log *slog.Logger, met *metrics.Metrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			key := req.Header.Get("Idempotency-Key")
			m := merchantFrom(req.Context())
			if req.Method != http.MethodPost || key == "" || m.ID == [16]byte{} {
				return next(c)
			}
			// peekBody keeps the validator's ValidatedValue on the body: the binder must bind
			// exactly what was validated, never re-decode it (case-insensitive member names).
			body, err := peekBody(req)
			if err != nil {
				return err
			}
			// The hash covers the path as sent, not only its route: cancelling two withdrawals
			// with one key is two requests (the second answers 409), never a replay of the first.
			// Lower-cased: the ids in these paths are UUIDs, whatever case a retry spells them in.
			r := idempotency.Request{MerchantID: m.ID, Key: modeScopedKey(m.Mode, key), Operation: c.Path(),
				Hash: idempotency.RequestHash(req.Method+" "+strings.ToLower(req.URL.Path), body)}
			// No lookup first: the guard's claim inside the transaction finds an existing key, so the
			// common path (a new key) costs no extra round trip. Every failure looks the key up.
			c.SetRequest(req.WithContext(idempotency.WithGuard(req.Context(), keeper.Guard(r))))
			err = next(c)
			if err == nil {
				return nil
			}
			// A committed earlier request with this key (a retry), or a concurrent one that won
			// (ErrDuplicate): its answer stands, whatever this attempt ran into.
			out, lerr := keeper.Lookup(req.Context(), r)
			switch {
			case lerr == nil && out != nil:
				return replay(c, *out, met)
			case errors.Is(lerr, idempotency.ErrKeyReused), errors.Is(lerr, idempotency.ErrKeyInUse):
				return lerr
			case errors.Is(err, idempotency.ErrDuplicate):
				if lerr == nil {
					lerr = errors.New("idempotency: key reported committed but not found")
				}
				return lerr
			}
			ae := classify(err)
			var routing *echo.HTTPError
			if ae == nil || ae.Status >= 500 || errors.As(err, &routing) {
				// A 5xx took no effect and stores nothing. Neither does an answer of the router or
				// the binder (an unknown route, a method it lacks): no operation ran.
				return err
			}
			o, replayed, rerr := keeper.RecordRefusal(req.Context(), r, idempotency.Outcome{Status: ae.Status, Body: errorBody(ae)})
			if errors.Is(rerr, idempotency.ErrKeyReused) || errors.Is(rerr, idempotency.ErrKeyInUse) {
				return rerr // a different request with this key committed first
			}
			if rerr != nil {
				log.ErrorContext(req.Context(), "store idempotent refusal", "key", key, "err", rerr)
				return err // the refusal stands; the retry will be refused again or succeed
			}
			if replayed {
				return replay(c, o, met) // a concurrent request with this key committed first
			}
			return err
		}
	}
}

// modeScopedKey scopes a client's key to its mode as well as its merchant: a test-mode key is
// stored as "test <key>" (the spec's pattern allows no space in a client's key, so the two can
// never meet), a live one as sent — as every key was before modes existed, so a retry spanning
// the upgrade still finds its answer.
func modeScopedKey(mode domain.Mode, key string) string {
	if mode.Live() {
		return key
	}
	return "test " + key
}

func replay(c echo.Context, o idempotency.Outcome, m *metrics.Metrics) error {
	m.IdempotentReplay(c.Path())
	c.Response().Header().Set("Idempotent-Replayed", "true")
	return c.JSONBlob(o.Status, o.Body)
}
