// Package tokensig owns the EIP-712 messages a token holder signs instead of paying gas: EIP-3009
// transfer authorizations (Circle's FiatToken v2: transferWithAuthorization,
// receiveWithAuthorization, cancelAuthorization) and EIP-2612 permits, in the token's domain
// {name, version, chainId, verifyingContract}. Hashing, signing and recovery are pure functions:
// no chain access, so the sweeper and the checkout's gasless payments build and check exactly
// what the token contract verifies, and tests compare them with an independent implementation.
package tokensig

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
)

// The EIP-712 type strings, as FiatToken v2 and EIP-2612 spell them: their Keccak-256 is what the
// contract hashes, so one character off and no signature verifies.
const (
	DomainType                    = "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
	TransferWithAuthorizationType = "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
	ReceiveWithAuthorizationType  = "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
	CancelAuthorizationType       = "CancelAuthorization(address authorizer,bytes32 nonce)"
	PermitType                    = "Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"
)

// Domain is a token's EIP-712 domain. Circle's USDC uses Version "2" and its name() as Name.
type Domain struct {
	Name     string
	Version  string
	ChainID  int64
	Contract common.Address
}

// Separator is the domain's hash (the token's DOMAIN_SEPARATOR()).
func (d Domain) Separator() common.Hash {
	return hashWords(typeHash(DomainType), crypto.Keccak256Hash([]byte(d.Name)), crypto.Keccak256Hash([]byte(d.Version)),
		word(big.NewInt(d.ChainID)), addressWord(d.Contract))
}

// Authorization is an EIP-3009 authorization: from lets anyone (Receive: only to) move value to to,
// once (Nonce: 32 bytes the signer picks at random), strictly between ValidAfter and ValidBefore
// (unix seconds).
type Authorization struct {
	From        common.Address
	To          common.Address
	Value       *big.Int
	ValidAfter  *big.Int
	ValidBefore *big.Int
	Nonce       common.Hash
	Receive     bool // ReceiveWithAuthorization (only to may submit it) instead of TransferWithAuthorization
}

// StructHash is the authorization's EIP-712 struct hash.
func (a Authorization) StructHash() common.Hash {
	t := TransferWithAuthorizationType
	if a.Receive {
		t = ReceiveWithAuthorizationType
	}
	return hashWords(typeHash(t), addressWord(a.From), addressWord(a.To), word(a.Value), word(a.ValidAfter),
		word(a.ValidBefore), a.Nonce)
}

// Cancellation is an EIP-3009 cancelAuthorization: the authorizer gives up a nonce not yet used.
type Cancellation struct {
	Authorizer common.Address
	Nonce      common.Hash
}

// StructHash is the cancellation's EIP-712 struct hash.
func (c Cancellation) StructHash() common.Hash {
	return hashWords(typeHash(CancelAuthorizationType), addressWord(c.Authorizer), c.Nonce)
}

// Permit is an EIP-2612 permit: owner lets spender take value, at owner's sequential Nonce
// (the token's nonces(owner)), until Deadline (unix seconds, inclusive).
type Permit struct {
	Owner    common.Address
	Spender  common.Address
	Value    *big.Int
	Nonce    *big.Int
	Deadline *big.Int
}

// StructHash is the permit's EIP-712 struct hash.
func (p Permit) StructHash() common.Hash {
	return hashWords(typeHash(PermitType), addressWord(p.Owner), addressWord(p.Spender), word(p.Value), word(p.Nonce),
		word(p.Deadline))
}

// Message is anything with an EIP-712 struct hash.
type Message interface{ StructHash() common.Hash }

// Digest is what is signed: keccak256("\x19\x01" ‖ domain separator ‖ struct hash).
func Digest(d Domain, m Message) common.Hash {
	sep, h := d.Separator(), m.StructHash()
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, sep[:], h[:])
}

// Signature is (v, r, s) as the token's functions take it: V is 27 or 28, S in the lower half
// of the curve order.
type Signature struct {
	V uint8
	R common.Hash
	S common.Hash
}

// Sign signs m in domain d with key.
func Sign(key *ecdsa.PrivateKey, d Domain, m Message) (Signature, error) {
	digest := Digest(d, m)
	sig, err := crypto.Sign(digest[:], key) // [R ‖ S ‖ recovery id], S already in the lower half
	if err != nil {
		return Signature{}, fmt.Errorf("tokensig: sign: %w", err)
	}
	return Signature{V: sig[64] + 27, R: common.BytesToHash(sig[:32]), S: common.BytesToHash(sig[32:64])}, nil
}

// ErrBadSignature: the signature is malformed (v, s out of range) or recovers no key.
var ErrBadSignature = errors.New("tokensig: invalid signature")

// Recover is the address whose key signed m in domain d, under the token's own rules: v 27 or
// 28, s at most half the curve order (the token refuses the malleable twin).
func Recover(d Domain, m Message, sig Signature) (common.Address, error) {
	if sig.V != 27 && sig.V != 28 {
		return common.Address{}, fmt.Errorf("%w: v is %d", ErrBadSignature, sig.V)
	}
	if new(big.Int).SetBytes(sig.S[:]).Cmp(halfOrder) > 0 {
		return common.Address{}, fmt.Errorf("%w: s is in the upper half of the curve order", ErrBadSignature)
	}
	digest := Digest(d, m)
	raw := make([]byte, 65)
	copy(raw, sig.R[:])
	copy(raw[32:], sig.S[:])
	raw[64] = sig.V - 27
	pub, err := crypto.SigToPub(digest[:], raw)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// halfOrder is secp256k1's order / 2, the largest s the token accepts.
var halfOrder = new(big.Int).Rsh(crypto.S256().Params().N, 1)

func typeHash(t string) common.Hash { return crypto.Keccak256Hash([]byte(t)) }

// word is a uint256 as its 32-byte big-endian word; nil is 0. Values wider than 256 bits have
// no EIP-712 encoding: they panic, as the callers build them from on-chain balances and times.
func word(v *big.Int) common.Hash {
	if v == nil {
		return common.Hash{}
	}
	if v.Sign() < 0 || v.BitLen() > 256 {
		panic(fmt.Sprintf("tokensig: %v is not a uint256", v))
	}
	return common.BytesToHash(math.U256Bytes(new(big.Int).Set(v)))
}

func addressWord(a common.Address) common.Hash { return common.BytesToHash(a[:]) }

func hashWords(ws ...common.Hash) common.Hash {
	buf := make([]byte, 0, 32*len(ws))
	for _, w := range ws {
		buf = append(buf, w[:]...)
	}
	return crypto.Keccak256Hash(buf)
}
