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
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/internal/reqlog"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/metrics"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/wallet"
	"github.com/paymentsd/paymentsd/watcher"
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
	Devnet      *devnet.Devnet   // the embedded development chain, when this process runs it
	Clients     map[int64]*chain.Client
	OnChain     *payments.OnChain
	Watchers    []*watcher.Watcher
	Payouts     []*payouts.Manager
}

// Now is the service clock: UTC, truncated to what PostgreSQL stores, so a value read back
// equals the value written.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// devXPubSetting persists the generated development key so addresses stay stable across restarts.
const devXPubSetting = "dev_xpub"

// Open opens and migrates the database and wires the services.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	log = reqlog.Wrap(log) // request_id on every line logged with a request's context
	st, err := store.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx, log); err != nil {
		st.Close()
		return nil, err
	}
	deriver, err := depositDeriver(ctx, st, cfg, log)
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
		if cfg.Chains.DevnetOn() {
			watchable[devnet.ChainID] = true // a devnet the serve process runs (an RPC URL counts too, above)
		}
	}
	a.Catalog = chains.Watch(cat, watchable, cfg.Chains.ServeUnwatched, cfg.Chains.Confirmations)
	cat = a.Catalog
	if a.Metrics, err = newMetrics(st); err != nil {
		a.Close()
		return nil, err
	}
	a.Core = &lifecycle.Core{Store: st, Catalog: cat, Now: Now}
	a.Expirer = &lifecycle.Expirer{Core: a.Core, Holder: holderName(), Interval: cfg.ExpiryInterval, Batch: 200, Log: log,
		Observe: func(r lifecycle.SweepResult, err error) {
			a.Metrics.ExpirySweep(r.PaymentsExpired, r.QuotesExpired, r.Skipped, err)
		}}
	a.Merchants = &merchants.Service{Store: st, Networks: cfg.Networks, Catalog: cat, BackendWallet: backend, Now: Now,
		KeyCacheTTL: cfg.KeyCacheTTL}
	a.Payments = &payments.Service{Store: st, Core: a.Core, Catalog: cat, Prices: priceSource(cfg.Pricing), Addresses: deriver,
		Limits: cfg.ResponseShape.PaymentLimits(), QuoteTTL: cfg.QuoteTTL, PaymentTTL: cfg.PaymentTTL,
		MerchantFeeBps: cfg.MerchantFeeBps, PublicBaseURL: cfg.PublicBaseURL, Log: log, Now: Now}
	a.Withdrawals = &withdrawals.Service{Store: st, Core: a.Core, Catalog: cat, Now: Now}
	a.Keeper = &idempotency.Keeper{Store: st, TTL: cfg.IdempotencyTTL, Now: Now}
	if err := a.wireWatchers(); err != nil {
		a.Close()
		return nil, err
	}
	a.wirePayouts(hot, devHot)
	return a, nil
}

// Close stops the devnet and the chain clients and releases the database.
func (a *App) Close() {
	for _, c := range a.Clients {
		c.Close()
	}
	if a.Devnet != nil {
		if err := a.Devnet.Close(); err != nil {
			a.Log.Warn("devnet close", "err", err)
		}
	}
	_ = a.Store.Close()
}

// Handler builds the HTTP application for the configured response shape.
func (a *App) Handler() (*echo.Echo, error) {
	yaml := a.Cfg.ResponseShape.SpecYAML(paymentsd.OpenAPIYAML)
	spec, err := openapi3.NewLoader().LoadFromData(yaml)
	if err != nil {
		return nil, fmt.Errorf("load %s spec: %w", a.Cfg.ResponseShape, err)
	}
	return server.New(server.Deps{Store: a.Store, Catalog: a.Catalog, Merchants: a.Merchants, Payments: a.Payments,
		Withdrawals: a.Withdrawals, Idempotency: a.Keeper, Shape: a.Cfg.ResponseShape, Spec: spec, SpecYAML: yaml,
		MaxBodyBytes: a.Cfg.MaxBodyBytes, BodyReadTimeout: a.Cfg.BodyReadTimeout, Log: a.Log, Metrics: a.Metrics,
		Payouts: a.PayoutStatus, HealthOnly: a.Cfg.Role == config.RoleWorker})
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

// depositDeriver uses the configured xpub, or a development key generated once and kept in the
// database. The development key's private half is thrown away: funds sent to it are lost.
func depositDeriver(ctx context.Context, st *store.Store, cfg config.Config, log *slog.Logger) (*wallet.Deriver, error) {
	if cfg.XPub != "" {
		return wallet.NewDeriver(cfg.XPub)
	}
	xpub, err := st.Read(ctx).Setting(devXPubSetting)
	if errors.Is(err, store.ErrNotFound) {
		if xpub, err = wallet.GenerateDevXPub(); err != nil {
			return nil, err
		}
		err = st.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSetting(devXPubSetting, xpub) })
		if errors.Is(err, store.ErrConflict) { // another process won the race: use its key
			xpub, err = st.Read(ctx).Setting(devXPubSetting)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("development xpub: %w", err)
	}
	log.Warn("DEVELOPMENT DEPOSIT KEY IN USE: no PAYMENTS_XPUB configured, deposit addresses come from a generated key " +
		"whose private half was discarded. Never send real funds to them. Set PAYMENTS_XPUB for production.")
	return wallet.NewDeriver(xpub)
}
