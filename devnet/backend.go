package devnet

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	gethlog "github.com/ethereum/go-ethereum/log"
	"github.com/ethereum/go-ethereum/node"
)

// newBackend starts the simulated chain with its HTTP server on host:port and
// returns the port it listens on. For port 0 it picks a free port (go-ethereum
// takes a port number and does not report the one the OS chose) and retries
// with another if that port is taken before the server binds it.
func newBackend(chainID int64, host string, port int, fork string, log *slog.Logger) (*simulated.Backend, int, error) {
	const attempts = 5
	var lastErr error
	for range attempts {
		p := port
		if p == 0 {
			var err error
			if p, err = freePort(host); err != nil {
				return nil, 0, err
			}
		}
		backend, err := newSimulated(chainID, host, p, fork, log)
		if err == nil {
			return backend, p, nil
		}
		if port != 0 || !errors.Is(err, syscall.EADDRINUSE) {
			return nil, 0, fmt.Errorf("devnet: start chain on %s: %w", net.JoinHostPort(host, strconv.Itoa(p)), err)
		}
		lastErr = err
	}
	return nil, 0, fmt.Errorf("devnet: no free port on %s after %d attempts: %w", host, attempts, lastErr)
}

// newSimulated is simulated.NewBackend with the devnet's genesis and HTTP
// settings, turning its panic on a failed node start (e.g. port in use) into an
// error.
func newSimulated(chainID int64, host string, port int, fork string, log *slog.Logger) (backend *simulated.Backend, err error) {
	var extra [32]byte
	if _, err := rand.Read(extra[:]); err != nil {
		return nil, fmt.Errorf("devnet: random genesis extra data: %w", err)
	}
	alloc := types.GenesisAlloc{
		common.HexToAddress(DeployerAddress): {Balance: ethToWei(deployerETH)},
	}
	for i := range NumAccounts {
		alloc[AccountAddress(i)] = types.Account{Balance: ethToWei(PrefundETH)}
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	return simulated.NewBackend(alloc, func(nodeConf *node.Config, ethConf *ethconfig.Config) {
		nodeConf.HTTPHost = host
		nodeConf.HTTPPort = port
		nodeConf.HTTPModules = []string{"eth", "net", "web3"}
		nodeConf.HTTPVirtualHosts = []string{"*"}
		nodeConf.HTTPCors = []string{"*"}
		nodeConf.Logger = gethlog.NewLogger(minLevel{log.Handler(), slog.LevelWarn})
		// The chain config is go-ethereum's shared dev config (chain id 1337): copied, never
		// changed in place. The network id follows the chain id (ethconfig's 0 = auto).
		chainConf := *ethConf.Genesis.Config
		chainConf.ChainID = big.NewInt(chainID)
		if fork == ForkOsaka {
			chainConf.AmsterdamTime, chainConf.BogotaTime = nil, nil
		}
		ethConf.Genesis.Config = &chainConf
		ethConf.Genesis.ExtraData = extra[:]
		// The default genesis time is 0 (1970); a current one keeps block
		// timestamps plausible for anything that displays or compares them.
		ethConf.Genesis.Timestamp = uint64(time.Now().Unix())
	}), nil
}

// freePort asks the OS for a free TCP port on host.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("devnet: find a free port on %s: %w", host, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// dialHost is the host to put in URL for a listen host: wildcard addresses are
// reachable through loopback.
func dialHost(host string) string {
	switch host {
	case "0.0.0.0", "::":
		return "127.0.0.1"
	}
	return host
}

// minLevel passes on records at or above level; go-ethereum's node logs every
// HTTP server start and shutdown at Info.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.level}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.level}
}
