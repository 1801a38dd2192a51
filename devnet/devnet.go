// Package devnet runs an embedded EVM development chain, served over HTTP
// JSON-RPC, for local development and tests of the gateway: no Docker, no
// external node, nothing to download.
//
// It is go-ethereum's simulated backend (ethclient/simulated) with its HTTP
// server enabled (namespaces eth, net and web3; any Host header; CORS "*" so a
// browser wallet can connect). Its chain id is ChainID (1337, "Devnet") or
// L2ChainID (31337, "Devnet L2"): the gateway runs both, each a Start of its own
// with the same genesis accounts and tokens. Blocks are produced by Commit, or
// every Config.BlockTime by a background loop.
//
// # Genesis
//
// Nothing is persisted: every Start is a brand-new chain, and its genesis block
// carries 32 random bytes of extra data, so every start has a NEW genesis hash
// (GenesisHash). A watcher that stored the genesis hash of the chain it
// followed therefore recognises a devnet restart as a different chain, rather
// than mistaking the new chain's low block numbers for a deep reorg of the old.
//
// The genesis prefunds:
//   - accounts 0 to NumAccounts-1 of the public test mnemonic Mnemonic (path
//     m/44'/60'/0'/0/i; account 0 is 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266)
//     with PrefundETH ether each. Account HotWalletAccount (9) is reserved for
//     the service's own dev hot wallet; payers (tests, developers playing the
//     customer) use accounts 0 to 8.
//   - the fixed token deployer DeployerAddress.
//
// # Tokens
//
// Start deploys two ERC-20 tokens with TokenDecimals (6) decimals, in block 1,
// and checks them before returning: USDC (USDCAddress), a standard ERC-20, and
// USDT (USDTAddress), which behaves like Tether's: transfer, transferFrom and
// approve return no data. Each of accounts 0 to NumAccounts-1 holds
// PrefundTokenUnits of each. USDC also takes signatures instead of its holders'
// gas, like Circle's: EIP-3009 and EIP-2612 under the EIP-712 domain {name,
// version "2", chainId, verifyingContract}. The token addresses are the same on
// every start.
//
// # Sweep contracts
//
// Start also deploys the sweeper's contracts (SweepBatchAddress,
// SweepDelegateAddress), both paying the development hot wallet: the gateway
// collects deposit addresses' tokens through them in batches, with the deposit
// keys' signatures (EIP-3009, EIP-2612) or EIP-7702 delegations, never sending
// gas to a deposit address. Sources and the solc pin are in contracts/
// (regenerate with contracts/compile.sh).
package devnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
)

// DefaultAddr is the listen address when Config.Addr is empty: the usual
// Ethereum JSON-RPC port on loopback.
const DefaultAddr = "127.0.0.1:8545"

// Config configures Start.
type Config struct {
	// ChainID is the chain's id, one of ChainIDs. Default ChainID (1337).
	ChainID int64
	// Addr is the HTTP JSON-RPC listen address, host:port. Port 0 picks a free
	// port (see Devnet.URL). An empty host listens on all interfaces; anything
	// but loopback exposes a chain whose keys are public. Default DefaultAddr.
	Addr string
	// BlockTime is the interval of automatic blocks. 0 means manual: blocks are
	// produced only by Devnet.Commit.
	BlockTime time.Duration
	// Log receives the devnet's own messages and go-ethereum's node warnings
	// and errors. Nil discards them.
	Log *slog.Logger
	// Fork is the gas schedule: "" is go-ethereum's development chain as pinned,
	// every fork it knows active, the experimental Bogota one included (EIP-8037
	// state gas: a storage slot created costs ~110,000 gas, not 22,100); ForkOsaka
	// stops at Osaka, the schedule Ethereum and its L2s run, for measurements that
	// must mean the same there (EIP-7702 is in both).
	Fork string
}

// ForkOsaka is Config.Fork for Osaka's gas schedule.
const ForkOsaka = "osaka"

// Devnet is a running dev chain. Its methods are safe for concurrent use.
type Devnet struct {
	chainID int64
	name    string
	backend *simulated.Backend
	url     string
	genesis common.Hash
	log     *slog.Logger

	mu     sync.Mutex // serialises block production; guards closed
	closed bool

	stop      chan struct{} // closed by Close to end the block loop
	loopDone  chan struct{} // closed when the block loop has returned
	closeOnce sync.Once
	closeErr  error
}

// Start creates the chain, serves it on cfg.Addr, deploys the tokens in block 1
// and verifies them. ctx bounds the startup only; stop the chain with Close.
func Start(ctx context.Context, cfg Config) (*Devnet, error) {
	began := time.Now()
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.BlockTime < 0 {
		return nil, fmt.Errorf("devnet: negative block time %v", cfg.BlockTime)
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.ChainID == 0 {
		cfg.ChainID = ChainID
	}
	name, ok := ChainName(cfg.ChainID)
	if !ok {
		// The catalogue knows only these: a chain of another id would be neither quoted nor watched.
		return nil, fmt.Errorf("devnet: chain id %d is not a devnet chain (%v)", cfg.ChainID, ChainIDs())
	}
	host, portStr, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("devnet: listen address %q: %w", cfg.Addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("devnet: listen address %q: bad port", cfg.Addr)
	}
	if host == "" {
		// go-ethereum reads an empty HTTP host as "HTTP disabled".
		host = "0.0.0.0"
	}

	if cfg.Fork != "" && cfg.Fork != ForkOsaka {
		return nil, fmt.Errorf("devnet: unknown fork %q (\"\" or %q)", cfg.Fork, ForkOsaka)
	}
	backend, port, err := newBackend(cfg.ChainID, host, port, cfg.Fork, cfg.Log)
	if err != nil {
		return nil, err
	}
	d := &Devnet{
		chainID:  cfg.ChainID,
		name:     name,
		backend:  backend,
		url:      "http://" + net.JoinHostPort(dialHost(host), strconv.Itoa(port)),
		log:      cfg.Log,
		stop:     make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	if err := d.init(ctx); err != nil {
		close(d.loopDone)
		return nil, errors.Join(err, d.Close())
	}
	if cfg.BlockTime > 0 {
		go d.loop(cfg.BlockTime)
	} else {
		close(d.loopDone)
	}
	d.log.Info("devnet started", "url", d.url, "chain_id", d.chainID, "name", d.name, "genesis", d.genesis.Hex(),
		"block_time", cfg.BlockTime, "took", time.Since(began).Round(time.Millisecond))
	return d, nil
}

// init records the genesis hash, deploys the tokens and the sweep contracts,
// commits them in block 1 and checks the result.
func (d *Devnet) init(ctx context.Context) error {
	c := d.backend.Client()
	genesis, err := c.HeaderByNumber(ctx, big.NewInt(0))
	if err != nil {
		return fmt.Errorf("devnet: genesis header: %w", err)
	}
	d.genesis = genesis.Hash()
	txs, err := deployTokens(ctx, c)
	if err != nil {
		return err
	}
	sweepTxs, err := deploySweepContracts(ctx, c)
	if err != nil {
		return err
	}
	// The pool admits transactions asynchronously: a deployment sent just before the commit may
	// miss block 1. Seal until both are mined (block 2 at worst; the addresses depend only on the
	// deployer's nonces).
	for range 20 {
		d.Commit()
		mined := true
		for _, tx := range append(append([]*types.Transaction(nil), txs...), sweepTxs...) {
			if _, err := c.TransactionReceipt(ctx, tx.Hash()); err != nil {
				mined = false
			}
		}
		if mined {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := verifyTokens(ctx, c, txs); err != nil {
		return err
	}
	return verifySweepContracts(ctx, c, sweepTxs)
}

// loop commits a block every period until Close.
func (d *Devnet) loop(period time.Duration) {
	defer close(d.loopDone)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.Commit()
		}
	}
}

// URL is the HTTP JSON-RPC endpoint, e.g. http://127.0.0.1:8545.
func (d *Devnet) URL() string { return d.url }

// ChainID is the chain's id (ChainID or L2ChainID).
func (d *Devnet) ChainID() int64 { return d.chainID }

// Name is the chain's name in the catalogue ("Devnet", "Devnet L2").
func (d *Devnet) Name() string { return d.name }

// GenesisHash is this start's genesis block hash, different on every Start.
func (d *Devnet) GenesisHash() common.Hash { return d.genesis }

// Commit seals the pending transactions into a new block and returns the new
// head's hash. Use it rather than Backend().Commit when BlockTime > 0: the
// backend's own Commit must not run concurrently with the block loop. After
// Close it does nothing and returns the zero hash.
func (d *Devnet) Commit() common.Hash {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return common.Hash{}
	}
	return d.backend.Commit()
}

// Backend is the underlying simulated backend, for what the devnet does not
// wrap: Fork and Rollback to simulate reorgs (Rollback first: Fork refuses to
// run with pending transactions), AdjustTime, and the in-process Client. With
// BlockTime > 0 its block-producing methods race the block loop; use a manual
// devnet for reorg tests.
func (d *Devnet) Backend() *simulated.Backend { return d.backend }

// Close stops the block loop and the chain, and releases the listen address.
// It is idempotent.
func (d *Devnet) Close() error {
	d.closeOnce.Do(func() {
		close(d.stop)
		<-d.loopDone
		d.mu.Lock()
		d.closed = true
		d.mu.Unlock()
		d.closeErr = d.backend.Close()
	})
	return d.closeErr
}
