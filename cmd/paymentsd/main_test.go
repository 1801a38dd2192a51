package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// cliEnv gives a test a fresh embedded database and an environment that cannot leak in from
// the machine running the tests.
func cliEnv(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	t.Setenv("DATABASE_URL", db)
	t.Setenv("PAYMENTS_PRICING", "static")
	t.Setenv("PAYMENTS_DEVNET", "127.0.0.1:0")   // the embedded default's devnet, on a free port
	t.Setenv("PAYMENTS_DEVNET_L2", "")           // its second chain: the port after, i.e. another free one
	t.Setenv("PAYMENTS_SERVE_UNWATCHED", "true") // and every seeded chain quoted, as these tests expect
	t.Setenv("PAYMENTS_RPC_URLS", "")
	for _, name := range []string{"PAYMENTS_NETWORKS", "PAYMENTS_MERCHANT_FEE_BPS", "PAYMENTS_XPUB",
		"PAYMENTS_BACKEND_WALLET", "PAYMENTS_QUOTE_TTL", "PAYMENTS_PAYMENT_TTL", "PAYMENTS_IDEMPOTENCY_TTL",
		"PAYMENTS_LOG_FORMAT", "PAYMENTS_PUBLIC_URL", "PAYMENTS_PRICE_TTL", "PAYMENTS_PRICE_MAX_STALENESS"} {
		t.Setenv(name, "") // empty reads as unset
	}
	return db
}

// cli runs the command in-process.
func cli(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// cliJSON runs a command that must succeed and print exactly one JSON object.
func cliJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errOut, err := cli(t, args...)
	require.NoError(t, err, "stderr: %s", errOut)
	dec := json.NewDecoder(strings.NewReader(out))
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "stdout: %s", out)
	var extra any
	require.ErrorIs(t, dec.Decode(&extra), io.EOF, "exactly one JSON object on stdout: %s", out)
	return m
}

func createMerchant(t *testing.T, db string, extra ...string) map[string]any {
	t.Helper()
	return cliJSON(t, append([]string{"merchants", "create", "--database-url", db, "--name", "Acme Coffee", "--json"}, extra...)...)
}

func TestMerchantsCreate(t *testing.T) {
	db := cliEnv(t)
	m := createMerchant(t, db, "--deposits", "--withdrawals", "--short-name", "Acme")

	id, err := uuid.Parse(m["merchantId"].(string))
	require.NoError(t, err, "merchantId is a uuid")
	assert.NotEqual(t, uuid.Nil, id)
	key, _ := m["secretKey"].(string)
	assert.True(t, strings.HasPrefix(key, "sk_test_"), "test mode by default: secret key %q", key)
	assert.Equal(t, "test", m["mode"])
	assert.Greater(t, len(key), len("sk_test_")+32)
	prefix, _ := m["keyPrefix"].(string)
	assert.Len(t, prefix, 16)
	assert.True(t, strings.HasPrefix(key, prefix), "the prefix is the key's start")
	assert.Equal(t, "Acme Coffee", m["name"])
	assert.Equal(t, "Acme", m["shortName"])
	assert.Equal(t, true, m["depositsEnabled"])
	assert.Equal(t, true, m["withdrawalsEnabled"])

	plain := createMerchant(t, db)
	assert.Equal(t, false, plain["depositsEnabled"], "flags default off")
	assert.Equal(t, false, plain["withdrawalsEnabled"])
	assert.Equal(t, "Acme Coffee", plain["shortName"], "short name defaults to the name")
	assert.NotEqual(t, m["merchantId"], plain["merchantId"])
	assert.NotEqual(t, m["secretKey"], plain["secretKey"])

	live := createMerchant(t, db, "--mode", "live")
	assert.True(t, strings.HasPrefix(live["secretKey"].(string), "sk_live_"))
	assert.Equal(t, "live", live["mode"])
	_, _, err = cli(t, "merchants", "create", "--database-url", db, "--name", "X", "--mode", "production")
	assert.ErrorIs(t, err, errUsage, "a mode is test or live")
}

func TestMerchantsCreateHumanOutput(t *testing.T) {
	db := cliEnv(t)
	out, _, err := cli(t, "merchants", "create", "--database-url", db, "--name", "Acme")
	require.NoError(t, err)
	assert.Contains(t, out, "merchant id: ")
	assert.Contains(t, out, "secret key:  sk_test_")
	assert.Contains(t, out, "(test mode; shown once)")
}

func TestMerchantsCreateUsesDatabaseURLFromEnv(t *testing.T) {
	db := cliEnv(t)
	m := cliJSON(t, "merchants", "create", "--name", "Env Shop", "--json") // no --database-url
	a := openApp(t, db)
	got, err := a.Store.Read(context.Background()).GetMerchant(uuid.MustParse(m["merchantId"].(string)))
	require.NoError(t, err, "the merchant was written to $DATABASE_URL")
	assert.Equal(t, "Env Shop", got.Name)
}

func TestUsageErrors(t *testing.T) {
	db := cliEnv(t)
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no command", nil, "usage: paymentsd"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate `},
		{"unknown subcommand", []string{"merchants", "delete"}, `unknown command "merchants delete"`},
		{"group without subcommand", []string{"keys"}, `unknown command "keys "`},
		{"merchants create without --name", []string{"merchants", "create", "--database-url", db, "--json"}, "--name is required"},
		{"merchants create with a blank --name", []string{"merchants", "create", "--database-url", db, "--name", "   "}, "--name is required"},
		{"unknown flag", []string{"merchants", "create", "--database-url", db, "--name", "X", "--bogus"}, "flag provided but not defined"},
		{"keys create without --merchant", []string{"keys", "create", "--database-url", db}, "--merchant must be a merchant id"},
		{"keys create with a bad id", []string{"keys", "create", "--database-url", db, "--merchant", "nope"}, "--merchant must be a merchant id"},
		{"keys revoke without --key-prefix", []string{"keys", "revoke", "--database-url", db}, "--key-prefix is required"},
		{"withdrawal-config without --merchant", []string{"merchants", "withdrawal-config", "--database-url", db}, "--merchant must be a merchant id"},
		{"settle without --payment", []string{"payments", "settle", "--database-url", db, "--tx-hash", "0x" + strings.Repeat("a", 64)}, "--payment"},
		{"settle without --tx-hash", []string{"payments", "settle", "--database-url", db, "--payment", uuid.NewString()}, "--tx-hash are required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := cli(t, tc.args...)
			require.ErrorIs(t, err, errUsage)
			assert.Equal(t, 2, exitCode(err))
			assert.Contains(t, errOut, tc.stderr)
			assert.Empty(t, out, "nothing on stdout")
		})
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"help", "-h", "--help"} {
		t.Run(arg, func(t *testing.T) {
			out, _, err := cli(t, arg)
			require.NoError(t, err)
			assert.Contains(t, out, "usage: paymentsd <command>")
			assert.Contains(t, out, "payments settle")
		})
	}
}

func TestExitCode(t *testing.T) {
	assert.Equal(t, 2, exitCode(errUsage))
	assert.Equal(t, 2, exitCode(fmt.Errorf("wrapped: %w", errUsage)))
	assert.Equal(t, 1, exitCode(errors.New("boom")))
	assert.Equal(t, 1, exitCode(domain.ErrPaymentNotFound))
}

func TestMigrateTwice(t *testing.T) {
	db := cliEnv(t)
	_, errOut, err := cli(t, "migrate", "--database-url", db)
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "migrations up to date")
	assert.Contains(t, errOut, "migration applied", "the first run applies the migrations")

	_, errOut, err = cli(t, "migrate", "--database-url", db)
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "migrations up to date")
	assert.NotContains(t, errOut, "migration applied", "the second run has nothing to apply")

	_, errOut, err = cli(t, "migrate") // DATABASE_URL from the environment
	require.NoError(t, err, errOut)
	assert.NotContains(t, errOut, "migration applied")
}

func TestMigrateRejectsBadConfig(t *testing.T) {
	db := cliEnv(t)
	t.Setenv("PAYMENTS_PRICING", "oracle")
	_, _, err := cli(t, "migrate", "--database-url", db)
	require.Error(t, err)
	assert.NotErrorIs(t, err, errUsage)
	assert.Contains(t, err.Error(), "PAYMENTS_PRICING")
}

func TestKeysCreateAndRevoke(t *testing.T) {
	db := cliEnv(t)
	m := createMerchant(t, db)
	mid := m["merchantId"].(string)

	k := cliJSON(t, "keys", "create", "--database-url", db, "--merchant", mid, "--mode", "live", "--json")
	assert.Equal(t, mid, k["merchantId"])
	newKey := k["secretKey"].(string)
	assert.True(t, strings.HasPrefix(newKey, "sk_live_"))
	assert.Equal(t, "live", k["mode"])
	assert.NotEqual(t, m["secretKey"], newKey, "a new, different key")
	newPrefix := k["keyPrefix"].(string)
	assert.True(t, strings.HasPrefix(newKey, newPrefix))
	assert.NotEqual(t, m["keyPrefix"], newPrefix)

	out, errOut, err := cli(t, "keys", "revoke", "--database-url", db, "--key-prefix", newPrefix)
	require.NoError(t, err, errOut)
	assert.Contains(t, out, "revoked 1 key(s) with prefix "+newPrefix)

	_, _, err = cli(t, "keys", "revoke", "--database-url", db, "--key-prefix", newPrefix)
	require.Error(t, err, "the prefix has no active key left")
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.NotErrorIs(t, err, errUsage)
	assert.Contains(t, err.Error(), newPrefix)

	_, _, err = cli(t, "keys", "revoke", "--database-url", db, "--key-prefix", "sk_live_nonexist")
	assert.ErrorIs(t, err, store.ErrNotFound)

	// The revoked key no longer authenticates; the first key still does.
	a := openApp(t, db)
	_, err = a.Merchants.Authenticate(context.Background(), newKey)
	assert.ErrorIs(t, err, domain.ErrInvalidAPIKey)
	got, err := a.Merchants.Authenticate(context.Background(), m["secretKey"].(string))
	require.NoError(t, err)
	assert.Equal(t, mid, got.ID.String())
}

func TestKeysCreateHumanOutputAndUnknownMerchant(t *testing.T) {
	db := cliEnv(t)
	m := createMerchant(t, db)
	out, _, err := cli(t, "keys", "create", "--database-url", db, "--merchant", m["merchantId"].(string))
	require.NoError(t, err)
	assert.Contains(t, out, "secret key: sk_test_")
	assert.Contains(t, out, "(test mode; shown once; prefix sk_test_")

	_, _, err = cli(t, "keys", "create", "--database-url", db, "--merchant", uuid.NewString(), "--json")
	assert.ErrorIs(t, err, domain.ErrMerchantNotFound)
}

func TestWithdrawalConfig(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db, "--withdrawals")["merchantId"].(string)

	def := cliJSON(t, "merchants", "withdrawal-config", "--database-url", db, "--merchant", mid)
	assert.Equal(t, mid, def["merchantId"])
	assert.Equal(t, "USDC", def["token"])
	assert.EqualValues(t, 100, def["minAmountCents"])
	assert.EqualValues(t, 100_000_000, def["maxAmountCents"])
	assert.Contains(t, def["chains"], "eip155:8453", "every served chain with USDC by default")
	assert.Contains(t, def["chains"], "eip155:11155111", "the embedded default serves testnets too")

	cfg := cliJSON(t, "merchants", "withdrawal-config", "--database-url", db, "--merchant", mid,
		"--chains", "eip155:8453", "--min", "500")
	assert.Equal(t, []any{"eip155:8453"}, cfg["chains"])
	assert.EqualValues(t, 500, cfg["minAmountCents"])
	assert.EqualValues(t, 100_000_000, cfg["maxAmountCents"], "unchanged")
	assert.Equal(t, "USDC", cfg["token"])

	again := cliJSON(t, "merchants", "withdrawal-config", "--database-url", db, "--merchant", mid)
	assert.Equal(t, cfg, again, "persisted: a read shows the same config")

	multi := cliJSON(t, "merchants", "withdrawal-config", "--database-url", db, "--merchant", mid,
		"--chains", "eip155:1, eip155:56", "--token", "usdt", "--max", "900000", "--wallet", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")
	assert.ElementsMatch(t, []any{"eip155:1", "eip155:56"}, multi["chains"])
	assert.Equal(t, "USDT", multi["token"], "symbol upper-cased")
	assert.EqualValues(t, 900000, multi["maxAmountCents"])
	assert.EqualValues(t, 500, multi["minAmountCents"])
	assert.Equal(t, "0x9858effd232b4033e47d90003d41ec34ecaeda94", multi["backendWalletAddress"])
}

func TestWithdrawalConfigRejects(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db)["merchantId"].(string)
	base := []string{"merchants", "withdrawal-config", "--database-url", db, "--merchant", mid}
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"chain id zero", []string{"--chains", "eip155:0"}, "not a CAIP-2"},
		{"not CAIP-2", []string{"--chains", "8453"}, "not a CAIP-2"},
		{"min below the floor", []string{"--min", "50"}, "min <= max"},
		{"max above the ceiling", []string{"--max", "100000001"}, "min <= max"},
		{"min above max", []string{"--min", "5000", "--max", "1000"}, "min <= max"},
		{"chain without the token", []string{"--chains", "eip155:11155111", "--token", "USDT"}, "has no active USDT token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := cli(t, append(append([]string{}, base...), tc.args...)...)
			require.Error(t, err)
			assert.NotErrorIs(t, err, errUsage)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Empty(t, out)
		})
	}
	after := cliJSON(t, base...)
	assert.EqualValues(t, 100, after["minAmountCents"], "a refused change leaves the config as it was")

	_, _, err := cli(t, "merchants", "withdrawal-config", "--database-url", db, "--merchant", uuid.NewString(), "--min", "500")
	assert.Error(t, err, "unknown merchant")
}

const testXPub = "xpub6EF8jXqFeFEW5bwMU7RpQtHkzE4KJxcqJtvkCjJumzW8CPpacXkb92ek4WzLQXjL93HycJwTPUAcuNxCqFPKKU5m5Z2Vq4nCyh5CyPeBFFr"

// openApp opens the CLI's database in-process, as tests/harness_test.go does.
func openApp(t *testing.T, db string) *app.App {
	t.Helper()
	cfg := config.Config{DatabaseURL: db, PublicBaseURL: "https://pay.example.test", Networks: chains.All, XPub: testXPub,
		QuoteTTL: 15 * time.Minute, PaymentTTL: 24 * time.Hour, MerchantFeeBps: 100, IdempotencyTTL: 24 * time.Hour,
		MaxBodyBytes: "1M", Pricing: config.Pricing{Source: "static"}, Chains: config.Chains{ServeUnwatched: true}}
	a, err := app.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	return a
}

// createPayment makes a pending payment of amount cents for the merchant and closes the app,
// so the CLI has the database to itself.
func createPayment(t *testing.T, db, merchantID string, amount int64, typ domain.PaymentType) domain.Payment {
	t.Helper()
	a := openApp(t, db)
	ctx := context.Background()
	m, err := a.Store.Read(ctx).GetMerchant(uuid.MustParse(merchantID))
	require.NoError(t, err)
	m.Mode = domain.ModeLive // these operator tests settle on mainnet quotes (Base USDC)
	in := payments.CreateInput{Type: typ, Currency: "USD", OrderID: "order-" + uuid.NewString()}
	if typ != payments.TypeDeposit {
		in.Amount = &amount
	}
	c, err := a.Payments.Create(ctx, m, in, nil)
	require.NoError(t, err)
	a.Close()
	return c.Payment
}

func txHash(b string) string { return "0x" + strings.Repeat(b, 64/len(b)) }

func TestPaymentsSettle(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db, "--deposits")["merchantId"].(string)
	tests := []struct {
		amount, fee int64
	}{
		{1050, 11},               // 10.50 rounds half up
		{1049, 10},               // 10.49 rounds down
		{12350, 124},             // 123.50 rounds half up
		{400, 4},                 // the minimum
		{100_000_000, 1_000_000}, // the maximum
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.amount), func(t *testing.T) {
			p := createPayment(t, db, mid, tc.amount, payments.TypePayment)
			require.EqualValues(t, "pending", p.Status)
			hash := "0x" + strings.Repeat("AB", 32)

			out := cliJSON(t, "payments", "settle", "--database-url", db, "--payment", p.ID.String(), "--tx-hash", hash, "--json")
			assert.Equal(t, p.ID.String(), out["paymentId"])
			assert.EqualValues(t, "completed", out["status"])
			assert.EqualValues(t, "manual", out["processedBy"])
			assert.EqualValues(t, tc.amount, out["amountInCents"])
			assert.EqualValues(t, tc.fee, out["merchantFeeCents"], "1%% of %d, half up", tc.amount)
			assert.EqualValues(t, tc.amount-tc.fee, out["amountMerchantNetCents"])
			assert.EqualValues(t, 0, out["swapFeeCents"])
			conv, ok := out["convenienceFeeCents"].(float64)
			require.True(t, ok, "convenienceFeeCents is set at settlement")
			assert.EqualValues(t, tc.amount+int64(conv), out["amountDueCents"])
			assert.Equal(t, strings.ToLower(hash), out["txHash"], "hash stored lowercase")

			// Default quote: the cheapest, settled at its expected amount.
			var q *domain.Quote
			for i := range p.Quotes {
				if p.Quotes[i].ID.String() == out["quoteId"] {
					q = &p.Quotes[i]
				}
			}
			require.NotNil(t, q, "quoteId is one of the payment's quotes")
			assert.Equal(t, p.AmountDueCents, *q.AmountDueCents, "the cheapest quote")
			assert.Equal(t, q.ExpectedAmountAsset.String(), out["settledAmountAsset"])
			assert.Equal(t, q.Token.ID, out["tokenId"])

			_, _, err := cli(t, "payments", "settle", "--database-url", db, "--payment", p.ID.String(), "--tx-hash", hash, "--json")
			require.Error(t, err, "settling twice")
			var se *domain.TransitionError
			require.ErrorAs(t, err, &se)
			assert.Contains(t, err.Error(), "completed")
			assert.Contains(t, err.Error(), p.ID.String())
		})
	}

	a := openApp(t, db)
	bal, err := a.Store.Read(context.Background()).AvailableBalance(uuid.MustParse(mid), domain.ModeLive)
	require.NoError(t, err)
	var want int64
	for _, tc := range tests {
		want += tc.amount - tc.fee
	}
	assert.Equal(t, want, bal, "each settlement credited the merchant's net exactly once")
}

func TestPaymentsSettleHumanOutputAndChosenQuote(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db)["merchantId"].(string)
	p := createPayment(t, db, mid, 2000, payments.TypePayment)
	var q domain.Quote
	for _, c := range p.Quotes {
		if c.Token.Chain.ID == 8453 && c.Token.Symbol == "USDC" {
			q = c
		}
	}
	require.NotEqual(t, uuid.Nil, q.ID, "Base USDC is quoted")
	out, _, err := cli(t, "payments", "settle", "--database-url", db, "--payment", p.ID.String(),
		"--quote", q.ID.String(), "--tx-hash", txHash("c"))
	require.NoError(t, err)
	// 2000 cents + 5 convenience fee on Base = 20.05 USDC (6 decimals); merchant net 2000 - 20.
	assert.Contains(t, out, fmt.Sprintf("payment %s completed: 20050000 USDC received, merchant credited 1980 cents", p.ID))
}

func TestPaymentsSettleErrors(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db, "--deposits")["merchantId"].(string)
	settle := func(args ...string) error {
		_, _, err := cli(t, append([]string{"payments", "settle", "--database-url", db}, args...)...)
		return err
	}

	err := settle("--payment", uuid.NewString(), "--tx-hash", txHash("a"))
	require.Error(t, err)
	assert.ErrorIs(t, err, domain.ErrPaymentNotFound)
	assert.NotErrorIs(t, err, errUsage)

	p := createPayment(t, db, mid, 1000, payments.TypePayment)
	var inv *domain.InvalidInputError

	err = settle("--payment", p.ID.String(), "--tx-hash", "0x1234")
	require.ErrorAs(t, err, &inv, "short tx hash")
	assert.Equal(t, "tx-hash", inv.Param)

	err = settle("--payment", p.ID.String(), "--tx-hash", "0x"+strings.Repeat("g", 64))
	require.ErrorAs(t, err, &inv, "non-hex tx hash")

	err = settle("--payment", p.ID.String(), "--tx-hash", txHash("a"), "--quote", "nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--quote must be a quote id")

	err = settle("--payment", p.ID.String(), "--tx-hash", txHash("a"), "--quote", uuid.NewString())
	require.ErrorAs(t, err, &inv, "a quote of another payment")
	assert.EqualValues(t, "quote", inv.Param)

	err = settle("--payment", p.ID.String(), "--tx-hash", txHash("a"), "--amount-asset", "abc")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--amount-asset must be an integer")

	err = settle("--payment", p.ID.String(), "--tx-hash", txHash("a"), "--amount-asset", "1")
	require.ErrorAs(t, err, &inv, "underpayment of a fixed-amount payment")
	assert.Contains(t, inv.Message, "below the quote's expected")

	err = settle("--payment", p.ID.String(), "--tx-hash", txHash("a"), "--amount-asset", "1.5")
	require.ErrorAs(t, err, &inv, "fractional smallest unit")

	// Nothing above changed the payment: it still settles.
	out := cliJSON(t, "payments", "settle", "--database-url", db, "--payment", p.ID.String(), "--tx-hash", txHash("a"), "--json")
	assert.EqualValues(t, "completed", out["status"])

	d := createPayment(t, db, mid, 0, payments.TypeDeposit)
	err = settle("--payment", d.ID.String(), "--tx-hash", txHash("b"))
	require.ErrorAs(t, err, &inv, "a deposit needs the amount received")
	assert.Equal(t, "amount-asset", inv.Param)
}

func TestPaymentsSettleDeposit(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db, "--deposits")["merchantId"].(string)
	d := createPayment(t, db, mid, 0, payments.TypeDeposit)
	var q domain.Quote
	for _, c := range d.Quotes {
		if c.Token.Chain.ID == 56 && c.Token.Symbol == "USDT" { // 18 decimals, $1
			q = c
		}
	}
	require.NotEqual(t, uuid.Nil, q.ID)
	// 12.349999999999999999 USDT: the USD value rounds down to 1234 cents.
	out := cliJSON(t, "payments", "settle", "--database-url", db, "--payment", d.ID.String(), "--quote", q.ID.String(),
		"--tx-hash", txHash("d"), "--amount-asset", "12349999999999999999", "--json")
	assert.EqualValues(t, "completed", out["status"])
	assert.EqualValues(t, 1234, out["amountInCents"])
	assert.EqualValues(t, 1234, out["amountDueCents"])
	assert.EqualValues(t, 0, out["convenienceFeeCents"], "no convenience fee on deposits")
	assert.EqualValues(t, 12, out["merchantFeeCents"])
	assert.EqualValues(t, 1222, out["amountMerchantNetCents"])
	assert.Equal(t, "12349999999999999999", out["settledAmountAsset"])
	assert.Equal(t, "12.34", out["settledAmountUsd"], "the receipt reports what was credited: rounded down, like amountInCents")
}

func TestMerchantFeeFromEnvironment(t *testing.T) {
	db := cliEnv(t)
	t.Setenv("PAYMENTS_MERCHANT_FEE_BPS", "250")
	mid := createMerchant(t, db)["merchantId"].(string)
	p := createPayment(t, db, mid, 1000, payments.TypePayment)
	out := cliJSON(t, "payments", "settle", "--database-url", db, "--payment", p.ID.String(), "--tx-hash", txHash("e"), "--json")
	assert.EqualValues(t, 25, out["merchantFeeCents"])
	assert.EqualValues(t, 975, out["amountMerchantNetCents"])
}

func TestLoadConfig(t *testing.T) {
	t.Run("embedded defaults", func(t *testing.T) {
		cliEnv(t)
		t.Setenv("PAYMENTS_PRICING", "")
		c, err := loadConfig("data/x.db", "", "", "http://localhost:8080", "")
		require.NoError(t, err)
		assert.Equal(t, chains.All, c.Networks)
		assert.EqualValues(t, "static", c.Pricing.Source)
		assert.Equal(t, int64(100), c.MerchantFeeBps)
		assert.Equal(t, 15*time.Minute, c.QuoteTTL)
		assert.Equal(t, 24*time.Hour, c.PaymentTTL)
		assert.Equal(t, "1M", c.MaxBodyBytes)
	})
	t.Run("postgres defaults", func(t *testing.T) {
		cliEnv(t)
		t.Setenv("PAYMENTS_PRICING", "")
		c, err := loadConfig("postgres://u@h/db", "", "", "", "")
		require.NoError(t, err)
		assert.Equal(t, chains.Mainnet, c.Networks)
		assert.EqualValues(t, "coingecko", c.Pricing.Source)
	})
	t.Run("flag beats env for networks", func(t *testing.T) {
		cliEnv(t)
		t.Setenv("PAYMENTS_NETWORKS", "mainnet")
		c, err := loadConfig("x.db", "", "testnet", "", "")
		require.NoError(t, err)
		assert.Equal(t, chains.Testnet, c.Networks)
	})
	bad := []struct {
		name, env, value, msg string
	}{
		{"networks", "PAYMENTS_NETWORKS", "devnet", "networks must be one of"},
		{"pricing", "PAYMENTS_PRICING", "oracle", "PAYMENTS_PRICING"},
		{"fee too high", "PAYMENTS_MERCHANT_FEE_BPS", "10001", "PAYMENTS_MERCHANT_FEE_BPS"},
		{"fee negative", "PAYMENTS_MERCHANT_FEE_BPS", "-1", "PAYMENTS_MERCHANT_FEE_BPS"},
		{"fee not a number", "PAYMENTS_MERCHANT_FEE_BPS", "1%", "PAYMENTS_MERCHANT_FEE_BPS"},
		{"bad duration", "PAYMENTS_QUOTE_TTL", "15", "PAYMENTS_QUOTE_TTL"},
		{"quote ttl above payment ttl", "PAYMENTS_QUOTE_TTL", "48h", "PAYMENTS_QUOTE_TTL <= PAYMENTS_PAYMENT_TTL"},
		{"zero quote ttl", "PAYMENTS_QUOTE_TTL", "0s", "0 < PAYMENTS_QUOTE_TTL"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			cliEnv(t)
			t.Setenv(tc.env, tc.value)
			_, err := loadConfig("x.db", "", "", "", "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
