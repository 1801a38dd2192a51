package chain

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCAIP2(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"eip155:1", 1, false},
		{"eip155:8453", 8453, false},
		{"eip155:9223372036854775807", 9223372036854775807, false},
		{"eip155:9223372036854775808", 0, true},
		{"eip155:0", 0, true},
		{"eip155:01", 0, true},
		{"eip155:-1", 0, true},
		{"eip155:+1", 0, true},
		{"eip155: 1", 0, true},
		{"eip155:1a", 0, true},
		{"eip155:", 0, true},
		{"EIP155:1", 0, true},
		{"bip122:000000000019d6689c085ae165831e93", 0, true},
		{"1", 0, true},
		{"", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCAIP2(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseRPCURLs(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[int64][]string
		errHas  []string // substrings of the error
		errNot  string   // must not appear in the error (a secret)
		wantErr bool
	}{
		{name: "empty", in: "", want: map[int64][]string{}},
		{name: "blank", in: "  ", want: map[int64][]string{}},
		{name: "one", in: "eip155:1=https://a.example/v2/KEY", want: map[int64][]string{1: {"https://a.example/v2/KEY"}}},
		{
			name: "order kept per chain",
			in:   "eip155:8453=https://a,eip155:1=https://b,eip155:8453=https://c",
			want: map[int64][]string{8453: {"https://a", "https://c"}, 1: {"https://b"}},
		},
		{
			name: "spaces and query with =",
			in:   " eip155:1 = https://b.example/?apikey=SECRET , eip155:10=wss://op.example/ws ",
			want: map[int64][]string{1: {"https://b.example/?apikey=SECRET"}, 10: {"wss://op.example/ws"}},
		},
		{name: "http and ws ok", in: "eip155:1337=http://127.0.0.1:8545,eip155:1337=ws://127.0.0.1:8546",
			want: map[int64][]string{1337: {"http://127.0.0.1:8545", "ws://127.0.0.1:8546"}}},
		{name: "no =", in: "eip155:1", wantErr: true, errHas: []string{"entry 1", "CAIP2=URL"}},
		{name: "missing chain leaks nothing", in: "https://a.example/v2/SECRET?x=SECRET", wantErr: true,
			errHas: []string{"entry 1", "https://a.example"}, errNot: "SECRET"},
		{name: "bad namespace", in: "eip155:1=https://a,solana:1=https://b.example/SECRET", wantErr: true,
			errHas: []string{"entry 2", "solana:1", "https://b.example"}, errNot: "SECRET"},
		{name: "zero chain", in: "eip155:0=https://a", wantErr: true, errHas: []string{"entry 1", "eip155:0"}},
		{name: "leading zero", in: "eip155:01=https://a", wantErr: true, errHas: []string{"eip155:01"}},
		{name: "negative", in: "eip155:-5=https://a", wantErr: true},
		{name: "ftp", in: "eip155:1=ftp://a.example/SECRET", wantErr: true, errHas: []string{"scheme", "ftp"}, errNot: "SECRET"},
		{name: "no scheme", in: "eip155:1=a.example/SECRET", wantErr: true, errNot: "SECRET"},
		{name: "no host", in: "eip155:1=https:///SECRET", wantErr: true, errHas: []string{"no host"}, errNot: "SECRET"},
		{name: "empty URL", in: "eip155:1=", wantErr: true, errHas: []string{"empty"}},
		{name: "stray comma", in: "eip155:1=https://a,", wantErr: true, errHas: []string{"entry 2", "empty"}},
		{name: "double comma", in: "eip155:1=https://a,,eip155:2=https://b", wantErr: true, errHas: []string{"entry 2"}},
		{name: "duplicate", in: "eip155:1=https://a/K,eip155:1=https://a/K", wantErr: true, errHas: []string{"entry 2", "twice"}},
		{name: "unparsable URL", in: "eip155:1=https://a b/%zz", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRPCURLs(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				for _, s := range tc.errHas {
					assert.Contains(t, err.Error(), s)
				}
				if tc.errNot != "" {
					assert.NotContains(t, err.Error(), tc.errNot)
				}
				assert.Contains(t, err.Error(), "PAYMENTS_RPC_URLS")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseConfirmations(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   map[int64]int32
		errHas string
	}{
		{name: "empty", in: "", want: map[int64]int32{}},
		{name: "two", in: "eip155:1=12,eip155:8453=10", want: map[int64]int32{1: 12, 8453: 10}},
		{name: "spaces", in: " eip155:1 = 1 , eip155:2=10000", want: map[int64]int32{1: 1, 2: 10000}},
		{name: "zero", in: "eip155:1=0", errHas: "1..10000"},
		{name: "too many", in: "eip155:1=10001", errHas: "1..10000"},
		{name: "negative", in: "eip155:1=-3", errHas: "1..10000"},
		{name: "plus", in: "eip155:1=+3", errHas: "1..10000"},
		{name: "leading zero", in: "eip155:1=012", errHas: "1..10000"},
		{name: "not a number", in: "eip155:1=twelve", errHas: "1..10000"},
		{name: "empty value", in: "eip155:1=", errHas: "1..10000"},
		{name: "huge", in: "eip155:1=99999999999", errHas: "1..10000"},
		{name: "no =", in: "eip155:1", errHas: "CAIP2=N"},
		{name: "bad chain", in: "eip155:x=3", errHas: `"eip155:x=3"`},
		{name: "duplicate", in: "eip155:1=3,eip155:1=4", errHas: "twice"},
		{name: "stray comma", in: "eip155:1=3,", errHas: "entry 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfirmations(tc.in)
			if tc.errHas != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.errHas)
				assert.Contains(t, err.Error(), "PAYMENTS_CONFIRMATIONS")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://eth-mainnet.g.alchemy.com/v2/SECRET", "https://eth-mainnet.g.alchemy.com"},
		{"https://mainnet.infura.io/v3/SECRET?x=1", "https://mainnet.infura.io"},
		{"https://user:SECRET@rpc.example:8443/path?apikey=SECRET#frag", "https://rpc.example:8443"},
		{"wss://base.example/ws/SECRET", "wss://base.example"},
		{"http://127.0.0.1:8545", "http://127.0.0.1:8545"},
		{"http://[::1]:8545/SECRET", "http://[::1]:8545"},
		{"HTTPS://Host.Example/SECRET", "https://Host.Example"},
		{"not a url SECRET", "<invalid URL>"},
		{"/SECRET", "<invalid URL>"},
		{"https://a b/%zz/SECRET", "<invalid URL>"},
		{"", "<invalid URL>"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := RedactURL(tc.in)
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "SECRET")
		})
	}
}

func TestScrubAndCallError(t *testing.T) {
	raw := "https://user:PW@rpc.example/v2/SECRET?key=SECRET2"
	e := &CallError{ChainID: 8453, Method: "eth_blockNumber", URL: RedactURL(raw), raw: raw,
		Err: errString(`Post "` + raw + `": dial tcp: connection refused; path v2/SECRET?key=SECRET2`)}
	msg := e.Error()
	assert.True(t, strings.HasPrefix(msg, "eip155:8453 eth_blockNumber via https://rpc.example: "), msg)
	assert.NotContains(t, msg, "SECRET")
	assert.NotContains(t, msg, "PW")
}

type errString string

func (e errString) Error() string { return string(e) }

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, ok := parseRetryAfter("3", now)
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	d, ok = parseRetryAfter(now.Add(7*time.Second).Format(http.TimeFormat), now)
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)
	d, ok = parseRetryAfter(now.Add(-7*time.Second).Format(http.TimeFormat), now)
	assert.True(t, ok)
	assert.Equal(t, time.Duration(0), d)
	for _, bad := range []string{"", "-1", "soon", "1.5"} {
		_, ok = parseRetryAfter(bad, now)
		assert.False(t, ok, bad)
	}
}
