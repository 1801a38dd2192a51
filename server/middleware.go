package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/reqlog"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/people"
)

const secretKeyHeader = "X-Service-Secret-Key"

type merchantKey struct{}

// merchantFrom returns the authenticated merchant put in the context by authenticate.
func merchantFrom(ctx context.Context) domain.Merchant {
	m, _ := ctx.Value(merchantKey{}).(domain.Merchant)
	return m
}

// authenticate dispatches on the security scheme the matched operation declares in the spec —
// one mechanism for every operation, never a path prefix: SecretKey resolves the merchant's
// secret key (header lookup is case-insensitive: net/http canonicalises names), PaymentSecret
// opens the payment by its own secret, RefundClaimSecret a refund by its claim secret, BearerAuth verifies a dashboard token and authorises it for
// the path's merchant and the operation's x-permission (authz, read from the spec by New). A
// method the spec's path lacks is a 405 here, before any handler; a path outside the spec goes on
// to Echo (404).
func authenticate(router routers.Router, svc *merchants.Service, secrets *paymentSecretGuard, claims *refundClaimGuard, tokens TokenVerifier, ppl *people.Service, dir PeopleDirectory, authz map[string]opAuth) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			route, params, err := router.FindRoute(c.Request())
			if errors.Is(err, routers.ErrMethodNotAllowed) && c.Request().Method != http.MethodOptions {
				// The spec's path lacks this method; Echo's router could still run a sibling
				// route's handler (DELETE …/webhooks/deliveries matches DELETE …/webhooks/{id}),
				// which no credential was checked for. The spec decides: 405.
				return methodNotAllowed(c, router)
			}
			if err != nil {
				return next(c) // not an API path: Echo's 404 (or its OPTIONS answer)
			}
			switch scheme := securityScheme(route); scheme {
			case "":
				// Public: whoever it is (a sign-in names its person once the password is
				// checked) acts from this address and user agent.
				withActor(c, audit.Origin("", ""))
				return next(c)
			case "SecretKey":
				m, err := svc.Authenticate(c.Request().Context(), strings.TrimSpace(c.Request().Header.Get(secretKeyHeader)))
				if err != nil {
					return err
				}
				c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), merchantKey{}, m)))
				withActor(c, keyActor(m))
				return next(c)
			case "PaymentSecret":
				if secrets == nil {
					return echo.NewHTTPError(http.StatusNotFound)
				}
				p, err := secrets.open(c)
				if err != nil {
					return err
				}
				c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), checkoutPaymentKey{}, p)))
				return next(c)
			case "RefundClaimSecret":
				if claims == nil {
					return echo.NewHTTPError(http.StatusNotFound)
				}
				r, err := claims.open(c)
				if err != nil {
					return err
				}
				c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), refundClaimKey{}, r)))
				withActor(c, audit.Origin("", "")) // the customer, known by the secret only: the log's system, with the address
				return next(c)
			case "BearerAuth":
				if _, merchant := params["merchantId"]; !merchant {
					// A person's own operations (/v1/auth/…): a person token, its session live.
					if err := personBearer(c, ppl); err != nil {
						return err
					}
					p, _ := personFrom(c.Request().Context())
					withActor(c, personActor(p))
					return next(c)
				}
				need, ok := authz[opAuthKey(route.Method, route.Path)]
				if !ok { // New refuses a spec with such an operation: fail closed regardless
					return fmt.Errorf("server: operation %s declares no x-permission", route.Operation.OperationID)
				}
				if err := bearer(c, tokens, dir, svc, need, params["merchantId"]); err != nil {
					return err
				}
				return next(c)
			default:
				return fmt.Errorf("server: operation %s declares security scheme %q, which nothing authenticates", route.Operation.OperationID, scheme)
			}
		}
	}
}

// methodNotAllowed answers 405 with the methods the spec has for the request's path.
func methodNotAllowed(c echo.Context, router routers.Router) error {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		r := c.Request().Clone(c.Request().Context())
		r.Method = m
		if _, _, err := router.FindRoute(r); err == nil {
			allow = append(allow, m)
		}
	}
	c.Response().Header().Set(echo.HeaderAllow, strings.Join(append(allow, http.MethodOptions), ", "))
	return echo.ErrMethodNotAllowed
}

// securityScheme is the scheme an operation requires ("" when public): its own security
// requirements, else the document's. Every operation here names at most one scheme.
func securityScheme(route *routers.Route) string {
	reqs := route.Operation.Security
	if reqs == nil {
		reqs = &route.Spec.Security
	}
	for _, req := range *reqs {
		for name := range req {
			return name
		}
	}
	return ""
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
