package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/people"
)

// Roles and permissions of the dashboard API (issue 22). Each BearerAuth operation declares in
// openapi.yaml the permission it needs (x-permission) and, where money moves or secrets are
// made, that a person's second factor must be recent (x-second-factor: recent). The spec is the
// one place that says so: the server reads it at construction, and refuses to start when an
// operation under BearerAuth declares nothing — an operation nobody classified would otherwise
// be open to any role.

// RecentSecondFactor is how old a person's last second-factor confirmation (the token's sfa) may
// be for an x-second-factor: recent operation.
const RecentSecondFactor = people.RecentSecondFactor

// opAuth is what one BearerAuth operation needs.
type opAuth struct {
	permission   domain.Permission
	recentFactor bool // x-second-factor: recent
}

// opAuthKey names an operation as the router finds it: method and path template.
func opAuthKey(method, path string) string { return method + " " + path }

// operationAuthz reads x-permission and x-second-factor of every BearerAuth operation of doc.
func operationAuthz(doc *openapi3.T) (map[string]opAuth, error) {
	if doc == nil || doc.Paths == nil {
		return map[string]opAuth{}, nil
	}
	out := map[string]opAuth{}
	var missing []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if operationScheme(doc, op) != "BearerAuth" || !strings.Contains(path, "{merchantId}") {
				// Only merchant operations need a permission: a person's own operations
				// (/v1/auth/…) act on that person alone, through a live session (personBearer).
				continue
			}
			name := op.OperationID
			if name == "" {
				name = opAuthKey(method, path)
			}
			raw, ok := op.Extensions["x-permission"]
			if !ok {
				missing = append(missing, name)
				continue
			}
			s, _ := raw.(string)
			perm, err := domain.ParsePermission(s)
			if err != nil {
				return nil, fmt.Errorf("server: operation %s: x-permission: %w", name, err)
			}
			a := opAuth{permission: perm}
			if raw, ok := op.Extensions["x-second-factor"]; ok {
				if s, _ := raw.(string); s != "recent" {
					return nil, fmt.Errorf("server: operation %s: x-second-factor must be \"recent\" (got %v)", name, raw)
				}
				a.recentFactor = true
			}
			out[opAuthKey(method, path)] = a
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("server: BearerAuth operations without an x-permission (say which permission each needs): %v", missing)
	}
	return out, nil
}

// operationScheme is securityScheme for an operation of doc (its own requirements, else the
// document's).
func operationScheme(doc *openapi3.T, op *openapi3.Operation) string {
	reqs := op.Security
	if reqs == nil {
		reqs = &doc.Security
	}
	for _, req := range *reqs {
		for name := range req {
			return name
		}
	}
	return ""
}

// PeopleDirectory tells what a signed-in person may do for a merchant now (people.Directory):
// read at every request, so a removed membership, a changed role, a disabled user or a revoked
// session takes effect at once, not when the token expires. Errors: people.ErrSessionEnded
// (wraps domain.ErrInvalidToken: 401) for a session revoked or expired or a user disabled or
// gone; people.ErrNotMember (wraps domain.ErrForbidden: 403) for no membership of the merchant.
type PeopleDirectory interface {
	Access(ctx context.Context, userID, sessionID, merchantID uuid.UUID) (people.Access, error)
}

// authorize decides a verified principal's request for the merchant: a person's role is their
// membership (dir), a service's its token's; then the operation's permission, then — for a
// person who has a second factor or must have one — how recent it is. It returns the principal
// with its role for this merchant.
func authorize(ctx context.Context, p dashauth.Principal, dir PeopleDirectory, merchantID uuid.UUID, need opAuth, now time.Time) (dashauth.Principal, error) {
	var acc people.Access
	switch p.Kind {
	case dashauth.PrincipalPerson:
		if dir == nil {
			return p, domain.ErrInvalidToken // no directory, no person acts
		}
		var err error
		if acc, err = dir.Access(ctx, p.UserID, p.SessionID, merchantID); err != nil {
			return p, err
		}
		p.Role = acc.Role
		if acc.Email != "" {
			p.Email = acc.Email
		}
		if acc.Require2FA && !acc.HasSecondFactor {
			return p, domain.ErrSecondFactorRequired
		}
	default:
		if !p.ActsFor(merchantID) {
			return p, domain.ErrForbidden
		}
	}
	if !p.Role.Permits(need.permission) {
		return p, fmt.Errorf("%w: the %s role lacks %s", domain.ErrForbidden, p.Role, need.permission)
	}
	// A service token has no second factor (its holder minted it with the operator's database
	// access, or the identity provider vouches); a person without any on a merchant not
	// requiring one has nothing to confirm.
	if need.recentFactor && p.Kind == dashauth.PrincipalPerson && (acc.HasSecondFactor || acc.Require2FA) && !recentFactor(p.SecondFactorAt, now) {
		return p, domain.ErrStepUpRequired
	}
	return p, nil
}

// recentFactor reports whether a second-factor confirmation at sfa is recent at now (one dated
// ahead of the clock by more than the leeway is not: no issuer of ours mints it).
func recentFactor(sfa *time.Time, now time.Time) bool {
	if sfa == nil {
		return false
	}
	return now.Sub(*sfa) <= RecentSecondFactor && sfa.Before(now.Add(dashauth.Leeway))
}

// principalFrom is the principal bearer() authorised, with its role for the acting merchant.
func principalFrom(ctx context.Context) (dashauth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(dashauth.Principal)
	return p, ok
}
