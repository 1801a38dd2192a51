package store

import (
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
