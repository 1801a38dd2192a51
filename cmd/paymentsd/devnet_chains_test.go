package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testlog"
)

// runDevnetCommand runs `paymentsd devnet` with args until the test ends and returns its
// printout once it is ready.
func runDevnetCommand(t *testing.T, args ...string) string {
	t.Helper()
	t.Setenv("PAYMENTS_LOG_FORMAT", "")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout testlog.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"devnet"}, args...), &stdout, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("devnet did not stop on cancel")
		}
	})
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "Ctrl-C") }, 30*time.Second, 10*time.Millisecond)
	return stdout.String()
}

var rpcLineRE = regexp.MustCompile(`RPC URL\s+(http://\S+)`)

// chainIDAt asks the JSON-RPC at url for its chain id.
func chainIDAt(t *testing.T, url string) int64 {
	t.Helper()
	c, err := ethclient.Dial(url)
	require.NoError(t, err)
	defer c.Close()
	id, err := c.ChainID(context.Background())
	require.NoError(t, err)
	return id.Int64()
}

// `paymentsd devnet` runs both chains by default, each on its own port; the URLs it prints
// answer their chain's id.
func TestDevnetCommandRunsBothChains(t *testing.T) {
	out := runDevnetCommand(t, "--addr", "127.0.0.1:0", "--block-time", "100ms")
	assert.Contains(t, out, "Devnet        chain id 1337")
	assert.Contains(t, out, "Devnet L2     chain id 31337")
	urls := rpcLineRE.FindAllStringSubmatch(out, -1)
	require.Len(t, urls, 2, out)
	assert.NotEqual(t, urls[0][1], urls[1][1])
	assert.Equal(t, int64(1337), chainIDAt(t, urls[0][1]))
	assert.Equal(t, int64(31337), chainIDAt(t, urls[1][1]))
}

// --chain-id runs one chain only.
func TestDevnetCommandChainID(t *testing.T) {
	out := runDevnetCommand(t, "--addr", "127.0.0.1:0", "--chain-id", "31337", "--block-time", "100ms")
	assert.Contains(t, out, "chain id 31337")
	assert.NotContains(t, out, "chain id 1337\n")
	urls := rpcLineRE.FindAllStringSubmatch(out, -1)
	require.Len(t, urls, 1, out)
	assert.Equal(t, int64(31337), chainIDAt(t, urls[0][1]))
}

func TestDevnetCommandChainUsage(t *testing.T) {
	for _, args := range [][]string{
		{"devnet", "--chain-id", "1"},
		{"devnet", "--chain-id", "x"},
		{"devnet", "--addr", "127.0.0.1:65535"}, // no port after it for the second chain
	} {
		_, _, err := cli(t, args...)
		assert.ErrorIs(t, err, errUsage, "%v", args)
	}
}

func TestDevnetAddrs(t *testing.T) {
	for _, tc := range []struct{ devnet, l2, want1, want2 string }{
		{"127.0.0.1:8545", "", "127.0.0.1:8545", "127.0.0.1:8546"},
		{"on", "", devnet.DefaultAddr, "127.0.0.1:8546"},
		{"127.0.0.1:0", "", "127.0.0.1:0", "127.0.0.1:0"},
		{"127.0.0.1:8545", "127.0.0.1:9999", "127.0.0.1:8545", "127.0.0.1:9999"},
		{"127.0.0.1:8545", "off", "127.0.0.1:8545", "off"},
		{"127.0.0.1:65535", "off", "127.0.0.1:65535", "off"},
		{"off", "", "off", "off"},
		{"off", "off", "off", "off"},
		{"", "", "off", "off"},
	} {
		a, b, err := devnetAddrs(tc.devnet, tc.l2)
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, [2]string{tc.want1, tc.want2}, [2]string{a, b}, "%+v", tc)
	}
	for _, tc := range []struct{ devnet, l2, msg string }{
		{"off", "127.0.0.1:8546", "needs PAYMENTS_DEVNET on"},
		{"8545", "", "PAYMENTS_DEVNET=\"8545\""},
		{"127.0.0.1:8545", "8546", "PAYMENTS_DEVNET_L2=\"8546\""},
		{"127.0.0.1:8545", "127.0.0.1:8545", "two ports"},
		{"127.0.0.1:65535", "", "set PAYMENTS_DEVNET_L2"},
	} {
		_, _, err := devnetAddrs(tc.devnet, tc.l2)
		assert.ErrorContains(t, err, tc.msg, "%+v", tc)
	}
}

func TestLoadConfigDevnetChains(t *testing.T) {
	cliEnv(t)
	t.Setenv("PAYMENTS_DEVNET", "127.0.0.1:7545")
	c, err := loadConfig("x.db", "", "", "", "")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7545", c.Chains.Devnet)
	assert.Equal(t, "127.0.0.1:7546", c.Chains.DevnetL2, "the port after PAYMENTS_DEVNET's")
	assert.True(t, c.Chains.DevnetL2On())

	t.Setenv("PAYMENTS_DEVNET_L2", "off")
	c, err = loadConfig("x.db", "", "", "", "")
	require.NoError(t, err)
	assert.False(t, c.Chains.DevnetL2On())
	assert.True(t, c.Chains.DevnetOn())

	t.Setenv("PAYMENTS_DEVNET_L2", "")
	t.Setenv("PAYMENTS_DEVNET", "")
	c, err = loadConfig("postgres://u@h/db", "", "", "", "")
	require.NoError(t, err)
	assert.False(t, c.Chains.DevnetOn(), "PostgreSQL runs no devnet by default")
	assert.False(t, c.Chains.DevnetL2On())

	t.Setenv("PAYMENTS_DEVNET", "127.0.0.1:0")
	t.Setenv("PAYMENTS_RPC_URLS", "eip155:31337=http://127.0.0.1:1")
	_, err = loadConfig("x.db", "", "", "", "")
	assert.ErrorContains(t, err, "eip155:31337", "the second chain is run and named by URL: one must go")
	t.Setenv("PAYMENTS_DEVNET_L2", "off")
	c, err = loadConfig("x.db", "", "", "", "")
	require.NoError(t, err, "the second chain reached by URL, the first run in-process")
	assert.Equal(t, []string{"http://127.0.0.1:1"}, c.Chains.RPCURLs[31337])
}

func TestDevnetURL(t *testing.T) {
	cliEnv(t)
	t.Setenv("PAYMENTS_DEVNET_L2", "")
	for _, tc := range []struct {
		devnet, l2, rpc string
		id              int64
		want            string
	}{
		{"off", "", "", 1337, "http://" + devnet.DefaultAddr},
		{"off", "", "", 31337, "http://127.0.0.1:8546"},
		{"127.0.0.1:7000", "", "", 31337, "http://127.0.0.1:7001"},
		{"127.0.0.1:7000", "127.0.0.1:9000", "", 31337, "http://127.0.0.1:9000"},
		{"127.0.0.1:7000", "", "eip155:31337=http://l2.example:1", 31337, "http://l2.example:1"},
		{"127.0.0.1:7000", "", "eip155:31337=http://l2.example:1", 1337, "http://127.0.0.1:7000"},
	} {
		t.Setenv("PAYMENTS_DEVNET", tc.devnet)
		t.Setenv("PAYMENTS_DEVNET_L2", tc.l2)
		t.Setenv("PAYMENTS_RPC_URLS", tc.rpc)
		got, err := devnetURL(tc.id, "")
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, tc.want, got, "%+v", tc)
		got, err = devnetURL(tc.id, "http://flag:1")
		require.NoError(t, err)
		assert.Equal(t, "http://flag:1", got, "--rpc wins")
	}
	t.Setenv("PAYMENTS_RPC_URLS", "")
	t.Setenv("PAYMENTS_DEVNET", "127.0.0.1:0")
	_, err := devnetURL(31337, "")
	assert.ErrorContains(t, err, "--rpc", "a port picked at start cannot be guessed")
}

// devnetQuote: --quote picks any devnet chain's quote (and refuses a non-devnet one); without it
// the cheapest quote on eip155:1337 is paid, even when the L2's is cheaper.
func TestDevnetQuote(t *testing.T) {
	cents := func(c int64) *int64 { return &c }
	quote := func(chainID int64, symbol string, due int64) domain.Quote {
		return domain.Quote{ID: uuid.New(), Token: domain.Token{Chain: domain.Chain{ID: chainID}, Symbol: symbol},
			ExpectedAmountAsset: decimal.NewFromInt(due), AmountDueCents: cents(due)}
	}
	l1ETH, l1USDC := quote(1337, "ETH", 1010), quote(1337, "USDC", 1000)
	l2USDC, base := quote(31337, "USDC", 900), quote(8453, "USDC", 800)
	p := domain.Payment{ID: uuid.New(), Quotes: []domain.Quote{l1ETH, base, l2USDC, l1USDC}}

	q, err := devnetQuote(p, "")
	require.NoError(t, err)
	assert.Equal(t, l1USDC.ID, q.ID, "the cheapest on eip155:1337")
	q, err = devnetQuote(p, strings.ToUpper(l2USDC.ID.String()))
	require.NoError(t, err)
	assert.Equal(t, l2USDC.ID, q.ID, "--quote on the L2")
	q, err = devnetQuote(p, l1ETH.ID.String())
	require.NoError(t, err)
	assert.Equal(t, l1ETH.ID, q.ID)
	_, err = devnetQuote(p, base.ID.String())
	assert.ErrorContains(t, err, "not a devnet chain")
	_, err = devnetQuote(p, uuid.NewString())
	assert.ErrorContains(t, err, "has no quote")
	_, err = devnetQuote(domain.Payment{ID: p.ID, Quotes: []domain.Quote{l2USDC, base}}, "")
	assert.ErrorContains(t, err, "no quote on eip155:1337", "the L2 is paid only when asked for")
}
