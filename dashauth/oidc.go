package dashauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"
)

// OIDCConfig configures an external OpenID Connect issuer of dashboard access tokens.
type OIDCConfig struct {
	// Issuer is the issuer URL (PAYMENTS_OIDC_ISSUER): https, or http on a loopback host only.
	// Discovery reads Issuer + "/.well-known/openid-configuration", whose issuer must equal it
	// exactly, as must every token's iss.
	Issuer string
	// Audience must be among the tokens' aud (PAYMENTS_OIDC_AUDIENCE).
	Audience string
	// MerchantClaim names the claim listing the merchant ids the user may act for
	// (PAYMENTS_OIDC_MERCHANT_CLAIM): a JSON array of strings, or a single string (one id).
	MerchantClaim string
	// ModeClaim names the claim holding the mode the token acts in (PAYMENTS_OIDC_MODE_CLAIM):
	// "test" or "live"; a token without it acts in test mode, one with any other value is
	// refused. Empty: DefaultOIDCModeClaim.
	ModeClaim string
	// RoleClaim names the claim holding the token's role (PAYMENTS_OIDC_ROLE_CLAIM): viewer,
	// developer, admin or owner; a token without it has the role of its scope claim (read: viewer,
	// read write: admin), one with any other value is refused. Empty: DefaultOIDCRoleClaim.
	RoleClaim string
	// HTTPClient fetches the discovery document and the JWKS; nil: a client with a 10 s timeout
	// that refuses redirects to plain http off loopback.
	HTTPClient *http.Client
	// Now is the clock for exp, nbf and iat; nil: time.Now.
	Now func() time.Time
	// Logger receives failed discoveries and JWKS refreshes (never a token or a key); nil:
	// slog.Default().
	Logger *slog.Logger
}

// Timings of the external issuer's key cache.
const (
	// OIDCRefreshInterval is how often the JWKS is re-read, so a removed key stops verifying
	// (and a new one is known) within it.
	OIDCRefreshInterval = time.Minute
	// OIDCUnknownKIDInterval bounds the re-reads a token with an unknown kid triggers: at most one
	// per interval; a token arriving while none is allowed is refused at once, not held.
	OIDCUnknownKIDInterval = 10 * time.Second
	// OIDCRetryInterval spaces discovery attempts after a failed one.
	OIDCRetryInterval = 10 * time.Second
	// OIDCHTTPTimeout bounds one discovery or JWKS request.
	OIDCHTTPTimeout = 10 * time.Second
)

// DefaultOIDCModeClaim is the mode claim of an external issuer's tokens unless configured.
const DefaultOIDCModeClaim = "mode"

// DefaultOIDCRoleClaim is the role claim of an external issuer's tokens unless configured.
const DefaultOIDCRoleClaim = "paymentsd_role"

// oidcMethods are the algorithms accepted: asymmetric only (no none, no HMAC keyed with a public key).
var oidcMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// ErrOIDCConfig is wrapped by every configuration error of the external issuer.
var ErrOIDCConfig = errors.New("invalid dashboard OIDC configuration")

// OIDC verifies the dashboard access tokens of an external OpenID Connect issuer.
//
// Discovery is lazy, with retry: NewOIDC only checks the configuration (no network), so an
// unreachable issuer never keeps `serve` from starting. Discover does the discovery and the
// first JWKS read; call it at startup to fail fast or to log a warning. Until it has succeeded,
// Verify attempts it again (at most every OIDCRetryInterval, each attempt bounded by
// OIDCHTTPTimeout) and refuses tokens with ErrInvalidToken meanwhile.
//
// Keys are cached by github.com/MicahParks/keyfunc (github.com/MicahParks/jwkset): the JWKS is
// re-read every OIDCRefreshInterval (the whole set replaced, so removed keys stop verifying), and
// a token whose kid is unknown triggers an immediate re-read, at most one per
// OIDCUnknownKIDInterval (concurrent ones share it). A failed re-read keeps the previous keys.
type OIDC struct {
	cfg    OIDCConfig
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	// Intervals (tests shorten them before the first discovery).
	refreshInterval    time.Duration
	unknownKIDInterval time.Duration
	retryInterval      time.Duration
	httpTimeout        time.Duration

	life   context.Context // ends the refresh goroutine
	cancel context.CancelFunc

	mu       sync.Mutex
	keys     *oidcKeys // nil until discovered
	lastTry  time.Time
	lastErr  error
	inflight bool // a discovery attempt is running
	closed   bool
	refetch  singleflight.Group
}

// oidcKeys is the key cache of a discovered issuer.
type oidcKeys struct {
	cache     jwkset.Storage // the JWKS as last read; reading it never fetches
	refresher jwkset.Storage // reading an unknown kid from it re-reads the JWKS
	keyfunc   keyfunc.Keyfunc
	unknownK  *rate.Limiter      // allows the re-reads of unknown kids
	stop      context.CancelFunc // ends the periodic refresh
}

// NewOIDC checks the configuration of an external issuer; it does no network request (see
// Discover). Close it to stop its refreshes.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" {
		return nil, fmt.Errorf("%w: the issuer URL (PAYMENTS_OIDC_ISSUER) is empty", ErrOIDCConfig)
	}
	if err := checkOIDCURL("issuer", cfg.Issuer); err != nil {
		return nil, err
	}
	if cfg.Audience == "" {
		return nil, fmt.Errorf("%w: the audience (PAYMENTS_OIDC_AUDIENCE) is empty", ErrOIDCConfig)
	}
	if cfg.MerchantClaim == "" {
		return nil, fmt.Errorf("%w: the merchant claim (PAYMENTS_OIDC_MERCHANT_CLAIM) is empty", ErrOIDCConfig)
	}
	o := &OIDC{cfg: cfg, client: cfg.HTTPClient, now: cfg.Now, log: cfg.Logger, refreshInterval: OIDCRefreshInterval,
		unknownKIDInterval: OIDCUnknownKIDInterval, retryInterval: OIDCRetryInterval, httpTimeout: OIDCHTTPTimeout}
	if o.client == nil {
		o.client = &http.Client{Timeout: OIDCHTTPTimeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return checkOIDCURL("redirect", req.URL.String())
		}}
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.cfg.ModeClaim == "" {
		o.cfg.ModeClaim = DefaultOIDCModeClaim
	}
	if o.cfg.RoleClaim == "" {
		o.cfg.RoleClaim = DefaultOIDCRoleClaim
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	o.life, o.cancel = context.WithCancel(context.Background())
	return o, nil
}

// checkOIDCURL requires https, or http on a loopback host (127.0.0.0/8, ::1, localhost).
func checkOIDCURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: the %s %q is not a URL: %v", ErrOIDCConfig, what, raw, err)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%w: the %s %q must be an absolute URL without credentials, query or fragment", ErrOIDCConfig, what, raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if strings.EqualFold(host, "localhost") {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("%w: the %s %q must use https (plain http only on a loopback host)", ErrOIDCConfig, what, raw)
	default:
		return fmt.Errorf("%w: the %s %q must use https", ErrOIDCConfig, what, raw)
	}
}

// Issuer is the configured issuer URL, the iss of its tokens.
func (o *OIDC) Issuer() string { return o.cfg.Issuer }

// Close stops the JWKS refreshes; Verify refuses every token afterwards.
func (o *OIDC) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	if o.keys != nil {
		o.keys.stop()
	}
	o.cancel()
}

// Verify checks a token of the external issuer: an asymmetric algorithm (RS, PS, ES, EdDSA) and
// a published key, no crit header, issuer, audience, expiry (required), not-before and issued-at
// (with Leeway), then reads the role claim (none: the role of the scope claim, read a viewer,
// read write an admin), the merchant claim and the mode claim (test or live; none: test). Its
// principals are services: the identity provider vouches for who and with which factors. Every refusal, an unreachable issuer included, wraps
// ErrInvalidToken.
func (o *OIDC) Verify(ctx context.Context, raw string) (Principal, error) {
	k, err := o.discovered(context.WithoutCancel(ctx), false)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	c := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(raw, c, o.keyFunc(ctx, k), jwt.WithValidMethods(oidcMethods),
		jwt.WithIssuer(o.cfg.Issuer), jwt.WithAudience(o.cfg.Audience), jwt.WithExpirationRequired(),
		jwt.WithLeeway(Leeway), jwt.WithIssuedAt(), jwt.WithTimeFunc(o.now))
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	var scope string
	if v, ok := c["scope"]; ok {
		if scope, ok = v.(string); !ok {
			return Principal{}, fmt.Errorf("%w: the scope claim is not a string", ErrInvalidToken)
		}
	}
	ids, err := merchantIDs(c[o.cfg.MerchantClaim])
	if err != nil {
		return Principal{}, fmt.Errorf("%w: the %s claim %v", ErrInvalidToken, o.cfg.MerchantClaim, err)
	}
	v, present := c[o.cfg.ModeClaim]
	mode, err := modeClaim(v, present)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: the %s claim %v", ErrInvalidToken, o.cfg.ModeClaim, err)
	}
	role, hasRole := c[o.cfg.RoleClaim]
	p, err := principal(ids, role, hasRole, scope, mode)
	if err != nil {
		return Principal{}, err
	}
	p.Subject, _ = c["sub"].(string)
	if email, ok := c["email"].(string); ok {
		p.Email = email
	}
	return p, nil
}

// merchantIDs reads the merchant claim: an array of strings, or one string (one id).
func merchantIDs(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, errors.New("is missing")
	case string:
		if v == "" {
			return nil, errors.New("is empty")
		}
		return []string{v}, nil
	case []any:
		if len(v) == 0 {
			return nil, errors.New("is empty")
		}
		ids := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, errors.New("lists a value that is not a string")
			}
			ids = append(ids, s)
		}
		return ids, nil
	default:
		return nil, errors.New("is neither a string nor an array of strings")
	}
}
