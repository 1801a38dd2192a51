package withdrawals

import (
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Money sent to an address the service controls comes straight back into it — to a deposit
// address it even settles that address's open payment: a self-paid sale — and money sent to a
// token contract, a precompile or a system contract can never be spent again. Such recipients
// are refused with recipient_not_allowed before anything is debited.

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

// checkRecipient refuses a lowercase recipient the service controls or that cannot spend.
func (s *Service) checkRecipient(tx *store.Tx, recipient string) error {
	return s.CheckRecipient(tx, recipient, "recipientAddress")
}

// CheckRecipient is checkRecipient for another request's field (param): the address book
// saves only addresses a withdrawal could be sent to.
func (s *Service) CheckRecipient(tx *store.Tx, recipient, param string) error {
	refuse := func(why string) error {
		return domain.Invalid(domain.CodeRecipientNotAllowed, param, "%s is %s: a withdrawal must leave this service for an address that can spend it", param, why)
	}
	if common.HexToAddress(recipient).Big().Cmp(lastReservedAddress) <= 0 {
		return refuse("a precompile or reserved address")
	}
	if slices.Contains(systemContracts, recipient) {
		return refuse("a protocol system contract")
	}
	for _, a := range s.Controlled {
		if strings.EqualFold(a, recipient) {
			return refuse("this service's own wallet")
		}
	}
	for _, t := range s.Catalog.Tokens {
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
