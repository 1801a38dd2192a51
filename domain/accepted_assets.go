package domain

import "sort"

// AcceptedAssets is the set of tokens a merchant takes payments in. It only narrows what the
// catalogue accepts (Catalog.Accepts): a selected token this deployment does not serve gets no
// quote. The zero value is the default, "every token the deployment serves", which includes
// tokens added to the catalogue later.
type AcceptedAssets struct {
	ids map[string]struct{} // nil: the default
}

// SelectAssets is the selection of exactly these token ids (duplicates are harmless). No ids
// is the default selection; callers that must refuse an empty choice check before.
func SelectAssets(tokenIDs ...string) AcceptedAssets {
	if len(tokenIDs) == 0 {
		return AcceptedAssets{}
	}
	ids := make(map[string]struct{}, len(tokenIDs))
	for _, id := range tokenIDs {
		ids[id] = struct{}{}
	}
	return AcceptedAssets{ids: ids}
}

// IsDefault reports whether no choice is recorded: every served token is accepted.
func (a AcceptedAssets) IsDefault() bool { return a.ids == nil }

// Includes reports whether the selection takes t (always, for the default).
func (a AcceptedAssets) Includes(t Token) bool {
	if a.ids == nil {
		return true
	}
	_, ok := a.ids[t.ID]
	return ok
}

// TokenIDs lists the selected token ids, sorted; nil for the default.
func (a AcceptedAssets) TokenIDs() []string {
	if a.ids == nil {
		return nil
	}
	out := make([]string, 0, len(a.ids))
	for id := range a.ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// QuotedTokens lists the tokens of a chain a merchant with this selection is quoted in: the
// chain's accepted tokens (AcceptedTokens order: native first, then by symbol) it includes.
func (c Catalog) QuotedTokens(chainID int64, a AcceptedAssets) []Token {
	var out []Token
	for _, t := range c.AcceptedTokens(chainID) {
		if a.Includes(t) {
			out = append(out, t)
		}
	}
	return out
}

// MerchantTokens lists every token a merchant with this selection is quoted in, in quote
// order: by chain id, then native first, then by symbol.
func (c Catalog) MerchantTokens(a AcceptedAssets) []Token {
	var out []Token
	for _, ch := range c.Chains {
		out = append(out, c.QuotedTokens(ch.ID, a)...)
	}
	return out
}

// InMode is the selection as one mode applies it: a selection whose every token is known to be
// of the other mode leaves this mode at the default, so a merchant choosing its live tokens does
// not switch test mode off (nor the other way round). A token the catalogue does not know keeps
// the selection as it is (the operator must edit it; see Catalog.MerchantTokens).
func (a AcceptedAssets) InMode(c Catalog, m Mode) AcceptedAssets {
	if a.ids == nil {
		return a
	}
	for id := range a.ids {
		if t, ok := c.Tokens[id]; !ok || ChainMode(t.Chain) == m.Norm() {
			return a
		}
	}
	return AcceptedAssets{}
}

// ServesMode reports whether any chain of a mode is served (enabled) here.
func (c Catalog) ServesMode(m Mode) bool {
	for _, ch := range c.Chains {
		if ch.Enabled && ChainMode(ch) == m.Norm() {
			return true
		}
	}
	return false
}
