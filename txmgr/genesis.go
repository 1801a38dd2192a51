package txmgr

import (
	"context"
	"strings"

	"github.com/paymentsd/paymentsd/chains"
)

// CheckGenesis reads the chain's genesis at the first round and again whenever the head went
// back (a development chain restarted from a new genesis starts again at block 0). Nonces and
// transactions are tied to the genesis they were signed for.
func (m *Manager) CheckGenesis(ctx context.Context) error {
	head, err := m.Chain.BlockNumber(ctx)
	if err != nil {
		return err
	}
	if m.genesis == "" || head < m.lastHead {
		g, err := m.Chain.Block(ctx, 0, false)
		if err != nil {
			return err
		}
		if m.genesis != "" && !strings.EqualFold(m.genesis, g.Hash.Hex()) {
			m.Log.Warn("the chain's genesis changed (a development chain restarted?): nonces start over, transactions in flight "+
				"on the old chain are given up", "chain", m.caip())
		}
		m.genesis = strings.ToLower(g.Hash.Hex())
	}
	m.lastHead = head
	return nil
}

// devChain reports whether the chain is a development chain, one whose genesis changes when it
// restarts: there, and only there, what was signed for the old chain is given up.
func (m *Manager) devChain() bool { return chains.IsDevnet(m.Info.ID) }
