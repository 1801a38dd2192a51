package chain

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// MaxBatch is the most eth_getBlockByNumber requests Blocks puts in one JSON-RPC batch.
const MaxBatch = 100

// Block reads block n; with withTxs its transactions too. A block beyond the node's head gives
// ErrBlockNotFound.
func (c *Client) Block(ctx context.Context, n uint64, withTxs bool) (*Block, error) {
	return c.blockBy(ctx, "eth_getBlockByNumber", hexutil.EncodeUint64(n), withTxs, func(b *Block) error {
		if b.Number != n {
			return &badResponse{fmt.Sprintf("asked for block %d, got %d", n, b.Number)}
		}
		return nil
	})
}

// BlockByTag reads the block a tag names: "latest", "safe", "finalized", "earliest" or
// "pending" (the node's own meaning).
func (c *Client) BlockByTag(ctx context.Context, tag string, withTxs bool) (*Block, error) {
	switch tag {
	case "latest", "safe", "finalized", "earliest", "pending":
	default:
		return nil, c.errorf("eth_getBlockByNumber", nil, "unknown block tag %q", tag)
	}
	return c.blockBy(ctx, "eth_getBlockByNumber", tag, withTxs, nil)
}

// BlockByHash reads the block with this hash; ErrBlockNotFound if the node does not know it
// (for example a block reorganised away on a node that pruned it).
func (c *Client) BlockByHash(ctx context.Context, hash common.Hash, withTxs bool) (*Block, error) {
	return c.blockBy(ctx, "eth_getBlockByHash", hash, withTxs, func(b *Block) error {
		if b.Hash != hash {
			return &badResponse{fmt.Sprintf("asked for block %s, got %s", hash, b.Hash)}
		}
		return nil
	})
}

func (c *Client) blockBy(ctx context.Context, method string, id any, withTxs bool, check func(*Block) error) (*Block, error) {
	var out *Block
	err := c.do(ctx, method, classify, func(ctx context.Context, ep *endpoint) error {
		rc, _, err := ep.conn(ctx)
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := rc.CallContext(ctx, &raw, method, id, withTxs); err != nil {
			return err
		}
		b, err := parseBlock(raw, withTxs)
		if err != nil {
			return err
		}
		if b == nil {
			return withKind(ErrBlockNotFound, fmt.Errorf("block %v not found", id))
		}
		if check != nil {
			if err := check(b); err != nil {
				return err
			}
		}
		out = b
		return nil
	})
	c.health.sawBlock(out)
	return out, err
}

// Blocks reads blocks from..to (inclusive) in order, in JSON-RPC batches of at most
// Options.BatchSize (at most MaxBatch) requests. A failed request of a batch is retried alone (with the other failed ones), not the
// whole batch. If a block of the range is beyond the node's head the call fails with
// ErrBlockNotFound naming it.
func (c *Client) Blocks(ctx context.Context, from, to uint64, withTxs bool) ([]*Block, error) {
	const method = "eth_getBlockByNumber"
	if to < from {
		return nil, c.errorf(method, nil, "block range %d..%d is empty", from, to)
	}
	if to-from >= 1<<20 {
		return nil, c.errorf(method, nil, "block range %d..%d is too long for one call", from, to)
	}
	out := make([]*Block, 0, to-from+1)
	size := uint64(c.opts.BatchSize)
	for lo := from; ; lo += size {
		hi := min(lo+size-1, to)
		if hi < lo { // overflow
			hi = to
		}
		got, err := c.blockBatch(ctx, lo, hi, withTxs)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		if hi >= to {
			return out, nil
		}
	}
}

func (c *Client) blockBatch(ctx context.Context, lo, hi uint64, withTxs bool) ([]*Block, error) {
	const method = "eth_getBlockByNumber"
	n := int(hi - lo + 1)
	got := make([]*Block, n)
	err := c.do(ctx, method, classify, func(ctx context.Context, ep *endpoint) error {
		rc, _, err := ep.conn(ctx)
		if err != nil {
			return err
		}
		var idx []int
		var elems []rpc.BatchElem
		for i := range n {
			if got[i] == nil {
				idx = append(idx, i)
				elems = append(elems, rpc.BatchElem{
					Method: method,
					Args:   []any{hexutil.EncodeUint64(lo + uint64(i)), withTxs},
					Result: new(json.RawMessage),
				})
			}
		}
		if err := rc.BatchCallContext(ctx, elems); err != nil {
			return fmt.Errorf("blocks %d..%d: %w", lo, hi, redactErr(err))
		}
		// Keep every good answer; report the most serious failure of the others.
		var worst error
		worstClass := transient
		note := func(err error) {
			cls := classify(err)
			if worst == nil || cls > worstClass {
				worst, worstClass = err, cls
			}
		}
		for k, e := range elems {
			num := lo + uint64(idx[k])
			if e.Error != nil {
				note(fmt.Errorf("block %d: %w", num, e.Error))
				continue
			}
			b, err := parseBlock(*e.Result.(*json.RawMessage), withTxs)
			switch {
			case err != nil:
				note(fmt.Errorf("block %d: %w", num, err))
			case b == nil:
				note(withKind(ErrBlockNotFound, fmt.Errorf("block %d not found", num)))
			case b.Number != num:
				note(&badResponse{fmt.Sprintf("asked for block %d, got %d", num, b.Number)})
			default:
				got[idx[k]] = b
			}
		}
		return worst
	})
	if err != nil {
		return nil, err
	}
	c.health.sawBlock(got[n-1])
	return got, nil
}
