package dashauth_test

import (
	"context"
	"crypto/ed25519"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/merchants"
)

// openApp opens an app (a process, as far as the issuer's key cache goes) on the database.
func openApp(t testing.TB, url string) *app.App {
	cfg := onchaintest.Config(url, config.Chains{Devnet: "off", ServeUnwatched: true, Passive: true}, time.Hour, 15*time.Minute)
	cfg.Webhooks.SecretsKey = strings.Repeat("ab", 32)
	a, err := app.Open(context.Background(), cfg, onchaintest.Logger("DASHAUTH_TEST_LOG"))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	return a
}

// concurrently runs f n times at once and waits for them.
func concurrently(n int, f func()) {
	var start, done sync.WaitGroup
	start.Add(1)
	for range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			f()
		}()
	}
	start.Done()
	done.Wait()
}

// A key rotated by another process (`paymentsd tokens rotate-key`) verifies in `serve` on first
// use: a token whose kid the cache does not know re-reads the keys at once, concurrent callers
// sharing one read. Made-up kids cost at most one read per KeyReloadInterval.
func TestIssuerKeyRotatedByAnotherProcess(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			url := testdb.URL(t, backend)
			serve := openApp(t, url)
			m, err := serve.Merchants.Create(ctx, merchants.CreateInput{Name: "Dash", ShortName: "Dash"})
			require.NoError(t, err)
			mid := m.Merchant.ID
			cli := openApp(t, url) // the other process, on the same database
			require.NotSame(t, serve.Tokens, cli.Tokens)

			old, _, err := serve.Tokens.Mint(ctx, mid, dashauth.ScopeRead, time.Hour)
			require.NoError(t, err)
			_, err = serve.Tokens.Verify(ctx, old)
			require.NoError(t, err) // serve's cache now holds the first key
			time.Sleep(dashauth.KeyReloadInterval + 100*time.Millisecond)

			_, err = cli.Tokens.Rotate(ctx)
			require.NoError(t, err)
			fresh, _, err := cli.Tokens.MintMode(ctx, mid, domain.ModeLive, dashauth.ScopeWrite, time.Minute)
			require.NoError(t, err)
			reads := dashauth.KeyReads(serve.Tokens)
			var mu sync.Mutex
			var errs []error
			concurrently(20, func() {
				p, err := serve.Tokens.Verify(ctx, fresh)
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, err)
				if err == nil {
					assert.True(t, p.May(mid, dashauth.ScopeWrite))
					assert.Equal(t, domain.ModeLive, p.Mode)
				}
			})
			for _, err := range errs {
				assert.NoError(t, err, "a token of a key rotated elsewhere verifies at once")
			}
			assert.Equal(t, reads+1, dashauth.KeyReads(serve.Tokens), "concurrent callers share one read")
			_, err = serve.Tokens.Verify(ctx, old)
			assert.NoError(t, err, "the previous key stays published")
			_, err = serve.Tokens.Verify(ctx, fresh)
			assert.NoError(t, err)
			assert.Equal(t, reads+1, dashauth.KeyReads(serve.Tokens), "known kids read nothing")

			// Made-up kids: refused, and at most one read per KeyReloadInterval.
			name, err := serve.Tokens.Name(ctx)
			require.NoError(t, err)
			madeUp := func() string {
				_, priv, err := ed25519.GenerateKey(nil)
				require.NoError(t, err)
				now := time.Now()
				tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, dashauth.Claims{RegisteredClaims: jwt.RegisteredClaims{Issuer: name,
					Audience: jwt.ClaimStrings{dashauth.Audience}, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute))},
					Scope: "read write", MerchantIDs: []string{mid.String()}})
				tok.Header["kid"] = uuid.NewString()
				s, err := tok.SignedString(priv)
				require.NoError(t, err)
				return s
			}
			flood := make([]string, 50)
			for n := range flood {
				flood[n] = madeUp()
			}
			verifyAll := func() {
				var next sync.Mutex
				k := 0
				concurrently(len(flood), func() {
					next.Lock()
					tok := flood[k]
					k++
					next.Unlock()
					_, err := serve.Tokens.Verify(ctx, tok)
					assert.ErrorIs(t, err, dashauth.ErrInvalidToken)
				})
			}
			verifyAll()
			assert.Equal(t, reads+1, dashauth.KeyReads(serve.Tokens), "no read within the interval of the last one")
			time.Sleep(dashauth.KeyReloadInterval + 100*time.Millisecond)
			start := time.Now()
			verifyAll()
			verifyAll()
			bound := 1 + int64(time.Since(start)/dashauth.KeyReloadInterval)
			got := dashauth.KeyReads(serve.Tokens) - (reads + 1)
			assert.GreaterOrEqual(t, got, int64(1), "an unknown kid past the interval re-reads")
			assert.LessOrEqual(t, got, bound, "a flood of made-up kids reads at most once per interval")
		})
	}
}
