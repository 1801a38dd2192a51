package devnet

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// sweepContract is one of the sweeper's contracts (contracts/Sweep.sol), constructed with the
// collector every pull pays.
type sweepContract struct {
	name    string
	address string
	abi     abi.ABI
	bin     string
}

// sweepContracts are deployed in this order after the tokens: index+len(tokens) = deployer nonce.
var sweepContracts = []sweepContract{
	{name: "SweepBatch", address: SweepBatchAddress, abi: sweepBatchABI, bin: sweepBatchBin},
	{name: "SweepDelegate", address: SweepDelegateAddress, abi: sweepDelegateABI, bin: sweepDelegateBin},
}

// deploySweepContracts sends the sweep contracts' deployments from the deployer at the nonces
// after the tokens' (the caller commits the block).
func deploySweepContracts(ctx context.Context, c txBackend) ([]*types.Transaction, error) {
	key := deployerKey()
	var txs []*types.Transaction
	for i, sc := range sweepContracts {
		args, err := sc.abi.Pack("", SweepCollector())
		if err != nil {
			return nil, fmt.Errorf("devnet: constructor arguments of %s: %w", sc.name, err)
		}
		code := append(mustHex(sc.bin), args...)
		tx, err := sendTxWithNonce(ctx, c, key, uint64(len(tokens)+i), nil, new(big.Int), code)
		if err != nil {
			return nil, fmt.Errorf("devnet: deploy %s: %w", sc.name, err)
		}
		txs = append(txs, tx)
	}
	return txs, nil
}

// verifySweepContracts checks that every sweep contract is at its fixed address and pays the
// development hot wallet.
func verifySweepContracts(ctx context.Context, c interface {
	ethereum.ContractCaller
	ethereum.TransactionReader
}, txs []*types.Transaction) error {
	for i, sc := range sweepContracts {
		receipt, err := c.TransactionReceipt(ctx, txs[i].Hash())
		if err != nil {
			return fmt.Errorf("devnet: %s deployment receipt: %w", sc.name, err)
		}
		addr := common.HexToAddress(sc.address)
		if receipt.Status != types.ReceiptStatusSuccessful || receipt.ContractAddress != addr {
			return fmt.Errorf("devnet: %s deployed at %s (status %d), want %s", sc.name, receipt.ContractAddress.Hex(),
				receipt.Status, sc.address)
		}
		data, err := sc.abi.Pack("collector")
		if err != nil {
			return err
		}
		out, err := c.CallContract(ctx, ethereum.CallMsg{To: &addr, Data: data}, nil)
		if err != nil {
			return fmt.Errorf("devnet: %s collector: %w", sc.name, err)
		}
		if len(out) != 32 || common.BytesToAddress(out) != SweepCollector() {
			return fmt.Errorf("devnet: %s pays %x, want %s", sc.name, out, strings.ToLower(SweepCollector().Hex()))
		}
	}
	return nil
}
