// Package webauthntest is a software WebAuthn authenticator for tests: an ECDSA P-256 key,
// "none" attestation, and the client's part (clientDataJSON) of both ceremonies, so tests can
// register a passkey and sign in with it as a browser would.
package webauthntest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// Authenticator is one credential of a software authenticator.
type Authenticator struct {
	Origin       string // the origin the "browser" reports in clientDataJSON
	Key          *ecdsa.PrivateKey
	CredentialID []byte
	AAGUID       [16]byte
	// Counter is the signature counter: incremented before each assertion (set it lower to act
	// as a clone); Zero keeps it at 0, as authenticators without a counter do.
	Counter uint32
	Zero    bool
	// RPID overrides the RP id hashed into the authenticator data (default: the options' rp.id).
	RPID string
}

// New makes an authenticator reporting origin.
func New(origin string) (*Authenticator, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	a := &Authenticator{Origin: origin, Key: k, CredentialID: id}
	copy(a.AAGUID[:], "paymentsd-soft-1")
	return a, nil
}

var b64 = base64.RawURLEncoding

// The options' members the authenticator reads ({"publicKey": {...}}).
type options struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

func (a *Authenticator) clientData(typ, challenge string) []byte {
	raw, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.Origin, "crossOrigin": false})
	return raw
}

func (a *Authenticator) authData(rpID string, flags byte, counter uint32, attested []byte) []byte {
	if a.RPID != "" {
		rpID = a.RPID
	}
	h := sha256.Sum256([]byte(rpID))
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, counter)
	return append(out, attested...)
}

// coseKey is the credential public key in COSE (EC2, ES256).
func (a *Authenticator) coseKey() ([]byte, error) {
	em, err := cbor.CTAP2EncOptions().EncMode()
	if err != nil {
		return nil, err
	}
	raw, err := a.Key.PublicKey.Bytes() // uncompressed point: 0x04 || X || Y, 32 bytes each
	if err != nil {
		return nil, err
	}
	return em.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: raw[1:33], -3: raw[33:65]})
}

// Register answers creation options ({"publicKey": …}, as the begin operation returns them)
// with what PublicKeyCredential.toJSON() gives a registration.
func (a *Authenticator) Register(optionsJSON []byte) (json.RawMessage, error) {
	var o options
	if err := json.Unmarshal(optionsJSON, &o); err != nil {
		return nil, err
	}
	if o.PublicKey.Challenge == "" || o.PublicKey.RP.ID == "" {
		return nil, fmt.Errorf("creation options without challenge or rp.id: %s", optionsJSON)
	}
	key, err := a.coseKey()
	if err != nil {
		return nil, err
	}
	attested := append(append([]byte{}, a.AAGUID[:]...), byte(len(a.CredentialID)>>8), byte(len(a.CredentialID)))
	attested = append(append(attested, a.CredentialID...), key...)
	ad := a.authData(o.PublicKey.RP.ID, flagUP|flagUV|flagAT, a.Counter, attested)
	em, err := cbor.CTAP2EncOptions().EncMode()
	if err != nil {
		return nil, err
	}
	obj, err := em.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		return nil, err
	}
	id := b64.EncodeToString(a.CredentialID)
	return json.Marshal(map[string]any{"id": id, "rawId": id, "type": "public-key", "authenticatorAttachment": "platform",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(a.clientData("webauthn.create", o.PublicKey.Challenge)),
			"attestationObject": b64.EncodeToString(obj), "transports": []string{"internal", "hybrid"}}})
}

// Assert answers request options ({"publicKey": …}) with what PublicKeyCredential.toJSON()
// gives an assertion, the counter advanced first (unless Zero).
func (a *Authenticator) Assert(optionsJSON []byte) (json.RawMessage, error) {
	var o options
	if err := json.Unmarshal(optionsJSON, &o); err != nil {
		return nil, err
	}
	if o.PublicKey.Challenge == "" || o.PublicKey.RPID == "" {
		return nil, fmt.Errorf("request options without challenge or rpId: %s", optionsJSON)
	}
	if !a.Zero {
		a.Counter++
	}
	ad := a.authData(o.PublicKey.RPID, flagUP|flagUV, a.Counter, nil)
	cd := a.clientData("webauthn.get", o.PublicKey.Challenge)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.Key, digest[:])
	if err != nil {
		return nil, err
	}
	id := b64.EncodeToString(a.CredentialID)
	return json.Marshal(map[string]any{"id": id, "rawId": id, "type": "public-key", "authenticatorAttachment": "platform",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(ad),
			"signature": b64.EncodeToString(sig)}})
}
