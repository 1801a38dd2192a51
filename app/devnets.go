package app

import (
	"context"
	"fmt"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
)

// devnetSetting is one devnet chain this process is configured to run.
type devnetSetting struct {
	id      int64
	addr    string
	setting string // the environment setting naming addr, for error messages
}

// devnetSettings lists the devnet chains the configuration runs, in chain id order: eip155:1337
// on PAYMENTS_DEVNET, eip155:31337 on PAYMENTS_DEVNET_L2.
func devnetSettings(c config.Chains) []devnetSetting {
	var out []devnetSetting
	if c.DevnetOn() {
		out = append(out, devnetSetting{devnet.ChainID, c.Devnet, "PAYMENTS_DEVNET"})
	}
	if c.DevnetL2On() {
		out = append(out, devnetSetting{devnet.L2ChainID, c.DevnetL2, "PAYMENTS_DEVNET_L2"})
	}
	return out
}

// startDevnets starts the devnet chains the configuration runs and adds their URLs to urls. A
// chain that fails to start stops the start (the ones already running are closed by Close).
func (a *App) startDevnets(ctx context.Context, urls map[int64][]string) error {
	cfg := a.Cfg.Chains
	for _, s := range devnetSettings(cfg) {
		d, err := devnet.Start(ctx, devnet.Config{ChainID: s.id, Addr: s.addr, BlockTime: cfg.DevnetBlock,
			Log: a.Log.With("component", "devnet", "chain", chains.CAIP2(s.id))})
		if err != nil {
			return fmt.Errorf("start the devnet chain %s on %s (%s=off to run without it): %w", chains.CAIP2(s.id), s.addr, s.setting, err)
		}
		a.Devnets = append(a.Devnets, d)
		if s.id == devnet.ChainID {
			a.Devnet = d
		}
		urls[s.id] = []string{d.URL()}
		a.Log.Warn("DEVNET RUNNING: a development chain with publicly known keys serves " + chains.CAIP2(s.id) + " (" + d.Name() +
			") at " + d.URL() + "; its money is worthless. " + s.setting + "=off turns it off.")
	}
	return nil
}

// devnetURL is where a devnet chain answers this process: the chain it runs, or the first URL of
// PAYMENTS_RPC_URLS for it; "" when neither.
func (a *App) devnetURL(id int64) string {
	for _, d := range a.Devnets {
		if d.ChainID() == id {
			return d.URL()
		}
	}
	if u := a.Cfg.Chains.RPCURLs[id]; devnet.IsDevnet(id) && len(u) > 0 {
		return u[0]
	}
	return ""
}

// closeDevnets stops the devnet chains this process runs.
func (a *App) closeDevnets() {
	for _, d := range a.Devnets {
		if err := d.Close(); err != nil {
			a.Log.Warn("devnet close", "chain", chains.CAIP2(d.ChainID()), "err", err)
		}
	}
}
