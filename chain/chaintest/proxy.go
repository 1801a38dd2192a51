// Package chaintest has test helpers for code that talks to EVM chains over JSON-RPC.
package chaintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FlakyProxy is an HTTP server that forwards JSON-RPC POSTs to a target node and misbehaves on
// command: every n-th request (counted over all requests since the start, so failures are
// deterministic) it answers 429, answers a -32005 error, waits, or drops the connection; and it
// can refuse eth_getLogs over too many blocks like a hosted provider. Every knob can be changed
// while requests are flowing; 0 turns a knob off.
type FlakyProxy struct {
	srv    *httptest.Server
	target string
	client *http.Client
	done   chan struct{}
	once   sync.Once

	n          atomic.Int64
	fail429    atomic.Int64
	retryAfter atomic.Int64 // seconds; -1: no header
	failRPC    atomic.Int64
	rpcMsg     atomic.Pointer[string]
	fail5xx    atomic.Int64
	rangeLimit atomic.Uint64
	failElem   atomic.Int64
	delayN     atomic.Int64
	delayD     atomic.Int64
	dropN      atomic.Int64
	chainID    atomic.Int64
}

// NewFlakyProxy starts a proxy to target (an http:// JSON-RPC URL). Close it when done.
func NewFlakyProxy(target string) *FlakyProxy {
	p := &FlakyProxy{target: target, client: &http.Client{}, done: make(chan struct{})}
	p.retryAfter.Store(-1)
	msg := "limit exceeded"
	p.rpcMsg.Store(&msg)
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// URL is the proxy's address, to dial instead of the target.
func (p *FlakyProxy) URL() string { return p.srv.URL }

// Requests is how many HTTP requests the proxy received (a batch counts once).
func (p *FlakyProxy) Requests() int { return int(p.n.Load()) }

// Close stops the proxy; requests waiting in a delay end at once.
func (p *FlakyProxy) Close() {
	p.once.Do(func() {
		close(p.done)
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
}

// Fail429Every makes every n-th request answer HTTP 429 Too Many Requests.
func (p *FlakyProxy) Fail429Every(n int) { p.fail429.Store(int64(n)) }

// RetryAfter makes the 429 answers carry "Retry-After: <seconds>" (negative: no header, the
// default).
func (p *FlakyProxy) RetryAfter(seconds int) { p.retryAfter.Store(int64(seconds)) }

// FailMinus32005Every makes every n-th request answer the JSON-RPC error -32005 (to every
// element of a batch), with the message "limit exceeded" unless Minus32005Message changed it.
func (p *FlakyProxy) FailMinus32005Every(n int) { p.failRPC.Store(int64(n)) }

// Minus32005Message sets the message of FailMinus32005Every's errors, e.g. "rate limited".
func (p *FlakyProxy) Minus32005Message(msg string) { p.rpcMsg.Store(&msg) }

// Fail5xxEvery makes every n-th request answer HTTP 503.
func (p *FlakyProxy) Fail5xxEvery(n int) { p.fail5xx.Store(int64(n)) }

// RangeLimit makes eth_getLogs over more than blocks blocks (toBlock-fromBlock+1, tags resolved
// against the target's head) answer {"code":-32005,"message":"query returned more than 10000
// results"}, in batches too. 0 removes the limit.
func (p *FlakyProxy) RangeLimit(blocks uint64) { p.rangeLimit.Store(blocks) }

// FailBatchElementEvery makes the k-th, 2k-th… element of every batch answer -32005 (with the
// Minus32005Message) while the others are forwarded: a client that asks again for the failed
// elements alone gets them once its batch is shorter than k.
func (p *FlakyProxy) FailBatchElementEvery(k int) { p.failElem.Store(int64(k)) }

// DelayEvery makes every n-th request wait d before it is forwarded (to trigger client
// timeouts).
func (p *FlakyProxy) DelayEvery(n int, d time.Duration) {
	p.delayD.Store(int64(d))
	p.delayN.Store(int64(n))
}

// DropEvery makes every n-th request close the connection without an answer.
func (p *FlakyProxy) DropEvery(n int) { p.dropN.Store(int64(n)) }

func every(k, n int64) bool { return k > 0 && n%k == 0 }

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *rpcError       `json:"error,omitempty"`
}

func errorFor(req request, code int, msg string) response {
	id := req.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return response{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: msg}}
}

// parse reads a single request or a batch.
func parse(body []byte) (reqs []request, batch bool, err error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err = json.Unmarshal(trimmed, &reqs)
		return reqs, true, err
	}
	var r request
	err = json.Unmarshal(trimmed, &r)
	return []request{r}, false, err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (p *FlakyProxy) serve(w http.ResponseWriter, r *http.Request) {
	n := p.n.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if every(p.dropN.Load(), n) {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // closes the connection without an answer
	}
	if every(p.delayN.Load(), n) {
		t := time.NewTimer(time.Duration(p.delayD.Load()))
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-p.done:
			t.Stop()
			return
		}
	}
	if every(p.fail429.Load(), n) {
		if s := p.retryAfter.Load(); s >= 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(s, 10))
		}
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	}
	if every(p.fail5xx.Load(), n) {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	if every(p.failRPC.Load(), n) {
		reqs, batch, err := parse(body)
		if err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		out := make([]response, len(reqs))
		for i, req := range reqs {
			out[i] = errorFor(req, -32005, *p.rpcMsg.Load())
		}
		if batch {
			writeJSON(w, out)
		} else {
			writeJSON(w, out[0])
		}
		return
	}
	if p.answerChainID(w, body) {
		return
	}
	if p.rangeLimit.Load() > 0 || p.failElem.Load() > 0 {
		if p.refuseSome(r.Context(), w, body) {
			return
		}
	}
	p.forward(r.Context(), w, body)
}

// refuseSome answers with an error the requests of body that RangeLimit or
// FailBatchElementEvery refuse, forwarding the rest; it returns false when nothing was refused
// (the caller forwards body).
func (p *FlakyProxy) refuseSome(ctx context.Context, w http.ResponseWriter, body []byte) bool {
	reqs, batch, err := parse(body)
	if err != nil {
		return false
	}
	lim, k := p.rangeLimit.Load(), p.failElem.Load()
	var head *uint64
	var refused []response
	var rest []request
	for i, req := range reqs {
		switch {
		case lim > 0 && req.Method == "eth_getLogs" && p.tooLong(ctx, req, lim, &head):
			refused = append(refused, errorFor(req, -32005, "query returned more than 10000 results"))
		case batch && every(k, int64(i+1)):
			refused = append(refused, errorFor(req, -32005, *p.rpcMsg.Load()))
		default:
			rest = append(rest, req)
		}
	}
	if len(refused) == 0 {
		return false
	}
	if !batch {
		writeJSON(w, refused[0])
		return true
	}
	out := make([]json.RawMessage, 0, len(reqs))
	for _, e := range refused {
		b, _ := json.Marshal(e)
		out = append(out, b)
	}
	if len(rest) > 0 {
		fwd, _ := json.Marshal(rest)
		answers, err := p.roundTrip(ctx, fwd)
		if err != nil {
			http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
			return true
		}
		var more []json.RawMessage
		if err := json.Unmarshal(answers, &more); err != nil {
			http.Error(w, "upstream answered a batch with something else", http.StatusBadGateway)
			return true
		}
		out = append(out, more...)
	}
	writeJSON(w, out)
	return true
}

func (p *FlakyProxy) tooLong(ctx context.Context, req request, lim uint64, head **uint64) bool {
	var params []struct {
		FromBlock *string `json:"fromBlock"`
		ToBlock   *string `json:"toBlock"`
		BlockHash *string `json:"blockHash"`
	}
	if err := json.Unmarshal(req.Params, &params); err != nil || len(params) == 0 || params[0].BlockHash != nil {
		return false
	}
	resolve := func(s *string) (uint64, bool) {
		if s == nil || *s == "latest" || *s == "pending" || *s == "safe" || *s == "finalized" {
			if *head == nil {
				h, err := p.blockNumber(ctx)
				if err != nil {
					return 0, false
				}
				*head = &h
			}
			return **head, true
		}
		if *s == "earliest" {
			return 0, true
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(*s, "0x"), 16, 64)
		return v, err == nil
	}
	from, ok1 := resolve(params[0].FromBlock)
	to, ok2 := resolve(params[0].ToBlock)
	return ok1 && ok2 && to >= from && to-from+1 > lim
}

func (p *FlakyProxy) blockNumber(ctx context.Context) (uint64, error) {
	b, err := p.roundTrip(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`))
	if err != nil {
		return 0, err
	}
	var resp struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimPrefix(resp.Result, "0x"), 16, 64)
}

func (p *FlakyProxy) roundTrip(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, b)
	}
	return b, nil
}

func (p *FlakyProxy) forward(ctx context.Context, w http.ResponseWriter, body []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
