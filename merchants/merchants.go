// Package merchants owns merchants, their secret keys (generated, hashed, revoked, checked) and
// their withdrawal configuration.
package merchants

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Withdrawal defaults for a new merchant: the spec's bounds, USDC, every served chain that has it.
const (
	DefaultWithdrawalToken = "USDC"
	DefaultWithdrawalMin   = 100
	DefaultWithdrawalMax   = 100_000_000
	keyPrefixLen           = 16 // "sk_live_" + 8 random characters: enough to tell keys apart, useless to an attacker
)

// Service manages merchants and keys.
type Service struct {
	Store         *store.Store
	Networks      chains.Networks
	Catalog       domain.Catalog
	BackendWallet string // default withdrawal hot-wallet address for new merchants
	Now           func() time.Time
	// KeyCacheTTL bounds how long an authenticated key is remembered: a key revoked elsewhere
	// stops working here within it. Zero disables the cache.
	KeyCacheTTL time.Duration

	cacheOnce sync.Once
	cache     *keyCache
}

func (s *Service) keys() *keyCache {
	s.cacheOnce.Do(func() { s.cache = newKeyCache(s.KeyCacheTTL, 100_000) })
	return s.cache
}

// CreateInput describes a new merchant.
type CreateInput struct {
	Name               string
	ShortName          string
	LogoURL            *string
	DepositsEnabled    bool
	WithdrawalsEnabled bool
	// Mode is the mode of the first secret key; the zero value is test (touching live money is
	// always explicit).
	Mode domain.Mode
}

// Created is a new merchant with its first secret key, shown once.
type Created struct {
	Merchant  domain.Merchant
	SecretKey string
	KeyPrefix string
	Key       domain.APIKey // as listed (no hash)
}

// Create makes a merchant, its first key (of in.Mode), its balance locks and its default
// withdrawal configuration in one transaction. The configuration lists every served chain with
// the default token, of both modes: each mode sees and pays out to its own chains only.
func (s *Service) Create(ctx context.Context, in CreateInput) (Created, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return Created{}, domain.Invalid(domain.CodeParameterMissing, "name", "a merchant needs a name")
	}
	short := strings.TrimSpace(in.ShortName)
	if short == "" {
		short = name
	}
	if in.LogoURL != nil {
		if err := CheckLogoURL(*in.LogoURL); err != nil {
			return Created{}, err
		}
	}
	now := s.Now()
	m := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: name, ShortName: short, LogoURL: in.LogoURL,
		DepositsEnabled: in.DepositsEnabled, WithdrawalsEnabled: in.WithdrawalsEnabled, CreatedAt: now}
	var out Created
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateMerchant(m); err != nil {
			return err
		}
		cfg := domain.WithdrawalConfig{MerchantID: m.ID, TokenSymbol: DefaultWithdrawalToken,
			MinAmountCents: DefaultWithdrawalMin, MaxAmountCents: DefaultWithdrawalMax,
			BackendWalletAddress: s.BackendWallet, UpdatedAt: now}
		for _, c := range s.Catalog.Chains {
			if _, ok := s.Catalog.AcceptedToken(c.ID, DefaultWithdrawalToken); ok {
				cfg.ChainIDs = append(cfg.ChainIDs, c.ID)
			}
		}
		if err := tx.PutWithdrawalConfig(cfg); err != nil {
			return err
		}
		if err := tx.CreateBalanceLocks(m.ID); err != nil {
			return err
		}
		var err error
		out, err = s.createKey(tx, m, in.Mode.Norm(), now, nil) // the command line: no person
		return err
	})
	return out, err
}

// CreateKey issues another secret key for a merchant, of a mode (zero: test).
func (s *Service) CreateKey(ctx context.Context, merchantID uuid.UUID, mode domain.Mode) (Created, error) {
	var out Created
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		m, err := tx.GetMerchant(merchantID)
		if errors.Is(err, store.ErrNotFound) {
			return domain.ErrMerchantNotFound
		}
		if err != nil {
			return err
		}
		if out, err = s.createKey(tx, m, mode.Norm(), s.Now(), audit.PersonOf(ctx)); err != nil {
			return err
		}
		if out.Key.CreatedBy != nil {
			email := audit.ActorFrom(ctx).Label // a person actor's label is their email
			out.Key.CreatedByEmail = &email
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.APIKeyCreated, TargetType: audit.TargetAPIKey,
			TargetID: out.Key.ID.String(), Details: map[string]any{"mode": string(out.Key.Mode.Norm()), "prefix": out.KeyPrefix}})
	})
	return out, err
}

// createKey makes a key; madeBy is the person making it from the dashboard (nil otherwise).
func (s *Service) createKey(tx *store.Tx, m domain.Merchant, mode domain.Mode, now time.Time, madeBy *uuid.UUID) (Created, error) {
	key, err := newSecretKey(mode)
	if err != nil {
		return Created{}, err
	}
	prefix := key[:keyPrefixLen]
	k := domain.APIKey{ID: uuid.Must(uuid.NewV7()), MerchantID: m.ID, Prefix: prefix, Hash: HashKey(key), Mode: mode, CreatedAt: now, CreatedBy: madeBy}
	err = tx.CreateAPIKey(k)
	k.Hash = nil
	m.Mode = mode
	return Created{Merchant: m, SecretKey: key, KeyPrefix: prefix, Key: k}, err
}

// Keys lists the merchant's keys a credential of mode manages, newest first (prefixes, modes and
// dates; never the keys or hashes).
func (s *Service) Keys(ctx context.Context, merchantID uuid.UUID, mode domain.Mode) ([]domain.APIKey, error) {
	return s.Store.Read(ctx).APIKeys(merchantID, managedModes(mode)...)
}

// RevokeKey revokes one of the merchant's keys a credential of mode manages: at once in this
// process, within KeyCacheTTL in others. ErrAPIKeyNotFound when there is no such key.
func (s *Service) RevokeKey(ctx context.Context, merchantID uuid.UUID, mode domain.Mode, keyID uuid.UUID) (domain.APIKey, error) {
	var k domain.APIKey
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var (
			err     error
			revoked bool
		)
		if k, revoked, err = tx.RevokeAPIKey(merchantID, managedModes(mode), keyID, s.Now()); err != nil || !revoked {
			return err // revoking a revoked key changes nothing, and records nothing
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.APIKeyRevoked, TargetType: audit.TargetAPIKey,
			TargetID: k.ID.String(), Details: map[string]any{"mode": string(k.Mode.Norm()), "prefix": k.Prefix}})
	})
	s.keys().flush()
	if errors.Is(err, store.ErrNotFound) {
		return domain.APIKey{}, domain.ErrAPIKeyNotFound
	}
	return k, err
}

// RevokeKeys revokes the active keys with this display prefix.
func (s *Service) RevokeKeys(ctx context.Context, prefix string) (int64, error) {
	var n int64
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		keys, err := tx.ActiveKeysByPrefix(prefix)
		if err != nil {
			return err
		}
		if n, err = tx.RevokeKeysByPrefix(prefix, s.Now()); err != nil {
			return err
		}
		for _, k := range keys {
			if err := audit.Append(ctx, tx, audit.Event{MerchantID: k.MerchantID, Action: audit.APIKeyRevoked, TargetType: audit.TargetAPIKey,
				TargetID: k.ID.String(), Details: map[string]any{"mode": string(k.Mode.Norm()), "prefix": k.Prefix}}); err != nil {
				return err
			}
		}
		return nil
	})
	s.keys().flush() // this process stops accepting it at once; others within their TTL
	return n, err
}

// Authenticate resolves a presented secret key to its merchant. Unknown, revoked and empty keys
// all answer ErrInvalidAPIKey, indistinguishably.
func (s *Service) Authenticate(ctx context.Context, key string) (domain.Merchant, error) {
	if key == "" || len(key) > 256 {
		return domain.Merchant{}, domain.ErrInvalidAPIKey
	}
	hash := sha256.Sum256([]byte(key))
	now := s.Now()
	if m, ok := s.keys().get(hash, now); ok {
		return m, nil
	}
	m, err := s.Store.Read(ctx).MerchantByKeyHash(hash[:])
	if errors.Is(err, store.ErrNotFound) {
		return domain.Merchant{}, domain.ErrInvalidAPIKey
	}
	if err != nil {
		return domain.Merchant{}, err
	}
	s.keys().put(hash, m, now)
	return m, nil
}

// WithdrawalConfig reads a merchant's withdrawal configuration.
func (s *Service) WithdrawalConfig(ctx context.Context, merchantID uuid.UUID) (domain.WithdrawalConfig, error) {
	return s.Store.Read(ctx).GetWithdrawalConfig(merchantID)
}

// SetWithdrawalConfig validates and replaces a merchant's withdrawal configuration.
func (s *Service) SetWithdrawalConfig(ctx context.Context, cfg domain.WithdrawalConfig) error {
	if cfg.MinAmountCents < DefaultWithdrawalMin || cfg.MaxAmountCents > DefaultWithdrawalMax || cfg.MinAmountCents > cfg.MaxAmountCents {
		return domain.Invalid(domain.CodeParameterInvalid, "minAmountInCents", "withdrawal limits must satisfy %d <= min <= max <= %d",
			DefaultWithdrawalMin, DefaultWithdrawalMax)
	}
	if len(cfg.ChainIDs) == 0 {
		return domain.Invalid(domain.CodeParameterInvalid, "chainIds", "at least one chain")
	}
	// A chain named twice is named once (it is one row of the configuration, not two).
	slices.Sort(cfg.ChainIDs)
	cfg.ChainIDs = slices.Compact(cfg.ChainIDs)
	cfg.UpdatedAt = s.Now()
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GetMerchant(cfg.MerchantID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return domain.ErrMerchantNotFound
			}
			return err
		}
		for _, id := range cfg.ChainIDs {
			if _, ok := s.Catalog.AcceptedToken(id, cfg.TokenSymbol); !ok {
				return domain.Invalid(domain.CodeChainNotSupported, "chainIds", "chain %s has no active %s token, or this deployment does not serve it",
					chains.CAIP2(id), cfg.TokenSymbol)
			}
		}
		if err := tx.PutWithdrawalConfig(cfg); err != nil {
			return err
		}
		chainIDs := make([]string, len(cfg.ChainIDs))
		for i, id := range cfg.ChainIDs {
			chainIDs[i] = chains.CAIP2(id)
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: cfg.MerchantID, Action: audit.WithdrawalConfigUpdated, TargetType: audit.TargetMerchant,
			TargetID: cfg.MerchantID.String(), Details: map[string]any{"chainIds": chainIDs, "tokenSymbol": cfg.TokenSymbol,
				"minAmountInCents": cfg.MinAmountCents, "maxAmountInCents": cfg.MaxAmountCents}})
	})
}

// SetWithdrawalsEnabled turns a merchant's withdrawals on or off.
func (s *Service) SetWithdrawalsEnabled(ctx context.Context, merchantID uuid.UUID, on bool) error {
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetWithdrawalsEnabled(merchantID, on); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.WithdrawalsEnabledChange, TargetType: audit.TargetMerchant,
			TargetID: merchantID.String(), Details: map[string]any{"withdrawalsEnabled": on}})
	})
	if errors.Is(err, store.ErrNotFound) {
		return domain.ErrMerchantNotFound
	}
	return err
}

// HashKey is the stored form of a secret key. Keys carry 256 random bits, so a fast hash is
// enough: there is nothing to brute-force.
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// newSecretKey makes a key whose prefix names its mode (sk_live_ or sk_test_); the stored mode,
// not the prefix, decides what the key may touch.
func newSecretKey(mode domain.Mode) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "sk_" + string(mode.Norm()) + "_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// Get reads a merchant.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (domain.Merchant, error) {
	m, err := s.Store.Read(ctx).GetMerchant(id)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Merchant{}, domain.ErrMerchantNotFound
	}
	return m, err
}

// Balance is a merchant's available balance in one mode and its withdrawals not yet paid, per
// chain and token.
func (s *Service) Balance(ctx context.Context, id uuid.UUID, mode domain.Mode) (int64, []store.PendingPayout, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return 0, nil, err
	}
	avail, err := s.Store.Read(ctx).AvailableBalance(id, mode.Norm())
	if err != nil {
		return 0, nil, err
	}
	pending, err := s.Store.Read(ctx).PendingPayouts(id, mode.Norm())
	return avail, pending, err
}

// managedModes are the modes of the keys a credential of mode lists and revokes: live access
// manages both (it may make keys of both), test access only test keys — it may never touch, even
// revoke, what moves live money.
func managedModes(mode domain.Mode) []domain.Mode {
	if mode.Live() {
		return []domain.Mode{domain.ModeLive, domain.ModeTest}
	}
	return []domain.Mode{domain.ModeTest}
}
