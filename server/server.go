// Package server owns the HTTP side: Echo wiring, the middleware chain (request id, access log,
// recover, body limit, authentication, openapi3filter validation, idempotency), the handlers of
// gen.StrictServerInterface, and the one error renderer.
package server

import (
	"context"
	"errors"
	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/settlement"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/internal/reqlog"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/metrics"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/policy"
	"github.com/paymentsd/paymentsd/refunds"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
	"github.com/paymentsd/paymentsd/withdrawals"
)

// Deps are the services the HTTP layer calls.
type Deps struct {
	Store       *store.Store
	Catalog     domain.Catalog
	Merchants   *merchants.Service
	Payments    *payments.Service
	Withdrawals *withdrawals.Service
	Policy      *policy.Service   // the payout policy: settings, address book, approvals
	Refunds     *refunds.Service  // refunds and their claims
	Webhooks    *webhooks.Service // the dashboard's webhook endpoints
	People      *people.Service   // the dashboard's people: sign-in and sessions (/v1/auth; nil: 401), the team
	// PublicBaseURL is where this service is reached (paymentUrl's base); invitation links start with it.
	PublicBaseURL string
	Checkout      *checkout.Service // the payment-secret API and the page; nil: not served
	DevnetPay     checkout.DevnetPayer
	// JWKS, when set, publishes the dashboard issuer's public keys at /.well-known/jwks.json.
	JWKS func(ctx context.Context) (any, error)
	// Tokens verifies the dashboard's bearer tokens; nil: BearerAuth operations answer 401.
	Tokens TokenVerifier
	// Directory tells a signed-in person's role for a merchant (people.Directory); nil: persons'
	// tokens answer 401 (service tokens still work).
	Directory    PeopleDirectory
	Idempotency  *idempotency.Keeper
	Shape        settlement.Shape
	Spec         *openapi3.T // the active shape's spec (validation)
	SpecYAML     []byte      // the active shape's spec, served at GET /openapi.yaml
	MaxBodyBytes string
	// BodyReadTimeout bounds the time a client may take to send a request body (408 after it);
	// zero means 10 s. The server's ReadTimeout (30 s) caps it.
	BodyReadTimeout time.Duration
	Log             *slog.Logger
	// Metrics are counted by the middleware and handlers and served at GET /metrics; nil: none.
	Metrics *metrics.Metrics
	// Payouts, when set, says per chain whether payouts can be signed (shown by GET /readyz:
	// a chain without a hot wallet key keeps its withdrawals pending).
	Payouts func() map[string]string
	// Estimator, when set, is the payout estimate of a chain this process pays out on (nil
	// answer: none here); the dashboard's withdrawal estimate.
	Estimator func(chainID int64) PayoutEstimator
	// Chains, when set, is each chain's health now (GET /readyz, the chain list's isEnabled).
	Chains func() map[int64]ChainHealth
	// HealthOnly serves /healthz, /readyz and /metrics and no API (a worker process).
	HealthOnly bool
	// TrustedProxies are the peers whose X-Forwarded-For names the client (clientIPExtractor);
	// none: the client is the TCP peer.
	TrustedProxies []netip.Prefix
}

// New builds the Echo application.
func New(d Deps) (*echo.Echo, error) {
	v, err := newValidator(d.Spec, d.Shape)
	if err != nil {
		return nil, err
	}
	authz, err := operationAuthz(d.Spec) // every BearerAuth operation says what it needs, or no server
	if err != nil {
		return nil, err
	}
	d.Log = reqlog.Wrap(d.Log) // request_id on every line logged with a request's context
	routes := routeSet{}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = clientIPExtractor(d.TrustedProxies) // c.RealIP(): the rate limits' client key
	secrets := newPaymentSecretGuard(d.Checkout)        // one set of budgets for the API and the page
	e.HTTPErrorHandler = errorHandler(d.Log)
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{Generator: func() string { return uuid.Must(uuid.NewV7()).String() }}))
	e.Use(requestContext)
	e.Use(observe(d.Metrics, routes))
	e.Use(accessLog(d.Log))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableErrorHandler: true, LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
		d.Log.ErrorContext(c.Request().Context(), "panic", "err", err, "stack", string(stack))
		return err
	}}))
	e.Use(bodyReadDeadline(d.BodyReadTimeout))
	e.Use(middleware.BodyLimit(d.MaxBodyBytes))
	e.Use(authenticate(v.router, d.Merchants, secrets, newRefundClaimGuard(d.Refunds), d.Tokens, d.People, d.Directory, authz))
	e.Use(v.middleware)
	e.Use(idempotent(d.Idempotency, d.Log, d.Metrics))

	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	e.GET("/readyz", func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := d.Store.Ping(ctx); err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
		}
		body := map[string]any{"status": "ready"}
		if d.Payouts != nil {
			body["payouts"] = d.Payouts()
		}
		// A chain that is down leaves the process ready: the API serves, the other chains
		// settle, and this one is caught up when it answers again.
		if d.Chains != nil {
			body["chains"] = readyChains(d.Chains())
		}
		return c.JSON(http.StatusOK, body)
	})
	e.GET("/openapi.yaml", func(c echo.Context) error { return c.Blob(http.StatusOK, "application/yaml", d.SpecYAML) })
	registerDocs(e)
	if d.JWKS != nil {
		e.GET("/.well-known/jwks.json", func(c echo.Context) error {
			keys, err := d.JWKS(c.Request().Context())
			if err != nil {
				return err
			}
			c.Response().Header().Set("Cache-Control", "public, max-age=60") // a new key is seen within a minute
			return c.JSON(http.StatusOK, keys)
		})
	}
	if d.Metrics != nil {
		// Outside the spec like /healthz (the validator passes it through), and unauthenticated:
		// see docs/decisions.md.
		e.GET("/metrics", echo.WrapHandler(d.Metrics.Handler()))
	}

	if !d.HealthOnly {
		render := settlement.Renderer{Shape: d.Shape}
		if d.Refunds != nil {
			render.ClaimURL = d.Refunds.ClaimURL
		}
		h := &handlers{catalog: d.Catalog, payments: d.Payments, withdrawals: d.Withdrawals, refunds: d.Refunds, paymentCache: newPaymentCache(4096),
			render: render, metrics: d.Metrics, checkout: d.Checkout, merchants: d.Merchants, webhooks: d.Webhooks,
			chainHealth: d.Chains, people: d.People, publicBaseURL: d.PublicBaseURL, store: d.Store,
			estimator: d.Estimator, policy: d.Policy}
		gen.RegisterHandlers(e, gen.NewStrictHandler(h, []gen.StrictMiddlewareFunc{noStore, authCookies, oidcCookies(d.Log)}))
		if d.Checkout != nil {
			registerCheckoutPage(e, secrets, d.DevnetPay)
		}
		registerDashboard(e)
	}
	for _, r := range e.Routes() {
		routes[r.Path] = true
	}
	return e, nil
}

// httpServer is the net/http server of Serve. ReadTimeout caps a whole request; its body has
// the tighter Deps.BodyReadTimeout (bodyReadDeadline). WriteTimeout runs from the end of the
// request headers, so an error answering a body that never arrived is still written (and
// bodyReadDeadline gives that answer a write deadline of its own).
func httpServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
}

// Serve runs the server on ln until ctx ends, then drains in-flight requests for up to grace.
func Serve(ctx context.Context, e *echo.Echo, ln net.Listener, grace time.Duration, log *slog.Logger) error {
	srv := httpServer(e)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(JSONErrorListener(ln, log)) }() // net/http's own refusals answer JSON too
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}
