package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/internal/testlog"
)

// "devnet" followed by flags runs the chain until the context ends, printing the
// RPC URL, tokens and payer accounts but never a private key.
func TestDevnetCommand(t *testing.T) {
	t.Setenv("PAYMENTS_LOG_FORMAT", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout testlog.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"devnet", "--addr", "127.0.0.1:0", "--block-time", "100ms"}, &stdout, io.Discard)
	}()
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "Ctrl-C") }, 20*time.Second, 10*time.Millisecond)
	out := stdout.String()
	assert.Contains(t, out, "http://127.0.0.1:")
	assert.Contains(t, out, "1337")
	assert.Contains(t, out, devnet.USDCAddress)
	assert.Contains(t, out, devnet.USDTAddress)
	assert.Contains(t, out, devnet.Mnemonic)
	for i := range devnet.NumAccounts {
		assert.Contains(t, out, devnet.AccountAddress(i).Hex())
	}
	assert.Contains(t, out, "dev hot wallet")
	key0 := "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" // account 0's well-known key
	assert.NotContains(t, strings.ToLower(out), key0)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("devnet did not stop on cancel")
	}
}

func TestDevnetCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"devnet", "--block-time", "0"},
		{"devnet", "--nope"},
		{"devnet", "-addr", "127.0.0.1:0", "extra"},
	} {
		_, _, err := cli(t, args...)
		assert.ErrorIs(t, err, errUsage, "%v", args)
	}
	_, errOut, err := cli(t, "devnet", "frobnicate")
	assert.ErrorIs(t, err, errUsage)
	assert.Contains(t, errOut, `unknown command "devnet frobnicate"`, "a word after devnet names a subcommand, not the chain's flags")
}
