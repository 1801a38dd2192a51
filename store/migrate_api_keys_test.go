package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// Migration 26 on the data of version 25: a key a person made from the dashboard (the audit log's
// api_key.created names them) becomes theirs; one the command line made stays nobody's.
func TestMigrationTwentySixNamesWhoMadeEachKey(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st, db := storeAt(t, backend, 25)
			ann := uuid.Must(uuid.NewV7())
			byAnn, byCLI := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
			m := rawMerchant(t, db)
			for i, k := range []uuid.UUID{byAnn, byCLI} {
				require.NoError(t, db.Exec(`INSERT INTO api_keys (id, merchant_id, prefix, key_hash, created_at, livemode)
					VALUES (?, ?, 'sk_live_abcd', ?, ?, TRUE)`, k, m, []byte{byte(i), 1, 2, 3}, t0).Error)
			}
			audit := func(kind, actor string, key uuid.UUID) {
				require.NoError(t, db.Exec(`INSERT INTO audit_log (merchant_id, at, actor_kind, actor_id, actor_label, ip, user_agent,
					action, target_type, target_id, details) VALUES (?, ?, ?, ?, 'x', '', '', 'api_key.created', 'api_key', ?, '{}')`,
					m, t0, kind, actor, key.String()).Error)
			}
			audit("person", ann.String(), byAnn)
			audit("operator", "", byCLI)

			require.NoError(t, st.Migrate(ctx, discardLog()))
			keys, err := st.Read(ctx).ActiveKeysByPrefix("sk_live_abcd")
			require.NoError(t, err)
			require.Len(t, keys, 2)
			made := map[uuid.UUID]*uuid.UUID{}
			for _, k := range keys {
				made[k.ID] = k.CreatedBy
			}
			require.NotNil(t, made[byAnn], "Ann's key is hers")
			assert.Equal(t, ann, *made[byAnn])
			assert.Nil(t, made[byCLI], "the command line's key is nobody's")
		})
	}
}
