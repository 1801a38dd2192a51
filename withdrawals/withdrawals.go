// Package withdrawals owns merchant withdrawals: validation against the merchant's withdrawal
// configuration, the balance check under a lock, and reads scoped to the merchant.
package withdrawals

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Spec bounds of amountInCents.
const (
	MinAmountCents = 100
	MaxAmountCents = 100_000_000
)

// Service creates and reads withdrawals.
type Service struct {
	Store    *store.Store
	Networks chains.Networks
	Now      func() time.Time
}

// CreateInput is a create-withdrawal request with the chain already parsed to its numeric id.
type CreateInput struct {
	AmountInCents    int64
	ChainID          int64
	RecipientAddress string
	OrderID          *string
	CustomMetadata   *string
	Currency         string
}

// Create validates and records a pending withdrawal and debits the merchant's balance, under a
// lock on the merchant so concurrent withdrawals can never overdraw it.
func (s *Service) Create(ctx context.Context, m domain.Merchant, in CreateInput) (domain.Withdrawal, error) {
	if !m.WithdrawalsEnabled {
		return domain.Withdrawal{}, domain.ErrWithdrawalsOff
	}
	if in.AmountInCents < MinAmountCents || in.AmountInCents > MaxAmountCents {
		return domain.Withdrawal{}, domain.Invalid("invalid_amount", "amountInCents", "amountInCents must be between %d and %d cents", MinAmountCents, MaxAmountCents)
	}
	if in.Currency != "" && in.Currency != "USD" {
		return domain.Withdrawal{}, domain.Invalid("parameter_invalid", "currency", "currency must be USD")
	}
	recipient, err := normaliseAddress(in.RecipientAddress)
	if err != nil {
		return domain.Withdrawal{}, err
	}
	// The catalogue is read before the lock: the merchant row is held only for what must be
	// consistent with the balance.
	cat, err := chains.Catalog(s.Store.Read(ctx), s.Networks)
	if err != nil {
		return domain.Withdrawal{}, err
	}
	var out domain.Withdrawal
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.LockMerchant(m.ID); err != nil {
			return err
		}
		cfg, err := tx.GetWithdrawalConfig(m.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		token, ok := configuredToken(cat, cfg, in.ChainID)
		if !ok {
			return domain.Invalid("chain_not_supported", "chainId", "chain %s is not in this merchant's withdrawal configuration", chains.CAIP2(in.ChainID))
		}
		if in.AmountInCents < cfg.MinAmountCents || in.AmountInCents > cfg.MaxAmountCents {
			return domain.Invalid("invalid_amount", "amountInCents", "amountInCents must be between %d and %d cents for this merchant", cfg.MinAmountCents, cfg.MaxAmountCents)
		}
		balance, err := tx.AvailableBalance(m.ID)
		if err != nil {
			return err
		}
		if in.AmountInCents > balance {
			return domain.Invalid("insufficient_balance", "amountInCents", "amountInCents %d exceeds the available balance of %d cents", in.AmountInCents, balance)
		}
		now := s.Now()
		out = domain.Withdrawal{ID: uuid.Must(uuid.NewV7()), MerchantID: m.ID, AmountInCents: in.AmountInCents,
			Chain: token.Chain, Token: token, RecipientAddress: recipient, Status: "pending", Currency: "USD",
			OrderID: in.OrderID, CustomMetadata: in.CustomMetadata, CreatedAt: now, UpdatedAt: now}
		if err := tx.InsertWithdrawal(out); err != nil {
			return err
		}
		id := out.ID
		return tx.AppendLedger(m.ID, store.LedgerWithdrawalDebit, -in.AmountInCents, nil, &id, now)
	})
	return out, err
}

// configuredToken finds the configured withdrawal token on a chain the merchant may withdraw
// on and this deployment serves.
func configuredToken(cat store.Catalog, cfg domain.WithdrawalConfig, chainID int64) (domain.Token, bool) {
	if !slices.Contains(cfg.ChainIDs, chainID) {
		return domain.Token{}, false
	}
	for _, t := range cat.Tokens {
		if t.Chain.ID == chainID && t.Symbol == cfg.TokenSymbol && t.Status == "active" && t.Chain.Enabled {
			return t, true
		}
	}
	return domain.Token{}, false
}

// normaliseAddress accepts a 0x-prefixed EVM address in any letter case and stores it
// lowercase. EIP-55 checksums are not enforced: the contract accepts any case (see
// docs/decisions.md). The zero address burns funds and is refused.
func normaliseAddress(a string) (string, error) {
	if !common.IsHexAddress(a) || !strings.HasPrefix(a, "0x") {
		return "", domain.Invalid("parameter_invalid", "recipientAddress", "recipientAddress must be a 0x-prefixed 20-byte hex address")
	}
	if common.HexToAddress(a) == (common.Address{}) {
		return "", domain.Invalid("parameter_invalid", "recipientAddress", "recipientAddress must not be the zero address")
	}
	return strings.ToLower(a), nil
}

// List returns a page of the merchant's withdrawals.
func (s *Service) List(ctx context.Context, m domain.Merchant, status string, limit, offset int32) ([]domain.Withdrawal, domain.Page, error) {
	tx := s.Store.Read(ctx)
	cat, err := chains.Catalog(tx, s.Networks)
	if err != nil {
		return nil, domain.Page{}, err
	}
	ws, total, err := tx.ListWithdrawals(store.WithdrawalFilter{MerchantID: m.ID, Status: status, Limit: limit, Offset: offset}, cat)
	return ws, domain.Page{Limit: limit, Offset: offset, Total: total}, err
}

// Get reads one of the merchant's withdrawals; unknown, malformed and foreign ids are ErrWithdrawalNotFound.
func (s *Service) Get(ctx context.Context, m domain.Merchant, id string) (domain.Withdrawal, error) {
	wid, err := uuid.Parse(id)
	if err != nil {
		return domain.Withdrawal{}, domain.ErrWithdrawalNotFound
	}
	tx := s.Store.Read(ctx)
	cat, err := chains.Catalog(tx, s.Networks)
	if err != nil {
		return domain.Withdrawal{}, err
	}
	w, err := tx.GetWithdrawal(m.ID, wid, cat)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Withdrawal{}, domain.ErrWithdrawalNotFound
	}
	return w, err
}
