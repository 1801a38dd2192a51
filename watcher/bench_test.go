package watcher_test

import (
	"crypto/ecdsa"
	"crypto/rand"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
)

// BenchmarkWatcherBusyBlocks measures how fast the watcher scans busy blocks while 10,000
// payments are open: 10,000 watched addresses (10 eth_getLogs queries per range), and blocks
// of 60 transactions — ERC-20 and native transfers to strangers, and a few to open payments.
// The cursor is rewound before each pass, so every pass reads the same blocks.
//
//	go test ./watcher/ -run '^$' -bench WatcherBusyBlocks -benchtime 5x
//
// BENCH_OPEN (default 10000) and BENCH_BLOCKS (default 100) change the load.
func BenchmarkWatcherBusyBlocks(b *testing.B) {
	open, blocks := envInt("BENCH_OPEN", 10_000), envInt("BENCH_BLOCKS", 100)
	f := newFixture(b, "sqlite", fixtureOpts{})
	f.sync()
	start := time.Now()
	var ps []domain.Payment
	for range open {
		ps = append(ps, f.create(1000))
	}
	b.Logf("%d open payments created in %s", open, time.Since(start).Round(time.Millisecond))
	f.sync()
	head, err := f.eth.BlockNumber(f.ctx)
	require.NoError(b, err)
	from := head

	keys := make([]*ecdsa.PrivateKey, 9)
	nonces := make([]uint64, 9)
	for i := range keys {
		keys[i] = payer(b, i)
		nonces[i], err = f.eth.PendingNonceAt(f.ctx, devnet.AccountAddress(i))
		require.NoError(b, err)
	}
	usdc := common.HexToAddress(devnet.USDCAddress)
	signer := types.LatestSignerForChainID(big.NewInt(devnet.ChainID))
	tip, fee := big.NewInt(1_000_000_000), big.NewInt(100_000_000_000)
	send := func(i int, to common.Address, value *big.Int, data []byte, gas uint64) {
		tx := types.MustSignNewTx(keys[i], signer, &types.DynamicFeeTx{ChainID: big.NewInt(devnet.ChainID), Nonce: nonces[i],
			GasTipCap: tip, GasFeeCap: fee, Gas: gas, To: &to, Value: value, Data: data})
		nonces[i]++
		require.NoError(b, f.eth.SendTransaction(f.ctx, tx))
	}
	stranger := func() common.Address {
		var a common.Address
		_, _ = rand.Read(a[:])
		return a
	}
	for n := range blocks {
		for k := range 60 {
			i := k % 9
			switch {
			case k < 3: // a part payment to an open payment
				p := ps[(n*3+k)%len(ps)]
				send(i, usdc, new(big.Int), devnet.TransferCalldata(common.HexToAddress(p.DepositAddress.Address), big.NewInt(100_000)), 80_000)
			case k%2 == 0:
				send(i, usdc, new(big.Int), devnet.TransferCalldata(stranger(), big.NewInt(1_000)), 80_000)
			default:
				send(i, stranger(), big.NewInt(1_000_000_000), nil, 21_000)
			}
		}
		f.mine(1)
	}
	head, err = f.eth.BlockNumber(f.ctx)
	require.NoError(b, err)
	blk, err := f.eth.BlockByNumber(f.ctx, big.NewInt(int64(head)))
	require.NoError(b, err)
	b.Logf("%d busy blocks (%d transactions in the last)", head-from, len(blk.Transactions()))

	b.ResetTimer()
	var scanned uint64
	for range b.N {
		b.StopTimer()
		require.NoError(b, f.w.Rewind(f.ctx, from))
		b.StartTimer()
		f.sync()
		scanned += head - from
	}
	b.ReportMetric(float64(scanned)/b.Elapsed().Seconds(), "blocks/s")
}

func envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n := 0
	for _, c := range v {
		n = n*10 + int(c-'0')
	}
	return n
}
