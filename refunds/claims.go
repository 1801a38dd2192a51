package refunds

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// Claims makes and checks refunds' claim secrets. A secret is an HMAC of the refund's id under a
// key derived from the deployment's secrets key, so it is never stored: the merchant can show
// the link again and the checkout page can hand it out, and only this deployment can make one.
type Claims struct {
	key     []byte
	baseURL string
}

// NewClaims derives the claim key from the deployment's secrets key (PAYMENTS_SECRETS_KEY): a
// subkey of its own, so a claim secret never equals anything else made with that key.
func NewClaims(secretsKey []byte, publicBaseURL string) *Claims {
	mac := hmac.New(sha256.New, secretsKey)
	mac.Write([]byte("paymentsd refund-claim key v1"))
	return &Claims{key: mac.Sum(nil), baseURL: strings.TrimRight(publicBaseURL, "/")}
}

// Secret is refund id's claim secret: "rcs_" and base64url of HMAC-SHA256("refund-claim:" + id).
func (c *Claims) Secret(id uuid.UUID) string {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte("refund-claim:" + id.String()))
	return "rcs_" + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// Valid compares a presented secret with refund id's, in constant time.
func (c *Claims) Valid(id uuid.UUID, secret string) bool {
	want := c.Secret(id)
	return len(secret) == len(want) && subtle.ConstantTimeCompare([]byte(secret), []byte(want)) == 1
}

// URL is a refund's claim link while it awaits its address (nil otherwise): the hosted page, the
// secret in the fragment (a fragment is never sent to a server, nor kept in its logs).
func (c *Claims) URL(r domain.Refund) *string {
	if c == nil || r.Status != domain.RefundAwaitingAddress {
		return nil
	}
	u := c.link(r.ID)
	return &u
}

func (c *Claims) link(id uuid.UUID) string {
	return c.baseURL + "/refund/" + id.String() + "#" + c.Secret(id)
}

// The EIP-712 typed data of a claim, exactly as openapi.yaml's RefundClaimTypedData documents it:
// no verifying contract (nothing on chain checks it); the chain id in the domain and the message.
const (
	typedDomainName    = "paymentsd refund"
	typedDomainVersion = "1"
	typedPrimaryType   = "RefundClaim"
)

var typedTypes = apitypes.Types{
	"EIP712Domain":   {{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"}},
	typedPrimaryType: {{Name: "refundId", Type: "string"}, {Name: "recipient", Type: "address"}, {Name: "chainId", Type: "uint256"}},
}

// TypedData is the claim message of refund id on chainID naming recipient.
func TypedData(id uuid.UUID, chainID int64, recipient common.Address) apitypes.TypedData {
	cid := math.NewHexOrDecimal256(chainID)
	return apitypes.TypedData{Types: typedTypes, PrimaryType: typedPrimaryType,
		Domain:  apitypes.TypedDataDomain{Name: typedDomainName, Version: typedDomainVersion, ChainId: cid},
		Message: apitypes.TypedDataMessage{"refundId": id.String(), "recipient": recipient.Hex(), "chainId": new(big.Int).SetInt64(chainID)}}
}

// errSignature is the one answer to a signature that does not prove an address.
func errSignature(why string) error {
	return domain.Invalid(domain.CodeSignatureInvalid, "signature", "the signature does not prove a paying address: %s", why)
}

// Signer recovers the address that signed refund id's claim naming recipient on chainID. The
// signature is 65 bytes r ‖ s ‖ v with v 27/28 (wallets) or 0/1.
func Signer(id uuid.UUID, chainID int64, recipient common.Address, signature string) (common.Address, error) {
	sig, err := hexutil.Decode(signature)
	if err != nil || len(sig) != crypto.SignatureLength {
		return common.Address{}, errSignature("it must be 65 bytes of hex")
	}
	switch sig[64] {
	case 27, 28:
		sig[64] -= 27
	case 0, 1:
	default:
		return common.Address{}, errSignature("its v must be 27, 28, 0 or 1")
	}
	hash, _, err := apitypes.TypedDataAndHash(TypedData(id, chainID, recipient))
	if err != nil {
		return common.Address{}, err // the typed data is ours: cannot fail
	}
	pub, err := crypto.SigToPub(hash, sig)
	if err != nil {
		return common.Address{}, errSignature("it recovers no key")
	}
	return crypto.PubkeyToAddress(*pub), nil
}
