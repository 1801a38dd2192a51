// Package chaintest has test helpers for code that talks to EVM chains over JSON-RPC.
package chaintest

import (
	"net/http"
	"net/http/httptest"
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
