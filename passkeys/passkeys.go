// Package passkeys registers WebAuthn credentials (passkeys) and checks them as a second factor
// after the password (issue 22), with github.com/go-webauthn/webauthn. Every ceremony begun is
// stored in the database (store.Ceremony), single-use and valid CeremonyTTL, so one `serve`
// process may begin what another finishes.
package passkeys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// CeremonyTTL is how long a ceremony begun may be finished.
const CeremonyTTL = 5 * time.Minute

// MaxNameLength bounds a passkey's name (characters).
const MaxNameLength = 64

// ErrConfig is wrapped by every relying-party configuration error.
var ErrConfig = errors.New("invalid WebAuthn relying party configuration")

// RelyingParty is who the passkeys are for: the RP id (a registrable domain, the public URL's
// host unless overridden) and the origins a ceremony may come from (the public URL's origin
// unless overridden).
type RelyingParty struct {
	ID      string
	Origins []string
}

// RelyingPartyFor derives the relying party from the public base URL (PAYMENTS_PUBLIC_URL), with
// the overrides PAYMENTS_WEBAUTHN_RP_ID and PAYMENTS_WEBAUTHN_ORIGINS (comma-separated) when set.
func RelyingPartyFor(publicBaseURL, rpID, origins string) (RelyingParty, error) {
	var rp RelyingParty
	for _, o := range strings.Split(origins, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			rp.Origins = append(rp.Origins, o)
		}
	}
	rp.ID = strings.TrimSpace(rpID)
	if rp.ID == "" || len(rp.Origins) == 0 {
		u, err := url.Parse(publicBaseURL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return RelyingParty{}, fmt.Errorf("%w: the public base URL %q is not an http(s) URL (set PAYMENTS_WEBAUTHN_RP_ID and PAYMENTS_WEBAUTHN_ORIGINS)", ErrConfig, publicBaseURL)
		}
		if rp.ID == "" {
			rp.ID = u.Hostname()
		}
		if len(rp.Origins) == 0 {
			rp.Origins = []string{u.Scheme + "://" + u.Host}
		}
	}
	if net.ParseIP(strings.Trim(rp.ID, "[]")) != nil {
		return RelyingParty{}, fmt.Errorf("%w: the RP id %q is an IP address; WebAuthn needs a domain (set PAYMENTS_WEBAUTHN_RP_ID, or a public URL with a host name)", ErrConfig, rp.ID)
	}
	for _, o := range rp.Origins {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Path != "" {
			return RelyingParty{}, fmt.Errorf("%w: the origin %q is not scheme://host[:port]", ErrConfig, o)
		}
		if h := u.Hostname(); h != rp.ID && !strings.HasSuffix(h, "."+rp.ID) {
			return RelyingParty{}, fmt.Errorf("%w: the origin %q is not on the RP id %q or a subdomain of it", ErrConfig, o, rp.ID)
		}
	}
	return rp, nil
}

// Service registers passkeys and checks them.
type Service struct {
	Store *store.Store
	Now   func() time.Time
	wa    *webauthn.WebAuthn
}

// New builds the service of a relying party.
func New(st *store.Store, rp RelyingParty, now func() time.Time) (*Service, error) {
	wa, err := webauthn.New(&webauthn.Config{RPID: rp.ID, RPDisplayName: "paymentsd", RPOrigins: rp.Origins,
		AttestationPreference: protocol.PreferNoAttestation})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if now == nil {
		now = time.Now
	}
	return &Service{Store: st, Now: now, wa: wa}, nil
}

// person is a user as go-webauthn sees one: the handle is the user id's 16 bytes (never shown;
// the email is the name the authenticator displays).
type person struct {
	u     store.User
	creds []webauthn.Credential
}

func (p person) WebAuthnID() []byte                         { return p.u.ID[:] }
func (p person) WebAuthnName() string                       { return p.u.Email }
func (p person) WebAuthnDisplayName() string                { return p.u.Email }
func (p person) WebAuthnCredentials() []webauthn.Credential { return p.creds }

// credential is a stored passkey as go-webauthn's credential record.
func credential(k store.Passkey) webauthn.Credential {
	var ts []protocol.AuthenticatorTransport
	for _, t := range strings.Split(k.Transports, ",") {
		if t != "" {
			ts = append(ts, protocol.AuthenticatorTransport(t))
		}
	}
	return webauthn.Credential{ID: k.CredentialID, PublicKey: k.PublicKey, AttestationType: k.AttestationType, Transport: ts,
		Flags:         webauthn.NewCredentialFlags(protocol.AuthenticatorFlags(k.Flags)),
		Authenticator: webauthn.Authenticator{AAGUID: k.AAGUID[:], SignCount: k.SignCount}}
}

func (s *Service) person(ctx context.Context, u store.User) (person, []store.Passkey, error) {
	keys, err := s.Store.Read(ctx).UserPasskeys(u.ID)
	if err != nil {
		return person{}, nil, err
	}
	p := person{u: u}
	for _, k := range keys {
		p.creds = append(p.creds, credential(k))
	}
	return p, keys, nil
}

// begin stores a ceremony (bound to a sign-in or session) and answers the options the browser passes to navigator.credentials.
func (s *Service) begin(ctx context.Context, u store.User, kind store.CeremonyKind, boundTo *uuid.UUID, options any, sd *webauthn.SessionData) (json.RawMessage, error) {
	raw, err := json.Marshal(sd)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	c := store.Ceremony{ID: uuid.Must(uuid.NewV7()), Challenge: sd.Challenge, UserID: u.ID, Kind: kind, Session: string(raw),
		BoundTo: boundTo, CreatedAt: now, ExpiresAt: now.Add(CeremonyTTL)}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertCeremony(c, now.Add(-time.Hour)) }); err != nil {
		return nil, err
	}
	return json.Marshal(options)
}

// spend takes the ceremony a response answers (by the challenge in its clientDataJSON): single-use,
// of this user and kind, not expired — anything else is refused.
func (s *Service) spend(ctx context.Context, challenge string, userID uuid.UUID, kind store.CeremonyKind) (store.Ceremony, webauthn.SessionData, error) {
	var c store.Ceremony
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		c, err = tx.SpendCeremony(challenge, userID, kind, s.Now())
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return c, webauthn.SessionData{}, fmt.Errorf("%w: no such ceremony (unknown, used already or expired: begin again)", domain.ErrPasskeyRefused)
	}
	if err != nil {
		return c, webauthn.SessionData{}, err
	}
	var sd webauthn.SessionData
	if err := json.Unmarshal([]byte(c.Session), &sd); err != nil {
		return c, sd, err
	}
	sd.Expires = time.Time{} // the ceremony's expiry is the database's, on the service's clock
	return c, sd, nil
}

// refused wraps a go-webauthn verification failure (its details name the check that failed).
func refused(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return fmt.Errorf("%w: %s", domain.ErrPasskeyRefused, pe.Details)
	}
	return fmt.Errorf("%w: %v", domain.ErrPasskeyRefused, err)
}

// BeginRegistration starts registering a passkey for a user: the creation options
// ({"publicKey": PublicKeyCredentialCreationOptions}, WebAuthn's JSON form). The user's passkeys
// are excluded (an authenticator registers once); a discoverable credential is preferred, user
// verification preferred, no attestation asked for.
func (s *Service) BeginRegistration(ctx context.Context, u store.User) (json.RawMessage, error) {
	p, _, err := s.person(ctx, u)
	if err != nil {
		return nil, err
	}
	var exclude []protocol.CredentialDescriptor
	for _, c := range p.creds {
		exclude = append(exclude, c.Descriptor())
	}
	opts, sd, err := s.wa.BeginRegistration(p, webauthn.WithExclusions(exclude),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{ResidentKey: protocol.ResidentKeyRequirementPreferred,
			UserVerification: protocol.VerificationPreferred}),
		webauthn.WithConveyancePreference(protocol.PreferNoAttestation))
	if err != nil {
		return nil, err
	}
	return s.begin(ctx, u, store.CeremonyRegister, nil, opts, sd)
}

// FinishRegistration verifies the browser's answer (PublicKeyCredential.toJSON()) to a
// registration begun and stores the passkey under name.
func (s *Service) FinishRegistration(ctx context.Context, u store.User, name string, response json.RawMessage) (store.Passkey, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > MaxNameLength {
		return store.Passkey{}, domain.Invalid(domain.CodeParameterInvalid, "name", "a passkey's name has 1 to %d characters", MaxNameLength)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return store.Passkey{}, refused(err)
	}
	_, sd, err := s.spend(ctx, parsed.Response.CollectedClientData.Challenge, u.ID, store.CeremonyRegister)
	if err != nil {
		return store.Passkey{}, err
	}
	p, _, err := s.person(ctx, u)
	if err != nil {
		return store.Passkey{}, err
	}
	cred, err := s.wa.CreateCredential(p, sd, parsed)
	if err != nil {
		return store.Passkey{}, refused(err)
	}
	aaguid, err := uuid.FromBytes(cred.Authenticator.AAGUID)
	if err != nil {
		aaguid = uuid.Nil
	}
	ts := make([]string, 0, len(cred.Transport))
	for _, t := range cred.Transport {
		if t != "" && !strings.Contains(string(t), ",") {
			ts = append(ts, string(t))
		}
	}
	k := store.Passkey{ID: uuid.Must(uuid.NewV7()), UserID: u.ID, CredentialID: cred.ID, PublicKey: cred.PublicKey,
		SignCount: cred.Authenticator.SignCount, AAGUID: aaguid, Transports: strings.Join(ts, ","), AttestationType: cred.AttestationType,
		Flags: uint8(cred.Flags.ProtocolValue()), Name: name, CreatedAt: s.Now().UTC().Truncate(time.Microsecond)}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPasskey(k) })
	if errors.Is(err, store.ErrConflict) {
		return store.Passkey{}, domain.ErrPasskeyExists
	}
	return k, err
}

// List lists a user's passkeys, oldest first.
func (s *Service) List(ctx context.Context, userID uuid.UUID) ([]store.Passkey, error) {
	return s.Store.Read(ctx).UserPasskeys(userID)
}

// Count is the number of a user's passkeys (the sign-in's methods name `passkey` when above 0).
func (s *Service) Count(ctx context.Context, userID uuid.UUID) (int, error) {
	return s.Store.Read(ctx).CountPasskeys(userID)
}

// Delete removes a user's passkey.
func (s *Service) Delete(ctx context.Context, userID, id uuid.UUID) error {
	err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.DeletePasskey(userID, id) })
	if errors.Is(err, store.ErrNotFound) {
		return domain.ErrPasskeyNotFound
	}
	return err
}

// BeginLogin starts checking a passkey of the user: the request options ({"publicKey":
// PublicKeyCredentialRequestOptions}) listing the user's passkeys. boundTo is what the ceremony
// belongs to — the password step's challenge of a sign-in, or the session of a step-up — and
// FinishLogin must name it again. A user without a passkey is domain.ErrNoPasskey.
func (s *Service) BeginLogin(ctx context.Context, u store.User, boundTo uuid.UUID) (json.RawMessage, error) {
	p, _, err := s.person(ctx, u)
	if err != nil {
		return nil, err
	}
	if len(p.creds) == 0 {
		return nil, domain.ErrNoPasskey
	}
	opts, sd, err := s.wa.BeginLogin(p, webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return nil, err
	}
	return s.begin(ctx, u, store.CeremonyLogin, &boundTo, opts, sd)
}

// FinishLogin verifies the browser's assertion (PublicKeyCredential.toJSON()) for the ceremony
// begun for boundTo and advances the passkey's signature counter. A counter not
// above the stored one (unless both are 0: an authenticator that keeps none) is a cloned
// authenticator and refused, as is an assertion racing another with the same counter.
func (s *Service) FinishLogin(ctx context.Context, u store.User, boundTo uuid.UUID, response json.RawMessage) (store.Passkey, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return store.Passkey{}, refused(err)
	}
	c, sd, err := s.spend(ctx, parsed.Response.CollectedClientData.Challenge, u.ID, store.CeremonyLogin)
	if err != nil {
		return store.Passkey{}, err
	}
	if c.BoundTo == nil || *c.BoundTo != boundTo {
		return store.Passkey{}, fmt.Errorf("%w: the ceremony belongs to another sign-in or session", domain.ErrPasskeyRefused)
	}
	p, keys, err := s.person(ctx, u)
	if err != nil {
		return store.Passkey{}, err
	}
	cred, err := s.wa.ValidateLogin(p, sd, parsed)
	if err != nil {
		return store.Passkey{}, refused(err)
	}
	if cred.Authenticator.CloneWarning {
		return store.Passkey{}, fmt.Errorf("%w: the authenticator's signature counter did not advance (a cloned authenticator?)", domain.ErrPasskeyRefused)
	}
	var k store.Passkey
	for _, key := range keys {
		if string(key.CredentialID) == string(cred.ID) {
			k = key
		}
	}
	var ok bool
	now := s.Now()
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		ok, err = tx.UsePasskey(k.ID, k.SignCount, cred.Authenticator.SignCount, now)
		return err
	}); err != nil {
		return store.Passkey{}, err
	}
	if !ok {
		return store.Passkey{}, fmt.Errorf("%w: the passkey was used meanwhile", domain.ErrPasskeyRefused)
	}
	k.SignCount, k.LastUsedAt = cred.Authenticator.SignCount, &now
	return k, nil
}
