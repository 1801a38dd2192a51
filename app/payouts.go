package app

import (
	"fmt"
	"strings"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/hotwallet"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/server"
	"github.com/paymentsd/paymentsd/wallet"
)

// hotWallets loads the configured signing key, and the devnet's development hot wallet
// (account 9 of the public test mnemonic, funded on every devnet chain) for the devnet chains
// only when no key is configured.
func (a *App) hotWallets() (configured, dev *hotwallet.Wallet, err error) {
	c := a.Cfg.Chains
	switch {
	case c.HotWalletKey != "":
		configured, err = hotwallet.FromHex(c.HotWalletKey)
	case c.HotKeystore != "":
		configured, err = hotwallet.FromKeystore(c.HotKeystore, c.HotPassword)
	}
	if err != nil {
		return nil, nil, err
	}
	if configured != nil && c.Passive {
		// A process that signs nothing (an api role, an operator command) reads the key only
		// for its address — the backend wallet of new withdrawal configurations — and drops it.
		// PAYMENTS_BACKEND_WALLET spares it even that.
		configured = hotwallet.AddressOnly(configured)
	}
	devnetWatched := c.Passive && len(devnetSettings(c)) > 0
	for _, id := range devnet.ChainIDs() {
		_, byURL := c.RPCURLs[id]
		devnetWatched = devnetWatched || a.Clients[id] != nil || (c.Passive && byURL)
	}
	if configured == nil && devnetWatched {
		k, err := devnet.AccountKey(devnet.HotWalletAccount)
		if err != nil {
			return nil, nil, err
		}
		dev = hotwallet.FromKey(k)
		if c.Passive {
			return nil, dev, nil // for its address only: a passive process signs nothing
		}
		a.Log.Warn(fmt.Sprintf("DEVELOPMENT HOT WALLET: devnet payouts are signed by account %d of the public test mnemonic (%s); "+
			"it is used on the devnet chains only. Set PAYMENTS_HOT_WALLET_KEY for real payouts.", devnet.HotWalletAccount, dev))
	}
	return configured, dev, nil
}

// wirePayouts builds one payout manager per watched, served chain.
func (a *App) wirePayouts(configured, dev *hotwallet.Wallet, deposits *wallet.Keys) {
	for _, w := range a.Watchers {
		hot := configured
		if hot == nil && devnet.IsDevnet(w.Info.ID) {
			hot = dev
		}
		pc := payouts.DefaultConfig()
		pc.Interval = a.Cfg.Chains.WatchInterval
		pc.BumpAfter = a.Cfg.Chains.PayoutBump
		pc.PauseAfterSign = a.Cfg.Chains.PayoutPause
		pc.SweepMinUSD, pc.SweepEvery = a.Cfg.Chains.SweepMinUSD, a.Cfg.Chains.SweepEvery
		if devnet.IsDevnet(w.Info.ID) {
			// Every devnet start deploys the sweep contracts at fixed addresses, paying the
			// development hot wallet (a configured hot wallet is topped up as before), and its
			// go-ethereum accepts EIP-7702 transactions.
			pc.SweepBatch, pc.SweepDelegate, pc.SweepEIP7702 = devnet.SweepBatchAddress, devnet.SweepDelegateAddress, true
		}
		caip := chains.CAIP2(w.Info.ID)
		m := &payouts.Manager{Chain: a.Clients[w.Info.ID], Info: w.Info, Wallet: hot, Store: a.Store, Core: a.Core,
			Catalog: a.Catalog, Prices: a.Payments.Prices, Config: pc, Log: a.Log.With("component", "payouts"), Now: Now,
			Observe: func(r payouts.RoundResult, err error) {
				a.Metrics.PayoutRound(caip, hot != nil, r.Skipped, err != nil, r.Signed, r.Completed, r.Failed, r.Waiting,
					r.SweepsStarted, r.SweepsConfirmed)
			}}
		if hot == nil {
			a.Log.Warn("no hot wallet key: withdrawals on this chain stay pending", "chain", caip)
		}
		if deposits != nil {
			m.Deposits = deposits // a nil *wallet.Keys must not become a non-nil interface
		} else if hot != nil {
			a.Log.Warn("no deposit private key: deposit addresses on this chain are not swept", "chain", caip)
		}
		a.Payouts = append(a.Payouts, m)
	}
}

// HotWalletAddress is the address that pays a chain's withdrawals ("" when none): the
// configured key, or on a devnet chain its development hot wallet.
func (a *App) HotWalletAddress(chainID int64) string {
	switch {
	case a.hot != nil:
		return strings.ToLower(a.hot.Address().Hex())
	case a.devHot != nil && devnet.IsDevnet(chainID):
		return strings.ToLower(a.devHot.Address().Hex())
	}
	return ""
}

// PayoutStatus says, per chain, whether payouts can be signed (for /readyz).
func (a *App) PayoutStatus() map[string]string {
	out := map[string]string{}
	for _, m := range a.Payouts {
		if m.Wallet == nil {
			out[chains.CAIP2(m.Info.ID)] = payouts.ErrNoHotWallet.Error()
			continue
		}
		out[chains.CAIP2(m.Info.ID)] = "hot wallet " + m.Wallet.Address().Hex()
	}
	return out
}

// PayoutLoops are every chain's payout manager (payouts and sweeps) as background loops
// (RunBackground).
func (a *App) PayoutLoops() []worker.Loop {
	var out []worker.Loop
	for _, m := range a.Payouts {
		out = append(out, m.Loop())
	}
	return out
}

// controlledAddresses are the addresses this service itself holds, never a withdrawal's
// recipient: the backend wallet and the hot wallets (lowercase).
func controlledAddresses(backend string, wallets ...*hotwallet.Wallet) []string {
	out := []string{strings.ToLower(backend)}
	for _, w := range wallets {
		if w != nil {
			out = append(out, strings.ToLower(w.Address().Hex()))
		}
	}
	return out
}

// payoutEstimator is the payout manager of a chain for the dashboard's withdrawal estimate (nil:
// this process does not pay out on it).
func (a *App) payoutEstimator(chainID int64) server.PayoutEstimator {
	for _, m := range a.Payouts {
		if m.Info.ID == chainID {
			return m
		}
	}
	return nil
}
