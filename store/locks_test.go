package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

// assertRowLocked runs lock in a transaction and, while that transaction is open, checks from
// another connection that the row cannot be locked (FOR UPDATE NOWAIT fails), and that it can
// once the transaction has ended.
func assertRowLocked(t *testing.T, st *store.Store, table string, id uuid.UUID, lock func(tx *store.Tx) error) {
	t.Helper()
	ctx := context.Background()
	locked, release, done := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- st.InTx(ctx, func(tx *store.Tx) error {
			err := lock(tx)
			locked <- err
			if err != nil {
				return err
			}
			<-release
			return nil
		})
	}()
	released := false
	defer func() {
		if !released {
			close(release)
			<-done
		}
	}()
	require.NoError(t, <-locked)

	probe := fmt.Sprintf("SELECT id FROM %s WHERE id = ? FOR UPDATE NOWAIT", table)
	err := st.GormDB().WithContext(ctx).Exec(probe, id).Error
	assert.ErrorContains(t, err, "could not obtain lock", "the %s row must stay locked until the transaction ends", table)

	close(release)
	released = true
	require.NoError(t, <-done)
	assert.NoError(t, st.GormDB().WithContext(ctx).Exec(probe, id).Error, "the lock is released at commit")
}

func TestLockMerchantHoldsRowLock(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			if backend != "postgres" {
				t.Skip("SQLite serialises transactions on one connection; there is no row lock to observe")
			}
			st := openMigrated(t, testdb.URL(t, backend))
			m := createMerchant(t, st, "Acme Corp", "acme")
			assertRowLocked(t, st, "merchants", m.ID, func(tx *store.Tx) error {
				got, err := tx.LockMerchant(m.ID)
				if err == nil && got.ID != m.ID {
					err = fmt.Errorf("locked merchant %s, want %s", got.ID, m.ID)
				}
				return err
			})
		})
	}
}

func TestLockPaymentHoldsRowLock(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			if backend != "postgres" {
				t.Skip("SQLite serialises transactions on one connection; there is no row lock to observe")
			}
			st := openMigrated(t, testdb.URL(t, backend))
			cat := loadCatalog(t, st)
			m := createMerchant(t, st, "Acme Corp", "acme")
			p := insertPayment(t, st, cat, m, paymentSpec{Amount: 1000})
			assertRowLocked(t, st, "payments", p.ID, func(tx *store.Tx) error {
				_, err := tx.LockPayment(p.ID, cat)
				return err
			})
		})
	}
}

// A locking method called on Store.Read's Tx (no transaction: its lock would end with the
// statement) is refused on both databases, and its plain-read twin answers the same row.
func TestLockingReadsRefusedOutsideATransaction(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cat := loadCatalog(t, st)
		m := createMerchant(t, st, "Acme Corp", "acme")
		p := insertPayment(t, st, cat, m, paymentSpec{Amount: 1000})
		rd := st.Read(ctx)
		_, err := rd.LockPayment(p.ID, cat)
		assert.ErrorIs(t, err, store.ErrLockOutsideTx, "LockPayment")
		_, err = rd.LockWithdrawal(uuid.New(), cat)
		assert.ErrorIs(t, err, store.ErrLockOutsideTx, "LockWithdrawal")
		_, err = rd.LockMerchant(m.ID)
		assert.ErrorIs(t, err, store.ErrLockOutsideTx, "LockMerchant")
		assert.ErrorIs(t, rd.LockBalance(m.ID, m.Mode), store.ErrLockOutsideTx, "LockBalance")
		_, err = rd.TakeNonce(1337, "0x5aeda56215b167893e80b4fe645ba6d5bab767de", 0, "0xgenesis", false)
		assert.ErrorIs(t, err, store.ErrLockOutsideTx, "TakeNonce")
		_, err = rd.ClaimDue("holder", t0, time.Minute, 10)
		assert.ErrorIs(t, err, store.ErrLockOutsideTx, "ClaimDue")

		got, err := rd.PaymentByID(p.ID, cat)
		require.NoError(t, err)
		assert.Equal(t, p.ID, got.ID)
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			locked, err := tx.LockPayment(p.ID, cat)
			assert.Equal(t, got.ID, locked.ID)
			return err
		}))
	})
}
