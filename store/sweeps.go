package store

import (
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Sweeping's storage: one row per consolidation of a (chain, deposit address, token) into the
// hot wallet, the transfers each covers, and operators' requests for one.

// SweepStatus is where a sweep is.
type SweepStatus string

// Sweep states: a gas top-up in flight, the sweep transaction in flight, done, failed (its
// transfers are free for the next sweep), or empty (the address held nothing: moved by other
// means).
const (
	SweepToppingUp SweepStatus = "topping_up"
	SweepSigned    SweepStatus = "signed"
	SweepConfirmed SweepStatus = "confirmed"
	SweepFailed    SweepStatus = "failed"
	SweepEmpty     SweepStatus = "empty"
)

// Sweep is one consolidation of a deposit address's balance of a token.
type Sweep struct {
	ID          uuid.UUID
	ChainID     int64
	Address     string
	KeyIndex    int64
	TokenID     string
	Status      SweepStatus
	AmountAsset *decimal.Decimal
	TopupTxID   *uuid.UUID
	SweepTxID   *uuid.UUID
	Error       *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

type sweepRow struct {
	ID          uuid.UUID `gorm:"primaryKey"`
	ChainID     int64
	Address     string
	KeyIndex    int64
	TokenID     string
	Status      SweepStatus
	AmountAsset *decimal.Decimal
	TopupTxID   *uuid.UUID
	SweepTxID   *uuid.UUID
	Error       *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (sweepRow) TableName() string { return "sweeps" }

func (r sweepRow) domain() Sweep {
	return Sweep{ID: r.ID, ChainID: r.ChainID, Address: r.Address, KeyIndex: r.KeyIndex, TokenID: r.TokenID, Status: r.Status,
		AmountAsset: r.AmountAsset, TopupTxID: r.TopupTxID, SweepTxID: r.SweepTxID, Error: r.Error,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// SweepCandidate is what a deposit address holds of a token by the transfers recorded there
// and not yet swept.
type SweepCandidate struct {
	Address  string
	KeyIndex int64
	TokenID  string
	Amount   decimal.Decimal // the confirmed, unswept transfers' sum, in the smallest unit
	Count    int
}

// SweepCandidates sums the confirmed transfers not yet covered by a sweep, per deposit address
// and token, leaving out the addresses with a sweep in flight. Amounts are summed here, not in
// SQL: SQLite keeps them as text, and a SQL SUM would turn them into floats.
func (t *Tx) SweepCandidates(chainID int64, limit int) ([]SweepCandidate, error) {
	var rows []struct {
		ToAddress       string
		DerivationIndex int64
		TokenID         string
		Amount          decimal.Decimal
	}
	err := t.db.Table("transfers t").
		Select("t.to_address, d.derivation_index, t.token_id, t.amount").
		Joins("JOIN deposit_addresses d ON d.id = t.deposit_address_id").
		Where("t.chain_id = ? AND t.status = ? AND t.sweep_id IS NULL", chainID, TransferConfirmed).
		Where("NOT EXISTS (SELECT 1 FROM sweeps s WHERE s.chain_id = t.chain_id AND s.address = t.to_address AND "+
			"s.status IN ?)", []SweepStatus{SweepToppingUp, SweepSigned}).
		Order("t.block_number, t.log_index").Limit(limit).Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	var out []SweepCandidate
	at := map[[2]string]int{}
	for _, r := range rows {
		k := [2]string{r.ToAddress, r.TokenID}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, SweepCandidate{Address: r.ToAddress, KeyIndex: r.DerivationIndex, TokenID: r.TokenID})
		}
		out[i].Amount = out[i].Amount.Add(r.Amount)
		out[i].Count++
	}
	return out, nil
}

// InsertSweep stores a new sweep and makes it cover the address's confirmed, unswept transfers
// of its token mined up to block (the block its balance was read at). It reports how many
// transfers it covers.
func (t *Tx) InsertSweep(s Sweep, upToBlock int64) (int64, error) {
	row := sweepRow{ID: s.ID, ChainID: s.ChainID, Address: strings.ToLower(s.Address), KeyIndex: s.KeyIndex, TokenID: s.TokenID,
		Status: s.Status, AmountAsset: s.AmountAsset, TopupTxID: s.TopupTxID, SweepTxID: s.SweepTxID, Error: s.Error,
		CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.CreatedAt.UTC()}
	if err := t.db.Create(&row).Error; err != nil {
		return 0, translate(err)
	}
	res := t.db.Model(&transferRow{}).
		Where("chain_id = ? AND to_address = ? AND token_id = ? AND status = ? AND sweep_id IS NULL AND block_number <= ?",
			s.ChainID, row.Address, s.TokenID, TransferConfirmed, upToBlock).
		Update("sweep_id", s.ID)
	return res.RowsAffected, translate(res.Error)
}

// SetSweep moves a sweep on from the status it was read in; ErrConflict when it is not in that
// status any more (another process moved it first: whatever this one signed rolls back with
// it). A failed sweep lets its transfers go: the next sweep covers them.
func (t *Tx) SetSweep(id uuid.UUID, from, status SweepStatus, amount *decimal.Decimal, sweepTxID *uuid.UUID, failure *string, now time.Time) error {
	updates := map[string]any{"status": status, "error": failure, "updated_at": now.UTC()}
	if amount != nil {
		updates["amount_asset"] = *amount
	}
	if sweepTxID != nil {
		updates["sweep_tx_id"] = *sweepTxID
	}
	res := t.db.Model(&sweepRow{}).Where("id = ? AND status = ?", id, from).Updates(updates)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return ErrConflict
	}
	if status == SweepFailed {
		return translate(t.db.Model(&transferRow{}).Where("sweep_id = ?", id).Update("sweep_id", nil).Error)
	}
	return nil
}

// OpenSweeps lists a chain's sweeps in flight (topping up or signed), oldest first.
func (t *Tx) OpenSweeps(chainID int64) ([]Sweep, error) {
	var rows []sweepRow
	if err := t.db.Where("chain_id = ? AND status IN ?", chainID, []SweepStatus{SweepToppingUp, SweepSigned}).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Sweep, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// OpenSweepsOfTx lists the sweeps still in flight that a transaction carries (a batch carries
// many), oldest first.
func (t *Tx) OpenSweepsOfTx(txID uuid.UUID) ([]Sweep, error) {
	var rows []sweepRow
	if err := t.db.Where("sweep_tx_id = ? AND status IN ?", txID, []SweepStatus{SweepToppingUp, SweepSigned}).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Sweep, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// SweepsSince lists a chain's sweeps created or moved since at, oldest first (an operator's
// request reports them).
func (t *Tx) SweepsSince(chainID int64, at time.Time) ([]Sweep, error) {
	var rows []sweepRow
	if err := t.db.Where("chain_id = ? AND updated_at >= ?", chainID, at.UTC()).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Sweep, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// OutgoingStatuses reads the status of logical transactions by id.
func (t *Tx) OutgoingStatuses(ids []uuid.UUID) (map[uuid.UUID]OutgoingStatus, error) {
	out := map[uuid.UUID]OutgoingStatus{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []outgoingTxRow
	if err := t.db.Select("id, status").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	for _, r := range rows {
		out[r.ID] = r.Status
	}
	return out, nil
}
