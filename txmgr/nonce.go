package txmgr

import (
	"fmt"

	"github.com/paymentsd/paymentsd/store"
)

// takeNonce takes a sender's next nonce in the database transaction that stores what is signed
// with it. A deposit address signs one transaction at a time, at the chain's own count: its
// sweeps share its gas, and one given up leaves no gap. The hot wallet keeps its count in the
// database (TakeNonce), which the chain's count only ever moves forward; on a development chain
// a new genesis starts it over.
func (m *Manager) takeNonce(tx *store.Tx, sender string, deposit bool, chainNonce int64) (int64, error) {
	if !deposit {
		return tx.TakeNonce(m.Info.ID, sender, chainNonce, m.genesis, m.devChain())
	}
	busy, err := tx.HasOpenOutgoing(m.Info.ID, sender)
	if err != nil {
		return 0, err
	}
	if busy {
		return 0, fmt.Errorf("%s has a transaction in flight: %w", sender, store.ErrConflict)
	}
	return tx.TakeChainNonce(m.Info.ID, sender, chainNonce, m.genesis)
}
