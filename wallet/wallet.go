// Package wallet owns deposit-address derivation for the gateway: it turns a
// configured BIP-32 extended public key into EVM deposit addresses, and it
// produces such keys (from a seed or randomly for development).
//
// Addresses are derived from an extended PUBLIC key so that the API process
// never holds private key material: a compromise of the API can reveal which
// addresses belong to the gateway, but cannot move funds.
//
// Path convention: the configured xpub is the extended public key of the
// BIP-44 Ethereum external-chain node m/44'/60'/0'/0, and deposit address
// index i is its non-hardened child m/44'/60'/0'/0/i. This is the path
// MetaMask and most EVM wallets use, so an operator can import the matching
// mnemonic and see (and sweep) every deposit address.
package wallet

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/crypto"
)

// externalChainDepth is the BIP-32 depth of m/44'/60'/0'/0. An xpub at any
// other depth follows a different path convention, and the addresses derived
// from it would not be the ones the operator's wallet shows.
const externalChainDepth = 4

// externalChainIndex is the child number of the external chain (the "0" in
// m/44'/60'/0'/0); 1 would be the BIP-44 internal (change) chain.
const externalChainIndex = 0

// ethPath is m/44'/60'/0'/0 as child indices, applied from the master key.
var ethPath = []uint32{
	hdkeychain.HardenedKeyStart + 44, // purpose: BIP-44
	hdkeychain.HardenedKeyStart + 60, // coin type: Ethereum (SLIP-44)
	hdkeychain.HardenedKeyStart + 0,  // account 0
	externalChainIndex,               // external chain
}

// Sentinel errors, so callers (config validation, startup) can tell an
// operator precisely what is wrong with the key they supplied.
var (
	ErrEmptyXPub        = errors.New("wallet: extended public key is empty")
	ErrPrivateKey       = errors.New("wallet: got an extended PRIVATE key (xprv/tprv); configure the extended public key (xpub/tpub) instead so the API never holds private keys")
	ErrMalformedXPub    = errors.New("wallet: malformed extended public key")
	ErrUnsupportedXPub  = errors.New("wallet: unsupported extended key version; expected mainnet \"xpub\" or testnet \"tpub\"")
	ErrWrongDerivation  = errors.New("wallet: extended public key is not the m/44'/60'/0'/0 external-chain node")
	ErrHardenedIndex    = errors.New("wallet: address index must be below 2^31; hardened children cannot be derived from a public key")
	ErrUnderivableIndex = errors.New("wallet: address index derives to an invalid key (probability < 2^-127); skip to the next index")
)

// publicVersions are the extended-public-key version bytes NewDeriver accepts.
// Ethereum has no registered SLIP-132 versions, so the Bitcoin mainnet and
// testnet ones are what wallets export; the network does not change the
// derived EVM address.
var publicVersions = [][]byte{
	chaincfg.MainNetParams.HDPublicKeyID[:],
	chaincfg.TestNet3Params.HDPublicKeyID[:],
}

// privateVersions are recognised only to give a specific error: an xprv pasted
// into the config is a security mistake, not just a typo.
var privateVersions = [][]byte{
	chaincfg.MainNetParams.HDPrivateKeyID[:],
	chaincfg.TestNet3Params.HDPrivateKeyID[:],
}

// Deriver derives EVM deposit addresses from an extended public key.
//
// It is immutable after construction and safe for concurrent use.
type Deriver struct {
	key  *hdkeychain.ExtendedKey
	xpub string
}

// NewDeriver parses xpub, which must be the extended public key of
// m/44'/60'/0'/0 in mainnet ("xpub") or testnet ("tpub") encoding.
//
// It rejects extended private keys outright rather than neutering them:
// accepting one would put spending keys in the API's configuration, which is
// exactly what deriving from a public key is meant to avoid. It also rejects
// keys at a depth or child number other than m/44'/60'/0'/0 (for example the
// account-level xpub m/44'/60'/0' many wallets export), because those would
// yield addresses the operator's wallet does not show.
func NewDeriver(xpub string) (*Deriver, error) {
	key, err := parsePublicKey(xpub)
	if err != nil {
		return nil, err
	}
	if key.Depth() != externalChainDepth || key.ChildIndex() != externalChainIndex {
		return nil, fmt.Errorf("%w: got depth %d child %d, want depth %d child %d",
			ErrWrongDerivation, key.Depth(), key.ChildIndex(), externalChainDepth, externalChainIndex)
	}
	return &Deriver{key: key, xpub: key.String()}, nil
}

// parsePublicKey decodes an xpub/tpub at any depth, rejecting private keys,
// malformed input and other version bytes. NewDeriver adds the path check.
func parsePublicKey(xpub string) (*hdkeychain.ExtendedKey, error) {
	xpub = strings.TrimSpace(xpub)
	if xpub == "" {
		return nil, ErrEmptyXPub
	}
	// Check the prefix before decoding so an xprv is reported as such even
	// if it is also truncated or has a bad checksum, and so the error path
	// never echoes private material.
	if strings.HasPrefix(xpub, "xprv") || strings.HasPrefix(xpub, "tprv") {
		return nil, ErrPrivateKey
	}
	key, err := hdkeychain.NewKeyFromString(xpub)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedXPub, err)
	}
	if key.IsPrivate() || containsVersion(privateVersions, key.Version()) {
		return nil, ErrPrivateKey
	}
	if !containsVersion(publicVersions, key.Version()) {
		return nil, fmt.Errorf("%w (version bytes %x)", ErrUnsupportedXPub, key.Version())
	}
	return key, nil
}

// Address returns the deposit address for child index of the configured node,
// as a lowercase 0x-prefixed 40-hex-digit string. Lowercase (not EIP-55
// checksummed) keeps stored addresses byte-comparable with what chain
// watchers and databases see.
func (d *Deriver) Address(index uint32) (string, error) {
	if index >= hdkeychain.HardenedKeyStart {
		return "", fmt.Errorf("%w (got %d)", ErrHardenedIndex, index)
	}
	child, err := d.key.Derive(index)
	if errors.Is(err, hdkeychain.ErrInvalidChild) {
		return "", fmt.Errorf("%w (index %d)", ErrUnderivableIndex, index)
	}
	if err != nil {
		return "", fmt.Errorf("wallet: derive index %d: %w", index, err)
	}
	pub, err := child.ECPubKey()
	if err != nil {
		return "", fmt.Errorf("wallet: public key of index %d: %w", index, err)
	}
	return evmAddress(pub.SerializeUncompressed()), nil
}

// XPub returns the extended public key this Deriver was built from, in its
// canonical encoding (surrounding whitespace removed).
func (d *Deriver) XPub() string {
	return d.xpub
}

// GenerateDevXPub creates a random seed, derives m/44'/60'/0'/0 and returns its
// xpub (neutered). It backs the zero-setup embedded default so a fresh
// install can issue addresses immediately; the private material is discarded,
// so funds sent to those addresses are unrecoverable and it must never be used
// with real money.
func GenerateDevXPub() (string, error) {
	// NewMaster and hardened derivation fail with probability < 2^-127 per
	// attempt; retrying a few times with a fresh seed is the BIP-32 remedy.
	const attempts = 3
	var lastErr error
	for range attempts {
		seed, err := hdkeychain.GenerateSeed(hdkeychain.RecommendedSeedLen)
		if err != nil {
			return "", fmt.Errorf("wallet: generate seed: %w", err)
		}
		xpub, err := XPubFromSeed(seed)
		clear(seed)
		if err == nil {
			return xpub, nil
		}
		if !errors.Is(err, hdkeychain.ErrUnusableSeed) && !errors.Is(err, hdkeychain.ErrInvalidChild) {
			return "", err
		}
		lastErr = err
	}
	return "", lastErr
}

// XPubFromSeed derives the m/44'/60'/0'/0 xpub (mainnet encoding) from a
// BIP-32 seed, e.g. a BIP-39 mnemonic's 64-byte seed. Operators' tooling uses
// it to produce the value to configure; intermediate private keys are zeroed
// before returning.
func XPubFromSeed(seed []byte) (string, error) {
	return xpubAtPath(seed, ethPath)
}

// xpubAtPath derives the node at path (child indices from the master) and
// returns its mainnet extended public key. It is the single place private
// derivation happens, so the BIP-32 test vectors exercise the same code that
// XPubFromSeed runs.
func xpubAtPath(seed []byte, path []uint32) (string, error) {
	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		return "", fmt.Errorf("wallet: master key from seed: %w", err)
	}
	keys := []*hdkeychain.ExtendedKey{master}
	// Zero every private node on the way out. Neuter shares the chain code
	// slice with its parent, so the xpub is serialised (in the return
	// statement) before this runs.
	defer func() {
		for _, k := range keys {
			k.Zero()
		}
	}()
	node := master
	for depth, i := range path {
		node, err = node.Derive(i)
		if err != nil {
			return "", fmt.Errorf("wallet: derive child %d at depth %d: %w", i, depth+1, err)
		}
		keys = append(keys, node)
	}
	pub, err := node.Neuter()
	if err != nil {
		return "", fmt.Errorf("wallet: neuter derived key: %w", err)
	}
	return pub.String(), nil
}

// evmAddress is the Ethereum address of an uncompressed secp256k1 public key
// (0x04 || X || Y): the last 20 bytes of Keccak-256(X || Y), lowercase hex.
func evmAddress(uncompressed []byte) string {
	hash := crypto.Keccak256(uncompressed[1:])
	return "0x" + hex.EncodeToString(hash[len(hash)-20:])
}

func containsVersion(versions [][]byte, v []byte) bool {
	for _, want := range versions {
		if bytes.Equal(want, v) {
			return true
		}
	}
	return false
}
