package watcher

import (
	"context"
	"errors"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// transferTopic is keccak256("Transfer(address,address,uint256)").
var transferTopic = common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")

// maxAddressesPerQuery is geth's default --rpc.logquerylimit on topic alternatives.
const maxAddressesPerQuery = 1000

// errMoved says a log's block is not the block read for its number: the chain reorganised
// during the scan.
var errMoved = errors.New("watcher: the chain changed during the scan")

// transfers reads the blocks' transfers to watched addresses.
func (w *Watcher) transfers(ctx context.Context, blocks []*chain.Block, watched map[string]store.WatchedAddress) ([]store.Transfer, error) {
	if len(watched) == 0 {
		return nil, nil
	}
	byNumber := make(map[uint64]*chain.Block, len(blocks))
	for _, b := range blocks {
		byNumber[b.Number] = b
	}
	from, to := blocks[0].Number, blocks[len(blocks)-1].Number
	var out []store.Transfer
	now := w.Now()
	contracts, byContract := w.contracts()
	if len(contracts) > 0 {
		addrs := make([]string, 0, len(watched))
		for a := range watched {
			addrs = append(addrs, a)
		}
		sort.Strings(addrs)
		for i := 0; i < len(addrs); i += maxAddressesPerQuery {
			chunk := addrs[i:min(i+maxAddressesPerQuery, len(addrs))]
			topics := make([]common.Hash, len(chunk))
			for j, a := range chunk {
				topics[j] = common.BytesToHash(common.HexToAddress(a).Bytes())
			}
			logs, err := w.Chain.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from),
				ToBlock: new(big.Int).SetUint64(to), Addresses: contracts, Topics: [][]common.Hash{{transferTopic}, nil, topics}})
			if err != nil {
				return nil, err
			}
			for _, l := range logs {
				b := byNumber[l.BlockNumber]
				t, ok := w.logTransfer(l, b, byContract, watched, now)
				if !ok {
					continue
				}
				if b == nil || b.Hash != l.BlockHash {
					return nil, errMoved
				}
				out = append(out, t)
			}
		}
	}
	if native := w.nativeToken(); native != nil {
		for _, b := range blocks {
			for _, tx := range b.Txs {
				if _, ok := w.nativeTransfer(tx, b, native, watched, now); !ok {
					continue
				}
				// A reverted transaction moved nothing: only a successful receipt counts.
				r, err := w.Chain.TransactionReceipt(ctx, tx.Hash)
				if err != nil {
					return nil, err
				}
				if r.BlockHash != b.Hash {
					return nil, errMoved
				}
				if r.Status != types.ReceiptStatusSuccessful {
					continue
				}
				t, _ := w.nativeTransfer(tx, b, native, watched, now)
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// logTransfer is the transfer an ERC-20 Transfer log of block b records: a positive amount of
// one of the chain's tokens to a watched address (ok false for anything else). The scan and a
// reported transaction (RecordReported) read logs through it alike.
func (w *Watcher) logTransfer(l types.Log, b *chain.Block, byContract map[common.Address]domain.Token,
	watched map[string]store.WatchedAddress, now time.Time) (store.Transfer, bool) {
	if l.Removed || len(l.Topics) != 3 || l.Topics[0] != transferTopic || len(l.Data) != 32 {
		return store.Transfer{}, false // not an ERC-20 Transfer (an ERC-721 one has 4 topics), or retracted
	}
	tok, ok := byContract[l.Address]
	amount := new(big.Int).SetBytes(l.Data)
	recipient := common.BytesToAddress(l.Topics[2].Bytes())
	if !ok || amount.Sign() <= 0 {
		return store.Transfer{}, false
	}
	return w.transfer(b, l.TxHash, int64(l.Index), tok, common.BytesToAddress(l.Topics[1].Bytes()), recipient, amount, watched, now)
}

// nativeTransfer is the transfer a transaction of block b makes in the native token: a positive
// value to a watched address (ok false otherwise). Whether it succeeded is the receipt's to say.
func (w *Watcher) nativeTransfer(tx chain.Tx, b *chain.Block, native *domain.Token, watched map[string]store.WatchedAddress,
	now time.Time) (store.Transfer, bool) {
	if native == nil || tx.To == nil || tx.Value == nil || tx.Value.Sign() <= 0 {
		return store.Transfer{}, false
	}
	return w.transfer(b, tx.Hash, -1, *native, tx.From, *tx.To, tx.Value, watched, now)
}

// transfer is the record of one movement to a watched address (ok false: not watched).
func (w *Watcher) transfer(b *chain.Block, txHash common.Hash, logIndex int64, tok domain.Token, sender, recipient common.Address,
	amount *big.Int, watched map[string]store.WatchedAddress, now time.Time) (store.Transfer, bool) {
	a, ok := watched[strings.ToLower(recipient.Hex())]
	if !ok {
		return store.Transfer{}, false
	}
	var number, at uint64
	var hash common.Hash
	if b != nil {
		number, hash, at = b.Number, b.Hash, b.Time
	}
	return store.Transfer{ID: uuid.Must(uuid.NewV7()), ChainID: w.Info.ID, TxHash: strings.ToLower(txHash.Hex()),
		LogIndex: logIndex, BlockNumber: int64(number), BlockHash: hash.Hex(), BlockTime: time.Unix(int64(at), 0).UTC(),
		TokenID: tok.ID, From: strings.ToLower(sender.Hex()), To: strings.ToLower(recipient.Hex()),
		Amount: decimal.NewFromBigInt(amount, 0), DepositAddressID: a.DepositAddressID, PaymentID: a.PaymentID, CreatedAt: now}, true
}

func (w *Watcher) contracts() ([]common.Address, map[common.Address]domain.Token) {
	var out []common.Address
	by := map[common.Address]domain.Token{}
	for _, t := range w.Tokens {
		if t.AssetType == domain.ERC20 {
			a := common.HexToAddress(t.ContractAddress)
			out = append(out, a)
			by[a] = t
		}
	}
	return out, by
}

func (w *Watcher) nativeToken() *domain.Token {
	for i, t := range w.Tokens {
		if t.AssetType == domain.Native {
			return &w.Tokens[i]
		}
	}
	return nil
}
