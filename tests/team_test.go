package tests

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
)

// teamToken is a token that may manage the merchant's team (today: a write token).
func (e *env) teamToken(merchantID uuid.UUID) string {
	e.t.Helper()
	return e.roleToken(merchantID, domain.RoleOwner)
}

// member makes a user who is a member of the merchant with role.
func (e *env) member(merchantID uuid.UUID, email string, role domain.Role) uuid.UUID {
	e.t.Helper()
	c, err := e.app.People.CreateUser(context.Background(), email, merchantID, role, "correct horse battery staple")
	require.NoError(e.t, err)
	return c.User.ID
}

// The team from the dashboard: members listed, roles changed, members removed, invitations made
// (the link once, its token in the fragment), listed and revoked; the last owner is never
// demoted or removed; a changed membership revokes the person's open invitations.
func TestTeamMembersAndInvitations(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{}).Merchant.ID
		other := e.merchant(merchantOpts{name: "Other"}).Merchant.ID
		owner := e.member(m, "owner@shop.example", domain.RoleOwner)
		dev := e.member(m, "dev@shop.example", domain.RoleDeveloper)
		outsider := e.member(other, "out@shop.example", domain.RoleOwner)
		tok, read := bearerHeader(e.teamToken(m)), bearerHeader(e.token(m, dashauth.ScopeRead))
		base := "/v1/merchants/" + m.String()

		r := e.do(http.MethodGet, base+"/members", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		data := r.JSON(t)["data"].([]any)
		require.Len(t, data, 2)
		first := data[0].(map[string]any)
		assert.Equal(t, "dev@shop.example", first["email"])
		assert.Equal(t, "developer", first["role"])
		assert.Equal(t, dev.String(), first["userId"])
		assert.Equal(t, false, first["disabled"])
		assert.Equal(t, false, first["hasSecondFactor"])
		assert.NotEmpty(t, first["joinedAt"])

		// Invitations: made (a write token only), the link once and never again.
		body := map[string]any{"email": "New@Shop.example", "role": "developer"}
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPost, base+"/invitations", "", body, read...).Status)
		r = e.do(http.MethodPost, base+"/invitations", "", body, tok...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		created := r.JSON(t)
		link := created["inviteUrl"].(string)
		assert.True(t, strings.HasPrefix(link, "https://pay.example.test/dashboard/#/accept-invitation?token="), link)
		inv := created["invitation"].(map[string]any)
		assert.Equal(t, "new@shop.example", inv["email"])
		invID := inv["id"].(string)
		r = e.do(http.MethodGet, base+"/invitations", "", nil, read...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Len(t, r.JSON(t)["data"], 1)
		assert.NotContains(t, string(r.Body), strings.TrimPrefix(link, "https://pay.example.test/dashboard/#/accept-invitation?token="))

		// An invitation never changes a membership: a member is not invited.
		r = e.do(http.MethodPost, base+"/invitations", "", map[string]any{"email": "DEV@shop.example", "role": "owner"}, tok...)
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, param := r.errorFields(t)
		assert.Equal(t, "already_member", code)
		assert.Equal(t, "email", param)
		r = e.do(http.MethodPost, base+"/invitations", "", map[string]any{"email": "Ana <ana@shop.example>", "role": "viewer"}, tok...)
		assert.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		assert.Equal(t, http.StatusBadRequest, e.do(http.MethodPost, base+"/invitations", "", map[string]any{"email": "x@y.z", "role": "boss"}, tok...).Status)

		// Revoked: gone from the list, its link dead; a second revocation finds nothing.
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodDelete, base+"/invitations/"+invID, "", nil, read...).Status)
		assert.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, base+"/invitations/"+invID, "", nil, tok...).Status)
		r = e.do(http.MethodGet, base+"/invitations", "", nil, read...)
		assert.Len(t, r.JSON(t)["data"], 0)
		for _, id := range []string{invID, uuid.NewString(), "nope"} {
			r = e.do(http.MethodDelete, base+"/invitations/"+id, "", nil, tok...)
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
			_, _, param = r.errorFields(t)
			assert.Equal(t, "invitationId", param)
		}
		// Another merchant's invitation is unknown here.
		r = e.do(http.MethodPost, "/v1/merchants/"+other.String()+"/invitations", "", body, bearerHeader(e.teamToken(other))...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		otherInv := r.JSON(t)["invitation"].(map[string]any)["id"].(string)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, base+"/invitations/"+otherInv, "", nil, tok...).Status)

		// Roles: changed; a read token cannot; unknown and other merchants' users are 404.
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPatch, base+"/members/"+dev.String(), "", map[string]any{"role": "admin"}, read...).Status)
		r = e.do(http.MethodPatch, base+"/members/"+dev.String(), "", map[string]any{"role": "admin"}, tok...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "admin", r.JSON(t)["role"])
		for _, id := range []string{uuid.NewString(), outsider.String(), "nope"} {
			r = e.do(http.MethodPatch, base+"/members/"+id, "", map[string]any{"role": "admin"}, tok...)
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
			_, _, param = r.errorFields(t)
			assert.Equal(t, "userId", param)
			assert.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, base+"/members/"+id, "", nil, tok...).Status)
		}

		// The last owner is never demoted nor removed.
		r = e.do(http.MethodPatch, base+"/members/"+owner.String(), "", map[string]any{"role": "admin"}, tok...)
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "last_owner", code)
		r = e.do(http.MethodDelete, base+"/members/"+owner.String(), "", nil, tok...)
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "last_owner", code)
		// With a second owner, the first may go.
		require.Equal(t, http.StatusOK, e.do(http.MethodPatch, base+"/members/"+dev.String(), "", map[string]any{"role": "owner"}, tok...).Status)
		require.Equal(t, http.StatusOK, e.do(http.MethodPatch, base+"/members/"+owner.String(), "", map[string]any{"role": "viewer"}, tok...).Status)
		assert.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, base+"/members/"+owner.String(), "", nil, tok...).Status)
		r = e.do(http.MethodGet, base+"/members", "", nil, read...)
		assert.Len(t, r.JSON(t)["data"], 1)

		// Only an owner grants owner (the service's rule; a token's role comes with the
		// permissions step).
		_, err := e.app.People.SetRole(context.Background(), m, dev, domain.RoleOwner, domain.RoleAdmin)
		assert.True(t, errors.Is(err, domain.ErrForbidden), "%v", err)

		// A changed or ended membership revokes the person's open invitations: an old link must
		// not undo the change.
		ctx := context.Background()
		for i, change := range []func(u uuid.UUID) int{
			func(u uuid.UUID) int {
				return e.do(http.MethodPatch, base+"/members/"+u.String(), "", map[string]any{"role": "admin"}, tok...).Status
			},
			func(u uuid.UUID) int {
				return e.do(http.MethodDelete, base+"/members/"+u.String(), "", nil, tok...).Status
			},
		} {
			email := []string{"later1@shop.example", "later2@shop.example"}[i]
			_, _, err := e.app.People.Invite(ctx, email, m, domain.RoleDeveloper)
			require.NoError(t, err)
			u := e.member(m, email, domain.RoleViewer) // joined another way meanwhile (the command line)
			invs, err := e.app.People.Invitations(ctx, m)
			require.NoError(t, err)
			require.Len(t, invs, 1)
			require.Contains(t, []int{http.StatusOK, http.StatusNoContent}, change(u))
			invs, err = e.app.People.Invitations(ctx, m)
			require.NoError(t, err)
			assert.Empty(t, invs, "the open invitation is revoked")
		}

		// Every change is in the audit log, with the actor.
		items, _ := e.auditLog(m, "")
		var actions []string
		for _, it := range items {
			actions = append(actions, it["action"].(string))
		}
		for _, want := range []string{"invitation.created", "invitation.revoked", "member.role_changed", "member.removed"} {
			assert.Contains(t, actions, want)
		}
		items, _ = e.auditLog(m, "?action=member.removed&targetId="+owner.String())
		require.Len(t, items, 1)
		assert.Equal(t, "owner@shop.example", items[0]["details"].(map[string]any)["email"])
		assert.Equal(t, "service", items[0]["actor"].(map[string]any)["kind"])
	})
}

// Two owners demoting each other at the same moment: the merchant's lock serialises them, so
// one wins and the other is refused — the merchant keeps an owner.
func TestTeamConcurrentDemotionsKeepAnOwner(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for round := 0; round < 3; round++ {
			m := e.merchant(merchantOpts{}).Merchant.ID
			a := e.member(m, "a"+strconv.Itoa(round)+"@shop.example", domain.RoleOwner)
			b := e.member(m, "b"+strconv.Itoa(round)+"@shop.example", domain.RoleOwner)
			tok := bearerHeader(e.teamToken(m))
			base := "/v1/merchants/" + m.String() + "/members/"
			statuses := make([]int, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, u := range []uuid.UUID{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					statuses[i] = e.do(http.MethodPatch, base+u.String(), "", map[string]any{"role": "admin"}, tok...).Status
				}()
			}
			close(start)
			wg.Wait()
			assert.ElementsMatch(t, []int{http.StatusOK, http.StatusConflict}, statuses)
			n, err := e.app.Store.Read(context.Background()).CountOwners(m)
			require.NoError(t, err)
			assert.EqualValues(t, 1, n)
		}
	})
}
