package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
)

// The two ERC-20 calls the service makes itself, encoded by hand: a token like USDT returns
// nothing from transfer, so no return value is ever decoded from it (the receipt's status
// decides), and balanceOf answers one 32-byte word.

var (
	transferSelector  = []byte{0xa9, 0x05, 0x9c, 0xbb} // keccak256("transfer(address,uint256)")[:4]
	balanceOfSelector = []byte{0x70, 0xa0, 0x82, 0x31} // keccak256("balanceOf(address)")[:4]
)

// ERC20TransferCalldata encodes transfer(to, amount); amount must not be negative.
func ERC20TransferCalldata(to common.Address, amount *big.Int) []byte {
	out := append([]byte{}, transferSelector...)
	out = append(out, common.LeftPadBytes(to.Bytes(), 32)...)
	return append(out, common.LeftPadBytes(amount.Bytes(), 32)...)
}

// ERC20Balance reads owner's balance of token at the latest block.
func ERC20Balance(ctx context.Context, c ethereum.ContractCaller, token, owner common.Address) (*big.Int, error) {
	return ERC20BalanceAt(ctx, c, token, owner, nil)
}

// ERC20BalanceAt reads owner's balance of token at a block (nil: the latest).
func ERC20BalanceAt(ctx context.Context, c ethereum.ContractCaller, token, owner common.Address, block *big.Int) (*big.Int, error) {
	data := append(append([]byte{}, balanceOfSelector...), common.LeftPadBytes(owner.Bytes(), 32)...)
	out, err := c.CallContract(ctx, ethereum.CallMsg{To: &token, Data: data}, block)
	if err != nil {
		return nil, err
	}
	if len(out) < 32 {
		return nil, fmt.Errorf("balanceOf(%s) on %s answered %d bytes", owner.Hex(), token.Hex(), len(out))
	}
	return new(big.Int).SetBytes(out[:32]), nil
}
