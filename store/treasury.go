package store

import (
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
)

// What the treasury report reads: swept and unswept totals, gas top-ups, merchants' balances.

// SweptTotals sums, per token, what a chain's confirmed sweeps moved to the hot wallet.
func (t *Tx) SweptTotals(chainID int64) (map[string]decimal.Decimal, error) {
	var rows []sweepRow
	if err := t.db.Select("token_id, amount_asset").Where("chain_id = ? AND status = ?", chainID, SweepConfirmed).
		Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := map[string]decimal.Decimal{}
	for _, r := range rows {
		if r.AmountAsset != nil {
			out[r.TokenID] = out[r.TokenID].Add(*r.AmountAsset)
		}
	}
	return out, nil
}

// Unswept is what the ledger of transfers says deposit addresses still hold of a token: the
// confirmed transfers no confirmed sweep covers, and the addresses they went to.
type Unswept struct {
	Amount    decimal.Decimal
	Addresses []string
}

// UnsweptTotals groups a chain's confirmed transfers not covered by a finished sweep, per token.
func (t *Tx) UnsweptTotals(chainID int64) (map[string]*Unswept, error) {
	var rows []struct {
		ToAddress string
		TokenID   string
		Amount    decimal.Decimal
	}
	err := t.db.Table("transfers t").Select("t.to_address, t.token_id, t.amount").
		Where("t.chain_id = ? AND t.status = ?", chainID, TransferConfirmed).
		Where("t.sweep_id IS NULL OR NOT EXISTS (SELECT 1 FROM sweeps s WHERE s.id = t.sweep_id AND s.status IN ?)",
			[]SweepStatus{SweepConfirmed, SweepEmpty}).
		Order("t.to_address").Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := map[string]*Unswept{}
	for _, r := range rows {
		u := out[r.TokenID]
		if u == nil {
			u = &Unswept{}
			out[r.TokenID] = u
		}
		u.Amount = u.Amount.Add(r.Amount)
		if n := len(u.Addresses); n == 0 || u.Addresses[n-1] != r.ToAddress {
			u.Addresses = append(u.Addresses, r.ToAddress)
		}
	}
	return out, nil
}

// IsGasTopup reports whether a transaction is one of the transaction manager's gas top-ups. The
// watcher does not count those as customers' transfers: a top-up to a deposit address is the
// gateway's own gas, not a payment. (A payout a merchant sends to a deposit address is a payment
// like any other, and is counted.)
func (t *Tx) IsGasTopup(hash string) (bool, error) {
	var n int64
	err := t.db.Model(&txAttemptRow{}).Joins("JOIN outgoing_txs o ON o.id = tx_attempts.outgoing_tx_id").
		Where("tx_attempts.hash = ? AND o.kind = ?", strings.ToLower(hash), TxGasTopup).Limit(1).Count(&n).Error
	return n > 0, translate(err)
}

// MerchantTreasury is one merchant's money of one mode as the ledger has it.
type MerchantTreasury struct {
	ID                 uuid.UUID
	Name               string
	Mode               domain.Mode
	AvailableCents     int64
	PendingPayoutCents int64 // withdrawals debited, not yet paid (pending or processing)
}

// MerchantTreasuries lists every merchant's available balance and payouts in flight.
func (t *Tx) MerchantTreasuries() ([]MerchantTreasury, error) {
	var ms []merchantRow
	if err := t.db.Select("id, name").Order("created_at, id").Find(&ms).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]MerchantTreasury, 0, 2*len(ms))
	for _, m := range ms {
		for _, mode := range []domain.Mode{domain.ModeLive, domain.ModeTest} {
			avail, err := t.AvailableBalance(m.ID, mode)
			if err != nil {
				return nil, err
			}
			payouts, err := t.PendingPayouts(m.ID, mode)
			if err != nil {
				return nil, err
			}
			var pending int64
			for _, p := range payouts {
				pending += p.AmountCents
			}
			out = append(out, MerchantTreasury{ID: m.ID, Name: m.Name, Mode: mode, AvailableCents: avail, PendingPayoutCents: pending})
		}
	}
	return out, nil
}
