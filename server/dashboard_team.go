package server

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/store"
)

// The dashboard's team: members and their roles, pending invitations, always for the merchant
// bearer() authorised. The rules (the last owner stays, only an owner grants owner, a changed
// membership revokes the person's open invitations) live in people.Service.

func memberOut(m store.Member) gen.TeamMember {
	return gen.TeamMember{UserId: m.User.ID, Email: m.User.Email, Role: gen.TeamRole(m.Role), JoinedAt: m.JoinedAt,
		Disabled: m.User.DisabledAt != nil, HasSecondFactor: false}
}

func invitationOut(inv store.Invitation) gen.Invitation {
	return gen.Invitation{Id: inv.ID, Email: inv.Email, Role: gen.TeamRole(inv.Role), ExpiresAt: inv.ExpiresAt, CreatedAt: inv.CreatedAt}
}

func (h *handlers) ListMerchantMembers(ctx context.Context, _ gen.ListMerchantMembersRequestObject) (gen.ListMerchantMembersResponseObject, error) {
	id, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := h.people.Members(ctx, id)
	if err != nil {
		return nil, err
	}
	out := gen.TeamMemberList{Data: make([]gen.TeamMember, len(ms))}
	for i, m := range ms {
		out.Data[i] = memberOut(m)
	}
	return gen.ListMerchantMembers200JSONResponse(out), nil
}

// member is the acting merchant and the path's user id (a malformed id is no member).
func member(ctx context.Context, userID string) (merchant, user uuid.UUID, err error) {
	if merchant, err = actingMerchant(ctx); err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	if user, err = uuid.Parse(userID); err != nil {
		return uuid.Nil, uuid.Nil, domain.ErrMemberNotFound
	}
	return merchant, user, nil
}

func (h *handlers) UpdateMerchantMember(ctx context.Context, req gen.UpdateMerchantMemberRequestObject) (gen.UpdateMerchantMemberResponseObject, error) {
	m, u, err := member(ctx, req.UserId)
	if err != nil {
		return nil, err
	}
	role, err := domain.ParseRole(string(req.Body.Role))
	if err != nil {
		return nil, domain.Invalid(domain.CodeParameterInvalid, "role", "%s", err.Error())
	}
	out, err := h.people.SetRole(ctx, m, u, role, actingRole(ctx))
	if err != nil {
		return nil, err
	}
	return gen.UpdateMerchantMember200JSONResponse(memberOut(out)), nil
}

func (h *handlers) RemoveMerchantMember(ctx context.Context, req gen.RemoveMerchantMemberRequestObject) (gen.RemoveMerchantMemberResponseObject, error) {
	m, u, err := member(ctx, req.UserId)
	if err != nil {
		return nil, err
	}
	if err := h.people.RemoveMember(ctx, m, u); err != nil {
		return nil, err
	}
	return gen.RemoveMerchantMember204Response{}, nil
}

func (h *handlers) ListMerchantInvitations(ctx context.Context, _ gen.ListMerchantInvitationsRequestObject) (gen.ListMerchantInvitationsResponseObject, error) {
	id, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	invs, err := h.people.Invitations(ctx, id)
	if err != nil {
		return nil, err
	}
	out := gen.InvitationList{Data: make([]gen.Invitation, len(invs))}
	for i, inv := range invs {
		out.Data[i] = invitationOut(inv)
	}
	return gen.ListMerchantInvitations200JSONResponse(out), nil
}

// CreateMerchantInvitation invites a person; only an owner invites an owner. The link (its
// token) is in this answer only.
func (h *handlers) CreateMerchantInvitation(ctx context.Context, req gen.CreateMerchantInvitationRequestObject) (gen.CreateMerchantInvitationResponseObject, error) {
	id, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	role, err := domain.ParseRole(string(req.Body.Role))
	if err != nil {
		return nil, domain.Invalid(domain.CodeParameterInvalid, "role", "%s", err.Error())
	}
	if role == domain.RoleOwner && actingRole(ctx) != domain.RoleOwner {
		return nil, fmt.Errorf("%w: only an owner may invite an owner", domain.ErrForbidden)
	}
	token, inv, err := h.people.Invite(ctx, req.Body.Email, id, role)
	if err != nil {
		return nil, err
	}
	return gen.CreateMerchantInvitation201JSONResponse{Invitation: invitationOut(inv), InviteUrl: people.InvitationURL(h.publicBaseURL, token)}, nil
}

func (h *handlers) RevokeMerchantInvitation(ctx context.Context, req gen.RevokeMerchantInvitationRequestObject) (gen.RevokeMerchantInvitationResponseObject, error) {
	m, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	id, perr := uuid.Parse(req.InvitationId)
	if perr != nil {
		return nil, domain.ErrInvitationNotFound
	}
	if _, err := h.people.RevokeInvitation(ctx, m, id); err != nil {
		return nil, err
	}
	return gen.RevokeMerchantInvitation204Response{}, nil
}
