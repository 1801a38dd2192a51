// Package hotwallet holds the key that signs payouts. The key is read from configuration (hex
// or go-ethereum's encrypted keystore) into memory only: it is never logged, never formatted
// (String and GoString print the address), and never stored in the database.
package hotwallet

import (
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"os"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

// Wallet signs transactions with one key.
type Wallet struct {
	key  *ecdsa.PrivateKey
	addr common.Address
}

// FromKey wraps a key (the devnet's account 9, tests).
func FromKey(k *ecdsa.PrivateKey) *Wallet {
	return &Wallet{key: k, addr: crypto.PubkeyToAddress(k.PublicKey)}
}

// FromHex reads a secp256k1 private key in hex, with or without 0x. The error never repeats
// the input.
func FromHex(s string) (*Wallet, error) {
	k, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(s), "0x"))
	if err != nil {
		return nil, fmt.Errorf("PAYMENTS_HOT_WALLET_KEY is not a 32-byte hex private key")
	}
	return FromKey(k), nil
}

// FromKeystore decrypts a go-ethereum keystore file with the password in passwordFile (its
// trailing newline ignored).
func FromKeystore(path, passwordFile string) (*Wallet, error) {
	blob, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hot wallet keystore: %w", err)
	}
	pass, err := os.ReadFile(passwordFile)
	if err != nil {
		return nil, fmt.Errorf("hot wallet password file: %w", err)
	}
	k, err := keystore.DecryptKey(blob, strings.TrimRight(string(pass), "\r\n"))
	if err != nil {
		return nil, fmt.Errorf("hot wallet keystore %s: %w", path, err)
	}
	return FromKey(k.PrivateKey), nil
}

// AddressOnly keeps a wallet's address and forgets its key: Sign fails on the result.
func AddressOnly(w *Wallet) *Wallet { return &Wallet{addr: w.addr} }

// Address is the wallet's address.
func (w *Wallet) Address() common.Address { return w.addr }

// Sign signs a dynamic-fee transaction for chainID and returns it with its raw bytes.
func (w *Wallet) Sign(tx *types.DynamicFeeTx, chainID int64) (*types.Transaction, []byte, error) {
	tx.ChainID = big.NewInt(chainID)
	return w.signTx(tx, chainID)
}

// SignSetCode signs an EIP-7702 transaction (its authorizations already signed by the
// delegating accounts) for chainID and returns it with its raw bytes.
func (w *Wallet) SignSetCode(tx *types.SetCodeTx, chainID int64) (*types.Transaction, []byte, error) {
	tx.ChainID = uint256.NewInt(uint64(chainID))
	return w.signTx(tx, chainID)
}

func (w *Wallet) signTx(tx types.TxData, chainID int64) (*types.Transaction, []byte, error) {
	if w.key == nil {
		return nil, nil, fmt.Errorf("%s: this process holds its address only, not its key", w)
	}
	signed, err := types.SignNewTx(w.key, types.LatestSignerForChainID(big.NewInt(chainID)), tx)
	if err != nil {
		return nil, nil, err
	}
	raw, err := signed.MarshalBinary()
	return signed, raw, err
}

// String shows the address only.
func (w *Wallet) String() string { return "hot wallet " + strings.ToLower(w.addr.Hex()) }

// GoString shows the address only (%#v).
func (w *Wallet) GoString() string { return w.String() }
