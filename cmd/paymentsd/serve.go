package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/server"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	addr := fs.String("addr", env("PAYMENTS_ADDR", ":8080"), "listen address (env PAYMENTS_ADDR)")
	networks := fs.String("networks", "", "chains served: mainnet, testnet or all (env PAYMENTS_NETWORKS; default all on the embedded database, mainnet on PostgreSQL)")
	shape := fs.String("response-shape", "", "wire shape: schema (typed schema) or guide (guide examples) (env PAYMENTS_RESPONSE_SHAPE; default schema)")
	publicURL := fs.String("public-url", env("PAYMENTS_PUBLIC_URL", ""), "public base URL of paymentUrl (env PAYMENTS_PUBLIC_URL; default http://localhost:<port>)")
	roleFlag := fs.String("role", env("PAYMENTS_ROLE", string(config.RoleAll)), "api (HTTP API only: no chain connections, no keys), worker (watchers, payouts, expiry; HTTP health and metrics only) or all (env PAYMENTS_ROLE)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	role, err := config.ParseRole(*roleFlag)
	if err != nil {
		fmt.Fprintln(stderr, "serve:", err)
		return errUsage
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	base := *publicURL
	if base == "" {
		base = "http://localhost:" + portOf(ln.Addr().String())
	}
	cfg, err := loadConfig(*dbURL, *addr, *networks, strings.TrimRight(base, "/"), *shape)
	if err != nil {
		ln.Close()
		return err
	}
	cfg.Role = role
	if err := requireSecretsKey(cfg); err != nil {
		ln.Close()
		return err
	}
	cfg.Chains.Passive = !role.Background() // an API process neither runs the devnet nor connects to chains
	log := newLogger(stderr, cfg.LogFormat)
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer a.Close()
	if err := a.RecordShape(ctx); err != nil {
		ln.Close()
		return err
	}
	if cfg.IsEmbedded() {
		if err := bootstrapDemo(ctx, a, base, stdout); err != nil {
			ln.Close()
			return err
		}
	}
	e, err := a.Handler()
	if err != nil {
		ln.Close()
		return err
	}
	admin, err := startAdmin(cfg.AdminAddr, newAdminHandler(a.Metrics.Handler()), log)
	if err != nil {
		ln.Close()
		return err
	}
	defer admin.Stop(2 * time.Second) // after the main server has drained
	// The loops stop with the signal, or when the HTTP server fails on its own: either way they
	// are joined (and their leases given up) before the database closes.
	bgCtx, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	a.RunBackground(bgCtx, role.Background())
	log.Info("listening", "addr", ln.Addr().String(), "url", base, "database", string(a.Store.Dialect()), "networks", string(cfg.Networks),
		"response_shape", string(cfg.ResponseShape), "role", string(role))
	err = server.Serve(ctx, e, ln, cfg.ShutdownGrace, log)
	stopBackground()
	// The background loops saw the same signal: they start no new round, the rounds in flight
	// finish (cut off once the grace has passed since the signal) and their leases are given up
	// before the deferred Close takes the database away, so another process takes the work over
	// at once.
	if a.WaitBackground(cfg.ShutdownGrace + worker.ReleaseTimeout) {
		log.Info("background work stopped; its leases released")
	} else {
		log.Warn("background work still running after the shutdown grace; its leases expire on their own", "grace", cfg.ShutdownGrace)
	}
	return err
}

// bootstrapDemo creates the demo merchant on an empty embedded database and prints its key once.
func bootstrapDemo(ctx context.Context, a *app.App, base string, stdout io.Writer) error {
	n, err := a.Store.Read(ctx).CountMerchants()
	if err != nil || n > 0 {
		return err
	}
	// A test key: the demo takes devnet and testnet money only; a live key is always asked for
	// explicitly (paymentsd keys create --mode live).
	created, err := a.Merchants.Create(ctx, merchants.CreateInput{Name: "Demo Store", ShortName: "Demo",
		DepositsEnabled: true, WithdrawalsEnabled: true, Mode: domain.ModeTest})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, `
Demo merchant created (shown once; keep it):
  merchant id: %s
  secret key:  %s   (test mode: devnet and testnet money only)

Try it:
  curl -s -X POST %s/v1/external/secretkey-auth/payments \
    -H 'X-Service-Secret-Key: %s' -H 'Content-Type: application/json' \
    -d '{"amount": 1000, "currency": "USD", "orderId": "order-1"}'

API: %s   spec: %s/openapi.yaml

`, created.Merchant.ID, created.SecretKey, base, created.SecretKey, base, base)
	// The demo merchant's owner, for the dashboard (a generated password, shown once; an owner
	// already there is left alone).
	owner, err := a.People.CreateUser(ctx, demoOwnerEmail, created.Merchant.ID, domain.RoleOwner, "")
	switch {
	case errors.Is(err, people.ErrEmailTaken):
	case err != nil:
		return err
	default:
		fmt.Fprintf(stdout, `Dashboard: %s/dashboard/
  email:    %s
  password: %s   (shown once; change it in the dashboard, or paymentsd users reset-password)

`, dashboardBase(base), owner.User.Email, owner.Password)
	}
	if a.Devnet != nil {
		fmt.Fprintf(stdout, `Then pay it on the devnet (%s, a real transaction from a funded test account) and watch it
turn processing, then completed with a receipt:
  bin/paymentsd devnet pay --payment <payment id from the answer>
`, a.Devnet.URL())
		for _, d := range a.Devnets[1:] {
			fmt.Fprintf(stdout, "or on %s (eip155:%d, %s), choosing one of its quotes:\n  bin/paymentsd devnet pay --payment <payment id> --quote <quote id>\n",
				d.Name(), d.ChainID(), d.URL())
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// demoOwnerEmail is the demo merchant's owner on the embedded default.
const demoOwnerEmail = "owner@demo.example"

// dashboardBase is where the dashboard is reached: base, with localhost spelled 127.0.0.1 (a
// loopback address, so the refresh cookie works over plain http).
func dashboardBase(base string) string {
	return strings.Replace(base, "://localhost:", "://127.0.0.1:", 1)
}

func portOf(hostport string) string {
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "8080"
	}
	return port
}

// requireSecretsKey refuses PostgreSQL without PAYMENTS_SECRETS_KEY. Without it, the answers kept
// for Idempotency-Key retries (a payment creation's carries its payment secret) could be sealed
// only with a key of the process's own: a retry reaching another process — another serve, the
// next operator command, this one after a restart — would find its answer unreadable. (The
// embedded default keeps a key file beside the database instead.)
func requireSecretsKey(cfg config.Config) error {
	if cfg.IsEmbedded() || cfg.Webhooks.SecretsKey != "" {
		return nil
	}
	return fmt.Errorf("PAYMENTS_SECRETS_KEY is required with PostgreSQL: every process of a deployment, operator commands " +
		"included, needs the same 32-byte key (64 hex digits, e.g. `openssl rand -hex 32`) to seal payment secrets in " +
		"idempotent replays, webhook secrets and the dashboard's signing keys")
}
