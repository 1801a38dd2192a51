package chain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// call runs one JSON-RPC method with retries and failover, decoding the result into result.
func (c *Client) call(ctx context.Context, result any, method string, args ...any) error {
	return c.do(ctx, method, classify, func(ctx context.Context, ep *endpoint) error {
		rc, _, err := ep.conn(ctx)
		if err != nil {
			return err
		}
		return rc.CallContext(ctx, result, method, args...)
	})
}

// eth runs fn on the endpoint's ethclient with retries and failover.
func (c *Client) eth(ctx context.Context, method string, fn func(context.Context, *ethclient.Client) error) error {
	return c.do(ctx, method, classify, func(ctx context.Context, ep *endpoint) error {
		_, ec, err := ep.conn(ctx)
		if err != nil {
			return err
		}
		return fn(ctx, ec)
	})
}

// BlockNumber is the number of the chain's latest block.
func (c *Client) BlockNumber(ctx context.Context) (uint64, error) {
	var n quantity
	if err := c.call(ctx, &n, "eth_blockNumber"); err != nil {
		return 0, err
	}
	v, err := n.uint64("block number")
	if err != nil {
		return 0, c.wrap("eth_blockNumber", nil, err)
	}
	return v, nil
}

// HeaderBaseFee is the latest block's baseFeePerGas; ErrNoBaseFee on chains without one.
func (c *Client) HeaderBaseFee(ctx context.Context) (*big.Int, error) {
	b, err := c.BlockByTag(ctx, "latest", false)
	if err != nil {
		return nil, err
	}
	if b.BaseFee == nil {
		return nil, c.wrap("eth_getBlockByNumber", nil, withKind(ErrNoBaseFee, fmt.Errorf("block %d has no baseFeePerGas", b.Number)))
	}
	return b.BaseFee, nil
}

// FilterLogs runs eth_getLogs. A refusal because of the query's size (too many blocks or
// results, "limit exceeded", -32005 about a range) is returned at once as ErrRangeTooLarge, not
// retried: the caller splits the range. Other failures are retried like any read.
func (c *Client) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	var out []types.Log
	err := c.eth(ctx, "eth_getLogs", func(ctx context.Context, ec *ethclient.Client) error {
		logs, err := ec.FilterLogs(ctx, q)
		if err != nil {
			if isRangeTooLarge(err) {
				return withKind(ErrRangeTooLarge, err)
			}
			return err
		}
		out = logs
		return nil
	})
	return out, err
}

// TransactionReceipt reads a mined transaction's receipt; ErrNotFound if the node has none
// (pending, dropped, or not yet seen by this node).
func (c *Client) TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	var out *types.Receipt
	err := c.eth(ctx, "eth_getTransactionReceipt", func(ctx context.Context, ec *ethclient.Client) error {
		r, err := ec.TransactionReceipt(ctx, hash)
		if errors.Is(err, ethereum.NotFound) {
			return withKind(ErrNotFound, fmt.Errorf("receipt of %s not found", hash))
		}
		out = r
		return err
	})
	return out, err
}

// Transaction reads a transaction, pending or mined; ErrNotFound if the node does not know it.
func (c *Client) Transaction(ctx context.Context, hash common.Hash) (*Tx, error) {
	var out *Tx
	err := c.do(ctx, "eth_getTransactionByHash", classify, func(ctx context.Context, ep *endpoint) error {
		rc, _, err := ep.conn(ctx)
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := rc.CallContext(ctx, &raw, "eth_getTransactionByHash", hash); err != nil {
			return err
		}
		tx, err := parseTx(raw)
		switch {
		case err != nil:
			return err
		case tx == nil:
			return withKind(ErrNotFound, fmt.Errorf("transaction %s not found", hash))
		case tx.Hash != hash:
			return &badResponse{fmt.Sprintf("asked for transaction %s, got %s", hash, tx.Hash)}
		}
		out = tx
		return nil
	})
	return out, err
}

// BalanceAt is the native balance of addr at block (nil: latest).
func (c *Client) BalanceAt(ctx context.Context, addr common.Address, block *big.Int) (*big.Int, error) {
	var out *big.Int
	err := c.eth(ctx, "eth_getBalance", func(ctx context.Context, ec *ethclient.Client) (err error) {
		out, err = ec.BalanceAt(ctx, addr, block)
		return err
	})
	return out, err
}

// CallContract runs eth_call at block (nil: latest). A revert is returned as is (not retried);
// errors.As with rpc.DataError reaches its data.
func (c *Client) CallContract(ctx context.Context, msg ethereum.CallMsg, block *big.Int) ([]byte, error) {
	var out []byte
	err := c.eth(ctx, "eth_call", func(ctx context.Context, ec *ethclient.Client) (err error) {
		out, err = ec.CallContract(ctx, msg, block)
		return err
	})
	return out, err
}

// NonceAt is the number of transactions addr sent up to block (nil: latest).
func (c *Client) NonceAt(ctx context.Context, addr common.Address, block *big.Int) (uint64, error) {
	var out uint64
	err := c.eth(ctx, "eth_getTransactionCount", func(ctx context.Context, ec *ethclient.Client) (err error) {
		out, err = ec.NonceAt(ctx, addr, block)
		return err
	})
	return out, err
}

// CodeAt is addr's code at block (nil: latest); for an account delegated with EIP-7702, the
// delegation designator (0xef0100 ‖ the delegate's address).
func (c *Client) CodeAt(ctx context.Context, addr common.Address, block *big.Int) ([]byte, error) {
	var out []byte
	err := c.eth(ctx, "eth_getCode", func(ctx context.Context, ec *ethclient.Client) (err error) {
		out, err = ec.CodeAt(ctx, addr, block)
		return err
	})
	return out, err
}

// PendingNonceAt is the next nonce of addr counting the node's pending transactions.
func (c *Client) PendingNonceAt(ctx context.Context, addr common.Address) (uint64, error) {
	var out uint64
	err := c.eth(ctx, "eth_getTransactionCount", func(ctx context.Context, ec *ethclient.Client) (err error) {
		out, err = ec.PendingNonceAt(ctx, addr)
		return err
	})
	return out, err
}

// SuggestGasTipCap is the node's eth_maxPriorityFeePerGas.
func (c *Client) SuggestGasTipCap(ctx context.Context) (*big.Int, error) {
	var out *big.Int
	err := c.eth(ctx, "eth_maxPriorityFeePerGas", func(ctx context.Context, ec *ethclient.Client) (err error) {
		out, err = ec.SuggestGasTipCap(ctx)
		return err
	})
	return out, err
}

// EstimateGas is the node's eth_estimateGas for msg.
func (c *Client) EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error) {
	var out uint64
	err := c.eth(ctx, "eth_estimateGas", func(ctx context.Context, ec *ethclient.Client) (err error) {
		out, err = ec.EstimateGas(ctx, msg)
		return err
	})
	return out, err
}

// SendRawTransaction broadcasts a signed transaction (its canonical binary encoding) and
// returns its hash. A node that already has it ("already known", "known transaction") counts
// as success. ErrNonceTooLow and ErrUnderpriced classify those refusals. Only failures that
// certainly did not deliver the bytes (refused connection, 429, rate limit, 4xx) are retried,
// possibly on the next URL; an ambiguous one (timeout, reset, EOF, 5xx) is returned at once:
// the caller keeps the bytes and sends them again itself.
func (c *Client) SendRawTransaction(ctx context.Context, raw []byte) (common.Hash, error) {
	const method = "eth_sendRawTransaction"
	want := rawTxHash(raw)
	var out common.Hash
	err := c.do(ctx, method, classifySend, func(ctx context.Context, ep *endpoint) error {
		rc, _, err := ep.conn(ctx)
		if err != nil {
			return err
		}
		var h common.Hash
		err = rc.CallContext(ctx, &h, method, hexutil.Bytes(raw))
		var re rpc.Error
		if err != nil && errors.As(err, &re) {
			switch msg := re.Error(); {
			case isAlreadyKnown(msg):
				h, err = want, nil
			case isNonceTooLow(msg):
				return withKind(ErrNonceTooLow, err)
			case isUnderpriced(msg):
				return withKind(ErrUnderpriced, err)
			}
		}
		if err != nil {
			return err
		}
		out = h
		return nil
	})
	return out, err
}

// rawTxHash is the hash of a signed transaction's binary encoding.
func rawTxHash(raw []byte) common.Hash {
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err == nil {
		return tx.Hash()
	}
	return crypto.Keccak256Hash(raw)
}
