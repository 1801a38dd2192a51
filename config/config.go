// Package config owns the one typed configuration of paymentsd, loaded from flags and
// environment in cmd/paymentsd and passed down explicitly.
package config

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/settlement"
)

// DefaultDatabaseURL is the zero-setup embedded SQLite file.
const DefaultDatabaseURL = "data/paymentsd.db"

// Config is everything a paymentsd process needs.
type Config struct {
	Addr            string           // listen address
	AdminAddr       string           // pprof and /metrics listener (PAYMENTS_ADMIN_ADDR); empty: none
	DatabaseURL     string           // postgres://… or a SQLite path
	PublicBaseURL   string           // base of paymentUrl, e.g. https://pay.example.com
	Networks        chains.Networks  // which chains this deployment serves
	ResponseShape   settlement.Shape // schema | guide: the wire shape served and validated
	XPub            string           // deposit-address extended public key (m/44'/60'/0'/0); empty: a persisted dev key
	BackendWallet   string           // withdrawal hot-wallet address; empty: derived from the xpub
	QuoteTTL        time.Duration
	PaymentTTL      time.Duration
	MerchantFeeBps  int64
	IdempotencyTTL  time.Duration
	KeyCacheTTL     time.Duration // how long an authenticated secret key is remembered (revocation bound)
	ExpiryInterval  time.Duration // between expiry sweeps of quotes and payments
	Pricing         Pricing
	ShutdownGrace   time.Duration
	BodyReadTimeout time.Duration // a request body not received in this time is answered 408
	MaxBodyBytes    string        // Echo body-limit syntax, e.g. "1M"
	LogFormat       string        // text | json
	Role            Role          // what a serve process runs
	Chains          Chains
	Webhooks        Webhooks
	Dashboard       Dashboard
	// PAYMENTS_TRUSTED_PROXIES: peers whose X-Forwarded-For names the client; none: the TCP peer is.
	TrustedProxies []netip.Prefix
}

// Dashboard configures the dashboard API's bearer tokens beyond the built-in issuer.
type Dashboard struct {
	OIDCIssuer        string // PAYMENTS_OIDC_ISSUER: an external OpenID Connect issuer; empty: none
	OIDCAudience      string // PAYMENTS_OIDC_AUDIENCE: the aud its tokens must carry (required with an issuer)
	OIDCMerchantClaim string // PAYMENTS_OIDC_MERCHANT_CLAIM: the claim listing the merchant ids (default merchant_ids)
	OIDCModeClaim     string // PAYMENTS_OIDC_MODE_CLAIM: the claim naming the mode a token acts in, test or live (default mode; absent: test)
	OIDCRoleClaim     string // PAYMENTS_OIDC_ROLE_CLAIM: the claim naming a token's role, viewer, developer, admin or owner (default paymentsd_role; absent: the scope's role)
	// Sign-in with the OIDC provider (authorization code + PKCE): on when the issuer and a client id are set.
	OIDCClientID     string // PAYMENTS_OIDC_CLIENT_ID
	OIDCClientSecret string // PAYMENTS_OIDC_CLIENT_SECRET: empty for a public client
	OIDCRedirectURL  string // PAYMENTS_OIDC_REDIRECT_URL: default <public base URL>/v1/auth/oidc/callback
	OIDCName         string // PAYMENTS_OIDC_NAME: the provider's name on the sign-in button
	// Passkeys' relying party: by default the public base URL's host and origin.
	WebAuthnRPID    string // PAYMENTS_WEBAUTHN_RP_ID
	WebAuthnOrigins string // PAYMENTS_WEBAUTHN_ORIGINS: comma-separated origins
}

// Webhooks configures deliveries to merchants' endpoints.
type Webhooks struct {
	SecretsKey   string          // PAYMENTS_SECRETS_KEY: seals endpoints' signing secrets (the embedded default makes a key file)
	AllowPrivate bool            // PAYMENTS_WEBHOOKS_ALLOW_PRIVATE: endpoints on loopback/private addresses (development, tests)
	Schedule     []time.Duration // PAYMENTS_WEBHOOK_RETRY_SCHEDULE: the delays before each attempt (tests shorten it)
}

// Chains configures chain access, the watcher and the embedded devnet.
type Chains struct {
	RPCURLs        map[int64][]string // PAYMENTS_RPC_URLS: per chain id, URLs tried in order
	Confirmations  map[int64]int32    // PAYMENTS_CONFIRMATIONS: overrides of the catalogue's depths
	CatalogFile    string             // PAYMENTS_CATALOG_FILE: an operator's catalogue merged over the embedded one
	Devnet         string             // PAYMENTS_DEVNET: "off", or the address the embedded devnet serves on
	DevnetL2       string             // PAYMENTS_DEVNET_L2: "off" (or empty), or the address of the devnet's second chain (eip155:31337)
	DevnetBlock    time.Duration      // PAYMENTS_DEVNET_BLOCK_TIME: a block every this long
	WatchInterval  time.Duration      // PAYMENTS_WATCH_INTERVAL: between watcher rounds when caught up
	ReportWait     time.Duration      // PAYMENTS_TX_REPORT_WAIT: how long a reported transaction in the node's pool is waited for
	RPCTimeout     time.Duration      // PAYMENTS_RPC_TIMEOUT: one attempt of one JSON-RPC call
	ChainDownAfter time.Duration      // PAYMENTS_CHAIN_DOWN_AFTER: a chain without a successful call this long is down (not quoted)
	SanctionsFile  string             // PAYMENTS_RISK_SANCTIONS_FILE: one address a line; empty: none listed
	ServeUnwatched bool               // PAYMENTS_SERVE_UNWATCHED: also quote chains nothing watches (contract tests; manual settlement only)
	HotWalletKey   string             // PAYMENTS_HOT_WALLET_KEY: hex private key that signs payouts (never logged)
	HotKeystore    string             // PAYMENTS_HOT_WALLET_KEYSTORE: go-ethereum keystore file, with
	HotPassword    string             // PAYMENTS_HOT_WALLET_PASSWORD_FILE: its password
	PayoutBump     time.Duration      // PAYMENTS_PAYOUT_BUMP_AFTER: a payout not mined this long is re-signed at the same nonce with higher fees
	PayoutPause    time.Duration      // PAYMENTS_FAULT_PAUSE_AFTER_SIGN: fault tests only
	// The deposit key's private half, for a worker that sweeps (never the API): an extended
	// private key (PAYMENTS_DEPOSIT_XPRV) or a BIP-39 mnemonic in a file
	// (PAYMENTS_DEPOSIT_MNEMONIC_FILE). The embedded development key keeps its own in a file.
	DepositXPrv     string
	DepositMnemonic string          // the mnemonic file's path
	SweepMinUSD     decimal.Decimal // PAYMENTS_SWEEP_MIN_USD: an address's unswept value of a token that triggers a sweep
	SweepEvery      time.Duration   // PAYMENTS_SWEEP_INTERVAL: how often addresses are looked at (0: on request only)
	// Passive processes (operator commands) neither run the devnet nor dial the chains; they
	// serve the same chains a serve process would, by configuration alone.
	Passive bool
	// KeepStoredCatalog: a one-shot command writes the catalogue only into a database without one
	// (store.MigrateKeepingCatalog); serve and migrate bring it in line with the file.
	KeepStoredCatalog bool
}

// DevnetOn reports whether this process runs the embedded devnet.
func (c Chains) DevnetOn() bool { return c.Devnet != "" && c.Devnet != "off" }

// DevnetL2On reports whether this process runs the devnet's second chain.
func (c Chains) DevnetL2On() bool { return c.DevnetL2 != "" && c.DevnetL2 != "off" }

// Pricing selects and tunes the price source.
type Pricing struct {
	Source       string // static | coingecko
	BaseURL      string
	APIKey       string
	TTL          time.Duration
	MaxStaleness time.Duration
}

// IsEmbedded reports whether the database is the embedded SQLite (not PostgreSQL).
func (c Config) IsEmbedded() bool {
	return !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://")
}

// Role is what a serve process runs (--role, PAYMENTS_ROLE).
type Role string

// Roles: the API (no background work, no keys, no chain connections), the worker (chain
// watchers, payouts, expiry; its HTTP listener answers only /healthz, /readyz and /metrics), or
// both.
const (
	RoleAll    Role = "all"
	RoleAPI    Role = "api"
	RoleWorker Role = "worker"
)

// ParseRole validates a --role value.
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(strings.TrimSpace(s))); r {
	case RoleAll, RoleAPI, RoleWorker:
		return r, nil
	}
	return "", fmt.Errorf("role must be api, worker or all (got %q)", s)
}

// Background reports whether the role runs the background work.
func (r Role) Background() bool { return r != RoleAPI }
