package policy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/policy"
)

const stranger = "0x2222222222222222222222222222222222222222"

// Loosening the policy waits out the cooling-off period in force: one admin (or a stolen
// session) turning every guard off cannot move money the same minute. Tightening applies at once.
func TestLooseningWaitsOutTheCoolingOff(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e env) {
		e.set(t, policy.SettingsChange{AllowlistOnly: ptr(true), ApprovalThresholdCents: ptr(int64(1_000)), DailyLimitCents: ptr(int64(5_000))})
		set, err := e.pol.SettingsOf(e.ctx, e.m.ID, e.m.Mode)
		require.NoError(t, err)
		assert.Nil(t, set.Stricter, "tightening applies at once: nothing waits")
		_, err = e.pol.AddAddress(e.ctx, e.m, policy.NewAddress{Label: "payee", ChainID: 8453, Address: payee})
		require.NoError(t, err)
		*e.now = e.now.Add(24 * time.Hour) // the payee is usable

		// Everything off at once, cooling-off to 0.
		e.set(t, policy.SettingsChange{AllowlistOnly: ptr(false), ClearApprovalThreshold: true, ClearDailyLimit: true, AddressCoolingOffHours: ptr(int32(0))})
		set, err = e.pol.SettingsOf(e.ctx, e.m.ID, e.m.Mode)
		require.NoError(t, err)
		require.NotNil(t, set.Stricter)
		assert.Equal(t, e.now.Add(24*time.Hour), *set.StricterUntil, "the 24 h in force when loosened")

		_, err = e.withdraw(500, stranger)
		refusedWith(t, err, domain.CodeRecipientNotInAddressBook)
		d, err := e.check(t, out(domain.OutflowWithdrawal, 2_000, payee))
		require.NoError(t, err)
		assert.True(t, d.ApprovalRequired, "the old threshold still applies")
		_, err = e.check(t, out(domain.OutflowWithdrawal, 5_001, payee))
		refusedWith(t, err, domain.CodeDailyLimitExceeded)
		added, err := e.pol.AddAddress(e.ctx, e.m, policy.NewAddress{Label: "new", ChainID: 8453, Address: stranger})
		require.NoError(t, err)
		assert.Equal(t, e.now.Add(24*time.Hour), added.UsableAt, "a cooling-off shortened to 0 does not make a new address usable at once")

		// A tightening meanwhile applies at once and keeps the wait.
		e.set(t, policy.SettingsChange{ApprovalThresholdCents: ptr(int64(5_000))})
		set, err = e.pol.SettingsOf(e.ctx, e.m.ID, e.m.Mode)
		require.NoError(t, err)
		require.NotNil(t, set.StricterUntil)

		*e.now = e.now.Add(24*time.Hour - time.Microsecond)
		_, err = e.withdraw(500, "0x3333333333333333333333333333333333333333")
		refusedWith(t, err, domain.CodeRecipientNotInAddressBook)
		*e.now = e.now.Add(time.Microsecond) // the loosening takes effect
		_, err = e.withdraw(500, "0x3333333333333333333333333333333333333333")
		require.NoError(t, err, "the allowlist is off now")
		d, err = e.check(t, out(domain.OutflowWithdrawal, 2_000, payee))
		require.NoError(t, err)
		assert.False(t, d.ApprovalRequired, "2,000 is under the 5,000 threshold set since")
		_, err = e.check(t, out(domain.OutflowWithdrawal, 100_000, payee))
		require.NoError(t, err, "no daily limit any more")
	})
}

// A cooling-off of 0 in force leaves nothing to wait out: the merchant chose no delay.
func TestLooseningWithoutCoolingOffIsImmediate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e env) {
		e.set(t, policy.SettingsChange{AllowlistOnly: ptr(true), AddressCoolingOffHours: ptr(int32(0))})
		_, err := e.withdraw(500, stranger)
		refusedWith(t, err, domain.CodeRecipientNotInAddressBook) // 24 h → 0 is itself a loosening: waited out
		*e.now = e.now.Add(24 * time.Hour)
		e.set(t, policy.SettingsChange{AllowlistOnly: ptr(false)})
		_, err = e.withdraw(500, stranger)
		require.NoError(t, err)
	})
}

func TestPolicyRulesStrictest(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	loose := domain.PolicyRules{AddressCoolingOffHours: 0}
	strict := domain.PolicyRules{ApprovalThresholdCents: n(100), AllowlistOnly: true, AddressCoolingOffHours: 48, DailyLimitCents: n(1_000)}
	assert.Equal(t, strict, loose.Strictest(strict))
	assert.Equal(t, strict, strict.Strictest(loose))
	assert.True(t, loose.LooserThan(strict))
	assert.False(t, strict.LooserThan(loose))
	assert.False(t, strict.LooserThan(strict))
	for name, c := range map[string]domain.PolicyRules{
		"higher threshold": {ApprovalThresholdCents: n(101), AllowlistOnly: true, AddressCoolingOffHours: 48, DailyLimitCents: n(1_000)},
		"no threshold":     {AllowlistOnly: true, AddressCoolingOffHours: 48, DailyLimitCents: n(1_000)},
		"allowlist off":    {ApprovalThresholdCents: n(100), AddressCoolingOffHours: 48, DailyLimitCents: n(1_000)},
		"shorter wait":     {ApprovalThresholdCents: n(100), AllowlistOnly: true, AddressCoolingOffHours: 47, DailyLimitCents: n(1_000)},
		"higher daily":     {ApprovalThresholdCents: n(100), AllowlistOnly: true, AddressCoolingOffHours: 48, DailyLimitCents: n(1_001)},
		"no daily limit":   {ApprovalThresholdCents: n(100), AllowlistOnly: true, AddressCoolingOffHours: 48},
	} {
		assert.True(t, c.LooserThan(strict), name)
		assert.False(t, strict.LooserThan(c), name+": the other way is a tightening")
		assert.Equal(t, strict, c.Strictest(strict), name)
	}
	mixed := domain.PolicyRules{ApprovalThresholdCents: n(50), AddressCoolingOffHours: 72}
	assert.True(t, mixed.LooserThan(strict), "looser in some fields is a loosening")
	assert.Equal(t, domain.PolicyRules{ApprovalThresholdCents: n(50), AllowlistOnly: true, AddressCoolingOffHours: 72, DailyLimitCents: n(1_000)},
		mixed.Strictest(strict))
}
