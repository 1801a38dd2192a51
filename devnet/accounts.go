package devnet

import (
	"crypto/ecdsa"
	"crypto/pbkdf2"
	"crypto/sha512"
	"fmt"
	"math/big"
	"sync"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Mnemonic is the public, well-known test mnemonic (the one Hardhat, Anvil and
// Ganache use). Every key derived from it is public knowledge: never send real
// funds to its addresses on any real chain.
const Mnemonic = "test test test test test test test test test test test junk"

const (
	// NumAccounts is how many accounts of Mnemonic (indices 0 to NumAccounts-1,
	// path m/44'/60'/0'/0/i) the genesis prefunds with PrefundETH ether and
	// PrefundTokens of each token.
	NumAccounts = 10

	// HotWalletAccount is the account reserved for the service's own dev hot
	// wallet (payouts and withdrawals are sent from it). Payers, i.e. tests and
	// developers simulating customers, use accounts 0 to HotWalletAccount-1 so
	// that their transactions never race the service's nonces.
	HotWalletAccount = 9

	// PrefundETH is each account's genesis balance, in whole ether.
	PrefundETH = 10_000
)

// derivationPath is m/44'/60'/0'/0, the BIP-44 Ethereum external chain; account
// i is its child i. It is the same path wallet.XPubFromSeed uses.
var derivationPath = []uint32{
	hdkeychain.HardenedKeyStart + 44,
	hdkeychain.HardenedKeyStart + 60,
	hdkeychain.HardenedKeyStart + 0,
	0,
}

// externalChain is the extended private key of m/44'/60'/0'/0 for Mnemonic,
// derived once. Only public test keys are involved, so it is kept for the
// process's lifetime.
var externalChain = sync.OnceValues(func() (*hdkeychain.ExtendedKey, error) {
	seed, err := mnemonicSeed(Mnemonic, "")
	if err != nil {
		return nil, err
	}
	key, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		return nil, fmt.Errorf("devnet: master key: %w", err)
	}
	for depth, i := range derivationPath {
		if key, err = key.Derive(i); err != nil {
			return nil, fmt.Errorf("devnet: derive child %d at depth %d: %w", i, depth+1, err)
		}
	}
	return key, nil
})

// mnemonicSeed is the BIP-39 seed of a mnemonic: PBKDF2-HMAC-SHA512 of the
// (already normalised) mnemonic, salted with "mnemonic"+passphrase, 2048
// iterations, 64 bytes. Mnemonic is plain ASCII, so NFKD normalisation is the
// identity and is skipped.
func mnemonicSeed(mnemonic, passphrase string) ([]byte, error) {
	return pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"+passphrase), 2048, 64)
}

// AccountKey returns the private key of account i of Mnemonic (path
// m/44'/60'/0'/0/i). Accounts 0 to NumAccounts-1 are prefunded; larger indices
// (below 2^31) derive fine but start empty. Each call returns a new key value.
func AccountKey(i int) (*ecdsa.PrivateKey, error) {
	if i < 0 || i >= hdkeychain.HardenedKeyStart {
		return nil, fmt.Errorf("devnet: account index %d out of range [0, 2^31)", i)
	}
	chain, err := externalChain()
	if err != nil {
		return nil, err
	}
	child, err := chain.Derive(uint32(i))
	if err != nil {
		return nil, fmt.Errorf("devnet: derive account %d: %w", i, err)
	}
	priv, err := child.ECPrivKey()
	if err != nil {
		return nil, fmt.Errorf("devnet: private key of account %d: %w", i, err)
	}
	// Re-parse through go-ethereum so the key carries its secp256k1 curve, which
	// is what types.SignTx and crypto.PubkeyToAddress expect.
	return crypto.ToECDSA(priv.Serialize())
}

// AccountAddress returns the address of account i of Mnemonic. It panics if i
// is outside [0, 2^31), the only way AccountKey can fail for this mnemonic.
func AccountAddress(i int) common.Address {
	key, err := AccountKey(i)
	if err != nil {
		panic(err)
	}
	return crypto.PubkeyToAddress(key.PublicKey)
}

// deployerKey is the fixed key that deploys the devnet tokens. It is derived
// from a public string, so it is no secret; being fixed (and used for nothing
// else) keeps the token addresses, CREATE(deployer, nonce), identical on every
// start.
var deployerKey = sync.OnceValue(func() *ecdsa.PrivateKey {
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("paymentsd devnet deployer")))
	if err != nil {
		panic(err) // a fixed 32-byte value below the curve order
	}
	return key
})

// DeployerAddress is the address of the devnet's token deployer
// (Keccak-256("paymentsd devnet deployer") as a private key). It is prefunded
// with deployerETH ether and has nonce 4 after Start (two tokens, two sweep contracts).
const DeployerAddress = "0x9b99d9f98f9416fd959f348caff546447185cedc"

// deployerETH is the deployer's genesis balance in whole ether: enough for the
// deployments, and visibly different from the payer accounts'.
const deployerETH = 100

// weiPerETH is 10^18.
var weiPerETH = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// ethToWei converts whole ether to wei.
func ethToWei(eth int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(eth), weiPerETH)
}
