package tokensig

import (
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Bytes is the signature as wallets answer eth_signTypedData_v4: r ‖ s ‖ v (65 bytes).
func (s Signature) Bytes() []byte {
	raw := make([]byte, 0, 65)
	return append(append(append(raw, s.R[:]...), s.S[:]...), s.V)
}

// Hex is Bytes in 0x-prefixed hex.
func (s Signature) Hex() string { return hexutil.Encode(s.Bytes()) }

// ParseSignature reads r ‖ s ‖ v (65 bytes, hex with 0x). A v of 0 or 1 (the recovery id some
// wallets answer) is read as 27 or 28; whether the signature is valid is Recover's to say.
func ParseSignature(s string) (Signature, error) {
	raw, err := hexutil.Decode(s)
	if err != nil || len(raw) != 65 {
		return Signature{}, fmt.Errorf("%w: not 65 bytes in hex (r ‖ s ‖ v)", ErrBadSignature)
	}
	v := raw[64]
	if v < 27 {
		v += 27
	}
	return Signature{V: v, R: common.BytesToHash(raw[:32]), S: common.BytesToHash(raw[32:64])}, nil
}
