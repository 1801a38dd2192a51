package chain

import (
	"sync"
	"time"
)

// State is a chain's health as its client's calls saw it.
type State string

// The states of a chain. A chain that is down or answers another chain id is not offered for
// new payments; its open payments stay watched and are caught up when it answers again.
const (
	// StateUp: the calls succeed on the first usable URL and none failed within the down window.
	StateUp State = "up"
	// StateDegraded: a success within the down window, but also recent failures, or the calls
	// go to a later URL (failed over), or some URL answers another chain id.
	StateDegraded State = "degraded"
	// StateDown: no successful call for the down window (or none yet).
	StateDown State = "down"
	// StateWrongChain: every URL answers another eth_chainId than configured.
	StateWrongChain State = "wrong_chain_id"
)

// Serving reports whether new payments may be quoted on a chain in this state.
func (s State) Serving() bool { return s == StateUp || s == StateDegraded }

// DefaultDownAfter is how long without a successful call makes a chain down.
const DefaultDownAfter = 30 * time.Second

// Health is a snapshot of one chain's health.
type Health struct {
	State       State
	LastSuccess time.Time // zero: never
	LastFailure time.Time // zero: never
	LastError   string    // the last failure, URL redacted
	URL         string    // the (redacted) URL that answered last
	HeadBlock   uint64    // the newest block seen by any call
	HeadTime    time.Time // its timestamp; zero: no block seen yet
}

// facts are what the state is computed from: the state machine itself is stateOf, a pure
// function, so that every transition is a table test.
type facts struct {
	now, lastOK, lastFail time.Time
	downAfter             time.Duration
	urls, wrongID         int  // configured URLs, and those answering another chain id
	fallback              bool // the last success came from a URL after the first usable one
}

func stateOf(f facts) State {
	switch {
	case f.urls > 0 && f.wrongID >= f.urls:
		return StateWrongChain
	case f.lastOK.IsZero() || f.now.Sub(f.lastOK) >= f.downAfter:
		return StateDown
	case f.fallback || f.wrongID > 0 || (!f.lastFail.IsZero() && f.now.Sub(f.lastFail) < f.downAfter):
		return StateDegraded
	}
	return StateUp
}

// tracker records the outcome of every call of one client.
type tracker struct {
	mu       sync.Mutex
	lastOK   time.Time
	lastFail time.Time
	lastErr  string
	url      string
	fallback bool
	headNum  uint64
	headTime time.Time
}

func (t *tracker) ok(now time.Time, url string, fallback bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.After(t.lastOK) {
		t.lastOK = now
	}
	t.url, t.fallback = url, fallback
}

func (t *tracker) fail(now time.Time, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.After(t.lastFail) {
		t.lastFail = now
	}
	t.lastErr = msg
}

// sawBlock keeps the newest block any call read, by timestamp rather than number: a
// development chain restarted from a new genesis starts again at low numbers, and its head
// must not read as lagging behind the old chain's.
func (t *tracker) sawBlock(b *Block) {
	if b == nil {
		return
	}
	bt := time.Unix(int64(b.Time), 0).UTC()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.headTime.IsZero() || bt.After(t.headTime) || (bt.Equal(t.headTime) && b.Number > t.headNum) {
		t.headNum, t.headTime = b.Number, bt
	}
}

func (t *tracker) snapshot(now time.Time, downAfter time.Duration, urls, wrongID int) Health {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := stateOf(facts{now: now, lastOK: t.lastOK, lastFail: t.lastFail, downAfter: downAfter,
		urls: urls, wrongID: wrongID, fallback: t.fallback})
	return Health{State: st, LastSuccess: t.lastOK, LastFailure: t.lastFail, LastError: t.lastErr, URL: t.url,
		HeadBlock: t.headNum, HeadTime: t.headTime}
}
