package payouts

import (
	"context"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/tokensig"
)

// SweepMethod is how a deposit address's token balance reaches the hot wallet.
type SweepMethod string

// The sweep methods. The batched ones send no native token to the deposit address: its key
// signs, the hot wallet submits many addresses' pulls in one transaction to the SweepBatch
// contract (devnet/contracts/Sweep.sol) and pays the gas.
const (
	// SweepTopUp: the hot wallet sends the address gas, then the address sends the token (two
	// transactions per address; what the gas did not burn stays there).
	SweepTopUp SweepMethod = "topup"
	// SweepEIP7702: the deposit account delegates to SweepDelegate (an EIP-7702 authorization
	// in the batch transaction, once per address), whose sweep the batch calls. Any ERC-20.
	SweepEIP7702 SweepMethod = "eip7702"
	// SweepEIP3009: the deposit key signs transferWithAuthorization to the hot wallet.
	SweepEIP3009 SweepMethod = "eip3009"
	// SweepEIP2612: the deposit key signs a permit to the batch contract, which pulls.
	SweepEIP2612 SweepMethod = "eip2612"
)

// DefaultSweepMethods is the order the batched methods are tried in, best first as measured on
// the devnet's receipts (docs/benchmarks.md): EIP-7702 for every ERC-20 where the chain has it,
// then EIP-3009, then EIP-2612; a token none covers is topped up.
var DefaultSweepMethods = []SweepMethod{SweepEIP7702, SweepEIP3009, SweepEIP2612}

// ChooseSweepMethod is the first of prefs that applies to tok on a chain with the sweep
// contracts (hasContracts) and EIP-7702 (has7702), else SweepTopUp. The native token is always
// swept by its own transfer (SweepTopUp's path, without a top-up).
func ChooseSweepMethod(prefs []SweepMethod, tok domain.Token, hasContracts, has7702 bool) SweepMethod {
	if tok.AssetType != domain.ERC20 || !hasContracts {
		return SweepTopUp
	}
	for _, p := range prefs {
		switch {
		case p == SweepEIP7702 && has7702, p == SweepEIP3009 && tok.EIP3009, p == SweepEIP2612 && tok.EIP2612:
			return p
		case p == SweepTopUp:
			return p
		}
	}
	return SweepTopUp
}

// batchABI is SweepBatch's ABI (the devnet embeds the compiled contract; any chain runs the same).
var batchABI = devnet.SweepBatchABI()

// collectorABI reads collector() of both sweep contracts.
var collectorABI = mustABI(`[{"type":"function","name":"collector","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]}]`)

// tokenViewsABI is what the sweeper reads of a token to sign a permit: its holders' nonces.
var tokenViewsABI = mustABI(`[
 {"type":"function","name":"nonces","stateMutability":"view","inputs":[{"name":"owner","type":"address"}],"outputs":[{"name":"","type":"uint256"}]}
]`)

func mustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(err)
	}
	return a
}

// sweepContracts reports whether this chain's sweep contracts are configured, deployed and pay
// this manager's hot wallet; why not, when they do not (the batched methods then wait and the
// tokens are topped up as before).
func (m *Manager) sweepContracts(ctx context.Context) (bool, string) {
	if m.Config.SweepBatch == "" {
		return false, ""
	}
	for _, addr := range []string{m.Config.SweepBatch, m.Config.SweepDelegate} {
		if addr == "" {
			continue
		}
		got, err := m.callAddress(ctx, common.HexToAddress(addr), "collector")
		if err != nil {
			return false, fmt.Sprintf("the sweep contract %s does not answer collector(): %v", addr, err)
		}
		if got != m.Wallet.Address() {
			return false, fmt.Sprintf("the sweep contract %s pays %s, not this hot wallet %s", addr,
				strings.ToLower(got.Hex()), strings.ToLower(m.Wallet.Address().Hex()))
		}
	}
	return true, ""
}

func (m *Manager) callAddress(ctx context.Context, to common.Address, method string) (common.Address, error) {
	data, err := collectorABI.Pack(method)
	if err != nil {
		return common.Address{}, err
	}
	out, err := m.Chain.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil {
		return common.Address{}, err
	}
	if len(out) != 32 {
		return common.Address{}, fmt.Errorf("%s() answered %d bytes", method, len(out))
	}
	return common.BytesToAddress(out), nil
}

// tokenDomain is tok's EIP-712 domain as its contract states it (chain.TokenDomain).
func (m *Manager) tokenDomain(ctx context.Context, tok domain.Token) (tokensig.Domain, error) {
	d, err := chain.TokenDomain(ctx, m.Chain, m.Info.ID, common.HexToAddress(tok.ContractAddress))
	if err != nil {
		return d, fmt.Errorf("%s: %w", tok.Symbol, err)
	}
	return d, nil
}
