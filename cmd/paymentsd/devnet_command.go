package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/paymentsd/paymentsd/devnet"
)

// cmdDevnet runs the embedded dev chain alone until ctx is cancelled (SIGINT or
// SIGTERM), after printing what a developer needs to point a wallet or the
// gateway at it.
func cmdDevnet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devnet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", devnet.DefaultAddr, "HTTP JSON-RPC listen address (host:port; port 0 picks a free one)")
	blockTime := fs.Duration("block-time", time.Second, "interval between blocks (must be > 0)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "devnet: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if *blockTime <= 0 {
		// Nothing else would produce blocks: transactions would stay pending forever.
		fmt.Fprintln(stderr, "devnet: --block-time must be > 0")
		return errUsage
	}
	d, err := devnet.Start(ctx, devnet.Config{Addr: *addr, BlockTime: *blockTime, Log: newLogger(stderr, env("PAYMENTS_LOG_FORMAT", "text"))})
	if err != nil {
		return err
	}
	defer d.Close()

	fmt.Fprintf(stdout, "paymentsd devnet: a throwaway EVM chain, new on every start (nothing is persisted)\n\n")
	fmt.Fprintf(stdout, "RPC URL       %s\n", d.URL())
	fmt.Fprintf(stdout, "Chain id      %d\n", devnet.ChainID)
	fmt.Fprintf(stdout, "Genesis hash  %s\n", d.GenesisHash().Hex())
	fmt.Fprintf(stdout, "Block time    %s\n\n", *blockTime)
	fmt.Fprintf(stdout, "Tokens (%d decimals, %d each per account):\n", devnet.TokenDecimals, devnet.PrefundTokens)
	fmt.Fprintf(stdout, "  USDC  %s  (standard ERC-20)\n", devnet.USDCAddress)
	fmt.Fprintf(stdout, "  USDT  %s  (like Tether: transfer returns nothing)\n\n", devnet.USDTAddress)
	fmt.Fprintf(stdout, "Accounts (%d ETH each), from the PUBLIC test mnemonic\n  %q (path m/44'/60'/0'/0/i):\n",
		devnet.PrefundETH, devnet.Mnemonic)
	for i := range devnet.HotWalletAccount {
		fmt.Fprintf(stdout, "  (%d) %s\n", i, devnet.AccountAddress(i).Hex())
	}
	fmt.Fprintf(stdout, "  (%d) %s  reserved: the service's dev hot wallet; payers use 0-%d\n\n",
		devnet.HotWalletAccount, devnet.AccountAddress(devnet.HotWalletAccount).Hex(), devnet.HotWalletAccount-1)
	fmt.Fprintln(stdout, "Anyone can derive these keys: never send real funds to them on any chain.")
	fmt.Fprintln(stdout, "Press Ctrl-C to stop.")

	<-ctx.Done()
	if err := d.Close(); err != nil {
		return fmt.Errorf("devnet: stop: %w", err)
	}
	fmt.Fprintln(stderr, "devnet stopped")
	return nil
}
