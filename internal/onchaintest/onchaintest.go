// Package onchaintest holds what the on-chain test suites (watcher, payouts) share: the
// configuration of an app on a test database with the devnet, and their optional test log.
package onchaintest

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/settlement"
)

// XPub is the deposit xpub the suites use: addresses only, no private half here.
const XPub = "xpub6EF8jXqFeFEW5bwMU7RpQtHkzE4KJxcqJtvkCjJumzW8CPpacXkb92ek4WzLQXjL93HycJwTPUAcuNxCqFPKKU5m5Z2Vq4nCyh5CyPeBFFr"

// Config is an app on dbURL with the given chain settings: static prices, every network, a 1%
// merchant fee, the schema shape.
func Config(dbURL string, cc config.Chains, paymentTTL, quoteTTL time.Duration) config.Config {
	return config.Config{DatabaseURL: dbURL, PublicBaseURL: "https://pay.example.test", Networks: chains.All, XPub: XPub,
		QuoteTTL: quoteTTL, PaymentTTL: paymentTTL, MerchantFeeBps: 100, IdempotencyTTL: time.Hour, MaxBodyBytes: "1M",
		Pricing: config.Pricing{Source: "static"}, ResponseShape: settlement.Schema, ExpiryInterval: time.Second, Chains: cc}
}

// Logger discards, unless the environment variable named is set: then debug lines to stderr.
func Logger(envVar string) *slog.Logger {
	if os.Getenv(envVar) != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
