package merchants

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// A merchant has one withdrawal configuration — limits, token and the enabled flag are shared —
// whose chain list is partitioned by mode: each mode sees, changes and pays out to its own chains
// only. A new merchant's default lists the served chains of both modes, so whichever mode it is
// used in sees only that mode's chains.

// WithdrawalConfigIn reads a merchant's withdrawal configuration as one mode sees it.
func (s *Service) WithdrawalConfigIn(ctx context.Context, merchantID uuid.UUID, mode domain.Mode) (domain.WithdrawalConfig, error) {
	cfg, err := s.WithdrawalConfig(ctx, merchantID)
	if err != nil {
		return cfg, err
	}
	cfg.ChainIDs = s.chainsIn(cfg.ChainIDs, mode, true)
	return cfg, nil
}

// SetWithdrawalConfigIn replaces the limits, the token and one mode's chains; the other mode's
// chains are kept. Naming a chain of the other mode is chain_not_supported.
func (s *Service) SetWithdrawalConfigIn(ctx context.Context, cfg domain.WithdrawalConfig, mode domain.Mode) error {
	for _, id := range cfg.ChainIDs {
		if s.Catalog.ChainMode(id) != mode.Norm() {
			return domain.Invalid(domain.CodeChainNotSupported, "chainIds", "chain %s is not a %s-mode chain: this token acts in %s mode",
				chains.CAIP2(id), s.Catalog.ChainMode(id), mode.Norm())
		}
	}
	if len(cfg.ChainIDs) == 0 {
		return domain.Invalid(domain.CodeParameterInvalid, "chainIds", "at least one chain")
	}
	stored, err := s.WithdrawalConfig(ctx, cfg.MerchantID)
	if errors.Is(err, store.ErrNotFound) {
		return domain.ErrMerchantNotFound
	}
	if err != nil {
		return err
	}
	cfg.ChainIDs = append(cfg.ChainIDs, s.chainsIn(stored.ChainIDs, mode, false)...)
	return s.SetWithdrawalConfig(ctx, cfg)
}

// chainsIn keeps the ids whose chain is (in) or is not (!in) of mode.
func (s *Service) chainsIn(ids []int64, mode domain.Mode, in bool) []int64 {
	out := []int64{}
	for _, id := range ids {
		if (s.Catalog.ChainMode(id) == mode.Norm()) == in {
			out = append(out, id)
		}
	}
	return out
}
