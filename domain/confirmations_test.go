package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/paymentsd/paymentsd/domain"
)

func TestConfirmations(t *testing.T) {
	for _, tc := range []struct {
		head, block, want int64
	}{
		{100, 100, 1},  // the head block has one
		{100, 91, 10},  // ten deep
		{100, 0, 101},  // genesis
		{100, 101, 0},  // past the head: a reorg shortened the chain, or an old head
		{100, 1000, 0}, // far in the future
	} {
		assert.Equal(t, tc.want, domain.Confirmations(tc.head, tc.block), "head %d block %d", tc.head, tc.block)
	}
}

func TestIsFinal(t *testing.T) {
	ten := domain.Chain{RequiredConfirmations: 10}
	for _, tc := range []struct {
		name  string
		chain domain.Chain
		head  domain.Head
		block int64
		want  bool
	}{
		{"block at the head", ten, domain.Head{Number: 100}, 100, false},
		{"one short of the depth (head-conf+2)", ten, domain.Head{Number: 100}, 92, false},
		{"exactly the depth (head-conf+1)", ten, domain.Head{Number: 100}, 91, true},
		{"one past the depth (head-conf)", ten, domain.Head{Number: 100}, 90, true},
		{"block in the future", ten, domain.Head{Number: 100}, 150, false},
		{"a depth of 0 counts as 1: the head block is final", domain.Chain{}, domain.Head{Number: 100}, 100, true},
		{"depth 1, block past the head", domain.Chain{RequiredConfirmations: 1}, domain.Head{Number: 100}, 101, false},
		{"chain shorter than its depth", ten, domain.Head{Number: 5}, 0, false},
		{"finalized block ignored without the tag", ten, domain.Head{Number: 100, Finalized: 99}, 95, false},
		{"finalized tag: at the finalized block", domain.Chain{RequiredConfirmations: 10, FinalizedTag: true}, domain.Head{Number: 100, Finalized: 95}, 95, true},
		{"finalized tag: past the finalized block, short of the depth", domain.Chain{RequiredConfirmations: 10, FinalizedTag: true}, domain.Head{Number: 100, Finalized: 95}, 96, false},
		{"finalized tag, finalized unknown: depth decides", domain.Chain{RequiredConfirmations: 10, FinalizedTag: true}, domain.Head{Number: 100}, 91, true},
		{"finalized tag: a finalized number past the head is capped", domain.Chain{RequiredConfirmations: 10, FinalizedTag: true}, domain.Head{Number: 100, Finalized: 200}, 101, false},
	} {
		assert.Equal(t, tc.want, tc.chain.IsFinal(tc.head, tc.block), tc.name)
	}
}

func TestFinalUpToAndSeen(t *testing.T) {
	c := domain.Chain{RequiredConfirmations: 3}
	assert.Equal(t, int64(98), c.FinalUpTo(domain.Head{Number: 100}))
	assert.Equal(t, int64(-1), c.FinalUpTo(domain.Head{Number: 1}), "nothing final yet")
	assert.Equal(t, int64(3), c.Depth())
	assert.Equal(t, int64(3), c.SeenConfirmations(100, 10), "capped at the depth")
	assert.Equal(t, int64(2), c.SeenConfirmations(100, 99))
	assert.Equal(t, int64(0), c.SeenConfirmations(100, 101))
}
