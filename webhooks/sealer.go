package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Sealer keeps endpoints' signing secrets encrypted at rest: the database holds only what
// Seal returns. (A signing secret must be recovered to sign, so it cannot be hashed like an API
// key.)
type Sealer interface {
	Seal(plain []byte) (string, error)
	Open(sealed string) ([]byte, error)
}

// AESSealer seals with AES-256-GCM under one key: "v1:" + base64(nonce ‖ ciphertext ‖ tag).
type AESSealer struct {
	aead cipher.AEAD
}

// ErrNoSecretsKey: a deployment on PostgreSQL configures PAYMENTS_SECRETS_KEY to keep webhook
// secrets (the embedded default makes its own key file).
var ErrNoSecretsKey = errors.New("webhooks need PAYMENTS_SECRETS_KEY (32 random bytes, hex) to keep signing secrets encrypted")

// ParseKey reads a 32-byte key written as 64 hex digits or standard base64.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	return nil, errors.New("PAYMENTS_SECRETS_KEY must be 32 bytes as 64 hex digits or base64")
}

// NewAESSealer makes a sealer from a 32-byte key.
func NewAESSealer(key []byte) (*AESSealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("webhooks: a secrets key is 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &AESSealer{aead: aead}, nil
}

// Seal encrypts plain with a fresh random nonce.
func (s *AESSealer) Seal(plain []byte) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return "v1:" + base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, nil)), nil
}

// Open decrypts what Seal made; a wrong key or altered text fails.
func (s *AESSealer) Open(sealed string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	if err != nil || !strings.HasPrefix(sealed, "v1:") || len(raw) < s.aead.NonceSize() {
		return nil, errors.New("webhooks: a sealed secret is malformed")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return nil, errors.New("webhooks: a sealed secret does not open with this key (PAYMENTS_SECRETS_KEY changed?)")
	}
	return plain, nil
}
