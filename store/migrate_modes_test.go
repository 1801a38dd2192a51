package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// Migration 12 on the data of version 11: every existing row gets the mode its key's prefix or
// its chain says, so test money already booked never lands in a live balance.
func TestMigrationTwelveGivesExistingRowsTheirMode(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st, db := storeAt(t, backend, 11)
			now := time.Now().UTC()
			exec := func(q string, args ...any) {
				t.Helper()
				require.NoError(t, db.Exec(q, args...).Error, q)
			}
			id := func() string { return uuid.Must(uuid.NewV7()).String() }
			const (
				baseETH = "eip155:8453/slip44:60"
				devETH  = "eip155:1337/slip44:60"
			)

			// Base as the version-2 seed stored it (migration 2 seeds nothing now; the devnet comes
			// from migration 6).
			exec(`INSERT INTO chains (chain_id, name, native_symbol, native_decimals, is_testnet, is_active, convenience_fee_cents, required_confirmations)
				VALUES (8453, 'Base', 'ETH', 18, FALSE, TRUE, 5, 10)`)
			exec(`INSERT INTO tokens (id, chain_id, symbol, market_api_id, contract_address, decimals, type, asset_type, status)
				VALUES (?, 8453, 'ETH', 'ethereum', '0x0000000000000000000000000000000000000000', 18, 'volatile', 'native', 'active')`, baseETH)

			// A merchant with a live key (a mainnet deployment) and one with test keys only.
			live, test := id(), id()
			for _, m := range []string{live, test} {
				exec(`INSERT INTO merchants (id, name, short_name, deposits_enabled, withdrawals_enabled, created_at) VALUES (?, 'M', 'M', TRUE, TRUE, ?)`, m, now)
			}
			exec(`INSERT INTO api_keys (id, merchant_id, prefix, key_hash, created_at) VALUES (?, ?, 'sk_live_aaaaaaaa', ?, ?)`, id(), live, []byte("h1"), now)
			exec(`INSERT INTO api_keys (id, merchant_id, prefix, key_hash, created_at) VALUES (?, ?, 'sk_test_bbbbbbbb', ?, ?)`, id(), test, []byte("h2"), now)

			n := 0
			payment := func(merchant string) (pid, addr string) {
				n++
				pid, addr = id(), id()
				exec(`INSERT INTO deposit_addresses (id, merchant_id, payment_id, derivation_index, address, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
					addr, merchant, pid, n, "0x"+uuid.NewString()[:8]+"000000000000000000000000000000"+uuid.NewString()[:2], now)
				exec(`INSERT INTO payments (id, merchant_id, type, amount_in_cents, amount_due_cents, amount_merchant_net_cents, currency, status,
					secret_hash, deposit_address_id, expires_at, created_at, updated_at) VALUES (?, ?, 'payment', 1000, 1000, 990, 'USD', 'pending', ?, ?, ?, ?, ?)`,
					pid, merchant, []byte("s"), addr, now, now, now)
				return pid, addr
			}
			quote := func(pid, token string, chain int64) string {
				q := id()
				exec(`INSERT INTO quotes (id, payment_id, token_id, chain_id, expected_amount_asset, rate_usd_asset, convenience_fee_cents, expires_at, status, created_at)
					VALUES (?, ?, ?, ?, '1', '1', 0, ?, 'active', ?)`, q, pid, token, chain, now, now)
				return q
			}
			// Unsettled, quoted on a mainnet and the devnet: its key was live.
			open, _ := payment(live)
			quote(open, baseETH, 8453)
			quote(open, devETH, 1337)
			// Completed on the devnet: test money, whatever quotes it had.
			paidDev, _ := payment(live)
			quote(paidDev, baseETH, 8453)
			dq := quote(paidDev, devETH, 1337)
			exec(`INSERT INTO payment_receipts (payment_id, quote_id, token_id, chain_id, settled_amount_asset, settled_amount_usd, created_at)
				VALUES (?, ?, ?, 1337, '1', '10.00', ?)`, paidDev, dq, devETH, now)
			exec(`INSERT INTO ledger_entries (id, merchant_id, kind, amount_cents, payment_id, created_at) VALUES (?, ?, 'payment_credit', 990, ?, ?)`, id(), live, paidDev, now)
			// Expired with part paid in devnet ETH: its settling quote says test.
			partial, _ := payment(live)
			quote(partial, baseETH, 8453)
			pq := quote(partial, devETH, 1337)
			exec(`UPDATE payments SET status = 'expired', settling_quote_id = ? WHERE id = ?`, pq, partial)
			exec(`INSERT INTO ledger_entries (id, merchant_id, kind, amount_cents, payment_id, created_at) VALUES (?, ?, 'payment_credit', 300, ?, ?)`, id(), live, partial, now)
			// A late devnet transfer to a live payment's address: test money.
			late, lateAddr := payment(live)
			quote(late, baseETH, 8453)
			tr := id()
			exec(`INSERT INTO transfers (id, chain_id, tx_hash, log_index, block_number, block_hash, block_time, token_id, from_address, to_address, amount,
				deposit_address_id, payment_id, status, credited, created_at, updated_at)
				VALUES (?, 1337, '0xabc', -1, 1, '0xb', ?, ?, '0x1', '0x2', '1', ?, ?, 'confirmed', TRUE, ?, ?)`, tr, now, devETH, lateAddr, late, now, now)
			exec(`INSERT INTO ledger_entries (id, merchant_id, kind, amount_cents, transfer_id, created_at) VALUES (?, ?, 'transfer_credit', 500, ?, ?)`, id(), live, tr, now)
			// A live withdrawal on Base, debited.
			w := id()
			exec(`INSERT INTO withdrawals (id, merchant_id, amount_in_cents, chain_id, token_id, recipient_address, status, currency, created_at, updated_at)
				VALUES (?, ?, 200, 8453, ?, '0x5aeda56215b167893e80b4fe645ba6d5bab767de', 'pending', 'USD', ?, ?)`, w, live, baseETH, now, now)
			exec(`INSERT INTO ledger_entries (id, merchant_id, kind, amount_cents, withdrawal_id, created_at) VALUES (?, ?, 'withdrawal_debit', -200, ?, ?)`, id(), live, w, now)
			// Events, endpoints and idempotency keys.
			exec(`INSERT INTO events (id, type, entity, entity_id, merchant_id, sequence, payload, created_at) VALUES ('evt_1', 'payment.completed', 'payment', ?, ?, 2, '{}', ?)`, paidDev, live, now)
			exec(`INSERT INTO events (id, type, entity, entity_id, merchant_id, sequence, payload, created_at) VALUES ('evt_2', 'withdrawal.created', 'withdrawal', ?, ?, 1, '{}', ?)`, w, live, now)
			for _, m := range []string{live, test} {
				exec(`INSERT INTO webhook_endpoints (id, merchant_id, url, event_types, enabled, secret_sealed, created_at, updated_at) VALUES (?, ?, 'https://x.example', '', TRUE, 's', ?, ?)`, id(), m, now, now)
				exec(`INSERT INTO idempotency_keys (merchant_id, key, operation, request_hash, state, created_at, expires_at) VALUES (?, 'k1', '/v1/external/secretkey-auth/payments', ?, 'done', ?, ?)`, m, []byte("h"), now, now)
				exec(`INSERT INTO idempotency_keys (merchant_id, key, operation, request_hash, state, created_at, expires_at) VALUES (?, 'op', 'cli:payments.settle', ?, 'done', ?, ?)`, m, []byte("h"), now, now)
			}

			require.NoError(t, st.Migrate(ctx, discardLog()))

			mode := func(q string, args ...any) bool {
				t.Helper()
				var b bool
				require.NoError(t, db.Raw(q, args...).Row().Scan(&b), q)
				return b
			}
			assert.True(t, mode(`SELECT livemode FROM api_keys WHERE merchant_id = ?`, live), "sk_live_ stays live")
			assert.False(t, mode(`SELECT livemode FROM api_keys WHERE merchant_id = ?`, test), "sk_test_ is test")
			assert.True(t, mode(`SELECT livemode FROM payments WHERE id = ?`, open), "quoted a mainnet, unsettled: live")
			assert.False(t, mode(`SELECT livemode FROM payments WHERE id = ?`, paidDev), "settled on the devnet: test")
			assert.False(t, mode(`SELECT livemode FROM payments WHERE id = ?`, partial), "settling on the devnet: test")
			assert.True(t, mode(`SELECT livemode FROM withdrawals WHERE id = ?`, w))

			var liveSum, testSum int64
			require.NoError(t, db.Raw(`SELECT COALESCE(SUM(amount_cents), 0) FROM ledger_entries WHERE merchant_id = ? AND livemode`, live).Row().Scan(&liveSum))
			require.NoError(t, db.Raw(`SELECT COALESCE(SUM(amount_cents), 0) FROM ledger_entries WHERE merchant_id = ? AND NOT livemode`, live).Row().Scan(&testSum))
			assert.EqualValues(t, -200, liveSum, "only the Base withdrawal is live money")
			assert.EqualValues(t, 990+300+500, testSum, "devnet credits stay test money")

			assert.False(t, mode(`SELECT livemode FROM events WHERE id = 'evt_1'`), "an event takes its object's mode")
			assert.True(t, mode(`SELECT livemode FROM events WHERE id = 'evt_2'`))
			assert.True(t, mode(`SELECT livemode FROM webhook_endpoints WHERE merchant_id = ?`, live))
			assert.False(t, mode(`SELECT livemode FROM webhook_endpoints WHERE merchant_id = ?`, test), "a test-only merchant's endpoint receives test events")
			var keys []string
			require.NoError(t, db.Raw(`SELECT key FROM idempotency_keys WHERE merchant_id = ? ORDER BY key`, test).Scan(&keys).Error)
			assert.Equal(t, []string{"op", "test k1"}, keys, "a test-only merchant's request keys move to test; operators' stay")
			require.NoError(t, db.Raw(`SELECT key FROM idempotency_keys WHERE merchant_id = ? ORDER BY key`, live).Scan(&keys).Error)
			assert.Equal(t, []string{"k1", "op"}, keys)
			var locks int64
			require.NoError(t, db.Raw(`SELECT COUNT(*) FROM balance_locks`).Row().Scan(&locks))
			assert.EqualValues(t, 4, locks, "a balance lock per merchant and mode")
		})
	}
}
