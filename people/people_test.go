package people_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/store"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func setup(t *testing.T, backend string) (*people.Service, *store.Store, domain.Merchant) {
	t.Helper()
	st, err := store.Open(testdb.URL(t, backend))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))))
	m := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Acme", ShortName: "acme", CreatedAt: t0}
	require.NoError(t, st.InTx(context.Background(), func(tx *store.Tx) error { return tx.CreateMerchant(m) }))
	return &people.Service{Store: st, Now: func() time.Time { return t0 }}, st, m
}

func TestUsersAndMemberships(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s, st, m := setup(t, backend)

			created, err := s.CreateUser(ctx, " Owner@Example.COM ", m.ID, domain.RoleOwner, "")
			require.NoError(t, err)
			assert.Equal(t, "owner@example.com", created.User.Email, "stored lowercased")
			require.Len(t, created.Password, 27, "a generated password, shown once")
			assert.NotContains(t, created.User.PasswordHash, created.Password)
			assert.True(t, strings.HasPrefix(created.User.PasswordHash, "$argon2id$"))
			ok, err := people.CheckPassword(created.Password, created.User.PasswordHash)
			require.NoError(t, err)
			assert.True(t, ok)
			ok, _ = people.CheckPassword(created.Password+"x", created.User.PasswordHash)
			assert.False(t, ok)

			_, err = s.CreateUser(ctx, "OWNER@example.com", m.ID, domain.RoleViewer, "correct horse battery")
			assert.ErrorIs(t, err, people.ErrEmailTaken, "one address is one user, in any letter case")
			_, err = s.CreateUser(ctx, "dev@example.com", m.ID, domain.RoleDeveloper, "too short")
			assert.ErrorIs(t, err, people.ErrShortPassword)
			_, err = s.CreateUser(ctx, "dev@example.com", uuid.New(), domain.RoleDeveloper, "")
			assert.ErrorIs(t, err, domain.ErrMerchantNotFound)
			for _, bad := range []string{"", "no-at-sign", "Name <a@example.com>", "a@example.com, b@example.com"} {
				_, err = s.CreateUser(ctx, bad, m.ID, domain.RoleViewer, "")
				assert.ErrorIs(t, err, people.ErrBadEmail, "%q", bad)
			}
			dev, err := s.CreateUser(ctx, "dev@example.com", m.ID, domain.RoleDeveloper, "correct horse battery")
			require.NoError(t, err)
			assert.Empty(t, dev.Password, "a password given is not echoed")

			members, err := s.Members(ctx, m.ID)
			require.NoError(t, err)
			require.Len(t, members, 2)
			assert.Equal(t, "dev@example.com", members[0].User.Email)
			assert.Equal(t, domain.RoleDeveloper, members[0].Role)
			assert.Equal(t, domain.RoleOwner, members[1].Role)

			fresh, err := s.ResetPassword(ctx, "DEV@example.com")
			require.NoError(t, err)
			u, err := st.Read(ctx).UserByEmail("dev@example.com")
			require.NoError(t, err)
			ok, _ = people.CheckPassword(fresh, u.PasswordHash)
			assert.True(t, ok, "the new password")
			ok, _ = people.CheckPassword("correct horse battery", u.PasswordHash)
			assert.False(t, ok, "the old one no longer")

			require.NoError(t, s.Disable(ctx, "dev@example.com"))
			require.NoError(t, s.Disable(ctx, "dev@example.com"), "again: no change")
			u, err = st.Read(ctx).UserByEmail("dev@example.com")
			require.NoError(t, err)
			require.NotNil(t, u.DisabledAt)
			assert.True(t, u.DisabledAt.Equal(t0))
			assert.ErrorIs(t, s.Disable(ctx, "nobody@example.com"), people.ErrNoUser)
			_, err = s.ResetPassword(ctx, "nobody@example.com")
			assert.ErrorIs(t, err, people.ErrNoUser)

			token, inv, err := s.Invite(ctx, "new@example.com", m.ID, domain.RoleAdmin)
			require.NoError(t, err)
			assert.Len(t, token, 43)
			assert.Equal(t, people.TokenHash(token), inv.TokenHash, "only the hash is kept")
			assert.Equal(t, t0.Add(people.InvitationTTL), inv.ExpiresAt)
		})
	}
}

func TestPasswordBounds(t *testing.T) {
	_, err := people.HashPassword(strings.Repeat("é", people.MinPasswordLength-1))
	assert.ErrorIs(t, err, people.ErrShortPassword, "counted in characters")
	_, err = people.HashPassword(strings.Repeat("é", people.MinPasswordLength))
	assert.NoError(t, err)
	_, err = people.HashPassword(strings.Repeat("a", people.MaxPasswordLength+1))
	assert.Error(t, err, "no megabyte hashing")
	ok, err := people.CheckPassword(strings.Repeat("a", people.MaxPasswordLength+1), "$argon2id$v=19$m=65536,t=3,p=2$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g")
	assert.NoError(t, err)
	assert.False(t, ok)
}
