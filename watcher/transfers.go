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
	record := func(b *chain.Block, txHash common.Hash, logIndex int64, tok domain.Token, sender, recipient common.Address, amount *big.Int) {
		a := watched[strings.ToLower(recipient.Hex())]
		out = append(out, store.Transfer{ID: uuid.Must(uuid.NewV7()), ChainID: w.Info.ID, TxHash: strings.ToLower(txHash.Hex()),
			LogIndex: logIndex, BlockNumber: int64(b.Number), BlockHash: b.Hash.Hex(), BlockTime: time.Unix(int64(b.Time), 0).UTC(),
			TokenID: tok.ID, From: strings.ToLower(sender.Hex()), To: strings.ToLower(recipient.Hex()),
			Amount: decimal.NewFromBigInt(amount, 0), DepositAddressID: a.DepositAddressID, PaymentID: a.PaymentID, CreatedAt: now})
	}
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
				if l.Removed || len(l.Topics) != 3 || l.Topics[0] != transferTopic || len(l.Data) != 32 {
					continue // not an ERC-20 Transfer (an ERC-721 one has 4 topics), or retracted
				}
				b := byNumber[l.BlockNumber]
				if b == nil || b.Hash != l.BlockHash {
					return nil, errMoved
				}
				amount := new(big.Int).SetBytes(l.Data)
				recipient := common.BytesToAddress(l.Topics[2].Bytes())
				if amount.Sign() <= 0 {
					continue
				}
				if _, ok := watched[strings.ToLower(recipient.Hex())]; !ok {
					continue
				}
				record(b, l.TxHash, int64(l.Index), byContract[l.Address], common.BytesToAddress(l.Topics[1].Bytes()), recipient, amount)
			}
		}
	}
	if native := w.nativeToken(); native != nil {
		for _, b := range blocks {
			for _, tx := range b.Txs {
				if tx.To == nil || tx.Value == nil || tx.Value.Sign() <= 0 {
					continue
				}
				if _, ok := watched[strings.ToLower(tx.To.Hex())]; !ok {
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
				record(b, tx.Hash, -1, *native, tx.From, *tx.To, tx.Value)
			}
		}
	}
	return out, nil
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
