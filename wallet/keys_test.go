package wallet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"
)

// The public test mnemonic's account 0 is Hardhat's and Anvil's well-known first account.
const testMnemonic = "test test test test test test test test test test test junk"

func TestKeysSignForTheAddressesTheXPubDerives(t *testing.T) {
	k, err := KeysFromMnemonic(testMnemonic)
	require.NoError(t, err)
	d, err := k.Deriver()
	require.NoError(t, err)
	for _, i := range []uint32{0, 1, 9, 1000, 1<<31 - 1} {
		priv, err := k.Key(i)
		require.NoError(t, err)
		addr, err := d.Address(i)
		require.NoError(t, err)
		require.Equal(t, addr, strings.ToLower(crypto.PubkeyToAddress(priv.PublicKey).Hex()), "index %d", i)
	}
	a0, _ := d.Address(0)
	require.Equal(t, "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", a0)
	_, err = k.Key(1 << 31)
	require.ErrorIs(t, err, ErrHardenedIndex)
	require.NotContains(t, k.String(), "xprv")
}

func TestKeysFromXPrvAtMasterOrExternalChain(t *testing.T) {
	k, err := KeysFromMnemonic(testMnemonic)
	require.NoError(t, err)
	node, err := KeysFromXPrv(k.node.String())
	require.NoError(t, err)
	require.Equal(t, k.XPub(), node.XPub())
	require.True(t, node.Matches(k.XPub()))

	pub, err := hdkeychain.NewKeyFromString(k.XPub())
	require.NoError(t, err)
	tpub, err := pub.CloneWithVersion(chaincfg.TestNet3Params.HDPublicKeyID[:])
	require.NoError(t, err)
	require.True(t, k.Matches(tpub.String()), "the same key in testnet encoding")
	require.False(t, k.Matches("xpub-garbage"))

	seed := []byte(strings.Repeat("s", 32))
	fromSeed, err := KeysFromSeed(seed)
	require.NoError(t, err)
	require.False(t, fromSeed.Matches(k.XPub()))

	for _, bad := range []string{"", "xprv-nope", k.XPub()} {
		_, err := KeysFromXPrv(bad)
		require.ErrorIs(t, err, ErrMalformedXPrv, bad)
		if bad != "" {
			require.NotContains(t, err.Error(), bad)
		}
	}
}

func TestKeysFromMnemonicChecksTheChecksum(t *testing.T) {
	_, err := KeysFromMnemonic("test test test test test test test test test test test test")
	require.ErrorIs(t, err, ErrBadMnemonic)
	_, err = KeysFromMnemonic("  test test test test test test\ntest test test test test junk\n")
	require.NoError(t, err, "whitespace and newlines of a file are fine")
}

func TestDevKeysFileIsCreatedOnceAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "dev-deposit.key")
	k1, created, err := LoadOrCreateDevKeys(path)
	require.NoError(t, err)
	require.True(t, created)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	k2, created, err := LoadOrCreateDevKeys(path)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, k1.XPub(), k2.XPub())

	require.NoError(t, os.WriteFile(path, []byte("garbage"), 0o600))
	_, _, err = LoadOrCreateDevKeys(path)
	require.ErrorIs(t, err, ErrMalformedXPrv)
}
