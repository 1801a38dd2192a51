package app

import (
	"context"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/store"
)

// A process with chain clients (a worker) publishes what it sees of each chain in the database;
// a process without them (serve --role api) reads it, so a chain that is down is left out of new
// quotes and reads isEnabled false in every process of a deployment, not only where it is
// watched. One process publishes at a time (a lease): two workers seeing a provider differently
// would otherwise flip the shared view back and forth.
const (
	chainHealthLease = "chain-health"
	// chainHealthRefresh is how often a changed state is published and how long a reader keeps
	// what it read: a chain coming back is quoted everywhere within about two of it.
	chainHealthRefresh = time.Second
	// chainHealthRepublish rewrites unchanged states, so a reader can tell a publisher that
	// stopped (its rows grow old) from a chain that stays as it was.
	chainHealthRepublish = 10 * time.Second
	// chainHealthStale is the age past which a published state is ignored (no worker is
	// publishing): the catalogue alone decides again, as it would without a worker's view.
	chainHealthStale = 6 * chainHealthRepublish
)

// chainHealthPublisher is the worker loop publishing this process's chain states.
type chainHealthPublisher struct {
	a       *App
	last    map[int64]string
	written time.Time
}

// ChainHealthLoop publishes the chains' states while this process has chain clients.
func (a *App) ChainHealthLoop() worker.Loop {
	p := &chainHealthPublisher{a: a}
	return worker.Loop{Name: "chain-health", Lease: chainHealthLease, Interval: chainHealthRefresh, Round: p.round}
}

func (p *chainHealthPublisher) round(ctx context.Context) (bool, error) {
	now := Now()
	states := make(map[int64]string, len(p.a.Clients))
	var hs []store.ChainHealth
	changed := now.Sub(p.written) >= chainHealthRepublish || len(p.last) != len(p.a.Clients)
	for id, c := range p.a.Clients {
		h := c.Health()
		states[id] = string(h.State)
		changed = changed || p.last[id] != states[id]
		hs = append(hs, store.ChainHealth{ChainID: id, State: string(h.State), Serving: h.State.Serving(), UpdatedAt: now})
	}
	if !changed {
		return false, nil
	}
	if err := p.a.Store.InTx(ctx, func(tx *store.Tx) error { return tx.PublishChainHealth(hs) }); err != nil {
		return false, err
	}
	p.last, p.written = states, now
	return false, nil
}

// sharedChainHealth caches the published chain states for a process without chain clients.
type sharedChainHealth struct {
	mu      sync.Mutex
	read    time.Time
	reading bool // one request refreshes; the others answer from what was read before
	states  map[int64]store.ChainHealth
}

// chainHealthReadTimeout bounds the refresh a request makes: a slow database delays one request
// by at most this, never every request behind a lock.
const chainHealthReadTimeout = 2 * time.Second

// get returns the fresh published state of a chain, if there is one. A failed read keeps what
// was read before (the database being away must not make every chain look down or up).
func (s *sharedChainHealth) get(ctx context.Context, st *store.Store, id int64) (store.ChainHealth, bool) {
	s.mu.Lock()
	refresh := !s.reading && Now().Sub(s.read) >= chainHealthRefresh
	s.reading = s.reading || refresh
	states := s.states
	s.mu.Unlock()
	if refresh {
		rctx, cancel := context.WithTimeout(ctx, chainHealthReadTimeout)
		fresh, err := st.Read(rctx).PublishedChainHealth()
		cancel()
		s.mu.Lock()
		s.reading = false
		if err == nil {
			s.states, s.read, states = fresh, Now(), fresh
		}
		s.mu.Unlock()
	}
	h, ok := states[id]
	if !ok || Now().Sub(h.UpdatedAt) > chainHealthStale {
		return store.ChainHealth{}, false
	}
	return h, true
}
