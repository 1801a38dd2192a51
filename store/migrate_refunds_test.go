package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// Migration 20 on the data of version 19: the ledger and the events (rebuilt on SQLite to widen
// their CHECKs) keep every row and the webhook deliveries that point at them; the balance is
// what it was; refund entries and events are accepted afterwards.
func TestMigrationTwentyKeepsLedgerAndEvents(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st, db := storeAt(t, backend, 19)
			ep, evID := uuid.Must(uuid.NewV7()), "evt_0001"
			m := rawMerchant(t, db)
			require.NoError(t, db.Exec(`INSERT INTO ledger_entries (id, merchant_id, kind, amount_cents, created_at, livemode)
				VALUES (?, ?, 'transfer_credit', 1234, ?, TRUE)`, uuid.Must(uuid.NewV7()), m, t0).Error)
			require.NoError(t, db.Exec(`INSERT INTO events (id, type, entity, entity_id, merchant_id, sequence, payload, created_at, livemode)
				VALUES (?, 'webhook.test', 'endpoint', ?, ?, 1, '{}', ?, TRUE)`, evID, ep, m, t0).Error)
			require.NoError(t, db.Exec(`INSERT INTO webhook_endpoints (id, merchant_id, url, event_types, enabled, secret_sealed, created_at, updated_at, livemode)
				VALUES (?, ?, 'https://93.184.215.14/h', '', TRUE, 'v1:x', ?, ?, TRUE)`, ep, m, t0, t0).Error)
			require.NoError(t, db.Exec(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, status, next_attempt_at, created_at, updated_at)
				VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`, uuid.Must(uuid.NewV7()), evID, ep, m, t0, t0, t0).Error)

			require.NoError(t, st.Migrate(ctx, discardLog()))
			bal, err := st.Read(ctx).AvailableBalance(m, domain.ModeLive)
			require.NoError(t, err)
			assert.Equal(t, int64(1234), bal, "the ledger kept its rows")
			var n int64
			require.NoError(t, db.Raw(`SELECT COUNT(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`).Row().Scan(&n))
			assert.EqualValues(t, 1, n, "the delivery still points at its event")
			require.NoError(t, db.Exec(`INSERT INTO events (id, type, entity, entity_id, merchant_id, sequence, payload, created_at, livemode)
				VALUES ('evt_0002', 'refund.created', 'refund', ?, ?, 1, '{}', ?, TRUE)`, uuid.Must(uuid.NewV7()), m, t0).Error)
			assert.Error(t, db.Exec(`INSERT INTO ledger_entries (id, merchant_id, kind, amount_cents, created_at, livemode)
				VALUES (?, ?, 'refund_bonus', 1, ?, TRUE)`, uuid.Must(uuid.NewV7()), m, t0).Error, "the kinds are still checked")
			if backend == "sqlite" {
				var broken []map[string]any
				require.NoError(t, db.Raw("PRAGMA foreign_key_check").Scan(&broken).Error)
				require.Empty(t, broken)
				var fk int
				require.NoError(t, db.Raw("PRAGMA foreign_keys").Scan(&fk).Error)
				require.Equal(t, 1, fk, "foreign keys are on again after the rebuild")
			}
		})
	}
}
