package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/store"
)

// The audit log's side of the HTTP layer: authentication names the actor of every request in
// its context (withActor, the one place; a public operation's actor is its origin only, which
// people.Service turns into the person a sign-in names), the services read it when they append an entry in the
// transaction of their change; GET …/audit-log reads the log.

// withActor puts the request's actor, with its address and user agent, in the request's context.
func withActor(c echo.Context, a audit.Actor) {
	a.IP = c.RealIP()
	a.UserAgent = c.Request().UserAgent()
	c.SetRequest(c.Request().WithContext(audit.WithActor(c.Request().Context(), a)))
}

// keyActor is a secret-key request's actor: the key (its id, and its prefix to recognise it),
// and the person who made it, if a person did.
func keyActor(m domain.Merchant) audit.Actor {
	a := audit.Actor{Kind: audit.KindService, ID: m.KeyID.String(), Label: m.KeyPrefix}
	if m.KeyCreatedBy != nil {
		a.KeyMadeBy = m.KeyCreatedBy.String()
	}
	return a
}

// personActor is the actor of a person token's own operations (/v1/auth/…).
func personActor(p dashauth.Person) audit.Actor {
	return audit.Actor{Kind: audit.KindPerson, ID: p.UserID.String(), Label: p.Email}
}

// principalActor is a dashboard token's actor: a person by user id and email; a service token
// by its subject (the merchant id for the built-in issuer's tokens, the client or user for an
// OIDC provider's).
func principalActor(p dashauth.Principal) audit.Actor {
	if p.Kind == dashauth.PrincipalPerson {
		return audit.Actor{Kind: audit.KindPerson, ID: p.UserID.String(), Label: p.Email}
	}
	label := p.Subject
	if p.Email != "" {
		label = p.Email
	}
	return audit.Actor{Kind: audit.KindService, ID: p.Subject, Label: label}
}

// actingRole is the role a dashboard request acts with: the one bearer() authorised (a person's
// membership, a service token's role).
func actingRole(ctx context.Context) domain.Role {
	p, ok := principalFrom(ctx)
	if !ok {
		return ""
	}
	return p.Role
}

func auditEntryOut(e store.AuditEntry) gen.AuditEntry {
	return gen.AuditEntry{Id: e.ID, At: e.At, Action: e.Action, TargetType: e.TargetType, TargetId: e.TargetID, Details: e.Details,
		Actor: gen.AuditActor{Kind: gen.AuditActorKind(e.ActorKind), Id: e.ActorID, Label: e.ActorLabel, Ip: e.IP, UserAgent: e.UserAgent}}
}

func (h *handlers) ListMerchantAuditLog(ctx context.Context, req gen.ListMerchantAuditLogRequestObject) (gen.ListMerchantAuditLogResponseObject, error) {
	id, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	p := req.Params
	f := store.AuditFilter{MerchantID: id, Action: strOrEmpty(p.Action), ActorID: strOrEmpty(p.ActorId), TargetID: strOrEmpty(p.TargetId),
		From: p.From, To: p.To, Limit: 50}
	if p.Limit != nil {
		f.Limit = int(*p.Limit)
	}
	if p.Before != nil {
		f.Before = *p.Before
	}
	entries, next, err := h.store.Read(ctx).AuditLog(f)
	if err != nil {
		return nil, err
	}
	out := gen.AuditLogPage{Items: make([]gen.AuditEntry, len(entries))}
	for i, e := range entries {
		out.Items[i] = auditEntryOut(e)
	}
	if next > 0 {
		out.NextBefore = &next
	}
	return gen.ListMerchantAuditLog200JSONResponse(out), nil
}
