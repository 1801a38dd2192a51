package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
)

// assetJSON is one accepted asset as the command prints it.
type assetJSON struct {
	ChainID string `json:"chainId"`
	Symbol  string `json:"symbol"`
	TokenID string `json:"tokenId"`
}

func cmdAcceptedAssets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merchants accepted-assets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	merchant := fs.String("merchant", "", "merchant id (required)")
	set := fs.String("set", "", "comma-separated assets to accept, CHAIN/SYMBOL or token ids, e.g. eip155:8453/USDC,eip155:1/ETH; 'all' for every served asset (the default)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	id, err := uuid.Parse(*merchant)
	if err != nil {
		fmt.Fprintln(stderr, "merchants accepted-assets: --merchant must be a merchant id")
		return errUsage
	}
	setGiven := false
	fs.Visit(func(f *flag.Flag) { setGiven = setGiven || f.Name == "set" })
	if setGiven && strings.TrimSpace(*set) == "" {
		fmt.Fprintln(stderr, "merchants accepted-assets: --set needs a list of assets, or 'all' for every served asset")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	switch {
	case !setGiven:
	case strings.EqualFold(strings.TrimSpace(*set), "all"):
		if err := a.Merchants.ResetAcceptedAssets(ctx, id); err != nil {
			return err
		}
	default:
		ids, err := a.Merchants.ParseAssets(*set)
		if err != nil {
			return err
		}
		if err := a.Merchants.SetAcceptedAssets(ctx, id, ids); err != nil {
			return err
		}
	}
	acc, err := a.Merchants.AcceptedAssets(ctx, id)
	if err != nil {
		return err
	}
	for _, tid := range acc.Unserved {
		fmt.Fprintf(stderr, "warning: accepted asset %s is not served by this deployment: no quote is made in it\n", tid)
	}
	if len(acc.Tokens) == 0 {
		fmt.Fprintln(stderr, "warning: no accepted asset is served by this deployment: payments for this merchant fail until --set names a served asset (or 'all')")
	}
	assets := make([]assetJSON, len(acc.Tokens))
	for i, t := range acc.Tokens {
		assets[i] = assetJSON{ChainID: chains.CAIP2(t.Chain.ID), Symbol: t.Symbol, TokenID: t.ID}
	}
	return printJSON(stdout, struct {
		MerchantID uuid.UUID   `json:"merchantId"`
		Default    bool        `json:"default"`
		Assets     []assetJSON `json:"assets"`
	}{id, acc.Default, assets})
}
