package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/catalog"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

// gaslessRow is an accepted authorization of p's USDC quote by from with nonce n.
func gaslessRow(p domain.Payment, from string, n int) store.GaslessAuthorization {
	return store.GaslessAuthorization{ID: uuid.Must(uuid.NewV7()), PaymentID: p.ID, QuoteID: p.Quotes[0].ID, ChainID: 1,
		TokenID: p.Quotes[0].Token.ID, From: from, To: p.DepositAddress.Address, Value: p.Quotes[0].ExpectedAmountAsset,
		ValidBefore: p.Quotes[0].ExpiresAt.Unix(), Nonce: fmt.Sprintf("0x%064x", n), Signature: "0x" + fmt.Sprintf("%0130x", n),
		FeePaidBy: domain.GaslessFeeMerchant, FeeAsset: decimal.Zero, CreatedAt: t0}
}

func insertGasless(st *store.Store, g store.GaslessAuthorization) error {
	return st.InTx(context.Background(), func(tx *store.Tx) error { return tx.InsertGasless(g) })
}

// One authorization per payment in flight (accepted or submitted), held by the database (review
// of issue 24: a second one was relayed too, and the customer paid twice). Its violation is the
// domain's ErrGaslessInProgress; a nonce stored already stays ErrConflict. Fails without
// migration 27 (both inserts succeed).
func TestGaslessOneInFlightPerPayment(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cat := loadCatalog(t, st)
		m := createMerchant(t, st, "Acme", "acme")
		p := insertPayment(t, st, cat, m, paymentSpec{Amount: 1_850})
		other := insertPayment(t, st, cat, m, paymentSpec{Amount: 900, CreatedAt: t0.Add(time.Second)})
		from := "0x00000000000000000000000000000000000000f1"

		first := gaslessRow(p, from, 1)
		require.NoError(t, insertGasless(st, first))
		second := gaslessRow(p, from, 2)
		err := insertGasless(st, second)
		require.ErrorIs(t, err, domain.ErrGaslessInProgress, "a second one while the first waits")
		assert.NotErrorIs(t, err, store.ErrConflict)
		replay := gaslessRow(other, from, 1)
		err = insertGasless(st, replay)
		require.ErrorIs(t, err, store.ErrConflict, "the signer's nonce is stored already")
		assert.NotErrorIs(t, err, domain.ErrGaslessInProgress)
		require.NoError(t, insertGasless(st, gaslessRow(other, from, 3)), "another payment has its own")

		// Submitted is still in flight; once failed, the payment takes another.
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			return tx.FinishGasless(first.ID, []store.GaslessStatus{store.GaslessAccepted}, store.GaslessSubmitted, nil, nil, t0)
		}))
		require.ErrorIs(t, insertGasless(st, second), domain.ErrGaslessInProgress)
		why := "reverted"
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			return tx.FinishGasless(first.ID, []store.GaslessStatus{store.GaslessSubmitted}, store.GaslessFailed, nil, &why, t0)
		}))
		require.NoError(t, insertGasless(st, second))
		gs, err := st.Read(ctx).PaymentGasless(p.ID)
		require.NoError(t, err)
		require.Len(t, gs, 2)

		// The same payment's refusal inside a longer transaction leaves that transaction usable.
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			require.ErrorIs(t, tx.InsertGasless(gaslessRow(p, from, 4)), domain.ErrGaslessInProgress)
			_, err := tx.PaymentGasless(p.ID)
			return err
		}))
	})
}

// Migration 27 on a database that already holds two authorizations waiting for one payment: the
// newer is failed (nothing was sent for it), the older stays accepted, and the index is made.
func TestMigration27FailsASecondWaitingAuthorization(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			// Version 26: what 27 and 28 change (an index; payout settings per mode) is nothing the
			// catalogue, merchant, payment and authorization writes below touch.
			st := openStore(t, testdb.URL(t, backend))
			require.NoError(t, st.MigrateUpTo(ctx, 26))
			embedded, err := catalog.Embedded()
			require.NoError(t, err)
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { _, err := tx.SyncCatalog(embedded); return err }))
			cat := loadCatalog(t, st)
			m := createMerchant(t, st, "Acme", "acme")
			p := insertPayment(t, st, cat, m, paymentSpec{Amount: 1_850})
			from := "0x00000000000000000000000000000000000000f1"
			older, newer := gaslessRow(p, from, 1), gaslessRow(p, from, 2)
			newer.CreatedAt = t0.Add(time.Second)
			require.NoError(t, insertGasless(st, older))
			require.NoError(t, insertGasless(st, newer), "version 26 takes two")

			require.NoError(t, st.Migrate(ctx, discardLog()))
			gs, err := st.Read(ctx).PaymentGasless(p.ID)
			require.NoError(t, err)
			require.Len(t, gs, 2)
			assert.Equal(t, newer.ID, gs[0].ID)
			assert.Equal(t, store.GaslessFailed, gs[0].Status)
			require.NotNil(t, gs[0].Error)
			assert.Contains(t, *gs[0].Error, "already being relayed")
			assert.False(t, gs[0].UpdatedAt.IsZero())
			assert.Equal(t, store.GaslessAccepted, gs[1].Status)
			require.ErrorIs(t, insertGasless(st, gaslessRow(p, from, 3)), domain.ErrGaslessInProgress)
		})
	}
}

// A signer's authorizations in flight, on any payment, with whether each relay is mined yet
// (its value then shows in the signer's balance on chain): what the checkout counts against it.
func TestSignerGaslessInFlight(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cat := loadCatalog(t, st)
		m := createMerchant(t, st, "Acme", "acme")
		from := "0x00000000000000000000000000000000000000f1"
		var rows []store.GaslessAuthorization
		for i := range 3 {
			p := insertPayment(t, st, cat, m, paymentSpec{Amount: 1_000, CreatedAt: t0.Add(time.Duration(i) * time.Second)})
			g := gaslessRow(p, from, i+1)
			g.CreatedAt = t0.Add(time.Duration(i) * time.Second)
			require.NoError(t, insertGasless(st, g))
			rows = append(rows, g)
		}
		// rows[0] relayed and mined, rows[1] relayed not mined, rows[2] waiting.
		hot := "0x00000000000000000000000000000000000000aa"
		for i, status := range []store.OutgoingStatus{store.OutgoingMined, store.OutgoingSigned} {
			o := store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: 1, Sender: hot, Nonce: int64(i), Kind: store.TxPayout,
				TokenID: rows[i].TokenID, Recipient: rows[i].To, TxTo: usdcEthereum, GasLimit: 90_000, CreatedAt: t0}
			hash := fmt.Sprintf("0x%064x", i+100)
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.InsertOutgoingTx(o); err != nil {
					return err
				}
				if err := tx.SubmitGasless(rows[i].ID, o.ID, hash, t0); err != nil {
					return err
				}
				if status == store.OutgoingMined {
					block := int64(7)
					return tx.SetOutgoing(o.ID, status, &hash, &block, &hash, nil, t0)
				}
				return nil
			}))
		}
		got, err := st.Read(ctx).SignerGaslessInFlight(rows[0].TokenID, "0x00000000000000000000000000000000000000F1")
		require.NoError(t, err)
		require.Len(t, got, 3)
		for i, want := range []struct {
			status store.GaslessStatus
			mined  bool
		}{{store.GaslessSubmitted, true}, {store.GaslessSubmitted, false}, {store.GaslessAccepted, false}} {
			assert.Equal(t, rows[i].ID, got[i].ID)
			assert.Equal(t, want.status, got[i].Status)
			assert.Equal(t, want.mined, got[i].RelayMined, "row %d", i)
		}
		why := "reverted"
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			return tx.FinishGasless(rows[2].ID, []store.GaslessStatus{store.GaslessAccepted}, store.GaslessFailed, nil, &why, t0)
		}))
		got, err = st.Read(ctx).SignerGaslessInFlight(rows[0].TokenID, from)
		require.NoError(t, err)
		assert.Len(t, got, 2, "a failed one is not in flight")
	})
}
