package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/settlement"
)

// env reads an environment variable with a default.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// envParsed reads a typed environment variable; a malformed value is a startup error.
func envParsed[T any](name string, def T, parse func(string) (T, error)) (T, error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return def, nil
	}
	out, err := parse(v)
	if err != nil {
		return def, fmt.Errorf("%s=%q: %w", name, v, err)
	}
	return out, nil
}

// commonFlags registers --database-url (env DATABASE_URL), shared by every subcommand.
func commonFlags(fs *flag.FlagSet) *string {
	return fs.String("database-url", env("DATABASE_URL", config.DefaultDatabaseURL),
		"postgres://… URL or SQLite file path (env DATABASE_URL)")
}

// loadConfig builds the one typed config from flags already parsed and the environment.
func loadConfig(databaseURL, addr, networks, publicURL, shape string) (config.Config, error) {
	c := config.Config{Addr: addr, DatabaseURL: databaseURL, PublicBaseURL: publicURL, XPub: env("PAYMENTS_XPUB", ""),
		BackendWallet: env("PAYMENTS_BACKEND_WALLET", ""), MaxBodyBytes: env("PAYMENTS_MAX_BODY", "1M"),
		LogFormat: env("PAYMENTS_LOG_FORMAT", "text"), AdminAddr: env("PAYMENTS_ADMIN_ADDR", "")}
	defNetworks, defPricing := "mainnet", "coingecko"
	if c.IsEmbedded() {
		defNetworks, defPricing = "all", "static" // the zero-setup default shows every chain and needs no network
	}
	if networks == "" {
		networks = env("PAYMENTS_NETWORKS", defNetworks)
	}
	var err error
	if c.Networks, err = chains.ParseNetworks(networks); err != nil {
		return c, err
	}
	if shape == "" {
		shape = env("PAYMENTS_RESPONSE_SHAPE", string(settlement.Schema))
	}
	if c.ResponseShape, err = settlement.ParseShape(shape); err != nil {
		return c, err
	}
	dur := func(name string, def time.Duration) time.Duration {
		if err != nil {
			return def
		}
		var d time.Duration
		d, err = envParsed(name, def, time.ParseDuration)
		return d
	}
	c.QuoteTTL = dur("PAYMENTS_QUOTE_TTL", 15*time.Minute)
	c.PaymentTTL = dur("PAYMENTS_PAYMENT_TTL", 24*time.Hour)
	c.IdempotencyTTL = dur("PAYMENTS_IDEMPOTENCY_TTL", 24*time.Hour)
	c.ShutdownGrace = dur("PAYMENTS_SHUTDOWN_GRACE", 15*time.Second)
	c.ExpiryInterval = dur("PAYMENTS_EXPIRY_INTERVAL", 5*time.Second)
	c.KeyCacheTTL = dur("PAYMENTS_KEY_CACHE_TTL", time.Second)
	c.BodyReadTimeout = dur("PAYMENTS_BODY_READ_TIMEOUT", 10*time.Second)
	c.Pricing = config.Pricing{Source: env("PAYMENTS_PRICING", defPricing), BaseURL: env("PAYMENTS_COINGECKO_URL", ""),
		APIKey: env("PAYMENTS_COINGECKO_API_KEY", ""), TTL: dur("PAYMENTS_PRICE_TTL", time.Minute),
		MaxStaleness: dur("PAYMENTS_PRICE_MAX_STALENESS", 5*time.Minute)}
	if err != nil {
		return c, err
	}
	if c.MerchantFeeBps, err = envParsed("PAYMENTS_MERCHANT_FEE_BPS", int64(100), func(s string) (int64, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil && (n < 0 || n > 10_000) {
			err = fmt.Errorf("must be 0..10000")
		}
		return n, err
	}); err != nil {
		return c, err
	}
	if c.TrustedProxies, err = envParsed("PAYMENTS_TRUSTED_PROXIES", nil, parseTrustedProxies); err != nil {
		return c, err
	}
	if c.Pricing.Source != "static" && c.Pricing.Source != "coingecko" {
		return c, fmt.Errorf("PAYMENTS_PRICING must be static or coingecko (got %q)", c.Pricing.Source)
	}
	if c.KeyCacheTTL < 0 || c.KeyCacheTTL > 2*time.Second {
		return c, fmt.Errorf("PAYMENTS_KEY_CACHE_TTL must be between 0 (off) and 2s: a revoked key must stop working within 2 s")
	}
	if c.Chains, err = loadChains(c.IsEmbedded()); err != nil {
		return c, err
	}
	if c.Webhooks, err = loadWebhooks(); err != nil {
		return c, err
	}
	c.Dashboard = config.Dashboard{OIDCIssuer: env("PAYMENTS_OIDC_ISSUER", ""), OIDCAudience: env("PAYMENTS_OIDC_AUDIENCE", ""),
		OIDCMerchantClaim: env("PAYMENTS_OIDC_MERCHANT_CLAIM", "merchant_ids"), OIDCModeClaim: env("PAYMENTS_OIDC_MODE_CLAIM", "mode"),
		OIDCRoleClaim: env("PAYMENTS_OIDC_ROLE_CLAIM", dashauth.DefaultOIDCRoleClaim),

		OIDCClientID: env("PAYMENTS_OIDC_CLIENT_ID", ""), OIDCClientSecret: env("PAYMENTS_OIDC_CLIENT_SECRET", ""),
		OIDCRedirectURL: env("PAYMENTS_OIDC_REDIRECT_URL", ""), OIDCName: env("PAYMENTS_OIDC_NAME", ""),
		WebAuthnRPID: env("PAYMENTS_WEBAUTHN_RP_ID", ""), WebAuthnOrigins: env("PAYMENTS_WEBAUTHN_ORIGINS", "")}
	if c.Dashboard.OIDCIssuer != "" && c.Dashboard.OIDCAudience == "" {
		return c, fmt.Errorf("PAYMENTS_OIDC_AUDIENCE is required with PAYMENTS_OIDC_ISSUER: without it a token minted for any other application of the issuer would be accepted")
	}
	if c.ExpiryInterval <= 0 {
		return c, fmt.Errorf("PAYMENTS_EXPIRY_INTERVAL must be positive")
	}
	if c.QuoteTTL <= 0 || c.PaymentTTL < c.QuoteTTL {
		return c, fmt.Errorf("need 0 < PAYMENTS_QUOTE_TTL <= PAYMENTS_PAYMENT_TTL")
	}
	return c, nil
}

// devnetAddrs resolves PAYMENTS_DEVNET (off, on or HOST:PORT) and PAYMENTS_DEVNET_L2 (off or
// HOST:PORT; default: the port after PAYMENTS_DEVNET's, :0 staying :0) to the listen addresses of
// the devnet's two chains, "off" for one not run. The second chain runs only beside the first:
// the README's walk-through and `devnet pay` without --quote assume eip155:1337.
func devnetAddrs(first, second string) (string, string, error) {
	if first == "on" {
		first = devnet.DefaultAddr
	}
	if first == "" || first == "off" {
		if second != "" && second != "off" {
			return "", "", fmt.Errorf("PAYMENTS_DEVNET_L2=%q needs PAYMENTS_DEVNET on: the second devnet chain runs beside the first", second)
		}
		return "off", "off", nil
	}
	if _, _, err := net.SplitHostPort(first); err != nil {
		return "", "", fmt.Errorf("PAYMENTS_DEVNET=%q: want off, on or HOST:PORT", first)
	}
	switch second {
	case "off":
	case "":
		next, err := devnet.NextAddr(first)
		if err != nil {
			return "", "", fmt.Errorf("PAYMENTS_DEVNET=%q leaves no port for the second devnet chain: set PAYMENTS_DEVNET_L2 (HOST:PORT or off)", first)
		}
		second = next
	default:
		if _, _, err := net.SplitHostPort(second); err != nil {
			return "", "", fmt.Errorf("PAYMENTS_DEVNET_L2=%q: want off or HOST:PORT", second)
		}
		if second == first && !strings.HasSuffix(first, ":0") {
			return "", "", fmt.Errorf("PAYMENTS_DEVNET_L2=%q is PAYMENTS_DEVNET's address too: the two chains need two ports", second)
		}
	}
	return first, second, nil
}

// loadWebhooks reads the webhook delivery settings.
func loadWebhooks() (config.Webhooks, error) {
	var w config.Webhooks
	var err error
	w.SecretsKey = env("PAYMENTS_SECRETS_KEY", "")
	if w.AllowPrivate, err = envParsed("PAYMENTS_WEBHOOKS_ALLOW_PRIVATE", false, strconv.ParseBool); err != nil {
		return w, err
	}
	if s := env("PAYMENTS_WEBHOOK_RETRY_SCHEDULE", ""); s != "" {
		for _, part := range strings.Split(s, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(part))
			if err != nil || d < 0 {
				return w, fmt.Errorf("PAYMENTS_WEBHOOK_RETRY_SCHEDULE: %q is not a duration (e.g. 0s,5s,5m)", part)
			}
			w.Schedule = append(w.Schedule, d)
		}
		if w.Schedule[0] != 0 {
			return w, fmt.Errorf("PAYMENTS_WEBHOOK_RETRY_SCHEDULE starts with the first attempt's delay, which is 0s (at once)")
		}
	}
	return w, nil
}

// loadChains reads the chain access settings. The embedded default runs the devnet on
// 127.0.0.1:8545; PostgreSQL deployments run it only when PAYMENTS_DEVNET names an address.
func loadChains(embedded bool) (config.Chains, error) {
	var c config.Chains
	var err error
	if c.RPCURLs, err = chain.ParseRPCURLs(env("PAYMENTS_RPC_URLS", "")); err != nil {
		return c, fmt.Errorf("PAYMENTS_RPC_URLS: %w", err)
	}
	if c.Confirmations, err = chain.ParseConfirmations(env("PAYMENTS_CONFIRMATIONS", "")); err != nil {
		return c, fmt.Errorf("PAYMENTS_CONFIRMATIONS: %w", err)
	}
	c.CatalogFile = env("PAYMENTS_CATALOG_FILE", "")
	def := "off"
	if embedded {
		def = devnet.DefaultAddr
	}
	if c.Devnet, c.DevnetL2, err = devnetAddrs(env("PAYMENTS_DEVNET", def), env("PAYMENTS_DEVNET_L2", "")); err != nil {
		return c, err
	}
	for id, on := range map[int64]bool{devnet.ChainID: c.DevnetOn(), devnet.L2ChainID: c.DevnetL2On()} {
		if _, taken := c.RPCURLs[id]; taken && on {
			return c, fmt.Errorf("the embedded devnet runs %s and PAYMENTS_RPC_URLS names it too: turn one off (PAYMENTS_DEVNET or PAYMENTS_DEVNET_L2)",
				chain.CAIP2(id))
		}
	}
	if c.DevnetBlock, err = envParsed("PAYMENTS_DEVNET_BLOCK_TIME", time.Second, time.ParseDuration); err != nil {
		return c, err
	}
	if c.WatchInterval, err = envParsed("PAYMENTS_WATCH_INTERVAL", time.Second, time.ParseDuration); err != nil {
		return c, err
	}
	if c.RPCTimeout, err = envParsed("PAYMENTS_RPC_TIMEOUT", 10*time.Second, time.ParseDuration); err != nil {
		return c, err
	}
	if c.ReportWait, err = envParsed("PAYMENTS_TX_REPORT_WAIT", 5*time.Second, time.ParseDuration); err != nil {
		return c, err
	}
	if c.ReportWait < 0 || c.ReportWait > time.Minute {
		return c, fmt.Errorf("PAYMENTS_TX_REPORT_WAIT must be between 0s and 1m (got %s)", c.ReportWait)
	}
	if c.WatchInterval <= 0 || c.DevnetBlock < 0 || c.RPCTimeout <= 0 {
		return c, fmt.Errorf("PAYMENTS_WATCH_INTERVAL and PAYMENTS_RPC_TIMEOUT must be positive and PAYMENTS_DEVNET_BLOCK_TIME not negative")
	}
	if c.ChainDownAfter, err = envParsed("PAYMENTS_CHAIN_DOWN_AFTER", chain.DefaultDownAfter, time.ParseDuration); err != nil {
		return c, err
	}
	if c.ChainDownAfter < time.Second {
		return c, fmt.Errorf("PAYMENTS_CHAIN_DOWN_AFTER must be at least 1s (got %s)", c.ChainDownAfter)
	}
	c.SanctionsFile = env("PAYMENTS_RISK_SANCTIONS_FILE", "")
	c.HotWalletKey, c.HotKeystore, c.HotPassword = env("PAYMENTS_HOT_WALLET_KEY", ""), env("PAYMENTS_HOT_WALLET_KEYSTORE", ""),
		env("PAYMENTS_HOT_WALLET_PASSWORD_FILE", "")
	if c.HotWalletKey != "" && c.HotKeystore != "" {
		return c, fmt.Errorf("set PAYMENTS_HOT_WALLET_KEY or PAYMENTS_HOT_WALLET_KEYSTORE, not both")
	}
	if (c.HotKeystore == "") != (c.HotPassword == "") {
		return c, fmt.Errorf("PAYMENTS_HOT_WALLET_KEYSTORE needs PAYMENTS_HOT_WALLET_PASSWORD_FILE (and the other way round)")
	}
	if c.PayoutBump, err = envParsed("PAYMENTS_PAYOUT_BUMP_AFTER", 3*time.Minute, time.ParseDuration); err != nil {
		return c, err
	}
	c.DepositXPrv, c.DepositMnemonic = env("PAYMENTS_DEPOSIT_XPRV", ""), env("PAYMENTS_DEPOSIT_MNEMONIC_FILE", "")
	if c.DepositXPrv != "" && c.DepositMnemonic != "" {
		return c, fmt.Errorf("set PAYMENTS_DEPOSIT_XPRV or PAYMENTS_DEPOSIT_MNEMONIC_FILE, not both")
	}
	if c.SweepMinUSD, err = envParsed("PAYMENTS_SWEEP_MIN_USD", decimal.NewFromInt(100), decimal.NewFromString); err != nil {
		return c, err
	}
	if c.SweepEvery, err = envParsed("PAYMENTS_SWEEP_INTERVAL", time.Minute, time.ParseDuration); err != nil {
		return c, err
	}
	if c.SweepMinUSD.IsNegative() || c.SweepEvery < 0 {
		return c, fmt.Errorf("PAYMENTS_SWEEP_MIN_USD and PAYMENTS_SWEEP_INTERVAL must not be negative (an interval of 0 sweeps only on request)")
	}
	if c.PayoutPause, err = envParsed("PAYMENTS_FAULT_PAUSE_AFTER_SIGN", 0, time.ParseDuration); err != nil {
		return c, err
	}
	if c.ServeUnwatched, err = envParsed("PAYMENTS_SERVE_UNWATCHED", false, strconv.ParseBool); err != nil {
		return c, err
	}
	return c, nil
}
