package passkeys_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/internal/webauthntest"
	"github.com/paymentsd/paymentsd/passkeys"
	"github.com/paymentsd/paymentsd/store"
)

const origin = "https://pay.example.test"

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func setup(t *testing.T, backend string) (*passkeys.Service, *clock, store.User) {
	t.Helper()
	st, err := store.Open(testdb.URL(t, backend))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))))
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	u := store.User{ID: uuid.Must(uuid.NewV7()), Email: "owner@example.com", PasswordHash: "x", CreatedAt: c.now, UpdatedAt: c.now}
	require.NoError(t, st.InTx(context.Background(), func(tx *store.Tx) error { return tx.InsertUser(u) }))
	rp, err := passkeys.RelyingPartyFor(origin, "", "")
	require.NoError(t, err)
	s, err := passkeys.New(st, rp, c.Now)
	require.NoError(t, err)
	return s, c, u
}

func register(t *testing.T, s *passkeys.Service, u store.User, a *webauthntest.Authenticator) store.Passkey {
	t.Helper()
	ctx := context.Background()
	opts, err := s.BeginRegistration(ctx, u)
	require.NoError(t, err)
	resp, err := a.Register(opts)
	require.NoError(t, err)
	k, err := s.FinishRegistration(ctx, u, "Laptop", resp)
	require.NoError(t, err)
	return k
}

func TestPasskeyCeremonies(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s, c, u := setup(t, backend)
			a, err := webauthntest.New(origin)
			require.NoError(t, err)
			k := register(t, s, u, a)
			assert.Equal(t, "Laptop", k.Name)
			n, err := s.Count(ctx, u.ID)
			require.NoError(t, err)
			assert.Equal(t, 1, n)

			// The same authenticator again: excluded by the options, refused by the unique id.
			opts, err := s.BeginRegistration(ctx, u)
			require.NoError(t, err)
			assert.Contains(t, string(opts), `"excludeCredentials"`)
			resp, err := a.Register(opts)
			require.NoError(t, err)
			_, err = s.FinishRegistration(ctx, u, "Again", resp)
			assert.ErrorIs(t, err, domain.ErrPasskeyExists)

			lc := uuid.New()
			login := func() ([]byte, []byte) {
				opts, err := s.BeginLogin(ctx, u, lc)
				require.NoError(t, err)
				resp, err := a.Assert(opts)
				require.NoError(t, err)
				return opts, resp
			}
			_, resp = login()
			used, err := s.FinishLogin(ctx, u, lc, resp)
			require.NoError(t, err)
			assert.Equal(t, uint32(1), used.SignCount)

			// The same assertion again: the ceremony is spent.
			_, err = s.FinishLogin(ctx, u, lc, resp)
			assert.ErrorIs(t, err, domain.ErrPasskeyRefused)

			// Another sign-in's ceremony is refused.
			_, resp = login()
			_, err = s.FinishLogin(ctx, u, uuid.New(), resp)
			assert.ErrorIs(t, err, domain.ErrPasskeyRefused)

			// Expired.
			_, resp = login()
			c.now = c.now.Add(passkeys.CeremonyTTL + time.Second)
			_, err = s.FinishLogin(ctx, u, lc, resp)
			assert.ErrorIs(t, err, domain.ErrPasskeyRefused)

			// A counter that goes back: a cloned authenticator.
			_, resp = login()
			_, err = s.FinishLogin(ctx, u, lc, resp)
			require.NoError(t, err)
			a.Counter = 1
			_, resp = login() // counter 2 <= stored 4
			_, err = s.FinishLogin(ctx, u, lc, resp)
			require.ErrorIs(t, err, domain.ErrPasskeyRefused)
			assert.Contains(t, err.Error(), "counter")

			// Another origin.
			a.Counter = 100
			a.Origin = "https://evil.example"
			_, resp = login()
			_, err = s.FinishLogin(ctx, u, lc, resp)
			assert.ErrorIs(t, err, domain.ErrPasskeyRefused)

			require.NoError(t, s.Delete(ctx, u.ID, k.ID))
			assert.ErrorIs(t, s.Delete(ctx, u.ID, k.ID), domain.ErrPasskeyNotFound)
			_, err = s.BeginLogin(ctx, u, lc)
			assert.ErrorIs(t, err, domain.ErrNoPasskey)
		})
	}
}

func TestRelyingPartyFor(t *testing.T) {
	rp, err := passkeys.RelyingPartyFor("https://pay.example.com:8443/base", "", "")
	require.NoError(t, err)
	assert.Equal(t, "pay.example.com", rp.ID)
	assert.Equal(t, []string{"https://pay.example.com:8443"}, rp.Origins)
	rp, err = passkeys.RelyingPartyFor("http://localhost:8080", "example.com", "https://dash.example.com, https://example.com/")
	require.NoError(t, err)
	assert.Equal(t, "example.com", rp.ID)
	assert.Equal(t, []string{"https://dash.example.com", "https://example.com"}, rp.Origins)
	_, err = passkeys.RelyingPartyFor("https://pay.example.com", "", "https://other.example")
	assert.ErrorIs(t, err, passkeys.ErrConfig)
	_, err = passkeys.RelyingPartyFor("http://127.0.0.1:8080", "", "")
	assert.ErrorIs(t, err, passkeys.ErrConfig, "an IP address is no RP id")
}
