package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

// Migration 28 on the data of version 26: a merchant's one set of payout settings becomes both
// modes' — the rules in force, a pending loosening included, stay in force in each — and from
// then on the two modes change apart.
func TestMigrationTwentyEightSplitsPayoutSettingsByMode(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st, db := storeAt(t, backend, 26)
			m := rawMerchant(t, db)
			require.NoError(t, db.Exec(`INSERT INTO payout_settings (merchant_id, approval_threshold_cents, allowlist_only,
				address_cooling_off_hours, daily_limit_cents, refund_claim_days, offer_overpayment_refunds, updated_at, stricter_rules, stricter_until)
				VALUES (?, 5000, TRUE, 48, 90000, 7, TRUE, ?, '{"approvalThresholdCents":1000,"allowlistOnly":true,"addressCoolingOffHours":48,"dailyLimitCents":null}', ?)`,
				m, t0, t0.Add(48*time.Hour)).Error)

			require.NoError(t, st.Migrate(ctx, discardLog()))
			for _, mode := range []domain.Mode{domain.ModeTest, domain.ModeLive} {
				s, err := st.Read(ctx).PayoutSettings(m, mode)
				require.NoError(t, err, mode)
				assert.Equal(t, mode, s.Mode)
				assert.Equal(t, int64(5000), *s.ApprovalThresholdCents, mode)
				assert.True(t, s.AllowlistOnly, mode)
				assert.Equal(t, int32(48), s.AddressCoolingOffHours, mode)
				assert.Equal(t, int64(90000), *s.DailyLimitCents, mode)
				assert.Equal(t, int32(7), s.RefundClaimDays, mode)
				assert.True(t, s.OfferOverpaymentRefund, mode)
				require.NotNil(t, s.Stricter, mode)
				assert.Equal(t, int64(1000), *s.Stricter.ApprovalThresholdCents, mode)
				assert.True(t, s.StricterUntil.Equal(t0.Add(48*time.Hour)), mode)
			}

			// The modes now change apart.
			test, err := st.Read(ctx).PayoutSettings(m, domain.ModeTest)
			require.NoError(t, err)
			test.AllowlistOnly, test.ApprovalThresholdCents = false, nil
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.PutPayoutSettings(test) }))
			live, err := st.Read(ctx).PayoutSettings(m, domain.ModeLive)
			require.NoError(t, err)
			assert.True(t, live.AllowlistOnly, "live's rules are its own")
			assert.Equal(t, int64(5000), *live.ApprovalThresholdCents)
			test, err = st.Read(ctx).PayoutSettings(m, domain.ModeTest)
			require.NoError(t, err)
			assert.False(t, test.AllowlistOnly)
			assert.Nil(t, test.ApprovalThresholdCents)
		})
	}
}
