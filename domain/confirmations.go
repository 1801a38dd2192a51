package domain

// Head is what a node says of its chain's tip: the newest block, and the newest finalized block
// when it was asked (0 when not known: genesis is never worth waiting for).
type Head struct {
	Number    int64
	Finalized int64
}

// Confirmations is how many confirmations block has at head: the block itself counts as one, so a
// block at the head has 1; a block past the head (a reorg shortened the chain, or the caller's
// head is older) has none.
func Confirmations(head, block int64) int64 {
	if block > head {
		return 0
	}
	return head - block + 1
}

// Depth is the confirmations a block of this chain needs to be final: its catalogue depth, never
// less than one (a block must at least exist).
func (c Chain) Depth() int64 { return int64(max(c.RequiredConfirmations, 1)) }

// FinalUpTo is the newest final block at head: every block up to it has the chain's depth, or,
// where the chain allows the finalized tag, is at or below the node's finalized block. It may be
// negative when the chain is shorter than its depth (nothing is final yet).
func (c Chain) FinalUpTo(h Head) int64 {
	upTo := h.Number - c.Depth() + 1
	if c.FinalizedTag && h.Finalized > 0 {
		upTo = max(upTo, min(h.Finalized, h.Number))
	}
	return upTo
}

// IsFinal reports whether block is final at head: the one rule the watcher, payouts, sweeps and
// the checkout apply.
func (c Chain) IsFinal(h Head, block int64) bool { return block <= h.Number && block <= c.FinalUpTo(h) }

// SeenConfirmations is block's confirmations at head as a customer is shown them: capped at the
// chain's depth (more say nothing new).
func (c Chain) SeenConfirmations(head, block int64) int64 {
	return min(Confirmations(head, block), c.Depth())
}
