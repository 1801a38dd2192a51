package wallet

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/hex"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const h = hdkeychain.HardenedKeyStart

// Seeds and extended keys below are copied verbatim from the "Test Vectors"
// section of BIP-0032 (github.com/bitcoin/bips, bip-0032.mediawiki).
const (
	bip32Vec1Seed = "000102030405060708090a0b0c0d0e0f"
	bip32Vec2Seed = "fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542"

	vec1M       = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
	vec1M0H     = "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw"
	vec1M0H1    = "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ"
	vec1M0H12H2 = "xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV" // m/0H/1/2H/2
	vec1M0H12H  = "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5" // m/0H/1/2H
	vec1MPrv    = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
	vec2M       = "xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB"
	vec2M0      = "xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH"
	vec2M0H     = "xpub6ASAVgeehLbnwdqV6UKMHVzgqAG8Gr6riv3Fxxpj8ksbH9ebxaEyBLZ85ySDhKiLDBrQSARLq1uNRts8RuJiHjaDMBU4Zn9h8LZNnBC5y4a" // m/0/2147483647H
)

// abandonMnemonic is the BIP-39 all-zero-entropy mnemonic whose Ethereum
// addresses are published by MetaMask, Trezor, Ian Coleman's tool and others.
const abandonMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

var lowerHexAddr = regexp.MustCompile(`^0x[0-9a-f]{40}$`)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// bip39Seed is the BIP-39 seed: PBKDF2-HMAC-SHA512(mnemonic, "mnemonic"+passphrase, 2048, 64).
func bip39Seed(t *testing.T, mnemonic, passphrase string) []byte {
	t.Helper()
	seed, err := pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"+passphrase), 2048, 64)
	require.NoError(t, err)
	return seed
}

// abandonNode returns the m/44'/60'/0'/0 extended key of abandonMnemonic.
func abandonNode(t *testing.T) *hdkeychain.ExtendedKey {
	t.Helper()
	xpub, err := XPubFromSeed(bip39Seed(t, abandonMnemonic, ""))
	require.NoError(t, err)
	key, err := hdkeychain.NewKeyFromString(xpub)
	require.NoError(t, err)
	return key
}

func TestBIP32VectorsPrivateDerivation(t *testing.T) {
	tests := []struct {
		name string
		seed string
		path []uint32
		want string
	}{
		{"vector 1 m", bip32Vec1Seed, nil, vec1M},
		{"vector 1 m/0H", bip32Vec1Seed, []uint32{h}, vec1M0H},
		{"vector 1 m/0H/1", bip32Vec1Seed, []uint32{h, 1}, vec1M0H1},
		{"vector 1 m/0H/1/2H", bip32Vec1Seed, []uint32{h, 1, h + 2}, vec1M0H12H},
		{"vector 1 m/0H/1/2H/2", bip32Vec1Seed, []uint32{h, 1, h + 2, 2}, vec1M0H12H2},
		{"vector 2 m", bip32Vec2Seed, nil, vec2M},
		{"vector 2 m/0", bip32Vec2Seed, []uint32{0}, vec2M0},
		{"vector 2 m/0/2147483647H", bip32Vec2Seed, []uint32{0, h + 2147483647}, vec2M0H},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := xpubAtPath(mustHex(t, tt.seed), tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestBIP32VectorsPublicDerivation checks the operation Deriver relies on:
// deriving a non-hardened child from an xpub alone must give the same key as
// private derivation, per the published vectors.
func TestBIP32VectorsPublicDerivation(t *testing.T) {
	tests := []struct {
		name   string
		parent string
		index  uint32
		want   string
	}{
		{"vector 1 m/0H -> m/0H/1", vec1M0H, 1, vec1M0H1},
		{"vector 1 m/0H/1/2H -> m/0H/1/2H/2", vec1M0H12H, 2, vec1M0H12H2},
		{"vector 2 m -> m/0", vec2M, 0, vec2M0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, err := parsePublicKey(tt.parent)
			require.NoError(t, err)
			child, err := parent.Derive(tt.index)
			require.NoError(t, err)
			assert.False(t, child.IsPrivate())
			assert.Equal(t, tt.want, child.String())
		})
	}
}

func TestBIP39SeedVector(t *testing.T) {
	// Published BIP-39 seed of abandonMnemonic with an empty passphrase; pins
	// the PBKDF2 helper so a failure below is attributable to derivation.
	want := "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc1" +
		"9a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"
	assert.Equal(t, want, hex.EncodeToString(bip39Seed(t, abandonMnemonic, "")))
}

func TestEthereumAddressVectors(t *testing.T) {
	xpub, err := XPubFromSeed(bip39Seed(t, abandonMnemonic, ""))
	require.NoError(t, err)
	// m/44'/60'/0'/0 xpub of abandonMnemonic, as asserted in BlueWallet's
	// test suite (EvmWallet); pins the node Deriver starts from.
	assert.Equal(t, "xpub6EF8jXqFeFEW5bwMU7RpQtHkzE4KJxcqJtvkCjJumzW8CPpacXkb92ek4WzLQXjL93HycJwTPUAcuNxCqFPKKU5m5Z2Vq4nCyh5CyPeBFFr", xpub)
	d, err := NewDeriver(xpub)
	require.NoError(t, err)
	assert.Equal(t, xpub, d.XPub())

	// m/44'/60'/0'/0/i of abandonMnemonic, as shown by MetaMask and others.
	tests := []struct {
		index uint32
		want  string
	}{
		{0, "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
		{1, "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"},
		{2, "0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A"},
	}
	for _, tt := range tests {
		got, err := d.Address(tt.index)
		require.NoError(t, err, "index %d", tt.index)
		assert.Equal(t, strings.ToLower(tt.want), got, "index %d", tt.index)
		assert.Regexp(t, lowerHexAddr, got)
	}
}

func TestNewDeriverAcceptsTestnetAndTrimsSpace(t *testing.T) {
	node := abandonNode(t)
	tpubKey, err := node.CloneWithVersion(chaincfg.TestNet3Params.HDPublicKeyID[:])
	require.NoError(t, err)
	tpub := tpubKey.String()
	require.True(t, strings.HasPrefix(tpub, "tpub"), tpub)

	for _, in := range []string{tpub, "  " + tpub + "\n"} {
		d, err := NewDeriver(in)
		require.NoError(t, err)
		assert.Equal(t, tpub, d.XPub())
		// The version bytes only name a network; the EVM address is the same.
		got, err := d.Address(0)
		require.NoError(t, err)
		assert.Equal(t, "0x9858effd232b4033e47d90003d41ec34ecaeda94", got)
	}
}

func TestNewDeriverRejects(t *testing.T) {
	node := abandonNode(t)
	withVersion := func(version []byte) string {
		k, err := node.CloneWithVersion(version)
		require.NoError(t, err)
		return k.String()
	}
	// SLIP-132 zpub version bytes: a real, checksummed key of the wrong kind.
	zpub := withVersion([]byte{0x04, 0xb2, 0x47, 0x46})

	seed := bip39Seed(t, abandonMnemonic, "")
	accountXPub, err := xpubAtPath(seed, []uint32{h + 44, h + 60, h})
	require.NoError(t, err)
	changeXPub, err := xpubAtPath(seed, []uint32{h + 44, h + 60, h, 1})
	require.NoError(t, err)

	// Flip the last character: still base58, but the checksum no longer matches.
	good, err := XPubFromSeed(seed)
	require.NoError(t, err)
	last := good[len(good)-1:]
	flip := map[bool]string{true: "1", false: "2"}[last != "1"]
	badChecksum := good[:len(good)-1] + flip

	tests := []struct {
		name  string
		input string
		want  error
	}{
		{"empty", "", ErrEmptyXPub},
		{"whitespace", " \t\n", ErrEmptyXPub},
		{"xprv (BIP-32 vector 1 m)", vec1MPrv, ErrPrivateKey},
		{"truncated xprv", vec1MPrv[:40], ErrPrivateKey},
		{"garbage", "not-an-extended-key", ErrMalformedXPub},
		{"non-base58 characters", strings.Repeat("0OIl", 28), ErrMalformedXPub},
		{"ethereum address", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", ErrMalformedXPub},
		{"bad checksum", badChecksum, ErrMalformedXPub},
		{"truncated xpub", good[:len(good)-5], ErrMalformedXPub},
		{"zpub version", zpub, ErrUnsupportedXPub},
		{"master xpub (depth 0)", vec1M, ErrWrongDerivation},
		{"account xpub m/44'/60'/0'", accountXPub, ErrWrongDerivation},
		{"change chain m/44'/60'/0'/1", changeXPub, ErrWrongDerivation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDeriver(tt.input)
			require.ErrorIs(t, err, tt.want)
			assert.Nil(t, d)
			if tt.want == ErrPrivateKey {
				assert.NotContains(t, err.Error(), tt.input, "error must not echo private key material")
			}
		})
	}
}

func TestAddressIndexBounds(t *testing.T) {
	d, err := NewDeriver(abandonNode(t).String())
	require.NoError(t, err)

	for _, index := range []uint32{h, h + 1, math.MaxUint32} {
		_, err := d.Address(index)
		assert.ErrorIs(t, err, ErrHardenedIndex, "index %d", index)
	}
	got, err := d.Address(h - 1)
	require.NoError(t, err)
	assert.Regexp(t, lowerHexAddr, got)
}

func TestGenerateDevXPub(t *testing.T) {
	seen := map[string]bool{}
	addrs := map[string]bool{}
	for range 3 {
		xpub, err := GenerateDevXPub()
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(xpub, "xpub"), xpub)
		require.False(t, seen[xpub], "GenerateDevXPub repeated a key")
		seen[xpub] = true

		d, err := NewDeriver(xpub)
		require.NoError(t, err)
		assert.Equal(t, xpub, d.XPub())
		for i := range uint32(3) {
			a, err := d.Address(i)
			require.NoError(t, err)
			assert.Regexp(t, lowerHexAddr, a)
			assert.False(t, addrs[a], "address %s repeated", a)
			addrs[a] = true
		}
	}
}

func TestXPubFromSeedRejectsBadSeedLength(t *testing.T) {
	for _, n := range []int{0, 15, 65} {
		_, err := XPubFromSeed(make([]byte, n))
		assert.ErrorIs(t, err, hdkeychain.ErrInvalidSeedLen, "len %d", n)
	}
}

// TestAddressConcurrent backs the "safe for concurrent use" claim; run with
// -race to make it meaningful.
func TestAddressConcurrent(t *testing.T) {
	d, err := NewDeriver(abandonNode(t).String())
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := d.Address(0)
			assert.NoError(t, err)
			assert.Equal(t, "0x9858effd232b4033e47d90003d41ec34ecaeda94", got)
		})
	}
	wg.Wait()
}
