// Package recipients decides which addresses money may leave this service for — a withdrawal's
// or a refund's recipient — before anything is debited. Money sent to an address the service
// controls comes straight back into it — to a deposit address it even settles that address's
// open payment: a self-paid sale — and money sent to a token contract, a precompile or a system
// contract can never be spent again. Such recipients are refused with recipient_not_allowed.
package recipients

import (
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// lastReservedAddress bounds the range kept for precompiles (0x01–0x11 today, RIP-7212's P-256
// at 0x100 on several L2s) and future ones: no key controls an address this small.
var lastReservedAddress = big.NewInt(0xffff)

// systemContracts are protocol contracts at fixed addresses (EIP-4788 beacon roots, EIP-2935
// block hashes, EIP-7002 withdrawal and EIP-7251 consolidation requests).
var systemContracts = []string{
	"0x000f3df6d732807ef1319fb7b8bb8522d0beac02",
	"0x0000f90827f1c53a10cb7a02335b175320002935",
	"0x00000961ef480eb55e80d19ad83579a64c007002",
	"0x0000bbddc7ce488642fb579f8b00f3a590007251",
}

// Checker refuses recipients. Controlled lists the addresses this service itself holds (hot
// wallets, the backend wallet); deposit addresses are looked up in the store.
type Checker struct {
	Catalog    domain.Catalog
	Controlled []string
}

// Check refuses a lowercase recipient the service controls or that cannot spend; what names the
// payout in the message ("a withdrawal", "a refund").
func (c Checker) Check(tx *store.Tx, recipient, what string) error {
	refuse := func(why string) error {
		return domain.Invalid(domain.CodeRecipientNotAllowed, "recipientAddress", "recipientAddress is %s: %s must leave this service for an address that can spend it", why, what)
	}
	if common.HexToAddress(recipient).Big().Cmp(lastReservedAddress) <= 0 {
		return refuse("a precompile or reserved address")
	}
	if slices.Contains(systemContracts, recipient) {
		return refuse("a protocol system contract")
	}
	for _, a := range c.Controlled {
		if strings.EqualFold(a, recipient) {
			return refuse("this service's own wallet")
		}
	}
	for _, t := range c.Catalog.Tokens {
		if t.AssetType == domain.ERC20 && strings.EqualFold(t.ContractAddress, recipient) {
			return refuse("the " + t.Symbol + " token contract")
		}
	}
	deposit, err := tx.IsDepositAddress(recipient)
	if err != nil {
		return err
	}
	if deposit {
		return refuse("a deposit address of this service")
	}
	return nil
}

// Normalise accepts a 0x-prefixed EVM address in any letter case and returns it lowercase.
// EIP-55 checksums are not enforced: the contract accepts any case (see docs/decisions.md). The
// zero address burns funds and is refused.
func Normalise(a string) (string, error) {
	if !common.IsHexAddress(a) || !strings.HasPrefix(a, "0x") {
		return "", domain.Invalid(domain.CodeParameterInvalid, "recipientAddress", "recipientAddress must be a 0x-prefixed 20-byte hex address")
	}
	if common.HexToAddress(a) == (common.Address{}) {
		return "", domain.Invalid(domain.CodeParameterInvalid, "recipientAddress", "recipientAddress must not be the zero address")
	}
	return strings.ToLower(a), nil
}
