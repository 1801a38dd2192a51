package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

func TestMigrateIsIdempotent(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			url := testdb.URL(t, backend)
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))

			st := openStore(t, url)
			require.NoError(t, st.Migrate(ctx, log))
			sqlFiles, err := filepath.Glob(filepath.Join("migrations", backend, "*.sql"))
			require.NoError(t, err)
			require.NotEmpty(t, sqlFiles)
			assert.Equal(t, len(sqlFiles)+1, strings.Count(logs.String(), "migration applied"),
				"a fresh database gets every SQL migration of its dialect and the Go seed: %s", logs.String())
			before := loadCatalog(t, st)

			logs.Reset()
			require.NoError(t, st.Migrate(ctx, log), "second Migrate on the same handle")
			// A new process (new handle) on the same database must find nothing to do either.
			again := openStore(t, url)
			require.NoError(t, again.Migrate(ctx, log), "Migrate from a second handle")
			assert.Zero(t, strings.Count(logs.String(), "migration applied"), "nothing re-applied: %s", logs.String())

			after := loadCatalog(t, again)
			assert.Equal(t, before, after, "re-running migrations must not duplicate or alter the seed")
			assert.Len(t, after.Chains, 11, "nine public chains and the two devnets")
			assert.Len(t, after.Tokens, 31, "25 public tokens and the devnets' three each")
			assert.NotContains(t, logs.String(), "catalogue updated", "an unchanged catalogue writes nothing")

			// The derivation counter was not reset by the second run.
			var first int64
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) (err error) { first, err = tx.AllocateDerivationIndex(); return }))
			require.NoError(t, again.Migrate(ctx, log))
			var second int64
			require.NoError(t, again.InTx(ctx, func(tx *store.Tx) (err error) { second, err = tx.AllocateDerivationIndex(); return }))
			assert.Equal(t, first+1, second)
		})
	}
}

var (
	contractRE = regexp.MustCompile(`^0x[0-9a-f]{40}$`)
	tokenIDRE  = regexp.MustCompile(`^eip155:([1-9][0-9]*)/(?:erc20:(0x[0-9a-f]{40})|slip44:60)$`)
)

func TestSeededCatalogue(t *testing.T) {
	// The issuers' canonical USDC deployments.
	usdc := map[int64]string{
		1:        "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
		10:       "0x0b2c639c533813f4aa9d7837caf62653d097ff85",
		56:       "0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d",
		137:      "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359",
		8453:     "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
		42161:    "0xaf88d065e77c8cc2239327c5edb3a432268e5831",
		43114:    "0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e",
		84532:    "0x036cbd53842c5426634e7929541ec2318f3dcf7e",
		11155111: "0x1c7d4b196cb0c7b01d743fbc6116a902379c7238",
	}
	// The embedded devnet's chains (1337 and 31337), each seeded with the addresses its fixed
	// deployer gives its tokens (devnet/tokens.go): the same on both.
	devChains := map[int64]domain.Chain{}
	devTokens := map[int64][]domain.Token{}
	for _, dc := range devnet.Chains() {
		c := domain.Chain{ID: dc.ID, Name: dc.Name, NativeSymbol: "ETH", NativeDecimals: 18, IsTestnet: true,
			Enabled: true, ConvenienceFeeCents: 0, RequiredConfirmations: 2, GaslessFeeCents: 1}
		caip := "eip155:" + strconv.FormatInt(dc.ID, 10)
		devChains[dc.ID] = c
		devTokens[dc.ID] = []domain.Token{ // ordered by id, as ChainTokens lists them
			{ID: caip + "/erc20:0x790ef98c943d9f21bbdd98c6e6de2d3c7ab16008", Chain: c, Symbol: "USDC", MarketAPIID: "usd-coin",
				ContractAddress: "0x790ef98c943d9f21bbdd98c6e6de2d3c7ab16008", Decimals: 6, Type: domain.Stablecoin, AssetType: domain.ERC20, Status: domain.TokenActive,
				EIP3009: true, EIP2612: true}, // like Circle's (devnet/contracts/DevToken.sol)
			{ID: caip + "/erc20:0xf1a226dda6d5e9ae6e9a5bcdc237ca8fa3987ccb", Chain: c, Symbol: "USDT", MarketAPIID: "tether",
				ContractAddress: "0xf1a226dda6d5e9ae6e9a5bcdc237ca8fa3987ccb", Decimals: 6, Type: domain.Stablecoin, AssetType: domain.ERC20, Status: domain.TokenActive},
			{ID: caip + "/slip44:60", Chain: c, Symbol: "ETH", MarketAPIID: "ethereum",
				ContractAddress: "0x0000000000000000000000000000000000000000", Decimals: 18, Type: domain.Volatile, AssetType: domain.Native, Status: domain.TokenActive},
		}
		require.Equal(t, devnet.USDCAddress, devTokens[dc.ID][0].ContractAddress, "the seed matches what the devnet deploys")
		require.Equal(t, devnet.USDTAddress, devTokens[dc.ID][1].ContractAddress, "the seed matches what the devnet deploys")
	}
	require.Equal(t, "Devnet", devChains[1337].Name)
	require.Equal(t, "Devnet L2", devChains[31337].Name)

	eachBackend(t, func(t *testing.T, st *store.Store) {
		cat := loadCatalog(t, st)

		for id, want := range devChains {
			dc, ok := cat.Chain(id)
			require.True(t, ok, "the devnet chain %d is seeded", id)
			assert.Equal(t, want, dc)
			assert.Equal(t, devTokens[id], cat.ChainTokens(id), "the devnet chain %d's three tokens, exactly", id)
		}

		var ids []int64
		for _, c := range cat.Chains {
			ids = append(ids, c.ID)
			assert.Equal(t, c.ID == 84532 || c.ID == 11155111 || devnet.IsDevnet(c.ID), c.IsTestnet, "testnet flag of chain %d", c.ID)
			assert.True(t, c.Enabled, "chain %d is seeded active", c.ID)
			assert.NotEmpty(t, c.Name)
			assert.NotEmpty(t, c.NativeSymbol)
			assert.EqualValues(t, 18, c.NativeDecimals)
			assert.Positive(t, c.RequiredConfirmations)
		}
		assert.Equal(t, []int64{1, 10, 56, 137, 1337, 8453, 31337, 42161, 43114, 84532, 11155111}, ids, "ordered by chain id")
		assert.Len(t, cat.Tokens, 31)

		chainByID := map[int64]domain.Chain{}
		for _, c := range cat.Chains {
			chainByID[c.ID] = c
		}
		natives, stables := map[int64]int{}, map[int64]map[string]domain.Token{}
		for id, tk := range cat.Tokens {
			assert.Equal(t, id, tk.ID, "map key is the token id")
			m := tokenIDRE.FindStringSubmatch(tk.ID)
			require.NotNil(t, m, "token id %q is not CAIP-19 eip155:<chain>/erc20:<addr> or /slip44:60", tk.ID)
			chainID, err := strconv.ParseInt(m[1], 10, 64)
			require.NoError(t, err)
			assert.Equal(t, chainByID[chainID], tk.Chain, "token %s carries its chain", tk.ID)
			assert.Regexp(t, contractRE, tk.ContractAddress, "token %s contract address", tk.ID)
			assert.EqualValues(t, "active", tk.Status)
			assert.NotEmpty(t, tk.MarketAPIID)
			switch tk.AssetType {
			case "native":
				natives[chainID]++
				assert.Empty(t, m[2], "native token %s must use the slip44:60 form", tk.ID)
				assert.Equal(t, store.NativeTokenID(chainID), tk.ID)
				assert.Equal(t, "0x0000000000000000000000000000000000000000", tk.ContractAddress)
				assert.EqualValues(t, "volatile", tk.Type)
				assert.EqualValues(t, 18, tk.Decimals)
				assert.Equal(t, tk.Chain.NativeSymbol, tk.Symbol)
			case "erc20":
				assert.Equal(t, tk.ContractAddress, m[2], "erc20 token id embeds its contract")
				assert.Equal(t, store.ERC20TokenID(chainID, tk.ContractAddress), tk.ID)
				assert.EqualValues(t, "stablecoin", tk.Type)
				if stables[chainID] == nil {
					stables[chainID] = map[string]domain.Token{}
				}
				stables[chainID][tk.Symbol] = tk
			default:
				t.Errorf("token %s has asset type %q", tk.ID, tk.AssetType)
			}
		}
		for id, c := range chainByID {
			assert.Equal(t, 1, natives[id], "one native token on chain %d", id)
			if devnet.IsDevnet(id) {
				continue // its own tokens, asserted exactly above
			}
			u, ok := stables[id]["USDC"]
			if assert.True(t, ok, "USDC on chain %d", id) {
				assert.Equal(t, usdc[id], u.ContractAddress, "USDC contract on chain %d", id)
				assert.Equal(t, "usd-coin", u.MarketAPIID)
				want := int32(6)
				if id == 56 {
					want = 18
				}
				assert.Equal(t, want, u.Decimals, "USDC decimals on chain %d", id)
			}
			usdt, ok := stables[id]["USDT"]
			assert.Equal(t, !c.IsTestnet, ok, "USDT is seeded on mainnets only (chain %d)", id)
			if ok {
				assert.EqualValues(t, "tether", usdt.MarketAPIID)
				assert.EqualValues(t, map[bool]int32{true: 18, false: 6}[id == 56], usdt.Decimals, "USDT decimals on chain %d", id)
			}
		}
	})
}

func TestAllocateDerivationIndex(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		alloc := func() (int64, error) {
			var idx int64
			err := st.InTx(ctx, func(tx *store.Tx) (err error) { idx, err = tx.AllocateDerivationIndex(); return })
			return idx, err
		}
		for want := int64(0); want < 3; want++ {
			got, err := alloc()
			require.NoError(t, err)
			require.Equal(t, want, got, "indexes are handed out sequentially from 0")
		}

		// An allocation in a rolled-back transaction: SQLite's counter row rolls back with it;
		// PostgreSQL's sequence never does (a harmless gap — and why it never blocks).
		boom := errors.New("boom")
		err := st.InTx(ctx, func(tx *store.Tx) error {
			idx, err := tx.AllocateDerivationIndex()
			require.NoError(t, err)
			assert.EqualValues(t, 3, idx)
			return boom
		})
		require.ErrorIs(t, err, boom)
		next := int64(3)
		if st.Dialect() == store.Postgres {
			next = 4
		}

		const n = 16
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			got     []int64
			errs    []error
			release = make(chan struct{})
		)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-release
				idx, err := alloc()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				got = append(got, idx)
			}()
		}
		close(release)
		wg.Wait()
		require.Empty(t, errs)
		slices.Sort(got)
		want := make([]int64, n)
		for i := range want {
			want[i] = next + int64(i)
		}
		assert.Equal(t, want, got, "concurrent allocations are distinct and leave no gap between them")
	})
}

func TestMerchantsAndAPIKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		acme := createMerchant(t, st, "Acme Corp", "acme")
		other := createMerchant(t, st, "Globex", "globex")

		got, err := st.Read(ctx).GetMerchant(acme.ID)
		require.NoError(t, err)
		assert.Equal(t, acme.ID, got.ID)
		assert.Equal(t, acme.Name, got.Name)
		assert.Equal(t, acme.ShortName, got.ShortName)
		assert.Equal(t, acme.LogoURL, got.LogoURL)
		assert.True(t, got.DepositsEnabled)
		assert.False(t, got.WithdrawalsEnabled)
		assert.True(t, acme.CreatedAt.Equal(got.CreatedAt), "created_at %s != %s", got.CreatedAt, acme.CreatedAt)
		_, err = st.Read(ctx).GetMerchant(uuid.New())
		assert.ErrorIs(t, err, store.ErrNotFound)
		n, err := st.Read(ctx).CountMerchants()
		require.NoError(t, err)
		assert.EqualValues(t, 2, n)
		assert.ErrorIs(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(acme) }), store.ErrConflict)

		hash := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
		keys := []domain.APIKey{
			{ID: uuid.Must(uuid.NewV7()), MerchantID: acme.ID, Prefix: "sk_test_aaaa", Hash: hash("secret-1"), CreatedAt: t0},
			{ID: uuid.Must(uuid.NewV7()), MerchantID: acme.ID, Prefix: "sk_test_aaaa", Hash: hash("secret-2"), CreatedAt: t0},
			{ID: uuid.Must(uuid.NewV7()), MerchantID: acme.ID, Prefix: "sk_test_bbbb", Hash: hash("secret-3"), CreatedAt: t0},
			{ID: uuid.Must(uuid.NewV7()), MerchantID: other.ID, Prefix: "sk_test_cccc", Hash: hash("secret-4"), CreatedAt: t0},
		}
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			for _, k := range keys {
				if err := tx.CreateAPIKey(k); err != nil {
					return err
				}
			}
			return nil
		}))
		dup := keys[0]
		dup.ID = uuid.Must(uuid.NewV7())
		assert.ErrorIs(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateAPIKey(dup) }), store.ErrConflict,
			"a key hash is unique")

		for i, k := range keys {
			m, err := st.Read(ctx).MerchantByKeyHash(k.Hash)
			require.NoError(t, err, "key %d", i)
			assert.Equal(t, k.MerchantID, m.ID, "key %d", i)
			assert.NotEmpty(t, m.Name)
		}
		_, err = st.Read(ctx).MerchantByKeyHash(hash("unknown"))
		assert.ErrorIs(t, err, store.ErrNotFound)

		var revoked int64
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) (err error) {
			revoked, err = tx.RevokeKeysByPrefix("sk_test_aaaa", t0.Add(time.Hour))
			return
		}))
		assert.EqualValues(t, 2, revoked, "every active key with the prefix is revoked")
		for _, k := range keys[:2] {
			_, err := st.Read(ctx).MerchantByKeyHash(k.Hash)
			assert.ErrorIs(t, err, store.ErrNotFound, "revoked key %s", k.ID)
		}
		for _, k := range keys[2:] {
			m, err := st.Read(ctx).MerchantByKeyHash(k.Hash)
			require.NoError(t, err, "untouched key %s", k.ID)
			assert.Equal(t, k.MerchantID, m.ID)
		}

		_, err = st.Read(ctx).RevokeKeysByPrefix("sk_test_aaaa", t0.Add(2*time.Hour))
		assert.ErrorIs(t, err, store.ErrNotFound, "revoking already-revoked keys again finds no active key")
		_, err = st.Read(ctx).RevokeKeysByPrefix("sk_test_zzzz", t0)
		assert.ErrorIs(t, err, store.ErrNotFound, "unknown prefix")
	})
}

func TestLedger(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cat := loadCatalog(t, st)
		acme := createMerchant(t, st, "Acme Corp", "acme")
		other := createMerchant(t, st, "Globex", "globex")
		p1 := insertPayment(t, st, cat, acme, paymentSpec{Amount: 1000})
		p2 := insertPayment(t, st, cat, acme, paymentSpec{Amount: 250})
		p3 := insertPayment(t, st, cat, acme, paymentSpec{Amount: 500})
		po := insertPayment(t, st, cat, other, paymentSpec{Amount: 77})
		usdc := token(t, cat, store.ERC20TokenID(1, usdcEthereum))
		w := domain.Withdrawal{ID: uuid.Must(uuid.NewV7()), MerchantID: acme.ID, AmountInCents: 300, Chain: usdc.Chain,
			Token: usdc, RecipientAddress: "0x" + strings.Repeat("ab", 20), Status: "pending", Currency: "USD",
			CreatedAt: t0, UpdatedAt: t0}
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.InsertWithdrawal(w) }))

		balance := func(id uuid.UUID) int64 {
			t.Helper()
			b, err := st.Read(ctx).AvailableBalance(id, domain.ModeTest)
			require.NoError(t, err)
			return b
		}
		appendEntry := func(m uuid.UUID, kind string, cents int64, pid, wid *uuid.UUID) error {
			return st.InTx(ctx, func(tx *store.Tx) error { return tx.AppendLedger(m, domain.ModeTest, kind, cents, pid, wid, t0) })
		}

		assert.Zero(t, balance(acme.ID), "no entries: zero, not an error")
		require.NoError(t, appendEntry(acme.ID, store.LedgerPaymentCredit, 1000, &p1.ID, nil))
		err := appendEntry(acme.ID, store.LedgerPaymentCredit, 1000, &p1.ID, nil)
		assert.ErrorIs(t, err, store.ErrConflict, "the same payment cannot be credited twice")
		require.NoError(t, appendEntry(acme.ID, store.LedgerPaymentCredit, 250, &p2.ID, nil))
		require.NoError(t, appendEntry(other.ID, store.LedgerPaymentCredit, 77, &po.ID, nil))
		assert.EqualValues(t, 1250, balance(acme.ID))

		require.NoError(t, appendEntry(acme.ID, store.LedgerWithdrawalDebit, -300, nil, &w.ID))
		assert.ErrorIs(t, appendEntry(acme.ID, store.LedgerWithdrawalDebit, -300, nil, &w.ID), store.ErrConflict,
			"the same withdrawal cannot be debited twice")
		assert.EqualValues(t, 950, balance(acme.ID), "credits less debits")
		require.NoError(t, appendEntry(acme.ID, store.LedgerWithdrawalReversal, 300, nil, &w.ID),
			"a reversal is another kind for the same withdrawal")
		assert.EqualValues(t, 1250, balance(acme.ID))
		assert.EqualValues(t, 77, balance(other.ID), "balances are per merchant")

		// A failed unit of work leaves nothing behind.
		boom := errors.New("boom")
		err = st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.AppendLedger(acme.ID, domain.ModeTest, store.LedgerPaymentCredit, 500, &p3.ID, nil, t0); err != nil {
				return err
			}
			inside, err := tx.AvailableBalance(acme.ID, domain.ModeTest)
			require.NoError(t, err)
			assert.EqualValues(t, 1750, inside, "the transaction sees its own entry")
			return boom
		})
		require.ErrorIs(t, err, boom)
		assert.EqualValues(t, 1250, balance(acme.ID), "rolled back")
		require.NoError(t, appendEntry(acme.ID, store.LedgerPaymentCredit, 500, &p3.ID, nil),
			"no leftover entry blocks crediting p3 for real")
		assert.EqualValues(t, 1750, balance(acme.ID))
	})
}

func TestIdempotencyKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a := createMerchant(t, st, "Acme Corp", "acme")
		b := createMerchant(t, st, "Globex", "globex")
		now := t0
		rec := func(m uuid.UUID, key string, ttl time.Duration) store.IdempotencyRecord {
			h := sha256.Sum256([]byte(m.String() + key))
			return store.IdempotencyRecord{MerchantID: m, Key: key, Operation: "create_payment", RequestHash: h[:],
				ExpiresAt: now.Add(ttl)}
		}
		claimAt := func(r store.IdempotencyRecord, at time.Time) error {
			return st.InTx(ctx, func(tx *store.Tx) error { return tx.ClaimIdempotencyKey(r, at) })
		}
		claim := func(r store.IdempotencyRecord) error { return claimAt(r, now) }
		get := func(m uuid.UUID, key string) (store.IdempotencyRecord, error) {
			return st.Read(ctx).GetIdempotencyKey(m, key)
		}

		r1 := rec(a.ID, "key-1", 24*time.Hour)
		require.NoError(t, claim(r1))
		assert.ErrorIs(t, claim(r1), store.ErrConflict, "second claim of the same (merchant, key)")
		require.NoError(t, claim(rec(b.ID, "key-1", 24*time.Hour)), "keys are scoped per merchant")

		got, err := get(a.ID, "key-1")
		require.NoError(t, err)
		assert.Equal(t, r1.Operation, got.Operation)
		assert.Equal(t, r1.RequestHash, got.RequestHash)
		assert.Zero(t, got.StatusCode)
		assert.Empty(t, got.ResponseBody)
		assert.True(t, r1.ExpiresAt.Equal(got.ExpiresAt), "expires_at %s != %s", got.ExpiresAt, r1.ExpiresAt)

		// Claim and seal in one transaction: the outcome commits with the key.
		body := []byte(`{"id":"x","amount":1000}` + "\x00\xff") // arbitrary bytes survive
		r3 := rec(a.ID, "key-3", time.Hour)
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.ClaimIdempotencyKey(r3, now); err != nil {
				return err
			}
			return tx.SealIdempotencyKey(a.ID, "key-3", 201, body)
		}))
		got, err = get(a.ID, "key-3")
		require.NoError(t, err)
		assert.Equal(t, 201, got.StatusCode)
		assert.Equal(t, body, got.ResponseBody)

		// A claim rolled back with its transaction leaves nothing behind.
		boom := errors.New("effect failed")
		err = st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.ClaimIdempotencyKey(rec(a.ID, "key-4", time.Hour), now); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		_, err = get(a.ID, "key-4")
		assert.ErrorIs(t, err, store.ErrNotFound, "no key outlives its rolled-back transaction")

		// Expiry: a claim replaces an expired row of the same key, and only an expired one.
		r2 := rec(a.ID, "key-2", time.Hour)
		require.NoError(t, claim(r2))
		assert.ErrorIs(t, claimAt(r2, r2.ExpiresAt.Add(-time.Microsecond)), store.ErrConflict, "not yet expired: kept")
		fresh := rec(a.ID, "key-2", 2*time.Hour)
		require.NoError(t, claimAt(fresh, r2.ExpiresAt), "expired at exactly expires_at: claimed afresh")
		got, err = get(a.ID, "key-2")
		require.NoError(t, err)
		assert.True(t, fresh.ExpiresAt.Equal(got.ExpiresAt))

		n, err := purge(st, now.Add(time.Hour))
		require.NoError(t, err)
		assert.EqualValues(t, 1, n, "key-3 (1h) expired; key-1 (24h) and key-2 (renewed) kept")
		_, err = get(a.ID, "key-3")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = get(a.ID, "key-1")
		require.NoError(t, err)
	})
}

func purge(st *store.Store, at time.Time) (n int64, err error) {
	err = st.InTx(context.Background(), func(tx *store.Tx) error { n, err = tx.PurgeExpiredIdempotencyKeys(at); return err })
	return n, err
}
