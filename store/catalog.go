package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	"gorm.io/gorm/clause"

	"github.com/paymentsd/paymentsd/catalog"
	"github.com/paymentsd/paymentsd/domain"
)

// LoadCatalog reads every chain and token as stored (Chain.Enabled is the stored switch only);
// the catalogue is a few dozen rows.
func (t *Tx) LoadCatalog() (domain.Catalog, error) {
	var chains []chainRow
	if err := t.db.Order("chain_id").Find(&chains).Error; err != nil {
		return domain.Catalog{}, translate(err)
	}
	var tokens []tokenRow
	if err := t.db.Order("chain_id, id").Find(&tokens).Error; err != nil {
		return domain.Catalog{}, translate(err)
	}
	cat := domain.Catalog{Tokens: make(map[string]domain.Token, len(tokens))}
	byID := make(map[int64]domain.Chain, len(chains))
	for _, c := range chains {
		dc := c.domain()
		cat.Chains = append(cat.Chains, dc)
		byID[dc.ID] = dc
	}
	for _, tk := range tokens {
		cat.Tokens[tk.ID] = tk.domain(byID[tk.ChainID])
	}
	return cat, nil
}

// CatalogSync counts what SyncCatalog changed.
type CatalogSync struct {
	Added, Updated, Deprecated int
}

// SyncCatalog brings the stored catalogue in line with f: new chains and tokens are inserted,
// changed ones updated, and rows f no longer names are kept but taken out of service (a chain
// inactive, an active token deprecated): payments, quotes and ledger entries reference them, so
// nothing is ever deleted. The file is the source of truth: a stored row edited by hand is set
// back at the next start. Unchanged rows are not written, so a second start changes nothing, and
// an insert meeting a concurrent start's insert updates instead.
func (t *Tx) SyncCatalog(f catalog.File) (CatalogSync, error) {
	var sum CatalogSync
	chains, tokens := f.Domain()
	var oldChains []chainRow
	if err := t.db.Find(&oldChains).Error; err != nil {
		return sum, translate(err)
	}
	var oldTokens []tokenRow
	if err := t.db.Find(&oldTokens).Error; err != nil {
		return sum, translate(err)
	}
	storedChains := make(map[int64]chainRow, len(oldChains))
	for _, r := range oldChains {
		storedChains[r.ChainID] = r
	}
	storedTokens := make(map[string]tokenRow, len(oldTokens))
	for _, r := range oldTokens {
		storedTokens[r.ID] = r
	}
	var chainWrites []chainRow
	keepChains := map[int64]bool{}
	for _, c := range chains {
		r := chainRowOf(c)
		keepChains[r.ChainID] = true
		if old, ok := storedChains[r.ChainID]; !ok || old != r {
			chainWrites = append(chainWrites, r)
			sum.count(ok)
		}
	}
	for _, r := range chainWrites {
		if old, ok := storedChains[r.ChainID]; ok && old.NativeDecimals != r.NativeDecimals {
			if err := t.refuseIfUsed("chain_id = ?", r.ChainID, fmt.Sprintf("chain eip155:%d's nativeDecimals (%d → %d)",
				r.ChainID, old.NativeDecimals, r.NativeDecimals)); err != nil {
				return sum, err
			}
		}
	}
	var tokenWrites []tokenRow
	keepTokens := map[string]bool{}
	for _, tk := range tokens {
		r := tokenRowOf(tk)
		keepTokens[r.ID] = true
		old, ok := storedTokens[r.ID]
		if ok && (old.Decimals != r.Decimals || old.AssetType != r.AssetType || old.ContractAddress != r.ContractAddress || old.ChainID != r.ChainID) {
			if err := t.refuseIfUsed("token_id = ?", r.ID, fmt.Sprintf("token %s's decimals, assetType, contractAddress or chainId", r.ID)); err != nil {
				return sum, err
			}
		}
		if !ok || old != r {
			tokenWrites = append(tokenWrites, r)
			sum.count(ok)
		}
	}
	// Chains before tokens (the tokens reference them), each in key order so that two processes
	// starting together lock rows in the same order.
	sort.Slice(tokenWrites, func(i, j int) bool { return tokenWrites[i].ID < tokenWrites[j].ID })
	if len(chainWrites) > 0 {
		if err := t.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "chain_id"}}, UpdateAll: true}).
			Create(&chainWrites).Error; err != nil {
			return sum, translate(err)
		}
	}
	if len(tokenWrites) > 0 {
		if err := t.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, UpdateAll: true}).
			Create(&tokenWrites).Error; err != nil {
			return sum, translate(err)
		}
	}
	for _, r := range oldChains {
		if !keepChains[r.ChainID] && r.IsActive {
			if err := t.db.Model(&chainRow{}).Where("chain_id = ?", r.ChainID).Update("is_active", false).Error; err != nil {
				return sum, translate(err)
			}
			sum.Deprecated++
		}
	}
	for _, r := range oldTokens {
		if !keepTokens[r.ID] && r.Status == string(domain.TokenActive) {
			if err := t.db.Model(&tokenRow{}).Where("id = ?", r.ID).Update("status", string(domain.TokenDeprecated)).Error; err != nil {
				return sum, translate(err)
			}
			sum.Deprecated++
		}
	}
	return sum, nil
}

// ErrCatalogChangeInUse refuses a catalogue change that would revalue what is recorded: a
// quote keeps its amount in the token's smallest units, a transfer and a payout theirs, and all
// are read back with the catalogue's decimals — a token changed under them would be worth 10^12
// times more or less. Such a token gets a new id (a new entry) instead.
var ErrCatalogChangeInUse = errors.New("catalogue change refused: payments, transfers or payouts already use it")

// refuseIfUsed fails with ErrCatalogChangeInUse when any quote, transfer, withdrawal, outgoing
// transaction or sweep matches where.
func (t *Tx) refuseIfUsed(where string, arg any, what string) error {
	for _, table := range []string{"quotes", "transfers", "withdrawals", "outgoing_txs", "sweeps"} {
		var n int64
		if err := t.db.Table(table).Where(where, arg).Limit(1).Count(&n).Error; err != nil {
			return translate(err)
		}
		if n > 0 {
			return fmt.Errorf("%w: %s (%s)", ErrCatalogChangeInUse, what, table)
		}
	}
	return nil
}

func (s *CatalogSync) count(existed bool) {
	if existed {
		s.Updated++
	} else {
		s.Added++
	}
}

// syncCatalog runs SyncCatalog in one transaction and logs what changed.
func (s *Store) syncCatalog(ctx context.Context, f catalog.File, log *slog.Logger) error {
	var sum CatalogSync
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		sum, err = tx.SyncCatalog(f)
		return err
	})
	if err == nil && sum != (CatalogSync{}) {
		log.Info("catalogue updated", "added", sum.Added, "updated", sum.Updated, "deprecated", sum.Deprecated)
	}
	return err
}

func chainRowOf(c domain.Chain) chainRow {
	return chainRow{ChainID: c.ID, Name: c.Name, NativeSymbol: c.NativeSymbol, NativeDecimals: c.NativeDecimals,
		IsTestnet: c.IsTestnet, IsActive: c.Enabled, ConvenienceFeeCents: c.ConvenienceFeeCents,
		RequiredConfirmations: c.RequiredConfirmations, FinalizedTag: c.FinalizedTag, BlockExplorerURL: c.BlockExplorerURL,
		GaslessFeeCents: c.GaslessFeeCents}
}

func tokenRowOf(t domain.Token) tokenRow {
	return tokenRow{ID: t.ID, ChainID: t.Chain.ID, Symbol: t.Symbol, MarketAPIID: t.MarketAPIID,
		ContractAddress: t.ContractAddress, Decimals: t.Decimals, Type: string(t.Type), AssetType: string(t.AssetType),
		Status: string(t.Status), EIP3009: t.EIP3009, EIP2612: t.EIP2612}
}
