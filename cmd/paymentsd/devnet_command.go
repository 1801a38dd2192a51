package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/paymentsd/paymentsd/devnet"
)

// cmdDevnet runs the embedded dev chains alone (both, or the one --chain-id picks) until ctx is
// cancelled (SIGINT or SIGTERM), after printing what a developer needs to point a wallet or the
// gateway at them.
func cmdDevnet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devnet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", devnet.DefaultAddr, fmt.Sprintf("HTTP JSON-RPC listen address of chain %d (host:port; port 0 picks a free one)", devnet.ChainID))
	l2Addr := fs.String("l2-addr", "", fmt.Sprintf("listen address of chain %d (default: the port after --addr's; 0 stays 0)", devnet.L2ChainID))
	chainID := fs.Int64("chain-id", 0, fmt.Sprintf("run only this chain (%d or %d; default: both)", devnet.ChainID, devnet.L2ChainID))
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
	if *chainID != 0 && !devnet.IsDevnet(*chainID) {
		fmt.Fprintf(stderr, "devnet: --chain-id must be %d or %d\n", devnet.ChainID, devnet.L2ChainID)
		return errUsage
	}
	if *l2Addr == "" {
		next, err := devnet.NextAddr(*addr)
		if err != nil {
			fmt.Fprintf(stderr, "devnet: %v (set --l2-addr)\n", err)
			return errUsage
		}
		*l2Addr = next
	}
	log := newLogger(stderr, env("PAYMENTS_LOG_FORMAT", "text"))
	var running []*devnet.Devnet
	defer func() {
		for _, d := range running {
			_ = d.Close()
		}
	}()
	for _, c := range devnet.Chains() {
		if *chainID != 0 && c.ID != *chainID {
			continue
		}
		listen := *addr
		if c.ID == devnet.L2ChainID {
			listen = *l2Addr
		}
		d, err := devnet.Start(ctx, devnet.Config{ChainID: c.ID, Addr: listen, BlockTime: *blockTime, Log: log})
		if err != nil {
			return err
		}
		running = append(running, d)
	}

	fmt.Fprintf(stdout, "paymentsd devnet: throwaway EVM chains, new on every start (nothing is persisted)\n\n")
	for _, d := range running {
		fmt.Fprintf(stdout, "%-10s    chain id %d\n", d.Name(), d.ChainID())
		fmt.Fprintf(stdout, "  RPC URL       %s\n", d.URL())
		fmt.Fprintf(stdout, "  Genesis hash  %s\n", d.GenesisHash().Hex())
	}
	fmt.Fprintf(stdout, "Block time      %s\n\n", *blockTime)
	fmt.Fprintf(stdout, "Tokens, at the same addresses on every chain (%d decimals, %d each per account):\n", devnet.TokenDecimals, devnet.PrefundTokens)
	fmt.Fprintf(stdout, "  USDC  %s  (standard ERC-20)\n", devnet.USDCAddress)
	fmt.Fprintf(stdout, "  USDT  %s  (like Tether: transfer returns nothing)\n\n", devnet.USDTAddress)
	fmt.Fprintf(stdout, "Accounts (%d ETH each on every chain), from the PUBLIC test mnemonic\n  %q (path m/44'/60'/0'/0/i):\n",
		devnet.PrefundETH, devnet.Mnemonic)
	for i := range devnet.HotWalletAccount {
		fmt.Fprintf(stdout, "  (%d) %s\n", i, devnet.AccountAddress(i).Hex())
	}
	fmt.Fprintf(stdout, "  (%d) %s  reserved: the service's dev hot wallet; payers use 0-%d\n\n",
		devnet.HotWalletAccount, devnet.AccountAddress(devnet.HotWalletAccount).Hex(), devnet.HotWalletAccount-1)
	fmt.Fprintln(stdout, "Anyone can derive these keys: never send real funds to them on any chain.")
	fmt.Fprintln(stdout, "Press Ctrl-C to stop.")

	<-ctx.Done()
	var errs []error
	for _, d := range running {
		if err := d.Close(); err != nil {
			errs = append(errs, fmt.Errorf("devnet: stop chain %d: %w", d.ChainID(), err))
		}
	}
	running = nil
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "devnet stopped")
	return nil
}
