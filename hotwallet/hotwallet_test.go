package hotwallet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/hotwallet"
)

const keyHex = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" // hardhat account 1

func TestFromHexAndKeystore(t *testing.T) {
	w, err := hotwallet.FromHex("0x" + keyHex)
	require.NoError(t, err)
	assert.Equal(t, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", w.Address().Hex())
	w2, err := hotwallet.FromHex(keyHex + "\n")
	require.NoError(t, err)
	assert.Equal(t, w.Address(), w2.Address())

	// The key never shows in any formatting of the wallet.
	for _, s := range []string{fmt.Sprint(w), fmt.Sprintf("%v %+v %#v %s", w, w, w, w)} {
		assert.NotContains(t, strings.ToLower(s), keyHex)
	}
	_, err = hotwallet.FromHex("0x1234" + keyHex[:10])
	require.Error(t, err)
	assert.NotContains(t, err.Error(), keyHex[:10], "the error never repeats the input")

	// go-ethereum's keystore format, with a password file.
	dir := t.TempDir()
	k, err := crypto.HexToECDSA(keyHex)
	require.NoError(t, err)
	blob, err := keystore.EncryptKey(&keystore.Key{Id: uuid.New(), Address: crypto.PubkeyToAddress(k.PublicKey), PrivateKey: k},
		"s3cret", keystore.LightScryptN, keystore.LightScryptP)
	require.NoError(t, err)
	ks, pw := filepath.Join(dir, "key.json"), filepath.Join(dir, "pass")
	require.NoError(t, os.WriteFile(ks, blob, 0o600))
	require.NoError(t, os.WriteFile(pw, []byte("s3cret\n"), 0o600))
	w3, err := hotwallet.FromKeystore(ks, pw)
	require.NoError(t, err)
	assert.Equal(t, w.Address(), w3.Address())
	require.NoError(t, os.WriteFile(pw, []byte("wrong"), 0o600))
	_, err = hotwallet.FromKeystore(ks, pw)
	assert.Error(t, err)
}
