package chaintest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upstream answers every request with result "0x10" (eth_blockNumber: 16), batches too.
func upstream(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		reqs, batch, err := parse(body)
		require.NoError(t, err)
		out := make([]map[string]any, len(reqs))
		for i, q := range reqs {
			out[i] = map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": "0x10"}
		}
		w.Header().Set("Content-Type", "application/json")
		if batch {
			_ = json.NewEncoder(w).Encode(out)
		} else {
			_ = json.NewEncoder(w).Encode(out[0])
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func post(t *testing.T, url, body string) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(bytes.TrimSpace(b)), nil
}

func TestFlakyProxyKnobs(t *testing.T) {
	up, calls := upstream(t)
	p := NewFlakyProxy(up.URL)
	defer p.Close()
	single := `{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber","params":[]}`

	resp, body, err := post(t, p.URL(), single)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":"0x10"}`, body)

	p.Fail429Every(2)
	p.RetryAfter(3)
	resp, _, err = post(t, p.URL(), single) // request 2
	require.NoError(t, err)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "3", resp.Header.Get("Retry-After"))
	p.Fail429Every(0)

	p.FailMinus32005Every(3)
	_, body, err = post(t, p.URL(), `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]`) // 3
	require.NoError(t, err)
	assert.JSONEq(t, `[{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded"}},
		{"jsonrpc":"2.0","id":2,"error":{"code":-32005,"message":"limit exceeded"}}]`, body)
	p.FailMinus32005Every(0)

	p.DropEvery(4)
	_, _, err = post(t, p.URL(), single) // 4
	assert.Error(t, err, "connection closed without an answer")
	p.DropEvery(0)

	// Head is 16: 0..latest is 17 blocks, over a limit of 10; 7..16 is 10.
	p.RangeLimit(10)
	before := calls.Load()
	_, body, err = post(t, p.URL(), `[{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x0"}]},
		{"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[{"fromBlock":"0x7","toBlock":"0x10"}]},
		{"jsonrpc":"2.0","id":3,"method":"eth_chainId","params":[]}]`)
	require.NoError(t, err)
	var answers []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &answers))
	require.Len(t, answers, 3)
	byID := map[int]*rpcError{}
	for _, a := range answers {
		byID[a.ID] = a.Error
	}
	require.NotNil(t, byID[1])
	assert.Equal(t, -32005, byID[1].Code)
	assert.Equal(t, "query returned more than 10000 results", byID[1].Message)
	assert.Nil(t, byID[2])
	assert.Nil(t, byID[3])
	assert.Equal(t, int64(2), calls.Load()-before, "head lookup, then the two forwarded requests")
	p.RangeLimit(0)

	p.DelayEvery(1, 200*time.Millisecond)
	start := time.Now()
	_, _, err = post(t, p.URL(), single)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	p.DelayEvery(0, 0)

	assert.Equal(t, 6, p.Requests())
}
