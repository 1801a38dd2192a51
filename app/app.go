// Package app wires a paymentsd process: the store, the services and the HTTP handler, all
// built from one config.Config. cmd/paymentsd and the black-box tests share it.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	paymentsd "github.com/paymentsd/paymentsd"
	"github.com/paymentsd/paymentsd/server"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/paymentsd/paymentsd/catalog"
	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/hotwallet"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/internal/reqlog"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/metrics"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/policy"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/refunds"
	"github.com/paymentsd/paymentsd/risk"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/watcher"
	"github.com/paymentsd/paymentsd/webhooks"
	"github.com/paymentsd/paymentsd/withdrawals"
)

// App is a wired process: store and services built from one config.
type App struct {
	Cfg         config.Config
	Log         *slog.Logger
	Store       *store.Store
	Catalog     domain.Catalog
	Core        *lifecycle.Core
	Expirer     *lifecycle.Expirer
	Merchants   *merchants.Service
	People      *people.Service // the dashboard's users, memberships and invitations
	Payments    *payments.Service
	Withdrawals *withdrawals.Service
	Policy      *policy.Service // the payout policy (issue 23): checked by withdrawals, its settings, address book, approvals
	Refunds     *refunds.Service
	Keeper      *idempotency.Keeper
	Metrics     *metrics.Metrics // on this process's own registry (no global one), served at /metrics
	Devnet      *devnet.Devnet   // the embedded development chain eip155:1337, when this process runs it
	Devnets     []*devnet.Devnet // every devnet chain this process runs (1337, 31337), in chain id order
	Clients     map[int64]*chain.Client
	OnChain     *payments.OnChain
	Watchers    []*watcher.Watcher
	Payouts     []*payouts.Manager
	Checkout    *checkout.Service
	Webhooks    *webhooks.Service
	Tokens      *dashauth.Issuer     // the dashboard's built-in token issuer
	Dispatcher  *webhooks.Dispatcher // nil without a secrets key

	oidc *dashauth.OIDC // the external issuer of dashboard tokens, when configured

	sanctions *risk.SanctionsList // PAYMENTS_RISK_SANCTIONS_FILE; nil: none listed

	hot, devHot *hotwallet.Wallet // the configured hot wallet, the devnet's development one (addresses only in passive processes)

	shared sharedChainHealth // the chain states a worker published, for a process without chain clients

	bg sync.WaitGroup // the background loops (goLoop), joined by WaitBackground before Close
}

// Now is the service clock: UTC, truncated to what PostgreSQL stores, so a value read back
// equals the value written.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Open opens and migrates the database and wires the services.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	log = reqlog.Wrap(log) // request_id on every line logged with a request's context
	// The catalogue file is read before the database is touched: a bad file changes nothing.
	file, err := catalog.Load(cfg.Chains.CatalogFile)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(cfg.DatabaseURL, store.WithLog(log))
	if err != nil {
		return nil, err
	}
	migrate := st.MigrateWith
	if cfg.Chains.KeepStoredCatalog {
		migrate = st.MigrateKeepingCatalog
	}
	if err := migrate(ctx, log, file); err != nil {
		st.Close()
		return nil, err
	}
	deriver, depositPriv, err := depositKeys(ctx, st, cfg, log)
	// The key's text is not kept in the configuration: only the worker's derived keys hold it.
	cfg.Chains.DepositXPrv = ""
	if err != nil {
		st.Close()
		return nil, err
	}
	a := &App{Cfg: cfg, Log: log, Store: st}
	if err := a.openChains(ctx); err != nil {
		a.Close()
		return nil, err
	}
	hot, devHot, err := a.hotWallets()
	if err != nil {
		a.Close()
		return nil, err
	}
	a.hot, a.devHot = hot, devHot
	// The backend wallet of new withdrawal configurations is the hot wallet that pays them.
	backend := cfg.BackendWallet
	switch {
	case backend != "":
	case hot != nil:
		backend = strings.ToLower(hot.Address().Hex())
	case devHot != nil:
		backend = strings.ToLower(devHot.Address().Hex())
	default:
		// The last non-hardened child is never handed out as a deposit address.
		if backend, err = deriver.Address(1<<31 - 1); err != nil {
			a.Close()
			return nil, err
		}
	}
	// The catalogue is read once and injected: every service applies the same served chains.
	cat, err := chains.Load(st.Read(ctx), cfg.Networks)
	if err != nil {
		a.Close()
		return nil, err
	}
	watchable := map[int64]bool{}
	for id := range a.Clients {
		watchable[id] = true
	}
	if cfg.Chains.Passive {
		for id := range cfg.Chains.RPCURLs {
			watchable[id] = true
		}
		for _, d := range devnetSettings(cfg.Chains) {
			watchable[d.id] = true // a devnet chain the serve process runs (an RPC URL counts too, above)
		}
	}
	a.Catalog = chains.Watch(cat, watchable, cfg.Chains.ServeUnwatched, cfg.Chains.Confirmations)
	cat = a.Catalog
	a.warnLiveBesideDevnet()
	if a.Metrics, err = newMetrics(st); err != nil {
		a.Close()
		return nil, err
	}
	a.Core = &lifecycle.Core{Store: st, Catalog: cat, Now: Now, Render: eventObjects{settlement.Objects{Shape: cfg.ResponseShape}}, Outbox: webhooks.Fanout{}}
	a.Expirer = &lifecycle.Expirer{Core: a.Core, Interval: cfg.ExpiryInterval, Batch: 200, Log: log,
		Observe: func(r lifecycle.SweepResult, err error) {
			a.Metrics.ExpirySweep(r.PaymentsExpired, r.QuotesExpired, r.Skipped, err)
		}}
	a.People = &people.Service{Store: st, Now: Now}
	if err := a.wireSignIn(); err != nil { // passkeys and the OIDC sign-in (signin.go)
		a.Close()
		return nil, err
	}
	a.Merchants = &merchants.Service{Store: st, Networks: cfg.Networks, Catalog: cat, BackendWallet: backend, Now: Now,
		KeyCacheTTL: cfg.KeyCacheTTL}
	a.Payments = &payments.Service{Store: st, Core: a.Core, Catalog: cat, Prices: priceSource(cfg.Pricing), Addresses: deriver,
		Limits: cfg.ResponseShape.PaymentLimits(), QuoteTTL: cfg.QuoteTTL, PaymentTTL: cfg.PaymentTTL,
		MerchantFeeBps: cfg.MerchantFeeBps, PublicBaseURL: cfg.PublicBaseURL, Log: log, Now: Now}
	a.Withdrawals = &withdrawals.Service{Store: st, Core: a.Core, Catalog: cat, Now: Now, Controlled: controlledAddresses(backend, hot, devHot)}
	if err := a.wirePolicy(); err != nil {
		a.Close()
		return nil, err
	}
	a.Checkout = &checkout.Service{Store: st, Core: a.Core, Catalog: cat, Quotes: a.Payments, WalletRPC: a.walletRPC(), Now: Now}
	a.Keeper = &idempotency.Keeper{Store: st, TTL: cfg.IdempotencyTTL, Now: Now, Log: log}
	if err := a.wireWatchers(); err != nil {
		a.Close()
		return nil, err
	}
	a.wirePayouts(hot, devHot, depositPriv)
	a.Checkout.GaslessChains = a.gaslessChains()
	if err := a.wireChainHealth(); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.wireWebhooks(); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.wireRefunds(); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.wireDashboard(); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Close stops the devnet chains and the chain clients and releases the database.
func (a *App) Close() {
	if a.oidc != nil {
		a.oidc.Close()
	}
	for _, c := range a.Clients {
		c.Close()
	}
	a.closeDevnets()
	_ = a.Store.Close()
}

// Handler builds the HTTP application for the configured response shape.
func (a *App) Handler() (*echo.Echo, error) {
	yaml := a.Cfg.ResponseShape.SpecYAML(paymentsd.OpenAPIYAML)
	spec, err := openapi3.NewLoader().LoadFromData(yaml)
	if err != nil {
		return nil, fmt.Errorf("load %s spec: %w", a.Cfg.ResponseShape, err)
	}
	var tokens server.TokenVerifier
	var dir server.PeopleDirectory
	if a.Cfg.Role != config.RoleWorker {
		v, err := a.dashboardTokens(context.Background())
		if err != nil {
			return nil, err
		}
		tokens = v
		dir = people.NewDirectory(a.Store, a.People.Now) // a signed-in person's role, per request
	}
	return server.New(server.Deps{Store: a.Store, Catalog: a.Catalog, Merchants: a.Merchants, Payments: a.Payments,
		Withdrawals: a.Withdrawals, Policy: a.Policy, Refunds: a.Refunds, Webhooks: a.Webhooks, People: a.People, PublicBaseURL: a.Cfg.PublicBaseURL, Checkout: a.Checkout, DevnetPay: a.devnetPayer(), JWKS: a.jwks, Tokens: tokens, Directory: dir, Idempotency: a.Keeper, Shape: a.Cfg.ResponseShape, Spec: spec, SpecYAML: yaml,
		MaxBodyBytes: a.Cfg.MaxBodyBytes, BodyReadTimeout: a.Cfg.BodyReadTimeout, Log: a.Log, Metrics: a.Metrics,
		Payouts: a.PayoutStatus, Chains: a.chainHealth, Estimator: a.payoutEstimator, HealthOnly: a.Cfg.Role == config.RoleWorker, TrustedProxies: a.Cfg.TrustedProxies})
}

// newMetrics builds the process's metrics on a registry of its own, with the pool's statistics.
func newMetrics(st *store.Store) (*metrics.Metrics, error) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return nil, err
	}
	sqlDB, err := st.SQLDB()
	if err != nil {
		return nil, err
	}
	return m, m.ObserveDB(sqlDB)
}

// holderName names this process in leases: host and pid, unique among live processes.
func holderName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8]) // random bits: two containers may share host and pid
}

func priceSource(p config.Pricing) pricing.Source {
	var volatile pricing.Source = pricing.DefaultStatic()
	if p.Source == "coingecko" {
		volatile = pricing.NewCoinGecko(pricing.CoinGeckoConfig{BaseURL: p.BaseURL, APIKey: p.APIKey, TTL: p.TTL, MaxStaleness: p.MaxStaleness})
	}
	return pricing.Pegged{Volatile: volatile}
}
