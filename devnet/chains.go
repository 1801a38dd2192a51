package devnet

import (
	"fmt"
	"net"
	"slices"
	"strconv"
)

// The devnet's chains. Both run the same genesis (the same prefunded accounts, the same token
// deployer), so a test account or the dev hot wallet pays on either, and the tokens sit at the
// same addresses on both; only the chain id (hence every signature, transaction hash and
// genesis hash) differs. The second one stands for the L2s a merchant meets in production: a
// gateway serving several chains, quoting the same token on each.
const (
	ChainID   int64 = 1337  // "Devnet": the default chain (devnet pay without --quote pays here)
	L2ChainID int64 = 31337 // "Devnet L2": Hardhat's and Anvil's default chain id
)

// Chain names one devnet chain as the catalogue shows it.
type Chain struct {
	ID   int64
	Name string
}

// chainList is in chain id order: the order Start-ing callers and listings use.
var chainList = []Chain{{ID: ChainID, Name: "Devnet"}, {ID: L2ChainID, Name: "Devnet L2"}}

// Chains lists the devnet chains in chain id order.
func Chains() []Chain { return slices.Clone(chainList) }

// ChainIDs lists the devnet chain ids in order.
func ChainIDs() []int64 {
	ids := make([]int64, len(chainList))
	for i, c := range chainList {
		ids[i] = c.ID
	}
	return ids
}

// IsDevnet reports whether id is one of the devnet chains.
func IsDevnet(id int64) bool {
	_, ok := ChainName(id)
	return ok
}

// ChainName is a devnet chain's name ("Devnet", "Devnet L2").
func ChainName(id int64) (string, bool) {
	for _, c := range chainList {
		if c.ID == id {
			return c.Name, true
		}
	}
	return "", false
}

// NextAddr is the listen address of the second chain when only the first one's is given: the
// same host, the port after. Port 0 (any free port) stays 0: the two chains then get two free
// ports of their own.
func NextAddr(addr string) (string, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("devnet: listen address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", fmt.Errorf("devnet: listen address %q: bad port", addr)
	}
	switch port {
	case 0:
	case 65535:
		return "", fmt.Errorf("devnet: listen address %q: no port after 65535", addr)
	default:
		port++
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}
