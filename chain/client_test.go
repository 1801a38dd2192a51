package chain

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chain/chaintest"
	"github.com/paymentsd/paymentsd/internal/testlog"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestDialChecksChainID(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	var buf testlog.Buffer
	secretURL := s.url + "/?apikey=SIMSECRET"

	_, err := Dial(ctxT(t), 1, []string{secretURL}, testOpts(&buf))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrChainIDMismatch)
	msg := err.Error()
	assert.Contains(t, msg, "eip155:1 ")
	assert.Contains(t, msg, s.url, "names the URL (redacted)")
	assert.Contains(t, msg, "eip155:1337", "names the actual chain")
	assert.Contains(t, msg, "expected eip155:1", "names the expected chain")
	assert.NotContains(t, msg, "SIMSECRET")

	// A mismatching URL fails the Dial even when another one is right.
	_, err = Dial(ctxT(t), 1, []string{deadURL(t), secretURL}, testOpts(&buf))
	assert.ErrorIs(t, err, ErrChainIDMismatch)

	// A dead URL first, then a good one: fine, and calls go to the good one.
	dead := deadURL(t)
	start := time.Now()
	c := dial(t, []string{dead, secretURL}, testOpts(&buf))
	assert.Less(t, time.Since(start), 2*time.Second, "a refused connection is not retried at dial")
	assert.Equal(t, int64(simChainID), c.ChainID())
	assert.Equal(t, []string{RedactURL(dead), s.url}, c.URLs())
	s.b.Commit()
	n, err := c.BlockNumber(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, uint64(1), n)

	// Nothing answers: Dial fails with ErrUnavailable, naming the chain, leaking no key.
	_, err = Dial(ctxT(t), simChainID, []string{deadURL(t), deadURL(t)}, testOpts(&buf))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "eip155:1337 eth_chainId")
	assert.NotContains(t, err.Error(), "DEADSECRET")

	// Bad input.
	_, err = Dial(ctxT(t), simChainID, nil, testOpts(&buf))
	assert.ErrorContains(t, err, "no RPC URL")
	_, err = Dial(ctxT(t), simChainID, []string{"ftp://x/SECRET"}, testOpts(&buf))
	assert.ErrorContains(t, err, "scheme")
	assert.NotContains(t, buf.String(), "SIMSECRET")
	assert.NotContains(t, buf.String(), "DEADSECRET")
	assert.Contains(t, buf.String(), "not answering at start")
}

func TestBlocks(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	txs := s.seed(t)
	var buf testlog.Buffer
	c := dial(t, []string{s.url}, testOpts(&buf))
	ctx := ctxT(t)
	ec := s.b.Client()

	head, err := c.BlockNumber(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(4), head)

	blocks, err := c.Blocks(ctx, 0, head, true)
	require.NoError(t, err)
	require.Len(t, blocks, int(head+1))
	for i, b := range blocks {
		n := uint64(i)
		h, err := ec.HeaderByNumber(ctx, new(big.Int).SetUint64(n))
		require.NoError(t, err)
		assert.Equal(t, n, b.Number)
		assert.Equal(t, h.Hash(), b.Hash, "block %d hash", n)
		assert.Equal(t, h.ParentHash, b.ParentHash, "block %d parent", n)
		assert.Equal(t, h.Time, b.Time)
		require.NotNil(t, b.BaseFee)
		assert.Equal(t, h.BaseFee, b.BaseFee)
		if i > 0 {
			assert.Equal(t, blocks[i-1].Hash, b.ParentHash, "chain links")
		}
		want := txs[n]
		require.Len(t, b.Txs, len(want), "block %d txs", n)
		require.Len(t, b.TxHashes, len(want))
		for k, tx := range want {
			got := b.Txs[k]
			from, err := types.Sender(simSigner, tx)
			require.NoError(t, err)
			assert.Equal(t, tx.Hash(), got.Hash)
			assert.Equal(t, tx.Hash(), b.TxHashes[k])
			assert.Equal(t, from, got.From)
			assert.Equal(t, tx.To(), got.To)
			assert.Equal(t, tx.Value(), got.Value)
			assert.Equal(t, tx.Nonce(), got.Nonce)
			assert.Equal(t, uint64(types.DynamicFeeTxType), got.Type)
			assert.Equal(t, tx.GasFeeCap(), got.MaxFeePerGas)
			require.NotNil(t, got.BlockNumber)
			assert.Equal(t, n, *got.BlockNumber)
			assert.Equal(t, b.Hash, *got.BlockHash)
			assert.Equal(t, uint64(k), *got.Index)
		}
	}
	assert.Nil(t, blocks[2].Txs[0].To, "contract creation")

	// Without transactions: hashes only.
	light, err := c.Blocks(ctx, 1, 2, false)
	require.NoError(t, err)
	require.Len(t, light, 2)
	assert.Nil(t, light[0].Txs)
	assert.Equal(t, []common.Hash{txs[1][0].Hash(), txs[1][1].Hash()}, light[0].TxHashes)

	// One block, by number, tag and hash.
	b3, err := c.Block(ctx, 3, true)
	require.NoError(t, err)
	assert.Equal(t, blocks[3].Hash, b3.Hash)
	assert.Empty(t, b3.Txs)
	latest, err := c.BlockByTag(ctx, "latest", false)
	require.NoError(t, err)
	assert.Equal(t, blocks[4].Hash, latest.Hash)
	byHash, err := c.BlockByHash(ctx, blocks[2].Hash, true)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), byHash.Number)
	baseFee, err := c.HeaderBaseFee(ctx)
	require.NoError(t, err)
	assert.Equal(t, blocks[4].BaseFee, baseFee)

	// Beyond the head.
	_, err = c.Block(ctx, head+1, false)
	assert.ErrorIs(t, err, ErrBlockNotFound)
	assert.Contains(t, err.Error(), "eip155:1337 eth_getBlockByNumber")
	_, err = c.Blocks(ctx, head-1, head+3, false)
	assert.ErrorIs(t, err, ErrBlockNotFound)
	_, err = c.BlockByHash(ctx, common.HexToHash("0x1234"), false)
	assert.ErrorIs(t, err, ErrBlockNotFound)
	_, err = c.Blocks(ctx, 3, 2, false)
	assert.Error(t, err)

	// Logs of the two creations.
	logs, err := c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(int64(head))})
	require.NoError(t, err)
	require.Len(t, logs, 2)
	assert.Equal(t, uint64(2), logs[0].BlockNumber)
	assert.Equal(t, uint64(4), logs[1].BlockNumber)
	assert.Equal(t, big.NewInt(42), new(big.Int).SetBytes(logs[0].Data))

	// Transactions and receipts.
	tx := txs[1][1]
	got, err := c.Transaction(ctx, tx.Hash())
	require.NoError(t, err)
	assert.Equal(t, s.addrs[0], got.From)
	assert.Equal(t, &s.addrs[2], got.To)
	assert.Equal(t, big.NewInt(2222), got.Value)
	assert.Equal(t, uint64(21000), got.Gas)
	assert.NotNil(t, got.GasPrice)
	assert.Equal(t, big.NewInt(params.GWei), got.MaxPriorityFeePerGas)
	rcpt, err := c.TransactionReceipt(ctx, tx.Hash())
	require.NoError(t, err)
	assert.Equal(t, types.ReceiptStatusSuccessful, rcpt.Status)
	assert.Equal(t, blocks[1].Hash, rcpt.BlockHash)
	_, err = c.Transaction(ctx, common.HexToHash("0xabcd"))
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = c.TransactionReceipt(ctx, common.HexToHash("0xabcd"))
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "eip155:1337 eth_getTransactionReceipt")

	// State.
	bal, err := c.BalanceAt(ctx, s.addrs[1], big.NewInt(1))
	require.NoError(t, err)
	want, _ := new(big.Int).SetString("1000000000000000001111", 10)
	assert.Equal(t, want, bal)
	nonce, err := c.NonceAt(ctx, s.addrs[0], nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), nonce)
	pending, err := c.PendingNonceAt(ctx, s.addrs[2])
	require.NoError(t, err)
	assert.Equal(t, uint64(2), pending)
	tip, err := c.SuggestGasTipCap(ctx)
	require.NoError(t, err)
	assert.Positive(t, tip.Sign())
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: s.addrs[0], To: &s.addrs[1], Value: big.NewInt(1)})
	require.NoError(t, err)
	assert.Equal(t, uint64(21000), gas)
	out, err := c.CallContract(ctx, ethereum.CallMsg{To: &s.addrs[1]}, nil)
	require.NoError(t, err)
	assert.Empty(t, out)
}

func TestBlocksSplitsBatches(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	for range 30 {
		s.b.Commit()
	}
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	var buf testlog.Buffer
	opts := testOpts(&buf)
	opts.BatchSize = 10
	c := dial(t, []string{p.URL()}, opts)
	before := p.Requests()
	blocks, err := c.Blocks(ctxT(t), 5, 30, false)
	require.NoError(t, err)
	require.Len(t, blocks, 26)
	for i, b := range blocks {
		require.Equal(t, uint64(5+i), b.Number)
		if i > 0 {
			require.Equal(t, blocks[i-1].Hash, b.ParentHash)
		}
	}
	assert.Equal(t, 3, p.Requests()-before, "26 blocks in three batches")

	// Elements 3, 6 and 9 of each batch fail: only the failed ones are asked again (10, then
	// 3, then 1); asking for the whole batch again would fail for ever.
	p.FailBatchElementEvery(3)
	before = p.Requests()
	blocks, err = c.Blocks(ctxT(t), 1, 10, true)
	require.NoError(t, err)
	require.Len(t, blocks, 10)
	for i, b := range blocks {
		require.Equal(t, uint64(1+i), b.Number)
	}
	assert.Equal(t, 3, p.Requests()-before)
}

// TestFlakyProxy runs calls through every kind of failure at once and checks the answers.
func TestFlakyProxy(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	s.seed(t)
	for range 40 {
		s.b.Commit()
	}
	ctx := ctxT(t)
	ec := s.b.Client()
	wantLogs, err := ec.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0)})
	require.NoError(t, err)
	require.Len(t, wantLogs, 2)
	wantBal, err := ec.BalanceAt(ctx, s.addrs[1], nil)
	require.NoError(t, err)

	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	var buf testlog.Buffer
	opts := testOpts(&buf)
	opts.Timeout = 200 * time.Millisecond
	opts.MaxAttempts = 6
	c := dial(t, []string{p.URL() + "/?key=PROXYSECRET"}, opts)

	// At most four failures in a row over the first 400 requests: fewer than MaxAttempts.
	p.Fail429Every(5)
	p.FailMinus32005Every(7)
	p.DropEvery(11)
	p.DelayEvery(13, 500*time.Millisecond)
	p.Fail5xxEvery(17)
	for round := range 8 {
		n, err := c.BlockNumber(ctx)
		require.NoError(t, err, "round %d", round)
		assert.Equal(t, uint64(44), n)
		blocks, err := c.Blocks(ctx, 0, n, true)
		require.NoError(t, err, "round %d", round)
		require.Len(t, blocks, 45)
		for i := 1; i < len(blocks); i++ {
			require.Equal(t, blocks[i-1].Hash, blocks[i].ParentHash)
		}
		require.Len(t, blocks[1].Txs, 2)
		logs, err := c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0)})
		require.NoError(t, err, "round %d", round)
		assert.Equal(t, wantLogs, logs)
		bal, err := c.BalanceAt(ctx, s.addrs[1], nil)
		require.NoError(t, err, "round %d", round)
		assert.Equal(t, wantBal, bal)
	}
	log := buf.String()
	assert.Contains(t, log, "RPC retry")
	assert.Contains(t, log, "429")
	assert.Contains(t, log, "limit exceeded")
	assert.Contains(t, log, "deadline exceeded")
	assert.Contains(t, log, "EOF")
	assert.NotContains(t, log, "PROXYSECRET")

	// Always failing: the call gives up with ErrUnavailable after MaxAttempts.
	p.Fail429Every(1)
	before := p.Requests()
	_, err = c.BlockNumber(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "eip155:1337 eth_blockNumber via "+RedactURL(p.URL()))
	assert.Contains(t, err.Error(), "429")
	assert.NotContains(t, err.Error(), "PROXYSECRET")
	assert.Equal(t, opts.MaxAttempts, p.Requests()-before)
}

func TestRangeLimit(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	s.seed(t)
	for range 10 {
		s.b.Commit()
	}
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	var buf testlog.Buffer
	c := dial(t, []string{p.URL()}, testOpts(&buf))
	ctx := ctxT(t)
	p.RangeLimit(4)

	before := p.Requests()
	_, err := c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(4)})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRangeTooLarge)
	assert.NotErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "eip155:1337 eth_getLogs")
	assert.Contains(t, err.Error(), "query returned more than 10000 results")
	assert.Equal(t, 1, p.Requests()-before, "not retried")

	// toBlock omitted means latest (14): also too long.
	_, err = c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(8)})
	assert.ErrorIs(t, err, ErrRangeTooLarge)

	// Halves fit.
	var all []types.Log
	for _, r := range [][2]int64{{0, 1}, {2, 4}} {
		logs, err := c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(r[0]), ToBlock: big.NewInt(r[1])})
		require.NoError(t, err)
		all = append(all, logs...)
	}
	assert.Len(t, all, 2)

	// -32005 without a word about ranges is a rate limit: retried, not ErrRangeTooLarge.
	p.RangeLimit(0)
	p.FailMinus32005Every(1)
	p.Minus32005Message("limit exceeded")
	_, err = c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(4)})
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.NotErrorIs(t, err, ErrRangeTooLarge)
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	var buf testlog.Buffer
	c := dial(t, []string{p.URL()}, testOpts(&buf))
	p.RetryAfter(1)
	p.Fail429Every(2) // the next request (the 2nd) fails
	start := time.Now()
	_, err := c.BlockNumber(ctxT(t))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond, "waited for Retry-After")
}

func TestFailover(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	bad := chaintest.NewFlakyProxy(s.url)
	defer bad.Close()
	good := chaintest.NewFlakyProxy(s.url)
	defer good.Close()
	var buf testlog.Buffer
	c := dial(t, []string{bad.URL() + "/?k=BADSECRET", good.URL()}, testOpts(&buf))
	ctx := ctxT(t)

	bad.DropEvery(1)
	_, err := c.BlockNumber(ctx)
	require.NoError(t, err)
	assert.Contains(t, buf.String(), `"msg":"RPC failover"`)
	assert.NotContains(t, buf.String(), "BADSECRET")
	// The URL that worked is tried first from now on.
	badBefore, goodBefore := bad.Requests(), good.Requests()
	for range 5 {
		_, err := c.BlockNumber(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, badBefore, bad.Requests())
	assert.Equal(t, goodBefore+5, good.Requests())

	// A rate limit moves to the next URL at once.
	bad.DropEvery(0)
	good.Fail429Every(1)
	_, err = c.BlockNumber(ctx)
	require.NoError(t, err)
	assert.Equal(t, goodBefore+6, good.Requests())
}

func TestLateChainIDCheck(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	other := newSim(t) // also chain 1337: stands in for a URL of the right chain
	p := chaintest.NewFlakyProxy(other.url)
	p.DropEvery(1)
	defer p.Close()
	var buf testlog.Buffer
	c := dial(t, []string{p.URL(), s.url}, testOpts(&buf))
	_, err := c.BlockNumber(ctxT(t))
	require.NoError(t, err)
	assert.False(t, c.eps[0].verified.Load(), "the dropped URL was never checked")
	assert.True(t, c.eps[1].verified.Load())
}

func TestSendRawTransaction(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	var buf testlog.Buffer
	c := dial(t, []string{s.url}, testOpts(&buf))
	ctx := ctxT(t)
	gwei := int64(params.GWei)

	tx := s.signed(t, 0, &s.addrs[1], 5, nil, gwei)
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	h, err := c.SendRawTransaction(ctx, raw)
	require.NoError(t, err)
	assert.Equal(t, tx.Hash(), h)
	h, err = c.SendRawTransaction(ctx, raw)
	require.NoError(t, err, "already known is success")
	assert.Equal(t, tx.Hash(), h)

	// Same nonce, different transaction, same price: underpriced replacement.
	s.nonce[0]--
	repl := s.signed(t, 0, &s.addrs[2], 6, nil, gwei)
	rawRepl, err := repl.MarshalBinary()
	require.NoError(t, err)
	_, err = c.SendRawTransaction(ctx, rawRepl)
	assert.ErrorIs(t, err, ErrUnderpriced)
	assert.Contains(t, err.Error(), "eip155:1337 eth_sendRawTransaction")

	s.b.Commit()
	rcpt, err := c.TransactionReceipt(ctx, tx.Hash())
	require.NoError(t, err)
	assert.Equal(t, types.ReceiptStatusSuccessful, rcpt.Status)

	// The replacement's nonce is now used (once the pool has caught up with the new head: it
	// resets asynchronously).
	require.Eventually(t, func() bool {
		_, err = c.SendRawTransaction(ctx, rawRepl)
		return errors.Is(err, ErrNonceTooLow)
	}, 5*time.Second, 10*time.Millisecond, "%v", err)
	assert.NotErrorIs(t, err, ErrUnavailable)

	// Deterministic refusals are not retried.
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	cp := dial(t, []string{p.URL()}, testOpts(&buf))
	before := p.Requests()
	_, err = cp.SendRawTransaction(ctx, rawRepl)
	assert.ErrorIs(t, err, ErrNonceTooLow)
	assert.Equal(t, 1, p.Requests()-before)

	// A rate limit did not deliver: retried.
	next := s.signed(t, 0, &s.addrs[1], 7, nil, gwei)
	rawNext, _ := next.MarshalBinary()
	p.Fail429Every(p.Requests() + 1)
	before = p.Requests()
	h, err = cp.SendRawTransaction(ctx, rawNext)
	require.NoError(t, err)
	assert.Equal(t, next.Hash(), h)
	assert.Equal(t, 2, p.Requests()-before)
	p.Fail429Every(0)

	// A dropped connection is ambiguous: returned, not retried; resending is then fine.
	last := s.signed(t, 0, &s.addrs[1], 8, nil, gwei)
	rawLast, _ := last.MarshalBinary()
	p.DropEvery(p.Requests() + 1)
	before = p.Requests()
	_, err = cp.SendRawTransaction(ctx, rawLast)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, 1, p.Requests()-before)
	p.DropEvery(0)
	h, err = cp.SendRawTransaction(ctx, rawLast)
	require.NoError(t, err)
	assert.Equal(t, last.Hash(), h)
}

func TestDeterministicErrorsNotRetried(t *testing.T) {
	t.Parallel()
	s := newSim(t)
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	var buf testlog.Buffer
	c := dial(t, []string{p.URL()}, testOpts(&buf))
	ctx := ctxT(t)
	before := p.Requests()
	// More than the balance: insufficient funds.
	huge := new(big.Int).Mul(big.NewInt(1e6), big.NewInt(params.Ether))
	_, err := c.EstimateGas(ctx, ethereum.CallMsg{From: s.addrs[0], To: &s.addrs[1], Value: huge})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "eip155:1337 eth_estimateGas")
	assert.Equal(t, 1, p.Requests()-before)
	assert.True(t, strings.Contains(err.Error(), "insufficient funds"), err.Error())

	// A canceled context stops at once.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.BlockNumber(cctx)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}
