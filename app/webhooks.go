package app

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/internal/keyfile"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
)

// SecretsKeyFile is where the embedded database's key for webhook secrets lives: beside the
// database file, never in it.
func SecretsKeyFile(databaseURL string) string { return store.SQLiteFile(databaseURL) + ".secrets-key" }

// secretsKey is PAYMENTS_SECRETS_KEY, or on the embedded default a key file of its own; nil
// without either.
func (a *App) secretsKey() ([]byte, error) {
	switch {
	case a.Cfg.Webhooks.SecretsKey != "":
		return webhooks.ParseKey(a.Cfg.Webhooks.SecretsKey)
	case a.Cfg.IsEmbedded():
		text, _, err := keyfile.LoadOrCreate(SecretsKeyFile(a.Cfg.DatabaseURL), func() ([]byte, error) {
			b := make([]byte, 32)
			if _, err := rand.Read(b); err != nil {
				return nil, err
			}
			return []byte(hex.EncodeToString(b) + "\n"), nil
		})
		if err != nil {
			return nil, err
		}
		return webhooks.ParseKey(strings.TrimSpace(string(text)))
	}
	return nil, nil
}

// secretsSealer seals webhook signing secrets with the secrets key (secretsKey); without one
// there is none (endpoints cannot be made).
func (a *App) secretsSealer() (webhooks.Sealer, error) {
	key, err := a.secretsKey()
	if err != nil {
		return nil, err
	}
	if key == nil {
		a.Log.Warn("no PAYMENTS_SECRETS_KEY: webhook endpoints cannot be created or signed for")
		return nil, nil
	}
	return webhooks.NewAESSealer(key)
}

// wireWebhooks builds the endpoint service and the delivery worker.
func (a *App) wireWebhooks() error {
	sealer, err := a.secretsSealer()
	if err != nil {
		return err
	}
	guard := webhooks.Guard{AllowPrivate: a.Cfg.Webhooks.AllowPrivate, AllowHTTP: a.Cfg.IsEmbedded() || a.Cfg.Webhooks.AllowPrivate}
	a.Webhooks = &webhooks.Service{Store: a.Store, Sealer: sealer, Guard: guard, Now: Now}
	a.Tokens = &dashauth.Issuer{Store: a.Store, DefaultIssuer: a.Cfg.PublicBaseURL, Audience: dashauth.Audience, Now: Now}
	a.People.Tokens = a.Tokens // person tokens of signed-in people
	if sealer != nil {
		a.Tokens.Sealer = sealer // a nil *AESSealer must not become a non-nil interface
		a.People.Sealer = sealer // TOTP secrets
		a.Keeper.Sealer = sealer // idempotent replays carry payment secrets
	} else {
		a.Log.Warn("no PAYMENTS_SECRETS_KEY: idempotent replays are sealed with a key of this process's own; " +
			"a retry that reaches another process, or this one after a restart, is answered 409 idempotency_key_in_use")
	}
	if sealer == nil {
		return nil
	}
	a.Dispatcher = &webhooks.Dispatcher{Store: a.Store, Sealer: sealer, Guard: guard, Holder: holderName(),
		Schedule: a.Cfg.Webhooks.Schedule, Interval: 250 * time.Millisecond, Workers: 8, Log: a.Log.With("component", "webhooks"),
		Now: Now, Observe: a.Metrics.WebhookAttempt}
	return nil
}

// WebhookLoops are the webhook delivery loop (none without a secrets key: nothing to sign with).
func (a *App) WebhookLoops() []worker.Loop {
	if a.Dispatcher == nil {
		return nil
	}
	return []worker.Loop{a.Dispatcher.Loop()}
}
