package payouts_test

import (
	"context"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/store"
)

// BenchmarkSweepGas is the gas the sweeper spends per collected payment, from the devnet's
// receipts of every transaction it sent (top-ups, deposit addresses' own sweeps, batches), for
// each method at 1, 20 and 100 payments swept together, on the devnet's gas schedule as shipped
// and on Osaka's. Gas does not depend on b.N: run it with -benchtime 1x (make bench does).
//
//	go test -run '^$' -bench BenchmarkSweepGas -benchtime 1x ./payouts/
func BenchmarkSweepGas(b *testing.B) {
	paths := []struct {
		name   string
		method payouts.SweepMethod
		symbol string
	}{
		{"topup/USDC", payouts.SweepTopUp, "USDC"},
		{"eip3009/USDC", payouts.SweepEIP3009, "USDC"},
		{"eip2612/USDC", payouts.SweepEIP2612, "USDC"},
		{"eip7702/USDC", payouts.SweepEIP7702, "USDC"},
		{"eip7702/USDT", payouts.SweepEIP7702, "USDT"},
	}
	for _, fork := range []string{"", devnet.ForkOsaka} {
		forkName := "fork=devnet"
		if fork != "" {
			forkName = "fork=" + fork
		}
		b.Run(forkName, func(b *testing.B) {
			dn, err := devnet.Start(context.Background(), devnet.Config{Addr: "127.0.0.1:0", Fork: fork})
			require.NoError(b, err)
			b.Cleanup(func() { _ = dn.Close() })
			f := newFixture(b, opts{backend: "sqlite", dbURL: testdb.URL(b, "sqlite"), dn: dn, sweep: true, sweepMin: "1000000000"})
			for _, p := range paths {
				for _, n := range benchSizes {
					b.Run(fmt.Sprintf("%s/batch=%d", p.name, n), func(b *testing.B) {
						f.t = b
						f.m.Config.SweepMethods = []payouts.SweepMethod{p.method}
						f.m.Config.SweepBatchMax = n
						gas, txs, dust := f.sweepGas(p.symbol, n)
						for b.Loop() {
						}
						b.ReportMetric(float64(gas)/float64(n), "gas/payment")
						b.ReportMetric(float64(txs)/float64(n), "tx/payment")
						b.ReportMetric(float64(dust.Int64())/float64(n), "dust-wei/address")
					})
				}
			}
		})
	}
}

// sweepGas pays n payments in symbol, sweeps them on an operator's request (one pass: one batch
// of n, or n top-ups and n sweeps), and sums the gas of the transactions the sweeper sent for
// them, from their receipts; dust is the native balance left at the deposit addresses.
func (f *fixture) sweepGas(symbol string, n int) (gas uint64, txs int, dust *big.Int) {
	t := f.t
	ps := make([]paid, n)
	for i := range ps {
		ps[i] = f.payOnChain(2000+int64(i), symbol)
	}
	f.until("the payments confirmed and recorded", func() bool {
		c, err := f.a.Store.Read(f.ctx).SweepCandidates(devnet.ChainID, 10_000)
		require.NoError(t, err)
		return len(c) >= n
	})
	req := store.SweepRequest{ID: uuid.Must(uuid.NewV7()), ChainID: devnet.ChainID, CreatedAt: time.Now().UTC()}
	require.NoError(t, f.a.Store.InTx(f.ctx, func(tx *store.Tx) error { return tx.InsertSweepRequest(req) }))
	f.until("swept", func() bool { return f.confirmedAll(ps...) })
	seen := map[uuid.UUID]bool{}
	dust = new(big.Int)
	for _, p := range ps {
		s := f.sweepsOf(p.deposit)[0]
		for _, id := range []*uuid.UUID{s.TopupTxID, s.SweepTxID} {
			if id == nil || seen[*id] {
				continue
			}
			seen[*id] = true
			o := outgoing(t, f, *id)
			rc, err := f.eth.TransactionReceipt(f.ctx, common.HexToHash(*o.MinedHash))
			require.NoError(t, err)
			gas += rc.GasUsed
		}
		dust.Add(dust, f.tokenBalance("", p.deposit))
	}
	return gas, len(seen), dust
}

// benchSizes are how many payments one sweep collects: alone, a typical batch, the largest.
var benchSizes = []int{1, 20, 100}
