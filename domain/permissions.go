package domain

import (
	"fmt"
	"sort"
)

// Permission is one thing a dashboard operation needs (its `x-permission` in openapi.yaml). A
// role holds a permission when it includes the permission's least role: the table below is the
// one place that says which, so an operation names what it does, never who may do it.
type Permission string

// The permissions, each with the least role that holds it (permissionLeast).
const (
	PermPaymentsRead     Permission = "payments:read"     // payments, overview, balance, their exports and deliveries
	PermWithdrawalsRead  Permission = "withdrawals:read"  // withdrawals, estimates, their export
	PermWithdrawalsWrite Permission = "withdrawals:write" // create or cancel a withdrawal (money moves)
	PermSettingsRead     Permission = "settings:read"     // withdrawal config, accepted assets, profile, security settings
	PermSettingsWrite    Permission = "settings:write"    // withdrawal config, accepted assets, profile
	PermDevelopersRead   Permission = "developers:read"   // API keys, webhook endpoints, the delivery log
	PermDevelopersWrite  Permission = "developers:write"  // create and revoke keys; webhooks
	PermTeamRead         Permission = "team:read"         // members, invitations
	PermTeamWrite        Permission = "team:write"        // invite, change a role, remove a member
	PermSecurityWrite    Permission = "security:write"    // require a second factor for the team
	PermAuditRead        Permission = "audit:read"        // the audit log
)

// permissionLeast is the least role holding each permission.
var permissionLeast = map[Permission]Role{
	PermPaymentsRead:     RoleViewer,
	PermWithdrawalsRead:  RoleViewer,
	PermWithdrawalsWrite: RoleAdmin,
	PermSettingsRead:     RoleViewer,
	PermSettingsWrite:    RoleAdmin,
	PermDevelopersRead:   RoleDeveloper,
	PermDevelopersWrite:  RoleDeveloper,
	PermTeamRead:         RoleViewer,
	PermTeamWrite:        RoleOwner,
	PermSecurityWrite:    RoleOwner,
	PermAuditRead:        RoleViewer,
}

// ParsePermission validates a permission name (an operation's x-permission).
func ParsePermission(s string) (Permission, error) {
	p := Permission(s)
	if _, ok := permissionLeast[p]; !ok {
		return "", fmt.Errorf("permission %q: not one of %v", s, AllPermissions())
	}
	return p, nil
}

// AllPermissions lists every permission, sorted.
func AllPermissions() []Permission { return RoleOwner.Permissions() }

// LeastRole is the least role holding p ("" for an unknown permission).
func (p Permission) LeastRole() Role { return permissionLeast[p] }

// Permits reports whether r holds p; an unknown role or permission permits nothing.
func (r Role) Permits(p Permission) bool {
	least, ok := permissionLeast[p]
	return ok && r.Includes(least)
}

// Permissions lists the permissions r holds, sorted (none for an unknown role).
func (r Role) Permissions() []Permission {
	out := []Permission{}
	for p := range permissionLeast {
		if r.Permits(p) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
