package chain

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testlog"
)

const simChainID = 1337

// sim is a simulated chain served over HTTP on 127.0.0.1.
type sim struct {
	b     *simulated.Backend
	url   string
	keys  []*ecdsa.PrivateKey
	addrs []common.Address
	nonce []uint64
}

// newSim starts a simulated chain with three funded accounts. The HTTP port is found by
// listening on :0 and closing; if another process takes it in between, node start fails
// (NewBackend panics) and another port is tried.
func newSim(t *testing.T) *sim {
	t.Helper()
	s := &sim{}
	alloc := types.GenesisAlloc{}
	for range 3 {
		k, err := crypto.GenerateKey()
		require.NoError(t, err)
		a := crypto.PubkeyToAddress(k.PublicKey)
		s.keys, s.addrs, s.nonce = append(s.keys, k), append(s.addrs, a), append(s.nonce, 0)
		alloc[a] = types.Account{Balance: new(big.Int).Mul(big.NewInt(1000), big.NewInt(params.Ether))}
	}
	var lastErr error
	for range 5 {
		port := freePort(t)
		b, err := startBackend(alloc, port)
		if err != nil {
			lastErr = err
			continue
		}
		s.b = b
		s.url = "http://127.0.0.1:" + strconv.Itoa(port)
		t.Cleanup(func() { _ = b.Close() })
		return s
	}
	t.Fatalf("simulated backend did not start: %v", lastErr)
	return nil
}

func startBackend(alloc types.GenesisAlloc, port int) (b *simulated.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("NewBackend: %v", r)
		}
	}()
	return simulated.NewBackend(alloc, func(nc *node.Config, _ *ethconfig.Config) {
		nc.HTTPHost = "127.0.0.1"
		nc.HTTPPort = port
		nc.HTTPModules = []string{"eth", "net", "web3"}
	}), nil
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// deadURL is a URL nobody listens on (connection refused).
func deadURL(t *testing.T) string {
	return "http://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/?apikey=DEADSECRET"
}

var simSigner = types.LatestSignerForChainID(big.NewInt(simChainID))

// signed builds and signs a transaction from account i (to nil: a contract creation running
// data as init code) with the account's next nonce.
func (s *sim) signed(t *testing.T, i int, to *common.Address, value int64, data []byte, tip int64) *types.Transaction {
	t.Helper()
	gas := uint64(21000)
	if to == nil || len(data) > 0 {
		gas = 200000
	}
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{
		ChainID:   big.NewInt(simChainID),
		Nonce:     s.nonce[i],
		GasTipCap: big.NewInt(tip),
		GasFeeCap: big.NewInt(100 * params.GWei),
		Gas:       gas,
		To:        to,
		Value:     big.NewInt(value),
		Data:      data,
	}), simSigner, s.keys[i])
	require.NoError(t, err)
	s.nonce[i]++
	return tx
}

func (s *sim) send(t *testing.T, tx *types.Transaction) {
	t.Helper()
	require.NoError(t, s.b.Client().SendTransaction(context.Background(), tx))
}

// logInit is init code that emits LOG0 with 32 bytes of data (42) and deploys nothing.
var logInit = common.FromHex("602a60005260206000a000")

// seed makes blocks 1..4: two transfers; a log-emitting creation and a transfer; an empty
// block; another log-emitting creation. It returns the transactions by block.
func (s *sim) seed(t *testing.T) map[uint64][]*types.Transaction {
	t.Helper()
	out := map[uint64][]*types.Transaction{}
	add := func(n uint64, txs ...*types.Transaction) {
		for _, tx := range txs {
			s.send(t, tx)
		}
		out[n] = txs
		// The pool promotes a sender's next nonce asynchronously: wait until every transaction
		// sent is pending, or Commit may seal a block without the last ones.
		require.Eventually(t, func() bool {
			pending, err := s.b.Client().PendingTransactionCount(context.Background())
			return err == nil && pending == uint(len(txs))
		}, 5*time.Second, time.Millisecond)
		s.b.Commit()
	}
	gwei := int64(params.GWei)
	add(1, s.signed(t, 0, &s.addrs[1], 1111, nil, gwei), s.signed(t, 0, &s.addrs[2], 2222, nil, gwei))
	add(2, s.signed(t, 1, nil, 0, logInit, gwei), s.signed(t, 2, &s.addrs[0], 3333, nil, gwei))
	add(3)
	add(4, s.signed(t, 2, nil, 0, logInit, gwei))
	return out
}

// testOpts are fast options logging to a buffer.
func testOpts(buf *testlog.Buffer) Options {
	return Options{
		Timeout:     2 * time.Second,
		BackoffBase: 5 * time.Millisecond,
		BackoffMax:  50 * time.Millisecond,
		Logger:      slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

func dial(t *testing.T, urls []string, opts Options) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, simChainID, urls, opts)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}
