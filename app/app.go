// Package app wires a paymentsd process: the store, the services and the HTTP handler, all
// built from one config.Config. cmd/paymentsd and the black-box tests share it.
package app

import (
	"context"
	"errors"
	"fmt"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
	paymentsd "github.com/paymentsd/paymentsd"
	"github.com/paymentsd/paymentsd/server"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

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
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/wallet"
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
	Payments    *payments.Service
	Withdrawals *withdrawals.Service
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

	hot, devHot *hotwallet.Wallet // the configured hot wallet, the devnet's development one (addresses only in passive processes)

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
	if err := st.MigrateWith(ctx, log, file); err != nil {
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
	a.Merchants = &merchants.Service{Store: st, Networks: cfg.Networks, Catalog: cat, BackendWallet: backend, Now: Now,
		KeyCacheTTL: cfg.KeyCacheTTL}
	a.Payments = &payments.Service{Store: st, Core: a.Core, Catalog: cat, Prices: priceSource(cfg.Pricing), Addresses: deriver,
		Limits: cfg.ResponseShape.PaymentLimits(), QuoteTTL: cfg.QuoteTTL, PaymentTTL: cfg.PaymentTTL,
		MerchantFeeBps: cfg.MerchantFeeBps, PublicBaseURL: cfg.PublicBaseURL, Log: log, Now: Now}
	a.Withdrawals = &withdrawals.Service{Store: st, Core: a.Core, Catalog: cat, Now: Now, Controlled: controlledAddresses(backend, hot, devHot)}
	a.Checkout = &checkout.Service{Store: st, Core: a.Core, Catalog: cat, Quotes: a.Payments, Now: Now}
	a.Keeper = &idempotency.Keeper{Store: st, TTL: cfg.IdempotencyTTL, Now: Now, Log: log}
	if err := a.wireWatchers(); err != nil {
		a.Close()
		return nil, err
	}
	a.wirePayouts(hot, devHot, depositPriv)
	if err := a.wireChainHealth(); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.wireWebhooks(); err != nil {
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
	if a.Cfg.Role != config.RoleWorker {
		v, err := a.dashboardTokens(context.Background())
		if err != nil {
			return nil, err
		}
		tokens = v
	}
	return server.New(server.Deps{Store: a.Store, Catalog: a.Catalog, Merchants: a.Merchants, Payments: a.Payments,
		Withdrawals: a.Withdrawals, Webhooks: a.Webhooks, Checkout: a.Checkout, DevnetPay: a.devnetPayer(), JWKS: a.jwks, Tokens: tokens, Idempotency: a.Keeper, Shape: a.Cfg.ResponseShape, Spec: spec, SpecYAML: yaml,
		MaxBodyBytes: a.Cfg.MaxBodyBytes, BodyReadTimeout: a.Cfg.BodyReadTimeout, Log: a.Log, Metrics: a.Metrics,
		Payouts: a.PayoutStatus, Chains: a.chainHealth, HealthOnly: a.Cfg.Role == config.RoleWorker, TrustedProxies: a.Cfg.TrustedProxies})
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

// depositKeys gives the deposit addresses' deriver (the xpub) and, to a process that sweeps, the
// private half: PAYMENTS_DEPOSIT_XPRV or PAYMENTS_DEPOSIT_MNEMONIC_FILE (checked against
// PAYMENTS_XPUB), or the embedded development key. API processes and operator commands keep
// only the xpub.
func depositKeys(ctx context.Context, st *store.Store, cfg config.Config, log *slog.Logger) (*wallet.Deriver, *wallet.Keys, error) {
	var keys *wallet.Keys
	var err error
	switch {
	case cfg.Chains.DepositXPrv != "":
		keys, err = wallet.KeysFromXPrv(cfg.Chains.DepositXPrv)
	case cfg.Chains.DepositMnemonic != "":
		keys, err = wallet.KeysFromMnemonicFile(cfg.Chains.DepositMnemonic)
	}
	if err != nil {
		return nil, nil, err
	}
	sweeps := cfg.Role.Background() && !cfg.Chains.Passive
	keep := func(d *wallet.Deriver, k *wallet.Keys) (*wallet.Deriver, *wallet.Keys, error) {
		if !sweeps {
			k = nil // the API derives addresses; it never holds the key that moves their funds
		}
		return d, k, nil
	}
	switch {
	case cfg.XPub != "":
		d, err := wallet.NewDeriver(cfg.XPub)
		if err != nil {
			return nil, nil, err
		}
		if keys != nil && !keys.Matches(d.XPub()) {
			return nil, nil, wallet.ErrKeyMismatch
		}
		return keep(d, keys)
	case keys != nil: // its public half is the xpub
		d, err := keys.Deriver()
		if err != nil {
			return nil, nil, err
		}
		return keep(d, keys)
	}
	return devDepositKeys(ctx, st, cfg, log, sweeps, keep)
}

// DevDepositKeyFile is where the embedded database's development deposit key keeps its private
// half: beside the database file, named after it (two databases in one directory have two keys).
func DevDepositKeyFile(databaseURL string) string {
	return store.SQLiteFile(databaseURL) + ".deposit-key"
}

// devXPubSetting persists the development key's xpub so addresses stay stable across restarts.
const devXPubSetting = "dev_xpub"

// devDepositKeys is the development deposit key of a deployment without PAYMENTS_XPUB. The
// embedded default keeps its private half in a file beside the database (mode 0600, never in
// the database) so the devnet can be swept; on PostgreSQL the private half is discarded.
func devDepositKeys(ctx context.Context, st *store.Store, cfg config.Config, log *slog.Logger, sweeps bool,
	keep func(*wallet.Deriver, *wallet.Keys) (*wallet.Deriver, *wallet.Keys, error)) (*wallet.Deriver, *wallet.Keys, error) {
	xpub, err := st.Read(ctx).Setting(devXPubSetting)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("development xpub: %w", err)
	}
	stored := err == nil
	var keys *wallet.Keys
	keyFile := DevDepositKeyFile(cfg.DatabaseURL)
	_, statErr := os.Stat(keyFile)
	switch {
	case cfg.IsEmbedded() && stored && !sweeps:
		// The xpub in the database is all a process that never sweeps needs.
	case cfg.IsEmbedded() && (!stored || statErr == nil):
		if keys, _, err = wallet.LoadOrCreateDevKeys(keyFile); err != nil {
			return nil, nil, err
		}
		if stored && !keys.Matches(xpub) {
			return nil, nil, fmt.Errorf("%s is not the key of this database's deposit addresses (another database's key file?)", keyFile)
		}
		xpub = keys.XPub()
	case !stored:
		if xpub, err = wallet.GenerateDevXPub(); err != nil {
			return nil, nil, err
		}
	}
	if !stored {
		err = st.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSetting(devXPubSetting, xpub) })
		if errors.Is(err, store.ErrConflict) { // another process won the race: use its key
			if xpub, err = st.Read(ctx).Setting(devXPubSetting); err == nil && keys != nil && !keys.Matches(xpub) {
				keys = nil
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("development xpub: %w", err)
		}
	}
	if keys != nil || (cfg.IsEmbedded() && stored && !sweeps) {
		log.Warn("DEVELOPMENT DEPOSIT KEY IN USE: no PAYMENTS_XPUB configured; deposit addresses come from a generated key kept in " +
			keyFile + " (sweepable on the devnet). Never send real funds to them. Set PAYMENTS_XPUB for production.")
	} else {
		log.Warn("DEVELOPMENT DEPOSIT KEY IN USE: no PAYMENTS_XPUB configured; deposit addresses come from a generated key " +
			"whose private half is not kept: they cannot be swept. Never send real funds to them. Set PAYMENTS_XPUB for production.")
	}
	d, err := wallet.NewDeriver(xpub)
	if err != nil {
		return nil, nil, err
	}
	return keep(d, keys)
}
