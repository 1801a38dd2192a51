package dashauth

// Concurrency of lazy discovery (found by a review of the first lock-free version): callers
// racing the first attempt, a failed attempt, forced and unforced callers together, a slow
// issuer and a hanging one. An in-memory identity provider answers as the HTTP transport.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
)

const memIss = "http://127.0.0.1:1"

// memIDP serves discovery and JWKS in memory; fail(n) makes the n-th discovery fail.
type memIDP struct {
	jwks        []byte
	discoveries atomic.Int32
	jwksReads   atomic.Int32
	fail        func(n int32) bool
	delayDoc    time.Duration
	delayJWKS   time.Duration
}

func newMemIDP(t testing.TB) *memIDP {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	j, err := jwkset.NewJWKFromKey(pub, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "k", USE: jwkset.UseSig}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{j.Marshal()}})
	return &memIDP{jwks: b}
}

func (p *memIDP) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	sleep := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-r.Context().Done():
			return r.Context().Err()
		}
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
		n := p.discoveries.Add(1)
		if err := sleep(p.delayDoc); err != nil {
			return nil, err
		}
		if p.fail != nil && p.fail(n) {
			w.WriteHeader(503)
			break
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": memIss, "jwks_uri": memIss + "/jwks"})
	case r.URL.Path == "/jwks":
		p.jwksReads.Add(1)
		if err := sleep(p.delayJWKS); err != nil {
			return nil, err
		}
		w.Write(p.jwks)
	default:
		w.WriteHeader(404)
	}
	res := w.Result()
	res.Body = io.NopCloser(strings.NewReader(w.Body.String()))
	return res, nil
}

func newMemOIDC(t testing.TB, p *memIDP) *OIDC {
	o, err := NewOIDC(OIDCConfig{Issuer: memIss, Audience: "a", MerchantClaim: "m",
		HTTPClient: &http.Client{Transport: p}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}

// A forced Discover gives up after httpTimeout+1s though the attempt (doc + JWKS, each within
// httpTimeout) is still running and then succeeds.
func TestDiscoverWaitsForBothRequests(t *testing.T) {
	p := newMemIDP(t)
	p.delayDoc, p.delayJWKS = 1800*time.Millisecond, 1800*time.Millisecond
	o := newMemOIDC(t, p)
	o.httpTimeout = 2 * time.Second
	err := o.Discover(context.Background())
	t.Logf("Discover: %v", err)
	time.Sleep(time.Second)
	o.mu.Lock()
	ok := o.keys != nil
	o.mu.Unlock()
	t.Logf("keys after the attempt finished: %v", ok)
	if err != nil && ok {
		t.Errorf("Discover returned %q although the attempt succeeded", err)
	}
}

// Stress: many callers at the very first discovery; more than one successful attempt means a
// second oidcKeys replaced the first one without stopping it.
func TestDiscoveryMakesOneKeyCache(t *testing.T) {
	dups := 0
	for range 100 {
		p := newMemIDP(t)
		o := newMemOIDC(t, p)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				k, err := o.discovered(context.Background(), g%2 == 0)
				if err == nil && k == nil {
					t.Errorf("(nil, nil)")
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := p.jwksReads.Load(); n > 1 {
			dups++
		}
	}
	t.Logf("instances with more than one successful attempt: %d/100", dups)
	if dups > 0 {
		t.Errorf("duplicate oidcKeys created (first one's refresh goroutine never stopped before Close)")
	}
}

// Stress: first attempt fails, racing forced+non-forced callers; look for (nil, nil).
func TestDiscoveryNeverReturnsNothing(t *testing.T) {
	var nilnil atomic.Int32
	for range 100 {
		p := newMemIDP(t)
		p.fail = func(n int32) bool { return n == 1 }
		o := newMemOIDC(t, p)
		o.retryInterval = 0
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for j := 0; j < 3; j++ {
					k, err := o.discovered(context.Background(), g%4 == 0)
					if err == nil && k == nil {
						nilnil.Add(1)
					}
				}
			}()
		}
		close(start)
		wg.Wait()
	}
	t.Logf("(nil, nil) results: %d", nilnil.Load())
	if nilnil.Load() > 0 {
		t.Errorf("discovered returned (nil, nil)")
	}
}

// Verify itself: the (nil, nil) path dereferences a nil *oidcKeys in keyFunc.
func TestVerifyDuringAFailedDiscovery(t *testing.T) {
	var panics atomic.Int32
	for i := 0; i < 100 && panics.Load() == 0; i++ {
		p := newMemIDP(t)
		p.fail = func(n int32) bool { return n == 1 }
		o := newMemOIDC(t, p) // default retryInterval (10 s)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if r := recover(); r != nil {
						panics.Add(1)
						t.Logf("panic: %v", r)
					}
				}()
				<-start
				if g%4 == 0 {
					_ = o.Discover(context.Background())
				} else {
					_, _ = o.Verify(context.Background(), "x.y.z")
				}
			}()
		}
		close(start)
		wg.Wait()
	}
	if panics.Load() > 0 {
		t.Errorf("Verify panicked %d times", panics.Load())
	}
}

// A hanging issuer: a Verify right after the failed (timed-out) attempt starts another at once.
func TestDiscoveryRetriesAreSpaced(t *testing.T) {
	p := newMemIDP(t)
	p.delayDoc = time.Hour
	o := newMemOIDC(t, p)
	o.httpTimeout, o.retryInterval = time.Second, time.Second
	_, err := o.Verify(context.Background(), "x.y.z") // joins the attempt; it times out after 1 s
	t.Log(err)
	_, err = o.Verify(context.Background(), "x.y.z")
	t.Log(err)
	time.Sleep(100 * time.Millisecond)
	if n := p.discoveries.Load(); n > 1 {
		t.Errorf("%d attempts back to back after a failed one", n)
	}
}
