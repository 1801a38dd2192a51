package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/paymentsd/paymentsd/app"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/merchants"
)

// operatorApp opens the database for a one-shot operator command; logs go to stderr. It keeps
// the stored catalogue (written by serve or migrate) unless the database has none.
func operatorApp(ctx context.Context, dbURL string, stderr io.Writer) (*app.App, error) {
	return openOperatorApp(ctx, dbURL, stderr, true)
}

func openOperatorApp(ctx context.Context, dbURL string, stderr io.Writer, keepCatalog bool) (*app.App, error) {
	cfg, err := loadConfig(dbURL, "", "", env("PAYMENTS_PUBLIC_URL", "http://localhost:8080"), "")
	if err != nil {
		return nil, err
	}
	cfg.Chains.Passive = true // a one-shot command neither runs the devnet nor watches chains
	cfg.Chains.KeepStoredCatalog = keepCatalog
	if err := requireSecretsKey(cfg); err != nil {
		return nil, err
	}
	a, err := app.Open(ctx, cfg, newLogger(stderr, cfg.LogFormat))
	if err != nil {
		return nil, err
	}
	if os.Getenv("PAYMENTS_RESPONSE_SHAPE") == "" {
		// The events a command writes carry objects in the shape the deployment serves.
		if err := a.FollowRecordedShape(ctx); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
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
	a, err := openOperatorApp(ctx, *dbURL, stderr, false) // the schema and the catalogue file
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
	modeFlag := fs.String("mode", "test", "the first secret key's mode: test (testnets and the devnet) or live (mainnets)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if strings.TrimSpace(*name) == "" {
		fmt.Fprintln(stderr, "merchants create: --name is required")
		return errUsage
	}
	mode, err := domain.ParseMode(*modeFlag)
	if err != nil {
		fmt.Fprintf(stderr, "merchants create: --%v\n", err)
		return errUsage
	}
	var badLogo *domain.InvalidInputError
	if *logo != "" && errors.As(merchants.CheckLogoURL(*logo), &badLogo) {
		fmt.Fprintf(stderr, "merchants create: --logo-url %s\n", badLogo.Message)
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	in := merchants.CreateInput{Name: *name, ShortName: *short, DepositsEnabled: *deposits, WithdrawalsEnabled: *withdrawalsOn, Mode: mode}
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
			"withdrawalsEnabled": c.Merchant.WithdrawalsEnabled, "secretKey": c.SecretKey, "keyPrefix": c.KeyPrefix, "mode": c.Key.Mode})
	}
	fmt.Fprintf(stdout, "merchant id: %s\nsecret key:  %s   (%s mode; shown once)\n", c.Merchant.ID, c.SecretKey, c.Key.Mode)
	return nil
}

func cmdKeysCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	merchant := fs.String("merchant", "", "merchant id (required)")
	modeFlag := fs.String("mode", "test", "the key's mode: test (testnets and the devnet) or live (mainnets)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	id, err := uuid.Parse(*merchant)
	if err != nil {
		fmt.Fprintln(stderr, "keys create: --merchant must be a merchant id")
		return errUsage
	}
	mode, err := domain.ParseMode(*modeFlag)
	if err != nil {
		fmt.Fprintf(stderr, "keys create: --%v\n", err)
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	c, err := a.Merchants.CreateKey(ctx, id, mode)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"merchantId": c.Merchant.ID, "secretKey": c.SecretKey, "keyPrefix": c.KeyPrefix, "mode": c.Key.Mode})
	}
	fmt.Fprintf(stdout, "secret key: %s   (%s mode; shown once; prefix %s)\n", c.SecretKey, c.Key.Mode, c.KeyPrefix)
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
