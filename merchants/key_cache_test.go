package merchants

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// A key revoked by another process (the CLI, another serve) stops working here once the TTL
// has passed; one revoked by this process, at once.
func TestKeyCacheRevocationBound(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "k.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	require.NoError(t, st.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	serve := &Service{Store: st, Now: clock, KeyCacheTTL: time.Second}
	cli := &Service{Store: st, Now: clock} // another process: its own (no) cache
	c, err := serve.Create(ctx, CreateInput{Name: "Acme"})
	require.NoError(t, err)

	m, err := serve.Authenticate(ctx, c.SecretKey)
	require.NoError(t, err)
	assert.Equal(t, c.Merchant.ID, m.ID)

	n, err := cli.RevokeKeys(ctx, c.KeyPrefix)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	_, err = serve.Authenticate(ctx, c.SecretKey)
	assert.NoError(t, err, "within the TTL the cached answer stands")
	now = now.Add(time.Second)
	_, err = serve.Authenticate(ctx, c.SecretKey)
	assert.ErrorIs(t, err, domain.ErrInvalidAPIKey, "past the TTL the revocation holds")

	k2, err := serve.CreateKey(ctx, c.Merchant.ID, domain.ModeTest)
	require.NoError(t, err)
	_, err = serve.Authenticate(ctx, k2.SecretKey)
	require.NoError(t, err)
	_, err = serve.RevokeKeys(ctx, k2.KeyPrefix)
	require.NoError(t, err)
	_, err = serve.Authenticate(ctx, k2.SecretKey)
	assert.ErrorIs(t, err, domain.ErrInvalidAPIKey, "a revocation by this process holds at once")

	_, err = serve.Authenticate(ctx, "sk_live_unknown")
	assert.ErrorIs(t, err, domain.ErrInvalidAPIKey)
	assert.Empty(t, serve.keys().entries, "unknown and revoked keys are not cached")
}
