package devnet

import (
	"context"
	"crypto/ecdsa"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/chain"
)

// The devnet's token constants. The token addresses are CREATE(DeployerAddress, 0)
// and CREATE(DeployerAddress, 1): Start deploys USDC then USDT as the deployer's
// first two transactions, on every chain, so they never change and are the same
// on both devnet chains.
const (
	// USDCAddress is a standard ERC-20 with EIP-3009 and EIP-2612 like Circle's USDC (DevToken).
	USDCAddress = "0x790ef98c943d9f21bbdd98c6e6de2d3c7ab16008"
	// USDTAddress is Tether-like: transfer returns nothing, no EIP-3009 nor EIP-2612 (DevTokenNoReturn).
	USDTAddress = "0xf1a226dda6d5e9ae6e9a5bcdc237ca8fa3987ccb"

	TokenDecimals = 6         // both tokens, like USDC and USDT on Ethereum
	PrefundTokens = 1_000_000 // whole tokens minted to each of accounts 0 to NumAccounts-1, per token
	// PrefundTokenUnits is PrefundTokens in the tokens' smallest units (10^12).
	PrefundTokenUnits = PrefundTokens * 1_000_000
)

// The sweeper's contracts (contracts/Sweep.sol), deployed by Start after the tokens as the
// deployer's third and fourth transactions, CREATE(DeployerAddress, 2) and (…, 3), both paying
// SweepCollector: the development hot wallet (account HotWalletAccount).
const (
	SweepBatchAddress    = "0x99642d80bf8e0b80fa24feda57c60057f5431945" // SweepBatch: many pulls in one transaction
	SweepDelegateAddress = "0x80bbf98f37fb59e7adc0482d741a864474457f2d" // SweepDelegate: EIP-7702 code for deposit accounts
)

// SweepCollector is the hot wallet the devnet's sweep contracts pay.
func SweepCollector() common.Address { return AccountAddress(HotWalletAccount) }

// Contract artifacts produced by contracts/compile.sh from contracts/DevToken.sol and
// contracts/Sweep.sol.
var (
	//go:embed contracts/DevToken.bin
	devTokenBin string
	//go:embed contracts/DevToken.abi.json
	devTokenABIJSON string
	//go:embed contracts/DevTokenNoReturn.bin
	noReturnBin string
	//go:embed contracts/DevTokenNoReturn.abi.json
	noReturnABIJSON string
	//go:embed contracts/SweepBatch.bin
	sweepBatchBin string
	//go:embed contracts/SweepBatch.abi.json
	sweepBatchABIJSON string
	//go:embed contracts/SweepDelegate.bin
	sweepDelegateBin string
	//go:embed contracts/SweepDelegate.abi.json
	sweepDelegateABIJSON string
)

var (
	devTokenABI      = mustABI(devTokenABIJSON)
	noReturnABI      = mustABI(noReturnABIJSON)
	sweepBatchABI    = mustABI(sweepBatchABIJSON)
	sweepDelegateABI = mustABI(sweepDelegateABIJSON)
)

// SweepBatchABI is the ABI of contracts/Sweep.sol's SweepBatch, for the sweeper that calls it.
func SweepBatchABI() abi.ABI { return sweepBatchABI }

// TokenABI is the ABI of the devnet's USDC (DevToken: ERC-20, EIP-3009, EIP-2612).
func TokenABI() abi.ABI { return devTokenABI }

func mustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(fmt.Sprintf("devnet: embedded ABI: %v", err))
	}
	return a
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) == 0 {
		panic(fmt.Sprintf("devnet: embedded bytecode: %v", err))
	}
	return b
}

// token describes one devnet token deployment.
type token struct {
	name, symbol string
	address      string
	abi          abi.ABI
	bin          string
}

// tokens are deployed in this order, so index = deployer nonce.
var tokens = []token{
	{name: "USD Coin (devnet)", symbol: "USDC", address: USDCAddress, abi: devTokenABI, bin: devTokenBin},
	{name: "Tether USD (devnet)", symbol: "USDT", address: USDTAddress, abi: noReturnABI, bin: noReturnBin},
}

// creationCode is the token's creation bytecode followed by its ABI-encoded
// constructor arguments: TokenDecimals, and PrefundTokenUnits for each of
// accounts 0 to NumAccounts-1.
func (t token) creationCode() ([]byte, error) {
	holders := make([]common.Address, NumAccounts)
	for i := range holders {
		holders[i] = AccountAddress(i)
	}
	args, err := t.abi.Pack("", t.name, t.symbol, uint8(TokenDecimals), holders, big.NewInt(PrefundTokenUnits))
	if err != nil {
		return nil, fmt.Errorf("devnet: constructor arguments of %s: %w", t.symbol, err)
	}
	return append(mustHex(t.bin), args...), nil
}

// TransferCalldata is the calldata of an ERC-20 transfer(to, amount) call. It is
// the same for standard tokens and Tether-like ones (only the return data
// differs). It panics if amount is nil, negative or wider than 256 bits.
func TransferCalldata(to common.Address, amount *big.Int) []byte {
	if amount == nil || amount.Sign() < 0 || amount.BitLen() > 256 {
		panic(fmt.Sprintf("devnet: transfer calldata: invalid amount %v", amount))
	}
	return chain.ERC20TransferCalldata(to, amount)
}

// TokenBalance returns owner's balance of the ERC-20 token at the latest block.
func TokenBalance(ctx context.Context, c ethereum.ContractCaller, token, owner common.Address) (*big.Int, error) {
	b, err := chain.ERC20Balance(ctx, c, token, owner)
	if err != nil {
		return nil, fmt.Errorf("devnet: %w", err)
	}
	return b, nil
}

// txBackend is what sending a transaction needs; *ethclient.Client and the
// simulated backend's in-process client both provide it.
type txBackend interface {
	ethereum.ChainIDReader
	ethereum.ChainReader
	ethereum.GasEstimator
	ethereum.GasPricer1559
	ethereum.PendingStateReader
	ethereum.TransactionSender
}

// Pay sends amount from the account of key from to address to, and returns the
// transaction hash without waiting for it to be mined. With token "" (or the
// zero address) it is a native ETH transfer of amount wei; otherwise token is
// an ERC-20 contract address and amount is in its smallest units (the call is
// transfer(to, amount), so it works for Tether-like tokens too).
//
// The transaction is an EIP-1559 one signed for the chain id client reports,
// with the nonce from PendingNonceAt, gas from EstimateGas (so a
// transfer that would revert fails here, not on chain), tip from
// SuggestGasTipCap and fee cap 2×base fee + tip. Pay returns once the node
// counts the transaction as pending (at most about 5 s after sending), so the
// next block sealed includes it and further Pay calls from the same account
// before that block get consecutive nonces.
func Pay(ctx context.Context, client *ethclient.Client, from *ecdsa.PrivateKey, token string, to common.Address, amount *big.Int) (common.Hash, error) {
	if client == nil || from == nil {
		return common.Hash{}, errors.New("devnet: pay: nil client or key")
	}
	if amount == nil || amount.Sign() < 0 || amount.BitLen() > 256 {
		return common.Hash{}, fmt.Errorf("devnet: pay: invalid amount %v", amount)
	}
	var (
		txTo  = to
		value = amount
		data  []byte
	)
	if token = strings.TrimSpace(token); token != "" {
		if !common.IsHexAddress(token) {
			return common.Hash{}, fmt.Errorf("devnet: pay: token %q is not an address", token)
		}
		if addr := common.HexToAddress(token); addr != (common.Address{}) {
			txTo, value, data = addr, new(big.Int), TransferCalldata(to, amount)
		}
	}
	tx, err := sendTx(ctx, client, from, &txTo, value, data)
	if err != nil {
		return common.Hash{}, fmt.Errorf("devnet: pay: %w", err)
	}
	return tx.Hash(), nil
}

// sendTx signs and sends a dynamic-fee transaction from key (to == nil creates
// a contract), using the pending nonce.
func sendTx(ctx context.Context, c txBackend, key *ecdsa.PrivateKey, to *common.Address, value *big.Int, data []byte) (*types.Transaction, error) {
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := c.PendingNonceAt(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("nonce of %s: %w", from.Hex(), err)
	}
	return sendTxWithNonce(ctx, c, key, nonce, to, value, data)
}

func sendTxWithNonce(ctx context.Context, c txBackend, key *ecdsa.PrivateKey, nonce uint64, to *common.Address, value *big.Int, data []byte) (*types.Transaction, error) {
	from := crypto.PubkeyToAddress(key.PublicKey)
	chainID, err := c.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("chain id: %w", err)
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("latest header: %w", err)
	}
	if head.BaseFee == nil {
		return nil, errors.New("latest block has no base fee (chain is not EIP-1559)")
	}
	tip, err := c.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, fmt.Errorf("gas tip: %w", err)
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{
		From: from, To: to, Value: value, Data: data,
		GasFeeCap: feeCap, GasTipCap: tip,
	})
	if err != nil {
		return nil, fmt.Errorf("estimate gas: %w", err)
	}
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(chainID), &types.DynamicFeeTx{
		ChainID:   chainID,
		Nonce:     nonce,
		GasTipCap: tip,
		GasFeeCap: feeCap,
		Gas:       gas,
		To:        to,
		Value:     value,
		Data:      data,
	})
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if err := c.SendTransaction(ctx, tx); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	if err := waitPending(ctx, c, from, nonce); err != nil {
		return nil, err
	}
	return tx, nil
}

// pendingWait bounds waitPending: long enough for a loaded test machine, short
// enough not to hang on a node whose pending nonce never moves.
const pendingWait = 5 * time.Second

// waitPending waits until the node's pending nonce of from is past nonce, i.e.
// the transaction just sent is in the pool's pending set. go-ethereum admits
// transactions asynchronously: without this, a block sealed right after the
// send may miss the transaction, and a second send from the same account may
// reuse its nonce ("already known" or "replacement transaction underpriced").
// After pendingWait it gives up silently: the transaction was accepted, and
// some nodes do not count pending transactions in the pending nonce.
func waitPending(ctx context.Context, c txBackend, from common.Address, nonce uint64) error {
	deadline := time.Now().Add(pendingWait)
	for {
		next, err := c.PendingNonceAt(ctx, from)
		if err != nil {
			return fmt.Errorf("pending nonce of %s: %w", from.Hex(), err)
		}
		if next > nonce || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// deployTokens sends the token deployments from the deployer at nonces 0, 1, …
// (the caller commits the block) and returns the transactions.
func deployTokens(ctx context.Context, c txBackend) ([]*types.Transaction, error) {
	key := deployerKey()
	txs := make([]*types.Transaction, 0, len(tokens))
	for nonce, t := range tokens {
		code, err := t.creationCode()
		if err != nil {
			return nil, err
		}
		tx, err := sendTxWithNonce(ctx, c, key, uint64(nonce), nil, new(big.Int), code)
		if err != nil {
			return nil, fmt.Errorf("devnet: deploy %s: %w", t.symbol, err)
		}
		txs = append(txs, tx)
	}
	return txs, nil
}

// verifyTokens checks, after the deployment block, that every deployment
// succeeded at its fixed address and minted PrefundTokenUnits to each account.
func verifyTokens(ctx context.Context, c interface {
	ethereum.ChainStateReader
	ethereum.ContractCaller
	ethereum.TransactionReader
}, txs []*types.Transaction) error {
	want := big.NewInt(PrefundTokenUnits)
	for i, t := range tokens {
		receipt, err := c.TransactionReceipt(ctx, txs[i].Hash())
		if err != nil {
			return fmt.Errorf("devnet: %s deployment receipt: %w", t.symbol, err)
		}
		if receipt.Status != types.ReceiptStatusSuccessful {
			return fmt.Errorf("devnet: %s deployment reverted (tx %s)", t.symbol, txs[i].Hash().Hex())
		}
		addr := common.HexToAddress(t.address)
		if receipt.ContractAddress != addr {
			return fmt.Errorf("devnet: %s deployed at %s, want %s", t.symbol, receipt.ContractAddress.Hex(), t.address)
		}
		code, err := c.CodeAt(ctx, addr, nil)
		if err != nil {
			return fmt.Errorf("devnet: %s code: %w", t.symbol, err)
		}
		if len(code) == 0 {
			return fmt.Errorf("devnet: no code at %s (%s)", t.address, t.symbol)
		}
		for a := range NumAccounts {
			got, err := TokenBalance(ctx, c, addr, AccountAddress(a))
			if err != nil {
				return err
			}
			if got.Cmp(want) != 0 {
				return fmt.Errorf("devnet: account %d holds %s %s units, want %s", a, got, t.symbol, want)
			}
		}
	}
	return nil
}
