package fault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// The test wallet's chain side (issue 24): it adds a chain it is given (wallet_addEthereumChain,
// after checking the RPC URL answers that chain id), sends transactions (eth_sendTransaction:
// signed with its devnet key, EIP-1559 fees from the node, gas estimated — an unaffordable one is
// refused as a wallet refuses it) through the RPC of the chain it is on, and answers reads
// (eth_getBalance, eth_call, …) from that RPC, as wallets proxy them to their node. Called under
// w.mu by handle.

// readMethods are the reads a wallet passes to its node.
var readMethods = map[string]bool{"eth_getBalance": true, "eth_call": true, "eth_blockNumber": true, "eth_estimateGas": true,
	"eth_getTransactionReceipt": true, "eth_getTransactionByHash": true, "eth_gasPrice": true, "eth_getCode": true}

func (w *testWallet) onChain(method string, params []json.RawMessage) (any, *walletError) {
	if w.rpc == nil {
		return nil, &walletError{4200, "The test wallet does not support " + method}
	}
	switch method {
	case "wallet_addEthereumChain":
		return w.addChain(params)
	case "eth_sendTransaction":
		return w.sendTransaction(params)
	}
	if !readMethods[method] {
		return nil, &walletError{4200, "The test wallet does not support " + method}
	}
	url := w.rpc[w.chainID]
	if url == "" {
		return nil, &walletError{4901, fmt.Sprintf("The wallet has no RPC for chain %d", w.chainID)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rpc.DialContext(ctx, url)
	if err != nil {
		return nil, &walletError{-32603, err.Error()}
	}
	defer c.Close()
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = p
	}
	var out json.RawMessage
	if err := c.CallContext(ctx, &out, method, args...); err != nil {
		return nil, &walletError{-32000, err.Error()}
	}
	return out, nil
}

// addChain adds a chain whose first RPC URL answers its chain id, and stays on the current one
// (the page switches after adding).
func (w *testWallet) addChain(params []json.RawMessage) (any, *walletError) {
	var arg struct {
		ChainID string   `json:"chainId"`
		RPCURLs []string `json:"rpcUrls"`
	}
	if len(params) != 1 || json.Unmarshal(params[0], &arg) != nil || len(arg.RPCURLs) == 0 {
		return nil, &walletError{-32602, "wallet_addEthereumChain takes [{chainId, chainName, nativeCurrency, rpcUrls}]"}
	}
	id, err := hexutil.DecodeUint64(arg.ChainID)
	if err != nil {
		return nil, &walletError{-32602, err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ethclient.DialContext(ctx, arg.RPCURLs[0])
	if err != nil {
		return nil, &walletError{-32602, err.Error()}
	}
	defer c.Close()
	got, err := c.ChainID(ctx)
	if err != nil || got.Uint64() != id {
		return nil, &walletError{-32602, fmt.Sprintf("the RPC URL answers chain id %v, not %d (%v)", got, id, err)}
	}
	w.rpc[int64(id)] = arg.RPCURLs[0]
	return nil, nil
}

func (w *testWallet) sendTransaction(params []json.RawMessage) (any, *walletError) {
	var arg struct {
		From    string          `json:"from"`
		To      *common.Address `json:"to"`
		Value   *hexutil.Big    `json:"value"`
		Data    hexutil.Bytes   `json:"data"`
		ChainID *hexutil.Big    `json:"chainId"`
	}
	if len(params) != 1 || json.Unmarshal(params[0], &arg) != nil {
		return nil, &walletError{-32602, "eth_sendTransaction takes [{from, to, value, data}]"}
	}
	if !strings.EqualFold(arg.From, w.addr) {
		return nil, &walletError{4100, "The requested account has not been authorized by the user."}
	}
	if arg.ChainID != nil && arg.ChainID.ToInt().Int64() != w.chainID {
		return nil, &walletError{-32602, fmt.Sprintf("chainId %s is not the active chain %d", arg.ChainID, w.chainID)}
	}
	url := w.rpc[w.chainID]
	if url == "" {
		return nil, &walletError{4901, fmt.Sprintf("The wallet has no RPC for chain %d", w.chainID)}
	}
	value := new(big.Int)
	if arg.Value != nil {
		value = arg.Value.ToInt()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := w.send(ctx, url, arg.To, value, arg.Data)
	if err != nil {
		return nil, &walletError{-32000, err.Error()}
	}
	w.sent = append(w.sent, strings.ToLower(h.Hex()))
	return h.Hex(), nil
}

func (w *testWallet) send(ctx context.Context, url string, to *common.Address, value *big.Int, data []byte) (common.Hash, error) {
	c, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return common.Hash{}, err
	}
	defer c.Close()
	from := common.HexToAddress(w.addr)
	chainID, err := c.ChainID(ctx)
	if err != nil {
		return common.Hash{}, err
	}
	nonce, err := c.PendingNonceAt(ctx, from)
	if err != nil {
		return common.Hash{}, err
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return common.Hash{}, err
	}
	if head.BaseFee == nil {
		return common.Hash{}, errors.New("no base fee")
	}
	tip, err := c.SuggestGasTipCap(ctx)
	if err != nil {
		return common.Hash{}, err
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: from, To: to, Value: value, Data: data, GasFeeCap: feeCap, GasTipCap: tip})
	if err != nil {
		return common.Hash{}, err // "insufficient funds for gas * price + value", as a wallet says it
	}
	tx, err := types.SignNewTx(w.key, types.LatestSignerForChainID(chainID), &types.DynamicFeeTx{ChainID: chainID, Nonce: nonce,
		GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: to, Value: value, Data: data})
	if err != nil {
		return common.Hash{}, err
	}
	return tx.Hash(), c.SendTransaction(ctx, tx)
}

// sentHashes lists the transactions the wallet sent.
func (w *testWallet) sentHashes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.sent...)
}
