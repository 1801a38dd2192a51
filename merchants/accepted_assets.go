package merchants

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// AcceptedAssets is what a merchant takes payments in, as this deployment serves it.
type AcceptedAssets struct {
	Default  bool           // nothing chosen: every served token, including ones added later
	Tokens   []domain.Token // the effective list, in quote order (chain id, native first, symbol)
	Unserved []string       // chosen token ids this deployment does not serve: no quote is made in them
}

// AcceptedAssets reads a merchant's accepted assets.
func (s *Service) AcceptedAssets(ctx context.Context, merchantID uuid.UUID) (AcceptedAssets, error) {
	tx := s.Store.Read(ctx)
	if _, err := tx.GetMerchant(merchantID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return AcceptedAssets{}, domain.ErrMerchantNotFound
		}
		return AcceptedAssets{}, err
	}
	sel, err := tx.AcceptedAssets(merchantID)
	if err != nil {
		return AcceptedAssets{}, err
	}
	out := AcceptedAssets{Default: sel.IsDefault(), Tokens: s.Catalog.MerchantTokens(sel)}
	for _, id := range sel.TokenIDs() {
		if t, ok := s.Catalog.Tokens[id]; !ok || !s.Catalog.Accepts(t) {
			out.Unserved = append(out.Unserved, id)
		}
	}
	return out, nil
}

// SetAcceptedAssets replaces a merchant's accepted assets with these token ids (CAIP-19), in
// one transaction. Every id must be a token this deployment accepts (Catalog.Accepts), and the
// list may not be empty: a merchant that accepts nothing cannot be paid (ResetAcceptedAssets
// goes back to the default).
func (s *Service) SetAcceptedAssets(ctx context.Context, merchantID uuid.UUID, tokenIDs []string) error {
	if len(tokenIDs) == 0 {
		return domain.Invalid(domain.CodeParameterInvalid, "assets", "the list is empty; a merchant must accept at least one asset (reset to go back to every served asset)")
	}
	for _, id := range tokenIDs {
		if t, ok := s.Catalog.Tokens[id]; !ok || !s.Catalog.Accepts(t) {
			return domain.Invalid(domain.CodeParameterInvalid, "assets", "%q is not an active token on a chain this deployment serves", id)
		}
	}
	return s.putAcceptedAssets(ctx, merchantID, domain.SelectAssets(tokenIDs...))
}

// ResetAcceptedAssets returns a merchant to the default: every served token.
func (s *Service) ResetAcceptedAssets(ctx context.Context, merchantID uuid.UUID) error {
	return s.putAcceptedAssets(ctx, merchantID, domain.AcceptedAssets{})
}

func (s *Service) putAcceptedAssets(ctx context.Context, merchantID uuid.UUID, sel domain.AcceptedAssets) error {
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GetMerchant(merchantID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return domain.ErrMerchantNotFound
			}
			return err
		}
		if err := tx.PutAcceptedAssets(merchantID, sel); err != nil {
			return err
		}
		details := map[string]any{"default": sel.IsDefault()}
		if !sel.IsDefault() {
			details["assets"] = sel.TokenIDs()
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.AcceptedAssetsUpdated, TargetType: audit.TargetMerchant,
			TargetID: merchantID.String(), Details: details})
	})
}

// ParseAssets resolves a comma-separated asset list to token ids. An entry is a chain and a
// symbol, "eip155:8453/USDC" (symbol in any letter case), or a CAIP-19 token id,
// "eip155:8453/erc20:0x833…" or "eip155:1/slip44:60"; white space around entries is ignored
// and duplicates are harmless. Every entry must name a token this deployment accepts; the
// error names the first that does not. Empty entries are refused.
func (s *Service) ParseAssets(list string) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, raw := range strings.Split(list, ",") {
		entry := strings.TrimSpace(raw)
		if entry == "" {
			return nil, fmt.Errorf("accepted assets: empty entry in %q", list)
		}
		t, err := s.resolveAsset(entry)
		if err != nil {
			return nil, err
		}
		if !seen[t.ID] {
			seen[t.ID] = true
			ids = append(ids, t.ID)
		}
	}
	return ids, nil
}

func (s *Service) resolveAsset(entry string) (domain.Token, error) {
	chainPart, asset, ok := strings.Cut(entry, "/")
	if !ok || asset == "" {
		return domain.Token{}, fmt.Errorf("accepted assets: %q is not CHAIN/SYMBOL (eip155:8453/USDC) or a token id (eip155:8453/erc20:0x…)", entry)
	}
	chainID, err := chains.ParseCAIP2(strings.ToLower(chainPart))
	if err != nil {
		return domain.Token{}, fmt.Errorf("accepted assets: %q: %w", entry, err)
	}
	if strings.Contains(asset, ":") { // a CAIP-19 asset: namespace:reference
		id := chains.CAIP2(chainID) + "/" + strings.ToLower(asset)
		if t, ok := s.Catalog.Tokens[id]; ok && s.Catalog.Accepts(t) {
			return t, nil
		}
		return domain.Token{}, fmt.Errorf("accepted assets: %q is not an active token on a chain this deployment serves", entry)
	}
	if t, ok := s.Catalog.AcceptedToken(chainID, strings.ToUpper(asset)); ok {
		return t, nil
	}
	return domain.Token{}, fmt.Errorf("accepted assets: %q: %s has no active %s token, or this deployment does not serve it",
		entry, chains.CAIP2(chainID), strings.ToUpper(asset))
}

// SetAcceptedAssetsIn replaces one mode's part of the selection (a dashboard token's mode):
// every id must be a token of that mode's chains; the other mode's part is kept as it was.
func (s *Service) SetAcceptedAssetsIn(ctx context.Context, merchantID uuid.UUID, mode domain.Mode, tokenIDs []string) error {
	for _, id := range tokenIDs {
		if t, ok := s.Catalog.Tokens[id]; ok && domain.ChainMode(t.Chain) != mode.Norm() {
			return domain.Invalid(domain.CodeParameterInvalid, "assets", "%q is on a %s chain; this token acts in %s mode", id,
				domain.ChainMode(t.Chain), mode.Norm())
		}
	}
	other, err := s.otherModeAssets(ctx, merchantID, mode)
	if err != nil {
		return err
	}
	return s.SetAcceptedAssets(ctx, merchantID, append(tokenIDs, other...))
}

// ResetAcceptedAssetsIn returns one mode to its default (every served token of its chains) and
// keeps the other mode's part of the selection.
func (s *Service) ResetAcceptedAssetsIn(ctx context.Context, merchantID uuid.UUID, mode domain.Mode) error {
	other, err := s.otherModeAssets(ctx, merchantID, mode)
	if err != nil {
		return err
	}
	if len(other) == 0 {
		return s.ResetAcceptedAssets(ctx, merchantID)
	}
	return s.putAcceptedAssets(ctx, merchantID, domain.SelectAssets(other...))
}

// otherModeAssets lists the selected token ids that are not of mode (unknown ids included: they
// are not this mode's to drop).
func (s *Service) otherModeAssets(ctx context.Context, merchantID uuid.UUID, mode domain.Mode) ([]string, error) {
	sel, err := s.Store.Read(ctx).AcceptedAssets(merchantID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range sel.TokenIDs() {
		if t, ok := s.Catalog.Tokens[id]; !ok || domain.ChainMode(t.Chain) != mode.Norm() {
			out = append(out, id)
		}
	}
	return out, nil
}
