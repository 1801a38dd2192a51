package app

import (
	"github.com/paymentsd/paymentsd/policy"
	"github.com/paymentsd/paymentsd/risk"
)

// wirePolicy loads the sanctions list (PAYMENTS_RISK_SANCTIONS_FILE: the watchers screen payers
// with it, the payout policy refuses to pay a listed recipient) and builds the payout policy,
// which withdrawals check at creation.
func (a *App) wirePolicy() error {
	if f := a.Cfg.Chains.SanctionsFile; f != "" {
		l, err := risk.LoadSanctionsFile(f)
		if err != nil {
			return err
		}
		a.Log.Info("sanctions list loaded", "file", f, "addresses", l.Len())
		a.sanctions = l
	}
	a.Policy = &policy.Service{Store: a.Store, Core: a.Core, Catalog: a.Catalog, Withdrawals: a.Withdrawals, Sanctions: a.sanctions,
		Now: Now, Log: a.Log}
	a.Withdrawals.Policy = a.Policy
	return nil
}
