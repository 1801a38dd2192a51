package chain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// Block is a block as the node reports it. Hash and ParentHash are the node's own fields,
// never recomputed (L2 headers hash differently from geth's types.Header).
type Block struct {
	Number     uint64
	Hash       common.Hash
	ParentHash common.Hash
	Time       uint64   // unix seconds
	BaseFee    *big.Int // nil on chains without EIP-1559
	TxHashes   []common.Hash
	Txs        []Tx // filled only when asked for with withTxs
}

// Tx is a transaction as the node reports it: From is the node's field, never recovered from
// the signature (L2 system and deposit transactions have none).
type Tx struct {
	Hash                 common.Hash
	Type                 uint64
	From                 common.Address
	To                   *common.Address // nil for a contract creation
	Value                *big.Int
	Nonce                uint64
	Gas                  uint64
	GasPrice             *big.Int // nil if the node omits it
	MaxFeePerGas         *big.Int // nil for legacy transactions
	MaxPriorityFeePerGas *big.Int // nil for legacy transactions
	BlockNumber          *uint64  // nil while pending
	BlockHash            *common.Hash
	Index                *uint64 // position in the block; nil while pending
}

// quantity is a JSON-RPC hex quantity, read leniently (leading zeros allowed) because not every
// L2 node writes canonical quantities.
type quantity struct{ big.Int }

func (q *quantity) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("quantity %s is not a string", b)
	}
	h, ok := strings.CutPrefix(s, "0x")
	if !ok {
		h, ok = strings.CutPrefix(s, "0X")
	}
	if !ok {
		return fmt.Errorf("quantity %q has no 0x prefix", s)
	}
	if h == "" {
		q.SetUint64(0)
		return nil
	}
	if _, ok := q.SetString(h, 16); !ok {
		return fmt.Errorf("quantity %q is not hex", s)
	}
	return nil
}

func (q *quantity) big() *big.Int {
	if q == nil {
		return nil
	}
	return new(big.Int).Set(&q.Int)
}

func (q *quantity) uint64(field string) (uint64, error) {
	if q == nil {
		return 0, nil
	}
	if !q.IsUint64() {
		return 0, fmt.Errorf("%s %s does not fit 64 bits", field, q.String())
	}
	return q.Uint64(), nil
}

func (q *quantity) uint64p(field string) (*uint64, error) {
	if q == nil {
		return nil, nil
	}
	v, err := q.uint64(field)
	return &v, err
}

type blockJSON struct {
	Number       *quantity         `json:"number"`
	Hash         *common.Hash      `json:"hash"`
	ParentHash   common.Hash       `json:"parentHash"`
	Timestamp    *quantity         `json:"timestamp"`
	BaseFee      *quantity         `json:"baseFeePerGas"`
	Transactions []json.RawMessage `json:"transactions"`
}

type txJSON struct {
	Hash                 *common.Hash    `json:"hash"`
	Type                 *quantity       `json:"type"`
	From                 common.Address  `json:"from"`
	To                   *common.Address `json:"to"`
	Value                *quantity       `json:"value"`
	Nonce                *quantity       `json:"nonce"`
	Gas                  *quantity       `json:"gas"`
	GasPrice             *quantity       `json:"gasPrice"`
	MaxFeePerGas         *quantity       `json:"maxFeePerGas"`
	MaxPriorityFeePerGas *quantity       `json:"maxPriorityFeePerGas"`
	BlockNumber          *quantity       `json:"blockNumber"`
	BlockHash            *common.Hash    `json:"blockHash"`
	TransactionIndex     *quantity       `json:"transactionIndex"`
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// parseBlock decodes an eth_getBlockBy* answer; null gives (nil, nil).
func parseBlock(raw json.RawMessage, withTxs bool) (*Block, error) {
	if isNull(raw) {
		return nil, nil
	}
	var bj blockJSON
	if err := json.Unmarshal(raw, &bj); err != nil {
		return nil, &badResponse{"block: " + err.Error()}
	}
	if bj.Hash == nil || bj.Number == nil || bj.Timestamp == nil {
		return nil, &badResponse{"block without hash, number or timestamp"}
	}
	b := &Block{Hash: *bj.Hash, ParentHash: bj.ParentHash, BaseFee: bj.BaseFee.big()}
	var err error
	if b.Number, err = bj.Number.uint64("block number"); err != nil {
		return nil, &badResponse{err.Error()}
	}
	if b.Time, err = bj.Timestamp.uint64("timestamp"); err != nil {
		return nil, &badResponse{err.Error()}
	}
	b.TxHashes = make([]common.Hash, 0, len(bj.Transactions))
	if withTxs {
		b.Txs = make([]Tx, 0, len(bj.Transactions))
	}
	for i, t := range bj.Transactions {
		t = bytes.TrimSpace(t)
		if len(t) > 0 && t[0] == '"' {
			if withTxs {
				return nil, &badResponse{fmt.Sprintf("block %d: transaction %d is a hash, full transactions were asked for", b.Number, i)}
			}
			var h common.Hash
			if err := json.Unmarshal(t, &h); err != nil {
				return nil, &badResponse{fmt.Sprintf("block %d: transaction %d: %v", b.Number, i, err)}
			}
			b.TxHashes = append(b.TxHashes, h)
			continue
		}
		tx, err := parseTx(t)
		if err != nil || tx == nil {
			return nil, &badResponse{fmt.Sprintf("block %d: transaction %d: %v", b.Number, i, err)}
		}
		b.TxHashes = append(b.TxHashes, tx.Hash)
		if withTxs {
			b.Txs = append(b.Txs, *tx)
		}
	}
	return b, nil
}

// parseTx decodes a transaction object; null gives (nil, nil).
func parseTx(raw json.RawMessage) (*Tx, error) {
	if isNull(raw) {
		return nil, nil
	}
	var tj txJSON
	if err := json.Unmarshal(raw, &tj); err != nil {
		return nil, &badResponse{"transaction: " + err.Error()}
	}
	if tj.Hash == nil {
		return nil, &badResponse{"transaction without hash"}
	}
	tx := &Tx{
		Hash: *tj.Hash, From: tj.From, To: tj.To, Value: tj.Value.big(),
		GasPrice: tj.GasPrice.big(), MaxFeePerGas: tj.MaxFeePerGas.big(),
		MaxPriorityFeePerGas: tj.MaxPriorityFeePerGas.big(), BlockHash: tj.BlockHash,
	}
	if tx.Value == nil {
		tx.Value = new(big.Int)
	}
	var err error
	for _, f := range []struct {
		dst  *uint64
		q    *quantity
		name string
	}{{&tx.Type, tj.Type, "type"}, {&tx.Nonce, tj.Nonce, "nonce"}, {&tx.Gas, tj.Gas, "gas"}} {
		if *f.dst, err = f.q.uint64(f.name); err != nil {
			return nil, &badResponse{err.Error()}
		}
	}
	if tx.BlockNumber, err = tj.BlockNumber.uint64p("blockNumber"); err != nil {
		return nil, &badResponse{err.Error()}
	}
	if tx.Index, err = tj.TransactionIndex.uint64p("transactionIndex"); err != nil {
		return nil, &badResponse{err.Error()}
	}
	return tx, nil
}
