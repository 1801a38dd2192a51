package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every permission at its boundary: its least role holds it, the role just below does not.
func TestRolePermits(t *testing.T) {
	roles := []Role{RoleViewer, RoleDeveloper, RoleAdmin, RoleOwner}
	least := map[Permission]Role{
		"payments:read": RoleViewer, "withdrawals:read": RoleViewer, "withdrawals:write": RoleAdmin,
		"settings:read": RoleViewer, "settings:write": RoleAdmin, "developers:read": RoleDeveloper,
		"developers:write": RoleDeveloper, "team:read": RoleViewer, "team:write": RoleOwner,
		"security:write": RoleOwner, "audit:read": RoleViewer,
	}
	require.Len(t, AllPermissions(), len(least), "the plan's table, no more, no less")
	for p, min := range least {
		parsed, err := ParsePermission(string(p))
		require.NoError(t, err)
		assert.Equal(t, min, parsed.LeastRole())
		for _, r := range roles {
			assert.Equal(t, r.Includes(min), r.Permits(p), "%s %s", r, p)
		}
	}
	assert.True(t, RoleAdmin.Permits(PermWithdrawalsWrite))
	assert.False(t, RoleDeveloper.Permits(PermWithdrawalsWrite))
	assert.True(t, RoleDeveloper.Permits(PermDevelopersWrite))
	assert.False(t, RoleViewer.Permits(PermDevelopersRead))
	assert.False(t, RoleAdmin.Permits(PermTeamWrite))
	assert.True(t, RoleOwner.Permits(PermSecurityWrite))
	assert.False(t, Role("").Permits(PermPaymentsRead), "no role permits nothing")
	assert.False(t, Role("root").Permits(PermPaymentsRead))
	assert.False(t, RoleOwner.Permits("payments:delete"), "an unknown permission is held by nobody")
	for _, s := range []string{"", "payments", "Payments:read", "payments:read "} {
		_, err := ParsePermission(s)
		assert.Error(t, err, "%q", s)
	}
}

func TestRolePermissionsSorted(t *testing.T) {
	assert.Equal(t, []Permission{"audit:read", "payments:read", "settings:read", "team:read", "withdrawals:read"}, RoleViewer.Permissions())
	assert.Equal(t, []Permission{"audit:read", "developers:read", "developers:write", "payments:read", "settings:read", "team:read", "withdrawals:read"}, RoleDeveloper.Permissions())
	assert.Equal(t, []Permission{"audit:read", "developers:read", "developers:write", "payments:read", "settings:read", "settings:write", "team:read", "withdrawals:read", "withdrawals:write"}, RoleAdmin.Permissions())
	assert.Len(t, RoleOwner.Permissions(), 11)
	assert.Empty(t, Role("x").Permissions())
	assert.NotNil(t, Role("x").Permissions(), "an empty list, not null, in JSON")
}
