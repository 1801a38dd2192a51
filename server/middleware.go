package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/merchants"
)

const secretKeyHeader = "X-Service-Secret-Key"

// secretKeyPrefix is the path prefix of every operation that needs a merchant secret key.
const secretKeyPrefix = "/v1/external/secretkey-auth/"

type merchantKey struct{}

// merchantFrom returns the authenticated merchant put in the context by authenticate.
func merchantFrom(ctx context.Context) domain.Merchant {
	m, _ := ctx.Value(merchantKey{}).(domain.Merchant)
	return m
}

// authenticate resolves the secret key on /v1/external/secretkey-auth/ paths. Header lookup
// is case-insensitive (net/http canonicalises names).
func authenticate(svc *merchants.Service) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !strings.HasPrefix(c.Request().URL.Path, secretKeyPrefix) {
				return next(c)
			}
			m, err := svc.Authenticate(c.Request().Context(), strings.TrimSpace(c.Request().Header.Get(secretKeyHeader)))
			if err != nil {
				return err
			}
			c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), merchantKey{}, m)))
			return next(c)
		}
	}
}

// accessLog writes one structured line per request.
func accessLog(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err) // render now so the logged status is the one sent
			}
			res := c.Response()
			level := slog.LevelInfo
			if res.Status >= 500 {
				level = slog.LevelError
			}
			log.LogAttrs(c.Request().Context(), level, "request",
				slog.String("request_id", res.Header().Get(echo.HeaderXRequestID)),
				slog.String("method", c.Request().Method), slog.String("path", c.Request().URL.Path),
				slog.Int("status", res.Status), slog.Int64("bytes", res.Size),
				slog.Duration("duration", time.Since(start)), slog.String("merchant_id", merchantIDOf(c)))
			return nil
		}
	}
}

func merchantIDOf(c echo.Context) string {
	m := merchantFrom(c.Request().Context())
	if m.ID == [16]byte{} {
		return ""
	}
	return m.ID.String()
}

// idempotent makes POSTs carrying an Idempotency-Key safe to retry (DESIGN §4).
func idempotent(keeper *idempotency.Keeper, log *slog.Logger) echo.MiddlewareFunc {
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
			hash := idempotency.RequestHash(req.Method+" "+c.Path(), body)
			replay, err := keeper.Claim(req.Context(), m.ID, key, c.Path(), hash)
			if err != nil {
				return err
			}
			if replay != nil {
				c.Response().Header().Set("Idempotent-Replayed", "true")
				return c.JSONBlob(replay.Status, replay.Body)
			}
			rec := &recorder{ResponseWriter: c.Response().Writer}
			c.Response().Writer = rec
			// The key must be settled whatever happens, even if the client went away.
			ctx := context.WithoutCancel(req.Context())
			release := func() {
				if err := keeper.Release(ctx, m.ID, key); err != nil {
					log.Error("release idempotency key", "err", err)
				}
			}
			finished := false
			defer func() {
				if !finished { // a panic: nothing was answered, let the retry run
					release()
				}
			}()
			err = next(c)
			if err != nil {
				c.Error(err) // render inside the recorder so the stored body is the one sent
			}
			finished = true
			if c.Response().Status >= 500 {
				release()
				return nil
			}
			// The operation took effect: never release now, or a retry would do it twice. If the
			// response cannot be stored, the key stays in progress (retries get 409) until it expires.
			for attempt := 0; attempt < 3; attempt++ {
				if err = keeper.Complete(ctx, m.ID, key, c.Response().Status, rec.body.Bytes()); err == nil {
					return nil
				}
			}
			log.Error("complete idempotency key: left in progress until it expires", "key", key, "err", err)
			return nil
		}
	}
}

// recorder tees the response body so it can be stored for replays.
type recorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
