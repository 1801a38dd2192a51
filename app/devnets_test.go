package app

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/payments"
)

// The catalogue package keeps the devnet chain ids apart from the devnet (whose go-ethereum node
// it does not import); both must name the same chains.
func TestDevnetChainIDsAgree(t *testing.T) {
	for _, id := range devnet.ChainIDs() {
		assert.True(t, chains.IsDevnet(id), "chain %d", id)
	}
	for _, id := range []int64{chains.DevnetID, chains.DevnetL2ID} {
		assert.True(t, devnet.IsDevnet(id), "chain %d", id)
	}
	assert.False(t, chains.IsDevnet(1))
}

// A process running both devnet chains dials, watches and pays out on both (the development hot
// wallet on each), and a test payment is quoted in both chains' tokens.
func TestBothDevnetChainsWired(t *testing.T) {
	var logs bytes.Buffer
	cfg := onchaintest.Config(filepath.Join(t.TempDir(), "p.db"), config.Chains{Devnet: "127.0.0.1:0", DevnetL2: "127.0.0.1:0",
		WatchInterval: time.Second, RPCTimeout: 5 * time.Second}, time.Hour, 15*time.Minute)
	ctx := context.Background()
	a, err := Open(ctx, cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(a.Close)

	require.Len(t, a.Devnets, 2)
	assert.Same(t, a.Devnet, a.Devnets[0])
	assert.Equal(t, []int64{1337, 31337}, []int64{a.Devnets[0].ChainID(), a.Devnets[1].ChainID()})
	assert.NotEqual(t, a.Devnets[0].URL(), a.Devnets[1].URL(), "two free ports")
	for _, d := range a.Devnets {
		assert.Contains(t, logs.String(), "at "+d.URL(), "the log names each chain's URL")
		require.NotNil(t, a.Clients[d.ChainID()], "chain %d dialled", d.ChainID())
	}
	var watched, paid []int64
	for _, w := range a.Watchers {
		watched = append(watched, w.Info.ID)
	}
	hot := strings.ToLower(devnet.AccountAddress(devnet.HotWalletAccount).Hex())
	for _, m := range a.Payouts {
		paid = append(paid, m.Info.ID)
		require.NotNil(t, m.Wallet, "chain %d has a hot wallet", m.Info.ID)
		assert.Equal(t, hot, strings.ToLower(m.Wallet.Address().Hex()))
	}
	assert.Equal(t, []int64{1337, 31337}, watched)
	assert.Equal(t, []int64{1337, 31337}, paid)
	assert.Equal(t, hot, a.HotWalletAddress(devnet.L2ChainID))
	assert.Empty(t, a.HotWalletAddress(8453), "the development hot wallet pays on the devnet chains only")
	assert.NotNil(t, a.devnetPayer(), "the checkout's test wallet is offered")
	assert.Equal(t, a.Devnets[1].URL(), a.devnetURL(devnet.L2ChainID))
	assert.Empty(t, a.devnetURL(8453))

	created, err := a.Merchants.Create(ctx, merchants.CreateInput{Name: "Two chains", ShortName: "Two", DepositsEnabled: true,
		Mode: domain.ModeTest})
	require.NoError(t, err)
	amount := int64(1000)
	c, err := a.Payments.Create(ctx, created.Merchant, payments.CreateInput{Type: domain.TypePayment, Currency: "USD",
		OrderID: "two", Amount: &amount}, nil)
	require.NoError(t, err)
	quoted := map[string]bool{}
	for _, q := range c.Payment.Quotes {
		quoted[q.Token.ID] = true
	}
	assert.Equal(t, map[string]bool{
		"eip155:1337/slip44:60": true, "eip155:1337/erc20:" + devnet.USDCAddress: true, "eip155:1337/erc20:" + devnet.USDTAddress: true,
		"eip155:31337/slip44:60": true, "eip155:31337/erc20:" + devnet.USDCAddress: true, "eip155:31337/erc20:" + devnet.USDTAddress: true,
	}, quoted, "both devnet chains' tokens, nothing else (no other chain is watched)")
}

// PAYMENTS_DEVNET_L2=off runs the first chain alone; the second is then not served.
func TestSecondDevnetChainOff(t *testing.T) {
	cfg := onchaintest.Config(filepath.Join(t.TempDir(), "p.db"), config.Chains{Devnet: "127.0.0.1:0", DevnetL2: "off",
		WatchInterval: time.Second, RPCTimeout: 5 * time.Second}, time.Hour, 15*time.Minute)
	a, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	require.Len(t, a.Devnets, 1)
	assert.Equal(t, int64(1337), a.Devnet.ChainID())
	l2, ok := a.Catalog.Chain(devnet.L2ChainID)
	require.True(t, ok)
	assert.False(t, l2.Enabled, "not run, not served")
	assert.Nil(t, a.Clients[devnet.L2ChainID])
}
