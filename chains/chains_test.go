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
		{Mainnet, []int64{1, 10, 56, 137, 8453, 42161, 43114}, []int64{84532, 11155111}},
		{Testnet, []int64{84532, 11155111}, []int64{1, 8453}},
		{All, []int64{1, 10, 56, 137, 8453, 42161, 43114, 84532, 11155111}, nil},
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
			assert.Equal(t, int64(9), total, "every stored chain is listed, enabled or not")
			assert.Len(t, all, 9)
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
		{4, 0, 4}, {4, 4, 4}, {4, 8, 1}, {4, 9, 0}, {4, 100, 0}, {100, 0, 9},
	}
	cat, err := Load(st.Read(ctx), All)
	require.NoError(t, err)
	for _, tc := range tests {
		page, total := List(cat, tc.limit, tc.offset)
		assert.Equal(t, int64(9), total)
		assert.Len(t, page, tc.wantLen, "limit %d offset %d", tc.limit, tc.offset)
	}
	first, _ := List(cat, 2, 0)
	require.Len(t, first, 2)
	assert.Equal(t, []int64{1, 10}, []int64{first[0].ID, first[1].ID}, "ordered by chain id")
}
