package domain

import "sort"

// Catalog is the chain and token data as this deployment serves it: loaded once at start and
// injected (Chain.Enabled already says whether the deployment serves the chain). It owns the
// one rule of which tokens may be quoted and paid out.
type Catalog struct {
	Chains []Chain          // ordered by chain id
	Tokens map[string]Token // by token id
}

// Accepts reports whether t may be quoted or paid out: an active token on an enabled chain.
func (c Catalog) Accepts(t Token) bool { return t.Status == TokenActive && t.Chain.Enabled }

// AcceptedTokens lists the accepted tokens of a chain: native first, then by symbol, so quotes
// come out in a stable order.
func (c Catalog) AcceptedTokens(chainID int64) []Token {
	var out []Token
	for _, t := range c.Tokens {
		if t.Chain.ID == chainID && c.Accepts(t) {
			out = append(out, t)
		}
	}
	less := func(a, b Token) bool {
		if (a.AssetType == Native) != (b.AssetType == Native) {
			return a.AssetType == Native
		}
		return a.Symbol < b.Symbol
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && less(out[j], out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// AcceptedToken finds the accepted token with this symbol on a chain.
func (c Catalog) AcceptedToken(chainID int64, symbol string) (Token, bool) {
	for _, t := range c.AcceptedTokens(chainID) {
		if t.Symbol == symbol {
			return t, true
		}
	}
	return Token{}, false
}

// Chain returns a chain by id.
func (c Catalog) Chain(id int64) (Chain, bool) {
	for _, ch := range c.Chains {
		if ch.ID == id {
			return ch, true
		}
	}
	return Chain{}, false
}

// ChainTokens lists every token of a chain in the catalogue, whatever its status: a watcher
// records transfers of blocked and deprecated tokens too, never drops them.
func (c Catalog) ChainTokens(chainID int64) []Token {
	var out []Token
	for _, t := range c.Tokens {
		if t.Chain.ID == chainID {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// NativeToken is a chain's native token.
func (c Catalog) NativeToken(chainID int64) (Token, bool) {
	for _, t := range c.Tokens {
		if t.Chain.ID == chainID && t.AssetType == Native {
			return t, true
		}
	}
	return Token{}, false
}

// ChainMode is the mode of a catalogue chain; an unknown chain is test (it can carry no live
// money here).
func (c Catalog) ChainMode(id int64) Mode {
	if ch, ok := c.Chain(id); ok {
		return ChainMode(ch)
	}
	return ModeTest
}
