package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/paymentsd/paymentsd/app"
	"io"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/payments"
)

// operatorApp opens the database for a one-shot operator command; logs go to stderr.
func operatorApp(ctx context.Context, dbURL string, stderr io.Writer) (*app.App, error) {
	cfg, err := loadConfig(dbURL, "", "", env("PAYMENTS_PUBLIC_URL", "http://localhost:8080"), "")
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, cfg, newLogger(stderr, cfg.LogFormat))
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func cmdMigrate(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	a.Close()
	fmt.Fprintln(stderr, "migrations up to date")
	return nil
}

func cmdMerchantsCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merchants create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	name := fs.String("name", "", "merchant name (required)")
	short := fs.String("short-name", "", "display name shown on payments (default: name)")
	logo := fs.String("logo-url", "", "logo URL")
	deposits := fs.Bool("deposits", false, "enable deposits")
	withdrawalsOn := fs.Bool("withdrawals", false, "enable withdrawals")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if strings.TrimSpace(*name) == "" {
		fmt.Fprintln(stderr, "merchants create: --name is required")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	in := merchants.CreateInput{Name: *name, ShortName: *short, DepositsEnabled: *deposits, WithdrawalsEnabled: *withdrawalsOn}
	if *logo != "" {
		in.LogoURL = logo
	}
	c, err := a.Merchants.Create(ctx, in)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"merchantId": c.Merchant.ID, "name": c.Merchant.Name,
			"shortName": c.Merchant.ShortName, "depositsEnabled": c.Merchant.DepositsEnabled,
			"withdrawalsEnabled": c.Merchant.WithdrawalsEnabled, "secretKey": c.SecretKey, "keyPrefix": c.KeyPrefix})
	}
	fmt.Fprintf(stdout, "merchant id: %s\nsecret key:  %s   (shown once)\n", c.Merchant.ID, c.SecretKey)
	return nil
}

func cmdKeysCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	merchant := fs.String("merchant", "", "merchant id (required)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	id, err := uuid.Parse(*merchant)
	if err != nil {
		fmt.Fprintln(stderr, "keys create: --merchant must be a merchant id")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	c, err := a.Merchants.CreateKey(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"merchantId": c.Merchant.ID, "secretKey": c.SecretKey, "keyPrefix": c.KeyPrefix})
	}
	fmt.Fprintf(stdout, "secret key: %s   (shown once; prefix %s)\n", c.SecretKey, c.KeyPrefix)
	return nil
}

func cmdKeysRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keys revoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	prefix := fs.String("key-prefix", "", "display prefix of the key(s) to revoke, e.g. sk_live_AbCd1234 (required)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *prefix == "" {
		fmt.Fprintln(stderr, "keys revoke: --key-prefix is required")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	n, err := a.Merchants.RevokeKeys(ctx, *prefix)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %d key(s) with prefix %s\n", n, *prefix)
	return nil
}

func cmdWithdrawalConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merchants withdrawal-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	merchant := fs.String("merchant", "", "merchant id (required)")
	chainList := fs.String("chains", "", "comma-separated CAIP-2 chain ids, e.g. eip155:1,eip155:8453")
	token := fs.String("token", "", "withdrawal token symbol, e.g. USDC")
	minC := fs.Int64("min", 0, "minimum amount in cents")
	maxC := fs.Int64("max", 0, "maximum amount in cents")
	walletAddr := fs.String("wallet", "", "backend (hot) wallet address")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	id, err := uuid.Parse(*merchant)
	if err != nil {
		fmt.Fprintln(stderr, "merchants withdrawal-config: --merchant must be a merchant id")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	cfg, err := a.Merchants.WithdrawalConfig(ctx, id)
	if err != nil {
		return err
	}
	changed := false
	if *chainList != "" {
		cfg.ChainIDs = nil
		for _, s := range strings.Split(*chainList, ",") {
			cid, err := chains.ParseCAIP2(strings.TrimSpace(s))
			if err != nil {
				return err
			}
			cfg.ChainIDs = append(cfg.ChainIDs, cid)
		}
		changed = true
	}
	if *token != "" {
		cfg.TokenSymbol, changed = strings.ToUpper(*token), true
	}
	if *minC != 0 {
		cfg.MinAmountCents, changed = *minC, true
	}
	if *maxC != 0 {
		cfg.MaxAmountCents, changed = *maxC, true
	}
	if *walletAddr != "" {
		cfg.BackendWalletAddress, changed = strings.ToLower(*walletAddr), true
	}
	if changed {
		if err := a.Merchants.SetWithdrawalConfig(ctx, cfg); err != nil {
			return err
		}
	}
	ids := make([]string, len(cfg.ChainIDs))
	for i, c := range cfg.ChainIDs {
		ids[i] = chains.CAIP2(c)
	}
	return printJSON(stdout, map[string]any{"merchantId": cfg.MerchantID, "chains": ids, "token": cfg.TokenSymbol,
		"minAmountCents": cfg.MinAmountCents, "maxAmountCents": cfg.MaxAmountCents, "backendWalletAddress": cfg.BackendWalletAddress})
}

func cmdPaymentsSettle(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("payments settle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	paymentID := fs.String("payment", "", "payment id (required)")
	quoteID := fs.String("quote", "", "quote id (default: the payment's cheapest active quote)")
	txHash := fs.String("tx-hash", "", "transaction hash, 0x + 64 hex (required)")
	amount := fs.String("amount-asset", "", "amount received in the token's smallest unit (default: the quote's expected amount; required for deposits)")
	key := fs.String("idempotency-key", "", "make a retry of this command safe: the same key replays the first result")
	asJSON := fs.Bool("json", false, "print the settled payment as JSON")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	pid, err := uuid.Parse(*paymentID)
	if err != nil || *txHash == "" {
		fmt.Fprintln(stderr, "payments settle: --payment (a payment id) and --tx-hash are required")
		return errUsage
	}
	in := payments.SettleInput{PaymentID: pid, TxHash: *txHash}
	if *quoteID != "" {
		qid, err := uuid.Parse(*quoteID)
		if err != nil {
			return fmt.Errorf("--quote must be a quote id")
		}
		in.QuoteID = &qid
	}
	if *amount != "" {
		d, err := decimal.NewFromString(*amount)
		if err != nil {
			return fmt.Errorf("--amount-asset must be an integer: %w", err)
		}
		in.AmountAsset = &d
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	var guard *idempotency.Guard
	if *key != "" {
		merchant, err := a.Payments.MerchantOf(ctx, pid)
		if err != nil {
			return err
		}
		if guard, err = operatorGuard(ctx, a, merchant, *key, "cli:payments.settle", fs, stdout, stderr); guard == nil {
			return err // replayed, or refused
		}
	}
	step := idempotency.NewStep(guard, func(p domain.Payment) (idempotency.Outcome, error) {
		return jsonOutcome(settledJSON(p))
	})
	p, err := a.Payments.Settle(ctx, in, step)
	if errors.Is(err, idempotency.ErrDuplicate) {
		return replayOperator(ctx, a, guard, stdout, stderr)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := stdout.Write(step.Outcome().Body)
		return err
	}
	r := p.Receipt
	fmt.Fprintf(stdout, "payment %s completed: %s %s received, merchant credited %d cents\n", p.ID,
		r.SettledAmountAsset, r.Token.Symbol, p.AmountMerchantNetCents)
	return nil
}

func settledJSON(p domain.Payment) map[string]any {
	r := p.Receipt
	return map[string]any{"paymentId": p.ID, "status": p.Status, "amountInCents": p.AmountInCents,
		"amountDueCents": p.AmountDueCents, "convenienceFeeCents": p.ConvenienceFeeCents,
		"merchantFeeCents": p.MerchantFeeCents, "swapFeeCents": p.SwapFeeCents,
		"amountMerchantNetCents": p.AmountMerchantNetCents, "quoteId": r.QuoteID, "tokenId": r.Token.ID,
		"settledAmountAsset": r.SettledAmountAsset.String(), "settledAmountUsd": r.SettledAmountUSD.StringFixed(2),
		"txHash": r.TxHash, "processedBy": r.ProcessedBy}
}

func cmdWithdrawalsCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("withdrawals cancel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	withdrawalID := fs.String("withdrawal", "", "withdrawal id (required)")
	key := fs.String("idempotency-key", "", "make a retry of this command safe: the same key replays the first result")
	asJSON := fs.Bool("json", false, "print the cancelled withdrawal as JSON")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	wid, err := uuid.Parse(*withdrawalID)
	if err != nil {
		fmt.Fprintln(stderr, "withdrawals cancel: --withdrawal (a withdrawal id) is required")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	var guard *idempotency.Guard
	if *key != "" {
		merchant, err := a.Withdrawals.MerchantOf(ctx, wid)
		if err != nil {
			return err
		}
		if guard, err = operatorGuard(ctx, a, merchant, *key, "cli:withdrawals.cancel", fs, stdout, stderr); guard == nil {
			return err
		}
	}
	step := idempotency.NewStep(guard, func(w domain.Withdrawal) (idempotency.Outcome, error) {
		return jsonOutcome(map[string]any{"withdrawalId": w.ID, "merchantId": w.MerchantID, "status": w.Status,
			"amountInCents": w.AmountInCents, "restoredCents": w.AmountInCents})
	})
	w, err := a.Withdrawals.Cancel(ctx, wid, step)
	if errors.Is(err, idempotency.ErrDuplicate) {
		return replayOperator(ctx, a, guard, stdout, stderr)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := stdout.Write(step.Outcome().Body)
		return err
	}
	fmt.Fprintf(stdout, "withdrawal %s cancelled: %d cents restored to the merchant's balance\n", w.ID, w.AmountInCents)
	return nil
}

// operatorGuard scopes an operator command's idempotency key to the entity's merchant and
// hashes the command's flags (not the database URL), so a retry with the same flags replays
// the first result and one with other flags is refused. It returns nil after answering a
// replay or a refusal itself.
func operatorGuard(ctx context.Context, a *app.App, merchant uuid.UUID, key, op string, fs *flag.FlagSet, stdout, stderr io.Writer) (*idempotency.Guard, error) {
	flags := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "database-url" && f.Name != "json" {
			flags[f.Name] = f.Value.String()
		}
	})
	canon, err := json.Marshal(flags)
	if err != nil {
		return nil, err
	}
	r := idempotency.Request{MerchantID: merchant, Key: key, Operation: op, Hash: idempotency.RequestHash(op, canon)}
	out, err := a.Keeper.Lookup(ctx, r)
	if err != nil {
		return nil, err
	}
	if out != nil {
		fmt.Fprintln(stderr, "already done under this idempotency key: the stored result follows")
		_, err := stdout.Write(out.Body)
		return nil, err
	}
	return a.Keeper.Guard(r), nil
}

// replayOperator answers a command whose key a concurrent run committed first.
func replayOperator(ctx context.Context, a *app.App, g *idempotency.Guard, stdout, stderr io.Writer) error {
	out, err := a.Keeper.Replay(ctx, g.Request())
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "already done under this idempotency key: the stored result follows")
	_, err = stdout.Write(out.Body)
	return err
}

func jsonOutcome(v any) (idempotency.Outcome, error) {
	raw, err := json.MarshalIndent(v, "", "  ")
	return idempotency.Outcome{Status: 200, Body: append(raw, '\n')}, err
}
