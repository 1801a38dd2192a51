package people_test

import (
	"context"
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

// A person's access: the membership's role, ErrNotMember without one, ErrSessionEnded for a
// disabled or unknown user. Before the sessions' migration (16) every session is live and
// nobody has a second factor; with its table and columns (made here as the plan describes them)
// a revoked, expired, unknown or another user's session ends, and the merchant's require_2fa
// and the user's totp_enabled_at are read — in the same one query.
func TestDirectoryAccess(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s, st, m := setup(t, backend)
			other := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Other", ShortName: "other", CreatedAt: t0}
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(other) }))
			ann, err := s.CreateUser(ctx, "ann@example.com", m.ID, domain.RoleDeveloper, "")
			require.NoError(t, err)
			bob, err := s.CreateUser(ctx, "bob@example.com", m.ID, domain.RoleOwner, "")
			require.NoError(t, err)
			carl, err := s.CreateUser(ctx, "carl@example.com", m.ID, domain.RoleViewer, "")
			require.NoError(t, err)
			now := t0
			dir := people.NewDirectory(st, func() time.Time { return now })
			sid := uuid.New()
			insert := func(id, user uuid.UUID, expires time.Time, revoked *time.Time) {
				require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
					return tx.InsertSession(store.Session{ID: id, UserID: user, RefreshTokenHash: id.String(), Mode: domain.ModeTest,
						CreatedAt: t0, LastUsedAt: t0, ExpiresAt: expires, RevokedAt: revoked})
				}))
			}
			insert(sid, ann.User.ID, t0.Add(time.Hour), nil)

			a, err := dir.Access(ctx, ann.User.ID, sid, m.ID)
			require.NoError(t, err)
			assert.Equal(t, people.Access{Role: domain.RoleDeveloper, Email: "ann@example.com"}, a)
			_, err = dir.Access(ctx, ann.User.ID, sid, other.ID)
			assert.ErrorIs(t, err, people.ErrNotMember)
			assert.ErrorIs(t, err, domain.ErrForbidden)
			_, err = dir.Access(ctx, uuid.New(), sid, m.ID)
			assert.ErrorIs(t, err, people.ErrSessionEnded)
			assert.ErrorIs(t, err, domain.ErrInvalidToken)
			require.NoError(t, s.Disable(ctx, "bob@example.com"))
			_, err = dir.Access(ctx, bob.User.ID, sid, m.ID)
			assert.ErrorIs(t, err, people.ErrSessionEnded)

			_, err = dir.Access(ctx, ann.User.ID, uuid.New(), m.ID)
			assert.ErrorIs(t, err, people.ErrSessionEnded, "no such session")
			a, err = dir.Access(ctx, ann.User.ID, sid, m.ID)
			require.NoError(t, err)
			assert.Equal(t, people.Access{Role: domain.RoleDeveloper, Email: "ann@example.com"}, a)

			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.ConfirmTOTP(ann.User.ID, "sealed", 1, t0); err != nil {
					return err
				}
				return tx.SetMerchantRequires2FA(m.ID, true)
			}))
			a, err = dir.Access(ctx, ann.User.ID, sid, m.ID)
			require.NoError(t, err)
			assert.Equal(t, people.Access{Role: domain.RoleDeveloper, Email: "ann@example.com", Require2FA: true, HasSecondFactor: true}, a)

			now = t0.Add(time.Hour)
			_, err = dir.Access(ctx, ann.User.ID, sid, m.ID)
			assert.ErrorIs(t, err, people.ErrSessionEnded, "expired")
			now = t0
			revoked := uuid.New()
			insert(revoked, ann.User.ID, t0.Add(time.Hour), nil)
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeSession(ann.User.ID, revoked, t0) }))
			_, err = dir.Access(ctx, ann.User.ID, revoked, m.ID)
			assert.ErrorIs(t, err, people.ErrSessionEnded, "revoked")
			_, err = dir.Access(ctx, carl.User.ID, sid, m.ID)
			assert.ErrorIs(t, err, people.ErrSessionEnded, "another user's session")
		})
	}
}
