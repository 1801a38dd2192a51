package payouts

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Sweeping moves what customers paid into deposit addresses on to the hot wallet, through the
// same transaction manager as payouts (package txmgr): nonces in the database, every signed transaction stored
// before it is broadcast, followed to its confirmations. A native balance is sent less its gas.
// An ERC-20 balance goes without gas at the deposit address where the chain has the sweep
// contracts: many addresses in one batch of signed pulls (sweep_batch.go); elsewhere it needs gas
// at the deposit address first, which a top-up from the hot wallet provides. Each sweep covers the confirmed transfers recorded at the address up to the block
// its balance was read at, so the treasury can tell swept from unswept.

// maxSweepsPerPass bounds what one pass signs: top-ups and batches take the hot wallet's nonces,
// ahead of withdrawals, and nodes limit how many transactions of one sender they hold. It counts
// the batches and, apart, the addresses swept one by one.
const maxSweepsPerPass = 20

// requestTimeout is how long an operator's request may stay open before it is answered with
// what is still stuck.
const requestTimeout = 30 * time.Minute

// sweepRound advances the sweeps in flight, and starts new ones when the interval is due or an
// operator asked (paymentsd sweep).
func (m *Manager) sweepRound(ctx context.Context, res *RoundResult) error {
	if err := m.advanceSweeps(ctx, res); err != nil {
		return err
	}
	reqs, err := m.Store.Read(ctx).OpenSweepRequests(m.Info.ID)
	if err != nil {
		return err
	}
	now := m.Now()
	var ids, stale []uuid.UUID
	for _, r := range reqs {
		if now.Sub(r.CreatedAt) > requestTimeout {
			stale = append(stale, r.ID)
		} else {
			ids = append(ids, r.ID)
		}
	}
	if len(stale) > 0 {
		if err := m.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.FinishSweepRequests(stale, fmt.Sprintf("gave up after %s: sweeps still in flight or failing "+
				"(paymentsd treasury shows what is unswept; the worker's log says why)", requestTimeout), now)
		}); err != nil {
			return err
		}
	}
	forced := len(ids) > 0
	if !forced && (m.Config.SweepEvery <= 0 || now.Sub(m.lastSweep) < m.Config.SweepEvery) {
		return nil
	}
	m.lastSweep = now
	if forced {
		if err := m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.StartSweepRequests(ids, now) }); err != nil {
			return err
		}
	}
	cands, err := m.Store.Read(ctx).SweepCandidates(m.Info.ID, 5000)
	if err != nil {
		return err
	}
	// An address's tokens first, its native coin last: the native sweep takes all the gas there.
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Address != cands[j].Address {
			return cands[i].Address < cands[j].Address
		}
		return m.Catalog.Tokens[cands[i].TokenID].AssetType == domain.ERC20 && m.Catalog.Tokens[cands[j].TokenID].AssetType != domain.ERC20
	})
	var errs, skipped []string
	started, batches, singles := 0, 0, 0
	busy := map[string]bool{} // one sweep in flight per address: its tokens share its nonces and its gas
	groups, err := m.batchGroups(ctx, cands, forced, busy)
	if err != nil {
		return err
	}
	for _, g := range groups {
		for _, b := range g.chunks(m.Config.SweepBatchMax) {
			if batches >= maxSweepsPerPass {
				break
			}
			n, why, err := m.startBatch(ctx, b)
			started += n
			switch {
			case err != nil:
				m.Log.Error("sweep a batch of deposit addresses", "chain", chains.CAIP2(m.Info.ID), "token", b.tok.ID,
					"method", b.method, "err", err)
				errs = append(errs, err.Error())
			case why != "":
				skipped = append(skipped, why)
			default:
				batches++
			}
		}
	}
	for _, c := range cands {
		if singles >= maxSweepsPerPass {
			break
		}
		if busy[c.Address] {
			continue
		}
		ok, why, err := m.startSweep(ctx, c, forced)
		switch {
		case err != nil:
			m.Log.Error("sweep a deposit address", "chain", chains.CAIP2(m.Info.ID), "address", c.Address, "token", c.TokenID, "err", err)
			errs = append(errs, err.Error())
		case ok:
			started++
			singles++
			busy[c.Address] = true
		case why != "" && forced:
			skipped = append(skipped, why)
		}
	}
	res.SweepsStarted += started
	if !forced {
		return nil
	}
	// A request is done once a pass finds nothing to start and nothing in flight.
	open, err := m.Store.Read(ctx).OpenSweeps(m.Info.ID)
	if err != nil || started > 0 || len(open) > 0 || len(errs) > 0 {
		return err
	}
	result := "done"
	if len(skipped) > 0 {
		result = "done; left: " + strings.Join(skipped, "; ")
	}
	return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.FinishSweepRequests(ids, result, m.Now()) })
}

// advanceSweeps moves the sweeps in flight by their transactions' states.
func (m *Manager) advanceSweeps(ctx context.Context, res *RoundResult) error {
	open, err := m.Store.Read(ctx).OpenSweeps(m.Info.ID)
	if err != nil || len(open) == 0 {
		return err
	}
	var txIDs []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, s := range open {
		for _, id := range []*uuid.UUID{s.TopupTxID, s.SweepTxID} {
			if id != nil && !seen[*id] {
				seen[*id] = true
				txIDs = append(txIDs, *id)
			}
		}
	}
	txs, err := m.Store.Read(ctx).OutgoingTxsByID(txIDs)
	if err != nil {
		return err
	}
	statuses := map[uuid.UUID]store.OutgoingStatus{}
	for _, o := range txs {
		statuses[o.ID] = o.Status
		if isBatch(o) {
			// A batch's sweeps move with its outcome, in the hooks (settleBatch): an operator looks
			// at a conflict of the hot wallet's nonce, and the sweeps stay covered meanwhile.
			delete(statuses, o.ID)
		}
	}
	var errs []error
	for _, s := range open {
		err := m.advanceSweep(ctx, s, statuses, res)
		if errors.Is(err, store.ErrConflict) {
			continue // another process moved it first; whatever this one signed was rolled back
		}
		if err != nil {
			m.Log.Error("advance a sweep", "chain", chains.CAIP2(m.Info.ID), "address", s.Address, "token", s.TokenID, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) advanceSweep(ctx context.Context, s store.Sweep, statuses map[uuid.UUID]store.OutgoingStatus, res *RoundResult) error {
	now := m.Now()
	fail := func(msg string) error {
		m.Log.Error("sweep failed; its transfers wait for the next sweep", "chain", chains.CAIP2(m.Info.ID), "address", s.Address,
			"token", s.TokenID, "reason", msg)
		return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.SetSweep(s.ID, s.Status, store.SweepFailed, nil, nil, &msg, now) })
	}
	switch {
	case s.Status == store.SweepToppingUp && s.TopupTxID != nil:
		switch statuses[*s.TopupTxID] {
		case store.OutgoingConfirmed:
			return m.signTokenSweep(ctx, s)
		case store.OutgoingFailed:
			return fail("the gas top-up failed on chain or was given up")
		case store.OutgoingConflict:
			return fail("the gas top-up's nonce was taken by another transaction (an operator looks at the hot wallet)")
		}
	case s.Status == store.SweepSigned && s.SweepTxID != nil:
		switch statuses[*s.SweepTxID] {
		case store.OutgoingConfirmed:
			if err := m.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.SetSweep(s.ID, store.SweepSigned, store.SweepConfirmed, nil, nil, nil, now)
			}); err != nil {
				return err
			}
			res.SweepsConfirmed++
			m.Log.Info("deposit address swept", "chain", chains.CAIP2(m.Info.ID), "address", s.Address, "token", s.TokenID,
				"amount", s.AmountAsset)
		case store.OutgoingFailed:
			return fail("the sweep transaction failed on chain or was given up")
		case store.OutgoingConflict:
			return fail("the sweep's nonce was used by another transaction from the deposit address")
		}
	}
	return nil // in flight: wait
}

// refuseSweepRequests answers operators' requests on a chain this process cannot sweep.
func (m *Manager) refuseSweepRequests(ctx context.Context, why string) error {
	reqs, err := m.Store.Read(ctx).OpenSweepRequests(m.Info.ID)
	if err != nil || len(reqs) == 0 {
		return err
	}
	ids := make([]uuid.UUID, len(reqs))
	for i, r := range reqs {
		ids[i] = r.ID
	}
	return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.FinishSweepRequests(ids, why, m.Now()) })
}
