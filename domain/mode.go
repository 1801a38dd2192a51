package domain

import (
	"fmt"
	"strings"
)

// Mode separates live money from test money in one deployment (as Stripe's livemode does):
// every chain is live (a mainnet) or test (a testnet or devnet); a secret key, a dashboard token
// and every money object (payment, withdrawal, ledger entry) belongs to one mode, and a request
// acts only in its credential's mode. Nothing earned in test mode can ever pay out in live mode.
type Mode string

// The two modes. The zero value is not a mode: code that meets it treats it as test (Live()
// is false), so a mode forgotten on the way can never reach live money.
const (
	ModeTest Mode = "test"
	ModeLive Mode = "live"
)

// Live reports whether m is live mode. Anything but ModeLive is test.
func (m Mode) Live() bool { return m == ModeLive }

// Norm returns m with the zero value read as test.
func (m Mode) Norm() Mode {
	if m.Live() {
		return ModeLive
	}
	return ModeTest
}

// ModeOf is the mode of a stored livemode flag.
func ModeOf(livemode bool) Mode {
	if livemode {
		return ModeLive
	}
	return ModeTest
}

// ChainMode is the mode of the money that moves on a chain: test on testnets and devnets.
func ChainMode(c Chain) Mode { return ModeOf(!c.IsTestnet) }

// ParseMode reads a --mode flag or an API field: "test" or "live"; empty is test (the default
// everywhere, so touching live money is always explicit).
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.ToLower(strings.TrimSpace(s))) {
	case "", ModeTest:
		return ModeTest, nil
	case ModeLive:
		return ModeLive, nil
	}
	return "", fmt.Errorf("mode must be test or live (got %q)", s)
}
