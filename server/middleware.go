package server

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/reqlog"
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

// requestContext puts the request id (set by Echo's RequestID middleware just before) into the
// request's context, where reqlog.Handler adds it to every line logged with that context.
func requestContext(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Response().Header().Get(echo.HeaderXRequestID)
		c.SetRequest(c.Request().WithContext(reqlog.WithRequestID(c.Request().Context(), id)))
		return next(c)
	}
}

// accessLog writes one structured line per request (request_id comes from the context).
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
