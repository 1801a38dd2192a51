package wallet

import (
	"bytes"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/tyler-smith/go-bip39"

	"github.com/paymentsd/paymentsd/internal/keyfile"
)

// Keys is the private half of the deposit key: the extended private key of m/44'/60'/0'/0,
// from which each deposit address's signing key is derived. Only a process that sweeps (a
// worker) holds it; the API derives addresses from the xpub alone. It never prints itself.
type Keys struct {
	node *hdkeychain.ExtendedKey
	xpub string
}

// Errors of the private deposit key, which never repeat the input.
var (
	ErrMalformedXPrv = errors.New("wallet: PAYMENTS_DEPOSIT_XPRV is not an extended private key (xprv/tprv) of the master or of m/44'/60'/0'/0")
	ErrBadMnemonic   = errors.New("wallet: the deposit mnemonic is not a valid BIP-39 mnemonic (word list or checksum)")
	ErrKeyMismatch   = errors.New("wallet: the deposit private key does not belong to the configured extended public key")
)

// KeysFromXPrv reads an extended private key: the master (depth 0) or the m/44'/60'/0'/0 node
// itself.
func KeysFromXPrv(xprv string) (*Keys, error) {
	key, err := hdkeychain.NewKeyFromString(strings.TrimSpace(xprv))
	if err != nil || !key.IsPrivate() {
		return nil, ErrMalformedXPrv
	}
	switch {
	case key.Depth() == 0:
		return keysFromMaster(key)
	case key.Depth() == externalChainDepth && key.ChildIndex() == externalChainIndex:
		return newKeys(key)
	}
	return nil, fmt.Errorf("%w (depth %d)", ErrMalformedXPrv, key.Depth())
}

// KeysFromMnemonic derives the deposit key from a BIP-39 mnemonic (no passphrase), checking its
// words and checksum: a mistyped word would otherwise derive another wallet silently.
func KeysFromMnemonic(mnemonic string) (*Keys, error) {
	words := strings.Join(strings.Fields(mnemonic), " ")
	seed, err := bip39.NewSeedWithErrorChecking(words, "")
	if err != nil {
		return nil, ErrBadMnemonic
	}
	defer clear(seed)
	return KeysFromSeed(seed)
}

// KeysFromMnemonicFile reads a mnemonic from a file (PAYMENTS_DEPOSIT_MNEMONIC_FILE).
func KeysFromMnemonicFile(path string) (*Keys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("deposit mnemonic file: %w", err)
	}
	defer clear(b)
	return KeysFromMnemonic(string(b))
}

// KeysFromSeed derives the deposit key from a BIP-32 seed.
func KeysFromSeed(seed []byte) (*Keys, error) {
	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		return nil, fmt.Errorf("wallet: master key from seed: %w", err)
	}
	return keysFromMaster(master)
}

func keysFromMaster(master *hdkeychain.ExtendedKey) (*Keys, error) {
	node := master
	for depth, i := range ethPath {
		next, err := node.Derive(i)
		if err != nil {
			return nil, fmt.Errorf("wallet: derive child %d at depth %d: %w", i, depth+1, err)
		}
		node = next
	}
	return newKeys(node)
}

func newKeys(node *hdkeychain.ExtendedKey) (*Keys, error) {
	pub, err := node.Neuter()
	if err != nil {
		return nil, err
	}
	return &Keys{node: node, xpub: pub.String()}, nil
}

// GenerateDevKeys makes a random deposit key for the embedded development default.
func GenerateDevKeys() (*Keys, error) {
	seed, err := hdkeychain.GenerateSeed(hdkeychain.RecommendedSeedLen)
	if err != nil {
		return nil, fmt.Errorf("wallet: generate seed: %w", err)
	}
	defer clear(seed)
	return KeysFromSeed(seed)
}

// LoadOrCreateDevKeys reads the development deposit key from path, or creates it there (mode
// 0600; see keyfile.LoadOrCreate).
func LoadOrCreateDevKeys(path string) (*Keys, bool, error) {
	var made *Keys
	b, created, err := keyfile.LoadOrCreate(path, func() ([]byte, error) {
		k, err := GenerateDevKeys()
		if err != nil {
			return nil, err
		}
		made = k
		return []byte(k.node.String() + "\n"), nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("development deposit key file: %w", err)
	}
	defer clear(b)
	if created {
		return made, true, nil
	}
	k, err := KeysFromXPrv(string(b))
	if err != nil {
		return nil, false, fmt.Errorf("development deposit key file %s: %w", path, err)
	}
	return k, false, nil
}

// XPub is the extended public key of the same node: what the API derives addresses from.
func (k *Keys) XPub() string { return k.xpub }

// Matches reports whether these keys are the private half of xpub: the same public key and
// chain code, whatever the encoding (xpub or tpub).
func (k *Keys) Matches(xpub string) bool {
	other, err := parsePublicKey(xpub)
	if err != nil {
		return false
	}
	mine, err := k.node.Neuter()
	if err != nil {
		return false
	}
	a, errA := mine.ECPubKey()
	b, errB := other.ECPubKey()
	return errA == nil && errB == nil && a.IsEqual(b) && bytes.Equal(mine.ChainCode(), other.ChainCode()) &&
		mine.Depth() == other.Depth() && mine.ChildIndex() == other.ChildIndex()
}

// Deriver derives the same addresses from the public half.
func (k *Keys) Deriver() (*Deriver, error) { return NewDeriver(k.xpub) }

// Key is the signing key of deposit address index.
func (k *Keys) Key(index uint32) (*ecdsa.PrivateKey, error) {
	if index >= hdkeychain.HardenedKeyStart {
		return nil, fmt.Errorf("%w (got %d)", ErrHardenedIndex, index)
	}
	child, err := k.node.Derive(index)
	if err != nil {
		return nil, fmt.Errorf("wallet: derive index %d: %w", index, err)
	}
	defer child.Zero()
	priv, err := child.ECPrivKey()
	if err != nil {
		return nil, fmt.Errorf("wallet: private key of index %d: %w", index, err)
	}
	return crypto.ToECDSA(priv.Serialize())
}

// String never shows the key.
func (k *Keys) String() string { return "deposit keys of " + k.xpub[:16] + "…" }

// GoString never shows the key (%#v).
func (k *Keys) GoString() string { return k.String() }
