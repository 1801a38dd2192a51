package app

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// An API-only process (no chain clients) leaves out of new quotes a chain the worker sees down,
// shows it isEnabled false, and falls back on the catalogue when no worker has published lately.
func TestAPIProcessFollowsTheWorkersChainHealth(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			url := testdb.URL(t, backend)
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			const sepolia = 84532 // its only URL refuses connections
			workerCfg := onchaintest.Config(url, config.Chains{Devnet: "off", RPCURLs: map[int64][]string{sepolia: {"http://127.0.0.1:9"}},
				WatchInterval: time.Second, RPCTimeout: time.Second, ChainDownAfter: time.Second}, time.Hour, 15*time.Minute)
			w, err := Open(ctx, workerCfg, quiet)
			require.NoError(t, err)
			t.Cleanup(w.Close)
			apiCfg := workerCfg
			apiCfg.Role, apiCfg.Chains.Passive = config.RoleAPI, true
			api, err := Open(ctx, apiCfg, quiet)
			require.NoError(t, err)
			t.Cleanup(api.Close)
			require.Empty(t, api.Clients)

			created, err := api.Merchants.Create(ctx, merchants.CreateInput{Name: "Acme", ShortName: "Acme", Mode: domain.ModeTest})
			require.NoError(t, err)
			quotedOn := func() map[int64]bool {
				amount := int64(1000)
				c, err := api.Payments.Create(ctx, created.Merchant, payments.CreateInput{Type: domain.TypePayment, Currency: "USD",
					OrderID: "o-" + time.Now().Format("150405.000000000"), Amount: &amount}, nil)
				if err != nil {
					return nil
				}
				out := map[int64]bool{}
				for _, q := range c.Payment.Quotes {
					out[q.Token.Chain.ID] = true
				}
				return out
			}
			assert.True(t, quotedOn()[sepolia], "nothing published yet: the catalogue decides")

			require.False(t, w.Clients[sepolia].Health().State.Serving(), "the worker sees the chain down")
			_, err = w.ChainHealthLoop().Round(ctx)
			require.NoError(t, err)
			api.shared = sharedChainHealth{} // forget the cached read
			assert.False(t, api.chainServing(sepolia))
			assert.Nil(t, quotedOn(), "the chain down was the only one served: nothing to quote")
			h := api.chainHealth()[sepolia]
			assert.Equal(t, "down", h.State)
			assert.False(t, h.Serving)

			// A publisher that stopped: its rows grow old and the catalogue decides again.
			old := Now().Add(-chainHealthStale - time.Second)
			require.NoError(t, api.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.PublishChainHealth([]store.ChainHealth{{ChainID: sepolia, State: "down", UpdatedAt: old}})
			}))
			api.shared = sharedChainHealth{}
			assert.True(t, api.chainServing(sepolia))
		})
	}
}
