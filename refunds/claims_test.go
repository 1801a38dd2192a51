package refunds_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/refunds"
)

func TestClaimSecrets(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	c := refunds.NewClaims(key, "https://pay.example/")
	id, other := uuid.New(), uuid.New()
	s := c.Secret(id)
	assert.True(t, strings.HasPrefix(s, "rcs_"))
	assert.Len(t, s, 4+43, "rcs_ and 32 bytes of base64url without padding")
	assert.Equal(t, s, refunds.NewClaims(key, "https://elsewhere.example").Secret(id), "derived, never stored: the same every time")
	assert.NotEqual(t, s, c.Secret(other))
	assert.NotEqual(t, s, refunds.NewClaims([]byte(strings.Repeat("j", 32)), "").Secret(id), "another deployment's key, another secret")
	assert.True(t, c.Valid(id, s))
	assert.False(t, c.Valid(other, s))
	assert.False(t, c.Valid(id, s[:len(s)-1]))
	assert.False(t, c.Valid(id, ""))

	r := domain.Refund{ID: id, Status: domain.RefundAwaitingAddress}
	u := c.URL(r)
	require.NotNil(t, u)
	assert.Equal(t, "https://pay.example/refund/"+id.String()+"#"+s, *u)
	r.Status = domain.RefundPending
	assert.Nil(t, c.URL(r), "no link once it has its address")
	var none *refunds.Claims
	assert.Nil(t, none.URL(domain.Refund{Status: domain.RefundAwaitingAddress}))
}

// The claim's hash, built here by hand from EIP-712's definition and the types openapi.yaml
// documents, equals what TypedData hashes: any wallet signing the documented typed data signs
// what the service checks.
func TestTypedDataIsTheDocumentedOne(t *testing.T) {
	id, recipient, chainID := uuid.MustParse("01a20b10-0000-7000-8000-000000000001"), common.HexToAddress("0x5aeda56215b167893e80b4fe645ba6d5bab767de"), int64(1337)
	word := func(n int64) []byte { return common.LeftPadBytes(big.NewInt(n).Bytes(), 32) }
	kec := func(parts ...[]byte) []byte { return crypto.Keccak256(parts...) }
	domainSep := kec(kec([]byte("EIP712Domain(string name,string version,uint256 chainId)")), kec([]byte("paymentsd refund")), kec([]byte("1")), word(chainID))
	structHash := kec(kec([]byte("RefundClaim(string refundId,address recipient,uint256 chainId)")), kec([]byte(id.String())),
		common.LeftPadBytes(recipient.Bytes(), 32), word(chainID))
	want := kec([]byte{0x19, 0x01}, domainSep, structHash)
	got, _, err := apitypes.TypedDataAndHash(refunds.TypedData(id, chainID, recipient))
	require.NoError(t, err)
	assert.Equal(t, hexutil.Encode(want), hexutil.Encode(got))
}

func TestSigner(t *testing.T) {
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	who := crypto.PubkeyToAddress(key.PublicKey)
	id, to := uuid.New(), common.HexToAddress("0x5aeda56215b167893e80b4fe645ba6d5bab767de")
	hash, _, err := apitypes.TypedDataAndHash(refunds.TypedData(id, 8453, to))
	require.NoError(t, err)
	sig, err := crypto.Sign(hash, key)
	require.NoError(t, err)
	for _, v := range []byte{0, 27} { // both conventions of v
		s := append([]byte(nil), sig...)
		s[64] += v
		got, err := refunds.Signer(id, 8453, to, hexutil.Encode(s))
		require.NoError(t, err)
		assert.Equal(t, who, got)
	}
	// Another refund, chain or recipient recovers someone else.
	for _, c := range []struct {
		id    uuid.UUID
		chain int64
		to    common.Address
	}{{uuid.New(), 8453, to}, {id, 1, to}, {id, 8453, common.HexToAddress("0x01")}} {
		got, err := refunds.Signer(c.id, c.chain, c.to, hexutil.Encode(sig))
		if err == nil {
			assert.NotEqual(t, who, got)
		}
	}
	bad := append([]byte(nil), sig...)
	bad[64] = 29
	for _, s := range []string{hexutil.Encode(bad), hexutil.Encode(sig[:64]), "0xzz", ""} {
		_, err := refunds.Signer(id, 8453, to, s)
		var invalid *domain.InvalidInputError
		require.ErrorAs(t, err, &invalid, s)
		assert.Equal(t, domain.CodeSignatureInvalid, invalid.Code)
		assert.Equal(t, "signature", invalid.Param)
	}
}
