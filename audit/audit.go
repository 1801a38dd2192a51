// Package audit names who did what to a merchant's account: the acting party (Actor, carried in
// the request's context from authentication to the services) and the actions recorded. Entries
// are appended with Append in the same transaction as the change they record, so a change and
// its trace commit or roll back together; the table refuses UPDATE and DELETE by itself.
package audit

import (
	"context"
	"net/url"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/store"
)

// Kind is what acted.
type Kind string

// The kinds of actor.
const (
	KindPerson   Kind = "person"   // a signed-in user of the dashboard
	KindService  Kind = "service"  // a secret key, or a dashboard token without a user (OIDC client, built-in mint)
	KindOperator Kind = "operator" // the paymentsd command line
	KindSystem   Kind = "system"   // the service itself (no request)
)

// Actor is who made a change and from where.
type Actor struct {
	Kind  Kind
	ID    string // user id, key id or token subject; "" for the system
	Label string // email, key prefix or token subject: what a reader recognises
	// KeyMadeBy is, for a secret key, the user id of the person who made it from the dashboard
	// ("" for a key made by the command line, and for every other actor).
	KeyMadeBy string
	IP        string
	UserAgent string
}

// System is the actor of changes made without a request or command.
var System = Actor{Kind: KindSystem, Label: "system"}

// Operator is the actor of the command line.
var Operator = Actor{Kind: KindOperator, Label: "operator"}

type actorKey struct{}

// WithActor returns ctx carrying a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// Origin is the actor of a request whose party is not known yet (a sign-in): only its address
// and user agent. Whoever names the party later keeps them (AsPerson); an entry appended with it
// as it is records the kind system.
func Origin(ip, userAgent string) Actor { return Actor{IP: ip, UserAgent: userAgent} }

// AsPerson returns ctx acted by the person (user id, email), from ctx's actor's address and user
// agent: a sign-in names its person once the password is checked.
func AsPerson(ctx context.Context, userID, email string) context.Context {
	a := ActorFrom(ctx)
	return WithActor(ctx, Actor{Kind: KindPerson, ID: userID, Label: email, IP: a.IP, UserAgent: a.UserAgent})
}

// ActorFrom is the actor ctx carries; System when none (a worker, a test).
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return System
}

// PersonOf is the user id of the signed-in person ctx acts as; nil for a key, a token without a
// user, the command line or the service itself. Only a person approves.
func PersonOf(ctx context.Context) *uuid.UUID {
	a := ActorFrom(ctx)
	if a.Kind != KindPerson {
		return nil
	}
	return parseID(a.ID)
}

// CreatorOf is the person answerable for what ctx creates: the signed-in person, or the person
// who made the secret key it acts with. A withdrawal or refund records it so that its creator
// never approves it — through a key they minted either. nil when no person is.
func CreatorOf(ctx context.Context) *uuid.UUID {
	if id := PersonOf(ctx); id != nil {
		return id
	}
	if a := ActorFrom(ctx); a.Kind == KindService && a.KeyMadeBy != "" {
		return parseID(a.KeyMadeBy)
	}
	return nil
}

func parseID(s string) *uuid.UUID {
	id, err := uuid.Parse(s)
	if err != nil {
		return nil
	}
	return &id
}

// Action names a recorded change (documented in openapi.yaml's AuditEntry.action).
type Action string

// The recorded actions.
const (
	APIKeyCreated            Action = "api_key.created"
	APIKeyRevoked            Action = "api_key.revoked"
	WebhookEndpointCreated   Action = "webhook_endpoint.created"
	WebhookEndpointDeleted   Action = "webhook_endpoint.deleted"
	WebhookSecretRotated     Action = "webhook_endpoint.secret_rotated"
	WithdrawalCreated        Action = "withdrawal.created"
	WithdrawalCancelled      Action = "withdrawal.cancelled"
	WithdrawalConfigUpdated  Action = "settings.withdrawal_config_updated"
	WithdrawalsEnabledChange Action = "settings.withdrawals_enabled_changed"
	AcceptedAssetsUpdated    Action = "settings.accepted_assets_updated"
	MemberRoleChanged        Action = "member.role_changed"
	MemberRemoved            Action = "member.removed"
	InvitationCreated        Action = "invitation.created"
	InvitationRevoked        Action = "invitation.revoked"
	InvitationAccepted       Action = "invitation.accepted"
	MemberJoined             Action = "member.joined"
	Require2FAChanged        Action = "settings.require_2fa_changed"
	ProfileUpdated           Action = "settings.profile_updated"

	// A person's own sign-ins and security, recorded once for each merchant they are a member
	// of (the team sees what its members' accounts do).
	SignedIn         Action = "auth.signed_in"
	SignInFailed     Action = "auth.sign_in_failed"
	SignedOut        Action = "auth.signed_out"
	SessionsRevoked  Action = "auth.sessions_revoked"
	PasswordChanged  Action = "auth.password_changed"
	SteppedUp        Action = "auth.step_up"
	TOTPEnabled      Action = "security.totp_enabled"
	TOTPDisabled     Action = "security.totp_disabled"
	RecoveryCodeUsed Action = "security.recovery_codes_used"
	PasskeyAdded     Action = "security.passkey_added"
	PasskeyRemoved   Action = "security.passkey_removed"

	// Refunds and the payout policy (issue 23).
	RefundCreated         Action = "refund.created"
	RefundCancelled       Action = "refund.cancelled"
	RefundClaimed         Action = "refund.claimed" // the customer gave the address (actor: system, details say how)
	RefundApproved        Action = "refund.approved"
	RefundRejected        Action = "refund.rejected"
	WithdrawalApproved    Action = "withdrawal.approved"
	WithdrawalRejected    Action = "withdrawal.rejected"
	PayoutSettingsUpdated Action = "settings.payout_settings_updated"
	AddressBookAdded      Action = "address_book.entry_added"
	AddressBookRemoved    Action = "address_book.entry_removed"
	RecipientSanctioned   Action = "payout.recipient_sanctioned" // a refused withdrawal, refund or saved address
)

// Target types.
const (
	TargetAPIKey          = "api_key"
	TargetWebhookEndpoint = "webhook_endpoint"
	TargetWithdrawal      = "withdrawal"
	TargetMerchant        = "merchant"
	TargetUser            = "user"
	TargetInvitation      = "invitation"
	TargetRefund          = "refund"
	TargetAddressBook     = "address_book_entry"
)

// Event is one change to record.
type Event struct {
	MerchantID uuid.UUID
	Action     Action
	TargetType string
	TargetID   string
	Details    map[string]any // never a secret (URLHost keeps a URL's host only)
}

// Append records ev, acted by ctx's actor, in tx: the transaction of the change itself.
func Append(ctx context.Context, tx *store.Tx, ev Event) error {
	a := ActorFrom(ctx)
	return tx.AppendAudit(store.AuditEntry{MerchantID: ev.MerchantID, ActorKind: string(a.Kind), ActorID: a.ID,
		ActorLabel: clip(a.Label, 320), IP: clip(a.IP, 64), UserAgent: clip(a.UserAgent, 512),
		Action: string(ev.Action), TargetType: ev.TargetType, TargetID: ev.TargetID, Details: ev.Details})
}

// URLHost is what the log keeps of a URL: its host (a path or query may carry a token).
func URLHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// clip bounds a client-chosen text (a user agent) to n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
