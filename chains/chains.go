// Package chains owns which chains this deployment serves: the stored catalogue filtered by the
// configured networks (mainnet, testnet or all). Chain.Enabled leaving here is the public
// `isEnabled`.
package chains

import (
	"fmt"
	"github.com/paymentsd/paymentsd/chain"
	"strings"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Networks selects the chains a deployment serves.
type Networks string

// The accepted values of --networks.
const (
	Mainnet Networks = "mainnet"
	Testnet Networks = "testnet"
	All     Networks = "all"
)

// ParseNetworks validates a --networks value.
func ParseNetworks(s string) (Networks, error) {
	switch n := Networks(strings.ToLower(strings.TrimSpace(s))); n {
	case Mainnet, Testnet, All:
		return n, nil
	}
	return "", fmt.Errorf("networks must be one of mainnet, testnet, all (got %q)", s)
}

// DevnetID and DevnetL2ID are the embedded development chains' ids (devnet.ChainIDs; this
// package does not import the devnet's node). A devnet chain is served whenever it can be
// watched, whatever the networks setting: a deployment that runs or points at a devnet wants it
// quoted.
const (
	DevnetID   = 1337
	DevnetL2ID = 31337
)

// IsDevnet reports whether id is one of the embedded development chains: new on every start
// (so never served unwatched) and served on any networks setting.
func IsDevnet(id int64) bool { return id == DevnetID || id == DevnetL2ID }

// Serves reports whether a chain of this kind is served.
func (n Networks) Serves(c domain.Chain) bool {
	if IsDevnet(c.ID) {
		return true
	}
	switch n {
	case Mainnet:
		return !c.IsTestnet
	case Testnet:
		return c.IsTestnet
	}
	return true
}

// Load reads the catalogue and marks each chain enabled only when it is active in the data and
// served by this deployment. A process loads it once at start and injects it; catalogue edits
// take effect at the next start.
func Load(tx *store.Tx, n Networks) (domain.Catalog, error) {
	cat, err := tx.LoadCatalog()
	if err != nil {
		return domain.Catalog{}, err
	}
	for i, c := range cat.Chains {
		cat.Chains[i].Enabled = c.Enabled && n.Serves(c)
	}
	for id, t := range cat.Tokens {
		t.Chain.Enabled = t.Chain.Enabled && n.Serves(t.Chain)
		cat.Tokens[id] = t
	}
	return cat, nil
}

// Watch narrows a loaded catalogue to what can be watched — a chain is served (quoted,
// isEnabled, accepted for withdrawals) only when it has an RPC endpoint or is the running
// devnet, unless serveUnwatched (contract tests, manual settlement) — and applies configured
// confirmation depths. It changes cat in place (Load's fresh copy) and returns it.
func Watch(cat domain.Catalog, watchable map[int64]bool, serveUnwatched bool, confirmations map[int64]int32) domain.Catalog {
	serve := func(c domain.Chain) domain.Chain {
		c.Enabled = c.Enabled && (watchable[c.ID] || (serveUnwatched && !IsDevnet(c.ID)))
		if n, ok := confirmations[c.ID]; ok {
			c.RequiredConfirmations = n
		}
		return c
	}
	for i, c := range cat.Chains {
		cat.Chains[i] = serve(c)
	}
	for id, t := range cat.Tokens {
		t.Chain = serve(t.Chain)
		cat.Tokens[id] = t
	}
	return cat
}

// List returns one page of the catalogue's chains and the total.
func List(cat domain.Catalog, limit, offset int32) ([]domain.Chain, int64) {
	total := int64(len(cat.Chains))
	start := min(int64(offset), total)
	end := min(start+int64(limit), total)
	return cat.Chains[start:end], total
}

// CAIP2 renders a chain id in CAIP-2 form (chain.CAIP2, the one implementation).
func CAIP2(id int64) string { return chain.CAIP2(id) }

// ParseCAIP2 reads "eip155:<n>" into the numeric id; only the canonical form (no sign, no
// leading zeros) is accepted.
func ParseCAIP2(s string) (int64, error) { return chain.ParseCAIP2(s) }
