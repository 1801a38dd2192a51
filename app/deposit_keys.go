package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/wallet"
)

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
