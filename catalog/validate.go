package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/paymentsd/paymentsd/domain"
)

// ZeroAddress is a native token's contract address.
const ZeroAddress = "0x0000000000000000000000000000000000000000"

var (
	caip2RE    = regexp.MustCompile(`^eip155:[1-9][0-9]{0,17}$`) // canonical: no sign, no leading zero
	contractRE = regexp.MustCompile(`^0x[0-9a-f]{40}$`)          // lowercase only
)

// maxDecimals bounds decimals: 18 is the EVM's usual, and anything past 36 is a typo, not a token.
const maxDecimals = 36

// NativeTokenID is the CAIP-19 id of a chain's native token (slip44:60 on every EVM chain here,
// as the ids stored since the first release are).
func NativeTokenID(chainID int64) string { return fmt.Sprintf("eip155:%d/slip44:60", chainID) }

// ERC20TokenID is the CAIP-19 id of an ERC-20 token.
func ERC20TokenID(chainID int64, contract string) string {
	return fmt.Sprintf("eip155:%d/erc20:%s", chainID, strings.ToLower(contract))
}

// Validate checks the whole catalogue and reports every problem found, each naming its entry.
func (f File) Validate() error {
	var errs []error
	chains := map[string]bool{}
	for i, c := range f.Chains {
		where := fmt.Sprintf("chains[%d] %s", i, c.ChainID)
		fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(where+": "+format, args...)) }
		id, ok := chainNumber(c.ChainID)
		if !ok {
			fail("chainId must be CAIP-2 eip155:<decimal id>")
		}
		if chains[c.ChainID] {
			fail("duplicate chainId")
		}
		chains[c.ChainID] = true
		if strings.TrimSpace(c.Name) == "" || strings.TrimSpace(c.NativeSymbol) == "" {
			fail("name and nativeSymbol are required")
		}
		if c.NativeDecimals < 0 || c.NativeDecimals > maxDecimals {
			fail("nativeDecimals %d out of 0..%d", c.NativeDecimals, maxDecimals)
		}
		if c.Confirmations < 1 {
			fail("confirmations must be at least 1")
		}
		if c.ConvenienceFeeCents < 0 {
			fail("convenienceFeeCents must not be negative")
		}
		if c.GaslessFeeCents < 0 {
			fail("gaslessFeeCents must not be negative")
		}
		if c.BlockExplorerURL != "" {
			if u, err := url.Parse(c.BlockExplorerURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				fail("blockExplorerUrl must be an http(s) URL")
			}
		}
		for _, err := range c.validateTokens(id) {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
}

func (c Chain) validateTokens(chainID int64) []error {
	var errs []error
	ids, contracts, natives := map[string]bool{}, map[string]bool{}, 0
	for j, t := range c.Tokens {
		fail := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("tokens[%d] %s: "+format, append([]any{j, t.ID}, args...)...))
		}
		if ids[t.ID] {
			fail("duplicate id")
		}
		ids[t.ID] = true
		if contracts[t.ContractAddress] {
			fail("duplicate contractAddress")
		}
		contracts[t.ContractAddress] = true
		if strings.TrimSpace(t.Symbol) == "" || strings.TrimSpace(t.MarketAPIID) == "" {
			fail("symbol and marketApiId are required")
		}
		if t.Decimals < 0 || t.Decimals > maxDecimals {
			fail("decimals %d out of 0..%d", t.Decimals, maxDecimals)
		}
		switch domain.TokenType(t.Type) {
		case domain.Stablecoin, domain.Volatile:
		default:
			fail("type must be stablecoin or volatile")
		}
		switch domain.TokenStatus(t.Status) {
		case domain.TokenActive, domain.TokenDeprecated, domain.TokenBlocked:
		default:
			fail("status must be active, deprecated or blocked")
		}
		switch domain.AssetType(t.AssetType) {
		case domain.Native:
			natives++
			if t.ContractAddress != ZeroAddress {
				fail("a native token's contractAddress is the zero address")
			}
			if t.ID != NativeTokenID(chainID) {
				fail("id must be %s", NativeTokenID(chainID))
			}
			if t.Symbol != c.NativeSymbol || t.Decimals != c.NativeDecimals {
				fail("a native token's symbol and decimals are the chain's nativeSymbol and nativeDecimals")
			}
			if t.EIP3009 || t.EIP2612 {
				fail("a native token has no contract: eip3009 and eip2612 must be false")
			}
		case domain.ERC20:
			if !contractRE.MatchString(t.ContractAddress) || t.ContractAddress == ZeroAddress {
				fail("contractAddress must be a lowercase 0x address, not the zero address")
			} else if t.ID != ERC20TokenID(chainID, t.ContractAddress) {
				fail("id must be %s", ERC20TokenID(chainID, t.ContractAddress))
			}
		default:
			fail("assetType must be native or erc20")
		}
	}
	if natives != 1 {
		errs = append(errs, fmt.Errorf("needs exactly one native token (has %d)", natives))
	}
	return errs
}

func chainNumber(caip2 string) (int64, bool) {
	if !caip2RE.MatchString(caip2) {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(caip2, "eip155:"), 10, 64)
	return n, err == nil
}

// Domain is the catalogue as the store keeps it: chains ordered by id and every token.
func (f File) Domain() ([]domain.Chain, []domain.Token) {
	var chains []domain.Chain
	var tokens []domain.Token
	for _, c := range f.Chains {
		id, _ := chainNumber(c.ChainID)
		dc := domain.Chain{ID: id, Name: c.Name, NativeSymbol: c.NativeSymbol, NativeDecimals: c.NativeDecimals,
			IsTestnet: c.IsTestnet, Enabled: c.IsActive, ConvenienceFeeCents: c.ConvenienceFeeCents,
			RequiredConfirmations: c.Confirmations, FinalizedTag: c.FinalizedTag, BlockExplorerURL: c.BlockExplorerURL,
			GaslessFeeCents: c.GaslessFeeCents}
		chains = append(chains, dc)
		for _, t := range c.Tokens {
			tokens = append(tokens, domain.Token{ID: t.ID, Chain: dc, Symbol: t.Symbol, MarketAPIID: t.MarketAPIID,
				ContractAddress: t.ContractAddress, Decimals: t.Decimals, Type: domain.TokenType(t.Type),
				AssetType: domain.AssetType(t.AssetType), Status: domain.TokenStatus(t.Status), EIP3009: t.EIP3009, EIP2612: t.EIP2612})
		}
	}
	sort.Slice(chains, func(i, j int) bool { return chains[i].ID < chains[j].ID })
	return chains, tokens
}
