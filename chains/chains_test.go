package chains

import (
	"context"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

func TestParseNetworks(t *testing.T) {
	tests := []struct {
		in      string
		want    Networks
		wantErr bool
	}{
		{"mainnet", Mainnet, false},
		{"testnet", Testnet, false},
		{"all", All, false},
		{"MAINNET", Mainnet, false},
		{"  Testnet\n", Testnet, false},
		{"All", All, false},
		{"", "", true},
		{"main", "", true},
		{"mainnets", "", true},
		{"devnet", "", true},
		{"mainnet,testnet", "", true},
	}
	for _, tc := range tests {
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			got, err := ParseNetworks(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "mainnet, testnet, all")
				assert.Contains(t, err.Error(), strconv.Quote(tc.in), "the error echoes the value given")
				assert.Equal(t, Networks(""), got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestServes(t *testing.T) {
	mainnet := domain.Chain{ID: 1, IsTestnet: false}
	testnet := domain.Chain{ID: 11155111, IsTestnet: true}
	devnet := domain.Chain{ID: DevnetID, IsTestnet: true}
	tests := []struct {
		n                Networks
		mainnet, testnet bool
	}{
		{Mainnet, true, false},
		{Testnet, false, true},
		{All, true, true},
		{Networks(""), true, true}, // unparsed zero value behaves like all
	}
	for _, tc := range tests {
		t.Run(string(tc.n), func(t *testing.T) {
			assert.Equal(t, tc.mainnet, tc.n.Serves(mainnet), "mainnet chain")
			assert.Equal(t, tc.testnet, tc.n.Serves(testnet), "testnet chain")
			assert.True(t, tc.n.Serves(devnet), "the devnet passes every networks setting (the devnet setting governs it)")
			assert.True(t, tc.n.Serves(domain.Chain{ID: DevnetL2ID, IsTestnet: true}), "so does its second chain")
		})
	}
}

func TestCAIP2(t *testing.T) {
	tests := []struct {
		id   int64
		want string
	}{
		{1, "eip155:1"},
		{8453, "eip155:8453"},
		{56, "eip155:56"},
		{11155111, "eip155:11155111"},
		{9007199254740993, "eip155:9007199254740993"}, // 2^53+1: not representable as float64
		{math.MaxInt64, "eip155:9223372036854775807"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, CAIP2(tc.id))
			back, err := ParseCAIP2(tc.want)
			require.NoError(t, err)
			assert.Equal(t, tc.id, back, "round trip")
		})
	}
}

func TestParseCAIP2Rejects(t *testing.T) {
	for _, in := range []string{
		"eip155:0", "eip155:-1", "cosmos:1", "eip155:", "eip155:1a", "", "8453", "EIP155:1",
		"eip155: 1", "eip155:1 ", " eip155:1", "eip155:1.0", "eip155:0x1",
		"eip155:9223372036854775808", // overflows int64
		"eip155:eip155:1",
	} {
		t.Run(strconv.Quote(in), func(t *testing.T) {
			id, err := ParseCAIP2(in)
			require.Error(t, err)
			assert.Equal(t, int64(0), id)
			assert.Contains(t, err.Error(), "not a CAIP-2 EVM id")
		})
	}
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "chains.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))))
	return st
}

func TestCatalogAndListFilterByNetworks(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	for _, tc := range []struct {
		n               Networks
		enabled         []int64
		disabledSamples []int64
	}{
		// The devnet chains (1337, 31337) pass the networks filter in every mode: whether they are
		// served is decided by Watch (running devnet or RPC URL), not here.
		{Mainnet, []int64{1, 10, 56, 137, 1337, 8453, 31337, 42161, 43114}, []int64{84532, 11155111}},
		{Testnet, []int64{1337, 31337, 84532, 11155111}, []int64{1, 8453}},
		{All, []int64{1, 10, 56, 137, 1337, 8453, 31337, 42161, 43114, 84532, 11155111}, nil},
	} {
		t.Run(string(tc.n), func(t *testing.T) {
			cat, err := Load(st.Read(ctx), tc.n)
			require.NoError(t, err)
			var enabled []int64
			for _, c := range cat.Chains {
				if c.Enabled {
					enabled = append(enabled, c.ID)
				}
				assert.Equal(t, tc.n.Serves(c), c.Enabled, "chain %d", c.ID)
			}
			assert.ElementsMatch(t, tc.enabled, enabled)
			for _, tk := range cat.Tokens {
				assert.Equal(t, tc.n.Serves(tk.Chain), tk.Chain.Enabled, "token %s carries its chain's switch", tk.ID)
			}

			all, total := List(cat, 100, 0)
			assert.Equal(t, int64(11), total, "every stored chain is listed, enabled or not")
			assert.Len(t, all, 11)
		})
	}
}

func TestListPages(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	tests := []struct {
		limit, offset int32
		wantLen       int
	}{
		{4, 0, 4}, {4, 4, 4}, {4, 8, 3}, {4, 9, 2}, {4, 10, 1}, {4, 11, 0}, {4, 100, 0}, {100, 0, 11},
	}
	cat, err := Load(st.Read(ctx), All)
	require.NoError(t, err)
	for _, tc := range tests {
		page, total := List(cat, tc.limit, tc.offset)
		assert.Equal(t, int64(11), total)
		assert.Len(t, page, tc.wantLen, "limit %d offset %d", tc.limit, tc.offset)
	}
	first, _ := List(cat, 2, 0)
	require.Len(t, first, 2)
	assert.Equal(t, []int64{1, 10}, []int64{first[0].ID, first[1].ID}, "ordered by chain id")
	second, _ := List(cat, 4, 4)
	require.Len(t, second, 4)
	assert.Equal(t, int64(DevnetID), second[0].ID, "the devnet sorts numerically, after 137 and before 8453")
	assert.Equal(t, int64(DevnetL2ID), second[2].ID, "the devnet L2 sorts numerically, after 8453 and before 42161")
}

func TestWatch(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	load := func(n Networks) domain.Catalog {
		cat, err := Load(st.Read(ctx), n)
		require.NoError(t, err)
		return cat
	}
	enabled := func(cat domain.Catalog) []int64 {
		var ids []int64
		for _, c := range cat.Chains {
			if c.Enabled {
				ids = append(ids, c.ID)
			}
		}
		for _, tk := range cat.Tokens {
			c, ok := cat.Chain(tk.Chain.ID)
			require.True(t, ok, "token %s", tk.ID)
			assert.Equal(t, c.Enabled, tk.Chain.Enabled, "token %s carries its chain's switch", tk.ID)
		}
		return ids
	}
	mainnets := []int64{1, 10, 56, 137, 8453, 42161, 43114}

	t.Run("nothing watched", func(t *testing.T) {
		assert.Empty(t, enabled(Watch(load(All), nil, false, nil)), "no RPC URL and no devnet: nothing is served")
	})
	t.Run("serve unwatched leaves the devnet out", func(t *testing.T) {
		assert.ElementsMatch(t, append(mainnets, 84532, 11155111), enabled(Watch(load(All), nil, true, nil)),
			"neither devnet chain is served unwatched")
	})
	t.Run("devnet watched", func(t *testing.T) {
		assert.ElementsMatch(t, []int64{DevnetID}, enabled(Watch(load(Mainnet), map[int64]bool{DevnetID: true}, false, nil)),
			"a watched devnet is served even on a mainnet deployment")
		assert.ElementsMatch(t, append(mainnets, DevnetID), enabled(Watch(load(Mainnet), map[int64]bool{DevnetID: true}, true, nil)))
		both := map[int64]bool{DevnetID: true, DevnetL2ID: true}
		assert.ElementsMatch(t, []int64{DevnetID, DevnetL2ID}, enabled(Watch(load(Mainnet), both, false, nil)),
			"both devnet chains, on a mainnet deployment too")
		assert.ElementsMatch(t, []int64{DevnetL2ID}, enabled(Watch(load(Testnet), map[int64]bool{DevnetL2ID: true}, false, nil)))
	})
	t.Run("networks still filter watched chains", func(t *testing.T) {
		w := map[int64]bool{8453: true, 84532: true}
		assert.ElementsMatch(t, []int64{8453}, enabled(Watch(load(Mainnet), w, false, nil)))
		assert.ElementsMatch(t, []int64{84532}, enabled(Watch(load(Testnet), w, false, nil)))
	})
	t.Run("confirmations override", func(t *testing.T) {
		seeded, ok := load(All).Chain(DevnetID)
		require.True(t, ok)
		assert.Equal(t, int32(2), seeded.RequiredConfirmations, "the seeded depth")
		cat := Watch(load(All), map[int64]bool{DevnetID: true}, false, map[int64]int32{DevnetID: 5})
		c, ok := cat.Chain(DevnetID)
		require.True(t, ok)
		assert.Equal(t, int32(5), c.RequiredConfirmations)
		toks := cat.ChainTokens(DevnetID)
		require.Len(t, toks, 3)
		for _, tk := range toks {
			assert.Equal(t, int32(5), tk.Chain.RequiredConfirmations, "token %s", tk.ID)
		}
		base, ok := cat.Chain(8453)
		require.True(t, ok)
		assert.NotEqual(t, int32(5), base.RequiredConfirmations, "other chains keep their depth")
	})
}
