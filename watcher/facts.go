package watcher

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/payments"
)

// TxReader is what a receipt needs of a chain.
type TxReader interface {
	Chain
	Transaction(ctx context.Context, hash common.Hash) (*chain.Tx, error)
}

// Readers reads transactions for receipts from each watched chain's client.
type Readers map[int64]TxReader

// TxFacts implements payments.ChainReader: the signer from the transaction, the gas and its
// cost from the receipt (gas used × effective gas price; an L2's L1 data fee is not included).
func (r Readers) TxFacts(ctx context.Context, chainID int64, txHash string) (payments.TxFacts, error) {
	c, ok := r[chainID]
	if !ok {
		return payments.TxFacts{}, fmt.Errorf("%s is not watched", chains.CAIP2(chainID))
	}
	h := common.HexToHash(txHash)
	tx, err := c.Transaction(ctx, h)
	if err != nil {
		return payments.TxFacts{}, err
	}
	rc, err := c.TransactionReceipt(ctx, h)
	if err != nil {
		return payments.TxFacts{}, err
	}
	price := rc.EffectiveGasPrice
	if price == nil {
		price = tx.GasPrice
	}
	return payments.TxFacts{Sender: tx.From.Hex(), GasUsed: int64(rc.GasUsed), TotalCostWei: money.GasCost(rc.GasUsed, price)}, nil
}
