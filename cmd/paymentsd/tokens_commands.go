package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
)

// cmdTokensIssue mints a dashboard access token for a merchant with the built-in issuer, acting
// in one mode: test unless --mode live says otherwise (touching live money is always explicit).
// Its role is --role (viewer unless said; the older --scope read is a viewer, write an admin).
// The token alone goes to stdout (for `TOKEN=$(…)`); its mode, role and expiry to stderr.
func cmdTokensIssue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tokens issue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	merchant := fs.String("merchant", "", "merchant id (required)")
	roleFlag := fs.String("role", "", "viewer, developer, admin or owner (default viewer; see docs/dashboard.md)")
	scope := fs.String("scope", "", "the older form of --role: read (viewer), or write (admin)")
	ttl := fs.Duration("ttl", dashauth.DefaultTTL, "lifetime, at most 24h")
	modeFlag := fs.String("mode", string(domain.ModeTest), "test, or live: the one mode the token acts in")
	asJSON := fs.Bool("json", false, "print one JSON object (accessToken, expiresAt, mode, …)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	id, err := uuid.Parse(*merchant)
	if err != nil {
		fmt.Fprintln(stderr, "tokens issue: --merchant must be a merchant id")
		return errUsage
	}
	role := domain.RoleViewer
	switch {
	case *roleFlag != "" && *scope != "":
		fmt.Fprintln(stderr, "tokens issue: give --role or --scope, not both")
		return errUsage
	case *roleFlag != "":
		r, err := domain.ParseRole(*roleFlag)
		if err != nil {
			fmt.Fprintln(stderr, "tokens issue: --role must be viewer, developer, admin or owner")
			return errUsage
		}
		role = r
	case *scope != "":
		if *scope != string(dashauth.ScopeRead) && *scope != string(dashauth.ScopeWrite) {
			fmt.Fprintln(stderr, "tokens issue: --scope must be read or write")
			return errUsage
		}
		role = dashauth.ScopeRole(*scope)
	}
	if *ttl < time.Second || *ttl > dashauth.MaxTTL {
		fmt.Fprintf(stderr, "tokens issue: --ttl must be between 1s and %s\n", dashauth.MaxTTL)
		return errUsage
	}
	mode, err := domain.ParseMode(*modeFlag)
	if err != nil || *modeFlag == "" {
		fmt.Fprintln(stderr, "tokens issue: --mode must be test or live")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	tok, exp, err := a.Tokens.MintService(ctx, id, mode, role, *ttl)
	if err != nil {
		return err
	}
	if *asJSON {
		legacy := dashauth.ScopeRead // the older scope the role includes, for scripts reading it
		if role.Includes(domain.RoleAdmin) {
			legacy = dashauth.ScopeWrite
		}
		return printJSON(stdout, map[string]any{"accessToken": tok, "tokenType": "Bearer", "expiresAt": exp.UTC(),
			"role": role, "scope": legacy, "merchantId": id, "mode": mode})
	}
	fmt.Fprintln(stdout, tok)
	fmt.Fprintf(stderr, "a %s-mode %s token for merchant %s, expires %s\n", mode, role, id, exp.UTC().Format(time.RFC3339))
	return nil
}

// cmdTokensRotateKey makes a new signing key; tokens of the previous one stay valid until they expire.
func cmdTokensRotateKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tokens rotate-key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	k, err := a.Tokens.Rotate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "new signing key %s; the previous keys stay published until their tokens expire\n", k.KID)
	return nil
}
