package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	paymentsd "github.com/paymentsd/paymentsd"
	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/settlement"
)

// Both shapes' specs name a permission for every BearerAuth operation, the plan's for the
// existing ones, and a recent second factor where money moves or a secret key is made.
func TestOperationAuthzFromSpec(t *testing.T) {
	schema, err := openapi3.NewLoader().LoadFromData(paymentsd.OpenAPIYAML)
	require.NoError(t, err)
	guide, err := openapi3.NewLoader().LoadFromData(gen.GuideOpenAPIYAML)
	require.NoError(t, err)
	for name, doc := range map[string]*openapi3.T{"schema": schema, "guide": guide} {
		authz, err := operationAuthz(doc)
		require.NoError(t, err, name)
		m := "/v1/merchants/{merchantId}"
		for key, want := range map[string]opAuth{
			"GET " + m + "/balance":                              {permission: domain.PermPaymentsRead},
			"PATCH " + m + "/withdrawals/config":                 {permission: domain.PermSettingsWrite},
			"GET " + m + "/accepted-assets":                      {permission: domain.PermSettingsRead},
			"POST " + m + "/withdrawals":                         {permission: domain.PermWithdrawalsWrite, recentFactor: true},
			"POST " + m + "/withdrawals/{withdrawalId}/cancel":   {permission: domain.PermWithdrawalsWrite, recentFactor: true},
			"GET " + m + "/withdrawals":                          {permission: domain.PermWithdrawalsRead},
			"GET " + m + "/api-keys":                             {permission: domain.PermDevelopersRead},
			"POST " + m + "/api-keys":                            {permission: domain.PermDevelopersWrite, recentFactor: true},
			"DELETE " + m + "/api-keys/{keyId}":                  {permission: domain.PermDevelopersWrite},
			"GET " + m + "/webhooks/deliveries":                  {permission: domain.PermDevelopersRead},
			"POST " + m + "/webhooks/events/{eventId}/redeliver": {permission: domain.PermDevelopersWrite},
			"POST " + m + "/webhooks/{endpointId}/rotate-secret": {permission: domain.PermDevelopersWrite},
		} {
			assert.Equal(t, want, authz[key], "%s: %s", name, key)
		}
		bearerOps := 0
		for path, item := range doc.Paths.Map() {
			for _, op := range item.Operations() {
				if operationScheme(doc, op) == "BearerAuth" && strings.Contains(path, "{merchantId}") {
					bearerOps++
				}
			}
		}
		assert.Equal(t, bearerOps, len(authz), "%s: every merchant operation has its permission", name)
	}
}

// The server refuses to start on a spec with a BearerAuth operation that names no permission,
// names an unknown one, or asks a second factor other than "recent".
func TestNewRefusesUnclassifiedBearerOperations(t *testing.T) {
	for name, edit := range map[string]func(op *openapi3.Operation){
		"no x-permission":      func(op *openapi3.Operation) { delete(op.Extensions, "x-permission") },
		"unknown permission":   func(op *openapi3.Operation) { op.Extensions["x-permission"] = "payments:delete" },
		"not a string":         func(op *openapi3.Operation) { op.Extensions["x-permission"] = 3 },
		"second factor: often": func(op *openapi3.Operation) { op.Extensions["x-second-factor"] = "often" },
	} {
		doc, err := openapi3.NewLoader().LoadFromData(paymentsd.OpenAPIYAML)
		require.NoError(t, err)
		op := doc.Paths.Find("/v1/merchants/{merchantId}/withdrawals").Post
		require.Equal(t, "createMerchantWithdrawal", op.OperationID)
		edit(op)
		_, err = New(Deps{Spec: doc, Shape: settlement.Schema})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "createMerchantWithdrawal", name)
	}
}

type fakeDirectory struct {
	acc people.Access
	err error
}

func (f fakeDirectory) Access(context.Context, uuid.UUID, uuid.UUID, uuid.UUID) (people.Access, error) {
	return f.acc, f.err
}

// authorize at each boundary: services by their merchants and role; persons by the directory
// (its errors as they are), the operation's permission, then — when the person has a second
// factor or the merchant requires one — a confirmation at most 10 minutes old.
func TestAuthorize(t *testing.T) {
	now := time.Now()
	mid := uuid.New()
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	read := opAuth{permission: domain.PermPaymentsRead}
	withdraw := opAuth{permission: domain.PermWithdrawalsWrite, recentFactor: true}
	service := func(r domain.Role, ids ...uuid.UUID) dashauth.Principal {
		return dashauth.Principal{Kind: dashauth.PrincipalService, Role: r, MerchantIDs: ids}
	}
	person := func(sfa *time.Time) dashauth.Principal {
		return dashauth.Principal{Kind: dashauth.PrincipalPerson, UserID: uuid.New(), SessionID: uuid.New(), SecondFactorAt: sfa}
	}
	admin := func(has, require bool) fakeDirectory {
		return fakeDirectory{acc: people.Access{Role: domain.RoleAdmin, Email: "a@example.com", HasSecondFactor: has, Require2FA: require}}
	}
	for _, tc := range []struct {
		name string
		p    dashauth.Principal
		dir  PeopleDirectory
		need opAuth
		want error
	}{
		{"service viewer reads", service(domain.RoleViewer, mid), nil, read, nil},
		{"service viewer withdraws", service(domain.RoleViewer, mid), nil, withdraw, domain.ErrForbidden},
		{"service developer withdraws", service(domain.RoleDeveloper, mid), nil, withdraw, domain.ErrForbidden},
		{"service admin withdraws, no second factor asked", service(domain.RoleAdmin, mid), nil, withdraw, nil},
		{"service of another merchant", service(domain.RoleOwner, uuid.New()), nil, read, domain.ErrForbidden},
		{"service without a role", service("", mid), nil, read, domain.ErrForbidden},
		{"person, no directory", person(nil), nil, read, domain.ErrInvalidToken},
		{"person, session ended", person(nil), fakeDirectory{err: people.ErrSessionEnded}, read, domain.ErrInvalidToken},
		{"person, not a member", person(nil), fakeDirectory{err: people.ErrNotMember}, read, domain.ErrForbidden},
		{"person viewer withdraws", person(ago(0)), fakeDirectory{acc: people.Access{Role: domain.RoleViewer}}, withdraw, domain.ErrForbidden},
		{"person admin, no factor, not required", person(nil), admin(false, false), withdraw, nil},
		{"person admin with a factor, none confirmed", person(nil), admin(true, false), withdraw, domain.ErrStepUpRequired},
		{"person admin, confirmed 9 min ago", person(ago(9 * time.Minute)), admin(true, false), withdraw, nil},
		{"person admin, confirmed 10 min ago", person(ago(10 * time.Minute)), admin(true, false), withdraw, nil},
		{"person admin, confirmed 11 min ago", person(ago(11 * time.Minute)), admin(true, false), withdraw, domain.ErrStepUpRequired},
		{"person admin, confirmed in the future", person(ago(-time.Hour)), admin(true, false), withdraw, domain.ErrStepUpRequired},
		{"person with a factor reads without a recent one", person(nil), admin(true, true), read, nil},
		{"merchant requires 2FA, person has none", person(nil), admin(false, true), read, domain.ErrSecondFactorRequired},
	} {
		p, err := authorize(context.Background(), tc.p, tc.dir, mid, tc.need, now)
		if tc.want == nil {
			require.NoError(t, err, tc.name)
			if tc.p.Kind == dashauth.PrincipalPerson {
				assert.Equal(t, domain.RoleAdmin, p.Role, tc.name)
				assert.Equal(t, "a@example.com", p.Email, tc.name)
			}
			continue
		}
		assert.ErrorIs(t, err, tc.want, tc.name)
		assert.Equal(t, classify(tc.want).Code, classify(err).Code, tc.name)
	}
	assert.Equal(t, domain.CodeStepUpRequired, classify(domain.ErrStepUpRequired).Code)
	assert.Equal(t, 403, classify(domain.ErrSecondFactorRequired).Status)
	assert.Equal(t, domain.CodeSecondFactorRequired, classify(domain.ErrSecondFactorRequired).Code)
	assert.False(t, errors.Is(people.ErrNotMember, domain.ErrInvalidToken))
}

// The audit log's actor: a person by id and email, a service token by its subject.
func TestPrincipalActor(t *testing.T) {
	uid := uuid.New()
	a := principalActor(dashauth.Principal{Kind: dashauth.PrincipalPerson, UserID: uid, Email: "a@example.com", Subject: "user:" + uid.String()})
	assert.Equal(t, audit.Actor{Kind: audit.KindPerson, ID: uid.String(), Label: "a@example.com"}, a)
	s := principalActor(dashauth.Principal{Kind: dashauth.PrincipalService, Subject: "sub-1"})
	assert.Equal(t, audit.Actor{Kind: audit.KindService, ID: "sub-1", Label: "sub-1"}, s)
}
