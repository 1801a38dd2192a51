package dashauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// errRateLimited: a token named an unknown kid while a JWKS re-read was not allowed yet.
var errRateLimited = errors.New("unknown kid (the JWKS was re-read moments ago)")

// Discover reads the discovery document (its issuer must equal the configured one, its jwks_uri
// be https or loopback http) and the JWKS, and starts the periodic refresh; done once, later
// calls return nil. Each request is bounded by OIDCHTTPTimeout; the discovery document's also by
// the ctx of the attempt's first caller (a call joining an attempt in flight waits for its outcome).
func (o *OIDC) Discover(ctx context.Context) error {
	_, err := o.discovered(ctx, true)
	return err
}

// discovered is the key cache, discovering first when needed: always when force, otherwise not
// before retryInterval after the last attempt failed. The lock is never held over the network:
// every caller joins the one attempt in flight, a request waiting for it at most
// oidcJoinWait — a request is not held for long behind an identity provider that does not answer.
func (o *OIDC) discovered(ctx context.Context, force bool) (*oidcKeys, error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, errors.New("the OIDC verifier is closed")
	}
	if o.keys != nil {
		k := o.keys
		o.mu.Unlock()
		return k, nil
	}
	if !force && !o.inflight && o.lastErr != nil && time.Since(o.lastTry) < o.retryInterval {
		err := o.lastErr
		o.mu.Unlock()
		return nil, err
	}
	o.mu.Unlock()

	ch := o.refetch.DoChan("discover", func() (any, error) {
		o.mu.Lock()
		if o.keys != nil || o.closed { // an attempt that just ended, or Close
			k, closed := o.keys, o.closed
			o.mu.Unlock()
			if closed {
				return nil, errors.New("the OIDC verifier is closed")
			}
			return k, nil
		}
		o.inflight = true
		o.mu.Unlock()
		return o.settle(o.discover(ctx))
	})
	wait := 2*o.httpTimeout + time.Second // discovery document, then the JWKS, each within httpTimeout
	if !force {
		wait = oidcJoinWait
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*oidcKeys), nil
	case <-time.After(wait):
		return nil, errors.New("dashboard OIDC discovery in progress")
	}
}

// oidcJoinWait bounds how long a request waits for a discovery in flight.
const oidcJoinWait = 3 * time.Second

// settle records an attempt's outcome (under the lock, whoever waits for it).
func (o *OIDC) settle(k *oidcKeys, err error) (*oidcKeys, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inflight = false
	if err != nil {
		o.lastTry = time.Now() // retryInterval counts from the failure
		o.lastErr = fmt.Errorf("dashboard OIDC discovery of %s: %w", o.cfg.Issuer, err)
		o.log.Error("dashboard OIDC discovery failed; tokens of this issuer are refused until it succeeds",
			"issuer", o.cfg.Issuer, "error", err)
		return nil, o.lastErr
	}
	if o.closed {
		k.stop()
		return nil, errors.New("the OIDC verifier is closed")
	}
	o.keys, o.lastErr = k, nil
	return k, nil
}

func (o *OIDC) discover(ctx context.Context) (*oidcKeys, error) {
	ctx, cancel := context.WithTimeout(ctx, o.httpTimeout)
	defer cancel()
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, o.client), o.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	var doc struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.Claims(&doc); err != nil {
		return nil, err
	}
	if doc.JWKSURI == "" {
		return nil, errors.New("the discovery document has no jwks_uri")
	}
	if err := checkOIDCURL("jwks_uri", doc.JWKSURI); err != nil {
		return nil, err
	}
	// The refresh goroutine lives until Close, or ends at once when this attempt fails.
	attempt, stop := context.WithCancel(o.life)
	logRefresh := func(ctx context.Context, err error) {
		o.log.ErrorContext(ctx, "dashboard OIDC JWKS refresh failed; the previous keys stay in use",
			"issuer", o.cfg.Issuer, "jwks_uri", doc.JWKSURI, "error", err)
	}
	cache, err := jwkset.NewStorageFromHTTP(doc.JWKSURI, jwkset.HTTPClientStorageOptions{
		Client:              o.client,
		Ctx:                 attempt,
		HTTPTimeout:         o.httpTimeout,
		RefreshErrorHandler: logRefresh,
		RefreshInterval:     o.refreshInterval,
	})
	if err != nil {
		stop()
		return nil, err
	}
	// Reading an unknown kid from refresher re-reads the JWKS; the limiter is ours (refetch), so
	// the library's is unlimited and its wait bounds the request alone.
	refresher, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs:          map[string]jwkset.Storage{doc.JWKSURI: cache},
		RateLimitWaitMax:  o.httpTimeout,
		RefreshUnknownKID: rate.NewLimiter(rate.Inf, 1),
	})
	if err != nil {
		stop()
		return nil, err
	}
	kf, err := keyfunc.New(keyfunc.Options{Ctx: attempt, Storage: cache, UseWhitelist: []jwkset.USE{jwkset.UseSig, ""}})
	if err != nil {
		stop()
		return nil, err
	}
	return &oidcKeys{cache: cache, refresher: refresher, keyfunc: kf,
		unknownK: rate.NewLimiter(rate.Every(o.unknownKIDInterval), 1), stop: stop}, nil
}

// keyFunc finds the token's key, re-reading the JWKS (rate-limited) for an unknown kid of a
// token that claims this issuer.
func (o *OIDC) keyFunc(ctx context.Context, k *oidcKeys) jwt.Keyfunc {
	lookup := k.keyfunc.KeyfuncCtx(ctx)
	return func(t *jwt.Token) (any, error) {
		if err := refuseCrit(t); err != nil {
			return nil, err
		}
		kid, ok := t.Header[jwkset.HeaderKID].(string)
		if !ok {
			return lookup(t)
		}
		if _, err := k.cache.KeyRead(ctx, kid); !errors.Is(err, jwkset.ErrKeyNotFound) {
			return lookup(t)
		}
		if iss, _ := t.Claims.GetIssuer(); iss != o.cfg.Issuer {
			return nil, errors.New("unknown kid of another issuer")
		}
		_, err, _ := o.refetch.Do("jwks", func() (any, error) {
			if !k.unknownK.Allow() {
				return nil, errRateLimited
			}
			_, err := k.refresher.KeyRead(ctx, kid) // re-reads the JWKS (failures logged by it)
			return nil, err
		})
		if errors.Is(err, errRateLimited) {
			return nil, err
		}
		return lookup(t)
	}
}
