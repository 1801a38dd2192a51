package domain

import "fmt"

// Role is what a person may do for a merchant on the dashboard. Each role includes the ones
// before it: a viewer reads everything but secrets; a developer also manages API keys and
// webhooks; an admin also moves money (withdrawals, refunds) and changes settings; an owner also
// manages the team and its security settings.
type Role string

// The roles, least to most.
const (
	RoleViewer    Role = "viewer"
	RoleDeveloper Role = "developer"
	RoleAdmin     Role = "admin"
	RoleOwner     Role = "owner"
)

var roleRank = map[Role]int{RoleViewer: 1, RoleDeveloper: 2, RoleAdmin: 3, RoleOwner: 4}

// ParseRole validates a role name.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if roleRank[r] == 0 {
		return "", fmt.Errorf("role %q: want viewer, developer, admin or owner", s)
	}
	return r, nil
}

// Includes reports whether r may do what other may (r is other or above it).
func (r Role) Includes(other Role) bool { return roleRank[r] > 0 && roleRank[r] >= roleRank[other] }
