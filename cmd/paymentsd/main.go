// Command paymentsd is the payments gateway: the HTTP API (serve), its migrations, and the
// operator's commands for merchants, keys and manual settlement.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/paymentsd/paymentsd/audit"
)

const usage = `usage: paymentsd <command> [flags]

commands:
  serve                         run the HTTP API (applies migrations first)
  migrate                       apply database migrations
  merchants create              create a merchant and its first secret key [--mode test|live] (default test)
  merchants withdrawal-config   show or edit a merchant's withdrawal configuration
  merchants accepted-assets     show or edit the assets (chain, token) a merchant is quoted in
  keys create                   issue another secret key for a merchant: --merchant ID [--mode test|live] (default test)
  keys revoke                   revoke keys by their display prefix
  payments settle               settle a payment manually (operator)
  withdrawals cancel            cancel a pending withdrawal and restore the balance (operator)
  webhooks create               a merchant's webhook endpoint: --merchant ID --url URL [--events a,b] [--json] (prints the secret once)
  webhooks list|delete|rotate-secret   --merchant ID | --endpoint ID
  webhooks deliveries           the delivery log: --merchant ID [--endpoint ID] [--event ID] [--json]
  webhooks redeliver            --event ID [--endpoint ID]: deliver an event again (same webhook-id)
  users create                  a dashboard user: --email E --merchant ID --role viewer|developer|admin|owner [--password-file F] [--json] (prints a generated password once)
  users list|disable|reset-password   --merchant ID | --email E (reset-password prints the new password once)
  users invite                  a single-use invitation link: --email E --merchant ID --role R
  tokens issue                  a dashboard access token: --merchant ID [--mode test|live] [--role viewer|developer|admin|owner] [--ttl 15m] [--json]
  tokens rotate-key             a new signing key for dashboard tokens (the old ones stay published until their tokens expire)
  sweep                         sweep deposit addresses into the hot wallet now, whatever the threshold [--chain C] [--wait 5m]
  treasury                      what merchants are owed; hot wallet, unswept and swept balances per chain and token
  devnet                        run the embedded EVM dev chains (1337 and 31337 [--chain-id N], USDC/USDT, funded test accounts)
  devnet pay --payment ID       pay a payment's devnet quote from a test account [--quote ID] [--amount UNITS] [--account N] [--rpc URL]

Every command reads DATABASE_URL (or --database-url); default: the embedded SQLite file data/paymentsd.db.
Run 'paymentsd <command> -h' for its flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "paymentsd:", err)
		}
		os.Exit(exitCode(err))
	}
}

var errUsage = errors.New("usage")

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[0], args[1:]
	sub := ""
	if len(rest) > 0 {
		sub = rest[0]
	}
	if cmd != "serve" {
		// A command's changes are the operator's in the audit log (a request names its own actor).
		ctx = audit.WithActor(ctx, audit.Operator)
	}
	switch {
	case cmd == "serve":
		return cmdServe(ctx, rest, stdout, stderr)
	case cmd == "migrate":
		return cmdMigrate(ctx, rest, stderr)
	case cmd == "merchants" && sub == "create":
		return cmdMerchantsCreate(ctx, rest[1:], stdout, stderr)
	case cmd == "merchants" && sub == "withdrawal-config":
		return cmdWithdrawalConfig(ctx, rest[1:], stdout, stderr)
	case cmd == "merchants" && sub == "accepted-assets":
		return cmdAcceptedAssets(ctx, rest[1:], stdout, stderr)
	case cmd == "keys" && sub == "create":
		return cmdKeysCreate(ctx, rest[1:], stdout, stderr)
	case cmd == "keys" && sub == "revoke":
		return cmdKeysRevoke(ctx, rest[1:], stdout, stderr)
	case cmd == "payments" && sub == "settle":
		return cmdPaymentsSettle(ctx, rest[1:], stdout, stderr)
	case cmd == "withdrawals" && sub == "cancel":
		return cmdWithdrawalsCancel(ctx, rest[1:], stdout, stderr)
	case cmd == "webhooks" && sub == "create":
		return cmdWebhooksCreate(ctx, rest[1:], stdout, stderr)
	case cmd == "webhooks" && sub == "list":
		return cmdWebhooksList(ctx, rest[1:], stdout, stderr)
	case cmd == "webhooks" && sub == "delete":
		return cmdWebhooksDelete(ctx, rest[1:], stdout, stderr)
	case cmd == "webhooks" && sub == "rotate-secret":
		return cmdWebhooksRotate(ctx, rest[1:], stdout, stderr)
	case cmd == "webhooks" && sub == "deliveries":
		return cmdWebhooksDeliveries(ctx, rest[1:], stdout, stderr)
	case cmd == "webhooks" && sub == "redeliver":
		return cmdWebhooksRedeliver(ctx, rest[1:], stdout, stderr)
	case cmd == "users" && sub == "create":
		return cmdUsersCreate(ctx, rest[1:], stdout, stderr)
	case cmd == "users" && sub == "list":
		return cmdUsersList(ctx, rest[1:], stdout, stderr)
	case cmd == "users" && sub == "disable":
		return cmdUsersDisable(ctx, rest[1:], stdout, stderr)
	case cmd == "users" && sub == "reset-password":
		return cmdUsersResetPassword(ctx, rest[1:], stdout, stderr)
	case cmd == "users" && sub == "invite":
		return cmdUsersInvite(ctx, rest[1:], stdout, stderr)
	case cmd == "tokens" && sub == "issue":
		return cmdTokensIssue(ctx, rest[1:], stdout, stderr)
	case cmd == "tokens" && sub == "rotate-key":
		return cmdTokensRotateKey(ctx, rest[1:], stdout, stderr)
	case cmd == "sweep":
		return cmdSweep(ctx, rest, stdout, stderr)
	case cmd == "treasury":
		return cmdTreasury(ctx, rest, stdout, stderr)
	case cmd == "devnet" && sub == "pay":
		return cmdDevnetPay(ctx, rest[1:], stdout, stderr)
	case cmd == "devnet" && (sub == "" || sub[0] == '-'): // flags only; "devnet <sub>" are other commands
		return cmdDevnet(ctx, rest, stdout, stderr)
	case cmd == "help" || cmd == "-h" || cmd == "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "paymentsd: unknown command %q\n\n%s", cmd+" "+sub, usage)
	return errUsage
}

func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}
