package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// cmdDevnetPay pays a payment's devnet quote from a prefunded test account, as a customer's
// wallet would: a real signed transaction over the JSON-RPC of the quote's devnet chain (the
// --quote chosen, else the cheapest on eip155:1337).
func cmdDevnetPay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devnet pay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	paymentID := fs.String("payment", "", "payment id (required)")
	quoteID := fs.String("quote", "", fmt.Sprintf("quote id, on any devnet chain (default: the payment's cheapest quote on eip155:%d)", devnet.ChainID))
	amount := fs.String("amount", "", "amount in the token's smallest unit (default: the quote's exact amount; required for a deposit)")
	account := fs.Int("account", 0, fmt.Sprintf("paying test account 0-%d", devnet.HotWalletAccount-1))
	rpcURL := fs.String("rpc", "", "JSON-RPC URL of the quote's devnet chain (default: its PAYMENTS_RPC_URLS entry, else the address serve gives it: "+
		"PAYMENTS_DEVNET, "+devnet.DefaultAddr+" by default, for eip155:1337; PAYMENTS_DEVNET_L2, the port after, for eip155:31337)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	pid, err := uuid.Parse(*paymentID)
	if err != nil {
		fmt.Fprintln(stderr, "devnet pay: --payment (a payment id) is required")
		return errUsage
	}
	if *account < 0 || *account >= devnet.HotWalletAccount {
		fmt.Fprintf(stderr, "devnet pay: --account must be 0-%d (%d is the service's hot wallet)\n", devnet.HotWalletAccount-1, devnet.HotWalletAccount)
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	p, err := a.Store.Read(ctx).PaymentByID(pid, a.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no payment %s", pid)
	}
	if err != nil {
		return err
	}
	q, err := devnetQuote(p, *quoteID)
	if err != nil {
		return err
	}
	units := new(big.Int).Set(q.ExpectedAmountAsset.BigInt())
	if *amount != "" {
		if _, ok := units.SetString(*amount, 10); !ok || units.Sign() <= 0 {
			return fmt.Errorf("--amount must be a positive integer in the token's smallest unit (got %q)", *amount)
		}
	} else if p.Type == domain.TypeDeposit {
		return fmt.Errorf("payment %s is a deposit: say how much to send with --amount", p.ID)
	}
	want := q.Token.Chain.ID
	url, err := devnetURL(want, *rpcURL)
	if err != nil {
		return err
	}
	client, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return fmt.Errorf("devnet at %s: %w", chain.RedactURL(url), err)
	}
	defer client.Close()
	if id, err := client.ChainID(ctx); err != nil {
		return fmt.Errorf("devnet at %s: %w (is `paymentsd serve` or `paymentsd devnet` running?)", chain.RedactURL(url), err)
	} else if id.Int64() != want {
		return fmt.Errorf("%s serves chain %d, not the quote's devnet chain (%d)", chain.RedactURL(url), id.Int64(), want)
	}
	key, err := devnet.AccountKey(*account)
	if err != nil {
		return err
	}
	token := ""
	if q.Token.AssetType == domain.ERC20 {
		token = q.Token.ContractAddress
	}
	hash, err := devnet.Pay(ctx, client, key, token, common.HexToAddress(p.DepositAddress.Address), units)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, hash.Hex())
	fmt.Fprintf(stderr, "sent %s %s (smallest unit) from account %d to %s; waiting for it to be mined…\n",
		units, q.Token.Symbol, *account, p.DepositAddress.Address)
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		r, err := client.TransactionReceipt(wait, hash)
		if err == nil {
			fmt.Fprintf(stderr, "mined in block %d (status %d)\n", r.BlockNumber, r.Status)
			return nil
		}
		select {
		case <-wait.Done():
			fmt.Fprintln(stderr, "not mined within 30 s: is the devnet producing blocks?")
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// devnetQuote is the chosen quote (on a devnet chain), or the payment's cheapest quote on
// eip155:1337, the default chain of the README's walk-through.
func devnetQuote(p domain.Payment, id string) (domain.Quote, error) {
	if id != "" {
		for _, q := range p.Quotes {
			if q.ID.String() != strings.ToLower(strings.TrimSpace(id)) {
				continue
			}
			if !devnet.IsDevnet(q.Token.Chain.ID) {
				return domain.Quote{}, fmt.Errorf("quote %s is on %s, not a devnet chain: test accounts pay on %v only",
					q.ID, chain.CAIP2(q.Token.Chain.ID), devnet.ChainIDs())
			}
			return q, nil
		}
		return domain.Quote{}, fmt.Errorf("payment %s has no quote %s", p.ID, id)
	}
	var best *domain.Quote
	for i, q := range p.Quotes {
		if q.Token.Chain.ID != devnet.ChainID {
			continue
		}
		if best == nil || (q.AmountDueCents != nil && best.AmountDueCents != nil && *q.AmountDueCents < *best.AmountDueCents) {
			best = &p.Quotes[i]
		}
	}
	if best == nil {
		return domain.Quote{}, fmt.Errorf("payment %s has no quote on %s: was it created while the devnet was served? (--quote picks one on another devnet chain)",
			p.ID, chain.CAIP2(devnet.ChainID))
	}
	return *best, nil
}

// devnetURL is where the devnet chain id answers: flagURL, else its PAYMENTS_RPC_URLS entry,
// else the address `serve` gives it by PAYMENTS_DEVNET and PAYMENTS_DEVNET_L2 (read even when
// PAYMENTS_DEVNET is off here: the devnet may run in another process, `paymentsd devnet`).
func devnetURL(id int64, flagURL string) (string, error) {
	if flagURL != "" {
		return flagURL, nil
	}
	urls, err := chain.ParseRPCURLs(env("PAYMENTS_RPC_URLS", ""))
	if err != nil {
		return "", fmt.Errorf("PAYMENTS_RPC_URLS: %w", err)
	}
	if u := urls[id]; len(u) > 0 {
		return u[0], nil
	}
	first, second := env("PAYMENTS_DEVNET", devnet.DefaultAddr), env("PAYMENTS_DEVNET_L2", "")
	if first == "off" {
		first = devnet.DefaultAddr
	}
	if second == "off" {
		second = ""
	}
	if first, second, err = devnetAddrs(first, second); err != nil {
		return "", err
	}
	addr := first
	if id == devnet.L2ChainID {
		addr = second
	}
	if _, port, _ := net.SplitHostPort(addr); port == "0" {
		return "", fmt.Errorf("%s listens on a port picked at start (%s): say where with --rpc (serve logs it)", chain.CAIP2(id), addr)
	}
	return "http://" + addr, nil
}
