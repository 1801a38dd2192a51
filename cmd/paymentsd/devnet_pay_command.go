package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
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
// wallet would: a real signed transaction over the devnet's JSON-RPC.
func cmdDevnetPay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devnet pay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	paymentID := fs.String("payment", "", "payment id (required)")
	quoteID := fs.String("quote", "", "quote id (default: the payment's cheapest devnet quote)")
	amount := fs.String("amount", "", "amount in the token's smallest unit (default: the quote's exact amount; required for a deposit)")
	account := fs.Int("account", 0, fmt.Sprintf("paying test account 0-%d", devnet.HotWalletAccount-1))
	rpcURL := fs.String("rpc", "", "devnet JSON-RPC URL (default: PAYMENTS_RPC_URLS' eip155:1337 entry, else http://PAYMENTS_DEVNET or "+devnet.DefaultAddr+")")
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
	url, err := devnetURL(*rpcURL)
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
	} else if id.Int64() != devnet.ChainID {
		return fmt.Errorf("%s serves chain %d, not the devnet (%d)", chain.RedactURL(url), id.Int64(), devnet.ChainID)
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

// devnetQuote is the chosen quote, or the payment's cheapest devnet quote.
func devnetQuote(p domain.Payment, id string) (domain.Quote, error) {
	var best *domain.Quote
	for i, q := range p.Quotes {
		if id != "" {
			if q.ID.String() == strings.ToLower(id) {
				return q, nil
			}
			continue
		}
		if q.Token.Chain.ID != devnet.ChainID {
			continue
		}
		if best == nil || (q.AmountDueCents != nil && best.AmountDueCents != nil && *q.AmountDueCents < *best.AmountDueCents) {
			best = &p.Quotes[i]
		}
	}
	if id != "" {
		return domain.Quote{}, fmt.Errorf("payment %s has no quote %s", p.ID, id)
	}
	if best == nil {
		return domain.Quote{}, fmt.Errorf("payment %s has no devnet quote: was it created while the devnet was served?", p.ID)
	}
	return *best, nil
}

// devnetURL is where the devnet answers.
func devnetURL(flagURL string) (string, error) {
	if flagURL != "" {
		return flagURL, nil
	}
	urls, err := chain.ParseRPCURLs(env("PAYMENTS_RPC_URLS", ""))
	if err != nil {
		return "", fmt.Errorf("PAYMENTS_RPC_URLS: %w", err)
	}
	if u := urls[devnet.ChainID]; len(u) > 0 {
		return u[0], nil
	}
	addr := env("PAYMENTS_DEVNET", devnet.DefaultAddr)
	if addr == "off" || addr == "on" {
		addr = devnet.DefaultAddr
	}
	return "http://" + addr, nil
}
