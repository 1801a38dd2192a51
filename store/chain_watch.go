package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"gorm.io/gorm/clause"

	"github.com/paymentsd/paymentsd/domain"
)

// The chain watcher's storage: per chain a cursor and the recent blocks' hashes, and every
// transfer seen to a watched deposit address. A transfer is unique by (chain, tx hash, log
// index), so a rescan never records it twice.

// Cursor is how far a chain has been scanned: the last block processed, on the chain whose
// block 0 is GenesisHash.
type Cursor struct {
	ChainID     int64
	GenesisHash string
	Number      int64
	Hash        string
	Time        time.Time
}

// BlockRef is a scanned block as the chain linked it.
type BlockRef struct {
	Number     int64
	Hash       string
	ParentHash string
}

// TransferStatus says whether a transfer counts.
type TransferStatus string

// Transfer states: seen in the canonical chain, confirmed at the chain's depth, or orphaned by
// a reorg (no longer counted; revived if it reappears).
const (
	TransferSeen      TransferStatus = "seen"
	TransferConfirmed TransferStatus = "confirmed"
	TransferOrphaned  TransferStatus = "orphaned"
)

// Transfer is one movement of a token to a watched deposit address.
type Transfer struct {
	ID               uuid.UUID
	ChainID          int64
	TxHash           string
	LogIndex         int64 // -1 for a native transfer
	BlockNumber      int64
	BlockHash        string
	BlockTime        time.Time
	TokenID          string
	From             string
	To               string
	Amount           decimal.Decimal
	DepositAddressID uuid.UUID
	PaymentID        *uuid.UUID
	Status           TransferStatus
	Credited         bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

type cursorRow struct {
	ChainID     int64 `gorm:"primaryKey;autoIncrement:false"`
	GenesisHash string
	BlockNumber int64
	BlockHash   string
	BlockTime   time.Time
	UpdatedAt   time.Time
}

func (cursorRow) TableName() string { return "chain_cursors" }

type chainBlockRow struct {
	ChainID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Number     int64 `gorm:"primaryKey;autoIncrement:false"`
	Hash       string
	ParentHash string
}

func (chainBlockRow) TableName() string { return "chain_blocks" }

type transferRow struct {
	ID               uuid.UUID `gorm:"primaryKey"`
	ChainID          int64
	TxHash           string
	LogIndex         int64
	BlockNumber      int64
	BlockHash        string
	BlockTime        time.Time
	TokenID          string
	FromAddress      string
	ToAddress        string
	Amount           decimal.Decimal
	DepositAddressID uuid.UUID
	PaymentID        *uuid.UUID
	Status           TransferStatus
	Credited         bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

func (transferRow) TableName() string { return "transfers" }

func (r transferRow) domain() Transfer {
	return Transfer{ID: r.ID, ChainID: r.ChainID, TxHash: r.TxHash, LogIndex: r.LogIndex, BlockNumber: r.BlockNumber,
		BlockHash: r.BlockHash, BlockTime: r.BlockTime.UTC(), TokenID: r.TokenID, From: r.FromAddress, To: r.ToAddress,
		Amount: r.Amount, DepositAddressID: r.DepositAddressID, PaymentID: r.PaymentID, Status: r.Status,
		Credited: r.Credited, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// Cursor reads a chain's cursor; ErrNotFound before its first scan.
func (t *Tx) Cursor(chainID int64) (Cursor, error) {
	var r cursorRow
	if err := t.db.Take(&r, "chain_id = ?", chainID).Error; err != nil {
		return Cursor{}, translate(err)
	}
	return Cursor{ChainID: r.ChainID, GenesisHash: r.GenesisHash, Number: r.BlockNumber, Hash: r.BlockHash, Time: r.BlockTime.UTC()}, nil
}

// CursorTimes reads the block time each scanned chain has reached.
func (t *Tx) CursorTimes() (map[int64]time.Time, error) {
	var rows []cursorRow
	if err := t.db.Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make(map[int64]time.Time, len(rows))
	for _, r := range rows {
		out[r.ChainID] = r.BlockTime.UTC()
	}
	return out, nil
}

// MoveCursor sets a chain's cursor to next, provided it still is prev (nil: no cursor yet). A
// watcher whose lease lapsed while another took over loses here with ErrConflict, and its whole
// transaction — transfers included — rolls back.
func (t *Tx) MoveCursor(prev *Cursor, next Cursor, now time.Time) error {
	row := cursorRow{ChainID: next.ChainID, GenesisHash: next.GenesisHash, BlockNumber: next.Number, BlockHash: next.Hash,
		BlockTime: next.Time.UTC(), UpdatedAt: now.UTC()}
	if prev == nil {
		return translate(t.db.Create(&row).Error)
	}
	res := t.db.Model(&cursorRow{}).
		Where("chain_id = ? AND genesis_hash = ? AND block_number = ? AND block_hash = ?", prev.ChainID, prev.GenesisHash, prev.Number, prev.Hash).
		Updates(map[string]any{"genesis_hash": row.GenesisHash, "block_number": row.BlockNumber, "block_hash": row.BlockHash,
			"block_time": row.BlockTime, "updated_at": row.UpdatedAt})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: chain %d cursor moved by another watcher", ErrConflict, prev.ChainID)
	}
	return nil
}

// RewindCursor sets a chain's cursor back to an earlier block unconditionally and forgets the
// blocks above it: the next scan reads them again (transfers already recorded stay as they are).
func (t *Tx) RewindCursor(c Cursor, now time.Time) error {
	if err := t.db.Where("chain_id = ? AND number > ?", c.ChainID, c.Number).Delete(&chainBlockRow{}).Error; err != nil {
		return translate(err)
	}
	return translate(t.db.Model(&cursorRow{}).Where("chain_id = ?", c.ChainID).
		Updates(map[string]any{"genesis_hash": c.GenesisHash, "block_number": c.Number, "block_hash": c.Hash,
			"block_time": c.Time.UTC(), "updated_at": now.UTC()}).Error)
}

// PutBlocks remembers scanned blocks (replacing what was stored at their heights).
func (t *Tx) PutBlocks(chainID int64, blocks []BlockRef) error {
	if len(blocks) == 0 {
		return nil
	}
	rows := make([]chainBlockRow, len(blocks))
	for i, b := range blocks {
		rows[i] = chainBlockRow{ChainID: chainID, Number: b.Number, Hash: b.Hash, ParentHash: b.ParentHash}
	}
	return translate(t.db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "chain_id"}, {Name: "number"}},
		DoUpdates: clause.AssignmentColumns([]string{"hash", "parent_hash"}),
	}).CreateInBatches(rows, 500).Error)
}

// BlockHashes reads the stored hashes of blocks from..to of a chain, by number.
func (t *Tx) BlockHashes(chainID, from, to int64) (map[int64]string, error) {
	var rows []chainBlockRow
	if err := t.db.Where("chain_id = ? AND number BETWEEN ? AND ?", chainID, from, to).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.Number] = r.Hash
	}
	return out, nil
}

// ForgetBlocks drops a chain's stored blocks above number (orphaned) and below keepFrom (older
// than any reorg the watcher checks for).
func (t *Tx) ForgetBlocks(chainID, above, keepFrom int64) error {
	return translate(t.db.Where("chain_id = ? AND (number > ? OR number < ?)", chainID, above, keepFrom).Delete(&chainBlockRow{}).Error)
}

// RecordTransfer stores a transfer seen in the canonical chain. One already recorded is left
// as it is — unless a reorg orphaned it and it reappeared, in which case it counts again in its
// new block. The gateway's own gas top-ups to deposit addresses are not customers' transfers
// and are not recorded: a top-up's attempt is stored before it is broadcast, so it is always
// known by the time it is mined. It reports whether anything was written.
func (t *Tx) RecordTransfer(tr Transfer) (bool, error) {
	if ours, err := t.IsGasTopup(tr.TxHash); err != nil || ours {
		return false, err
	}
	row := transferRow{ID: tr.ID, ChainID: tr.ChainID, TxHash: strings.ToLower(tr.TxHash), LogIndex: tr.LogIndex,
		BlockNumber: tr.BlockNumber, BlockHash: tr.BlockHash, BlockTime: tr.BlockTime.UTC(), TokenID: tr.TokenID,
		FromAddress: strings.ToLower(tr.From), ToAddress: strings.ToLower(tr.To), Amount: tr.Amount,
		DepositAddressID: tr.DepositAddressID, PaymentID: tr.PaymentID, Status: TransferSeen, CreatedAt: tr.CreatedAt.UTC(),
		UpdatedAt: tr.CreatedAt.UTC()}
	res := t.db.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "chain_id"}, {Name: "tx_hash"}, {Name: "log_index"}},
		DoUpdates: clause.Assignments(map[string]any{"block_number": row.BlockNumber, "block_hash": row.BlockHash,
			"block_time": row.BlockTime, "status": TransferSeen, "updated_at": row.UpdatedAt}),
		Where: clause.Where{Exprs: []clause.Expression{
			clause.Eq{Column: clause.Column{Table: "transfers", Name: "status"}, Value: TransferOrphaned}}},
	}).Create(&row)
	if res.Error != nil {
		return false, translate(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// OrphanTransfers un-counts a chain's transfers in blocks above number (a reorg replaced
// them) and returns the payments they belonged to. Confirmed ones are returned too: the caller
// reports a reorg deeper than the confirmation depth, which nothing can undo.
func (t *Tx) OrphanTransfers(chainID, above int64, now time.Time) (seen []Transfer, confirmed []Transfer, err error) {
	var rows []transferRow
	if err := t.db.Where("chain_id = ? AND block_number > ? AND status <> ?", chainID, above, TransferOrphaned).Find(&rows).Error; err != nil {
		return nil, nil, translate(err)
	}
	for _, r := range rows {
		if r.Status == TransferConfirmed {
			confirmed = append(confirmed, r.domain())
			continue
		}
		seen = append(seen, r.domain())
	}
	if len(seen) == 0 {
		return seen, confirmed, nil
	}
	err = t.db.Model(&transferRow{}).Where("chain_id = ? AND block_number > ? AND status = ?", chainID, above, TransferSeen).
		Updates(map[string]any{"status": TransferOrphaned, "updated_at": now.UTC()}).Error
	return seen, confirmed, translate(err)
}

// ConfirmTransfers marks a chain's seen transfers in blocks up to number confirmed and returns
// them.
func (t *Tx) ConfirmTransfers(chainID, upTo int64, now time.Time) ([]Transfer, error) {
	var rows []transferRow
	if err := t.db.Where("chain_id = ? AND status = ? AND block_number <= ?", chainID, TransferSeen, upTo).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	if err := t.db.Model(&transferRow{}).Where("chain_id = ? AND status = ? AND block_number <= ?", chainID, TransferSeen, upTo).
		Updates(map[string]any{"status": TransferConfirmed, "updated_at": now.UTC()}).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		r.Status = TransferConfirmed
		out[i] = r.domain()
	}
	return out, nil
}

// PaymentTransfers lists the transfers attributed to a payment, in chain order.
func (t *Tx) PaymentTransfers(paymentID uuid.UUID) ([]Transfer, error) {
	var rows []transferRow
	if err := t.db.Where("payment_id = ?", paymentID).Order("block_number, log_index").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// UnassignedTransfers lists up to limit transfers of a chain to customers' reusable addresses
// not yet attributed to a payment.
func (t *Tx) UnassignedTransfers(chainID int64, limit int) ([]Transfer, error) {
	var rows []transferRow
	if err := t.db.Where("chain_id = ? AND payment_id IS NULL AND status <> ?", chainID, TransferOrphaned).
		Order("block_number, log_index").Limit(limit).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// AssignTransfer attributes an unattributed transfer to a payment.
func (t *Tx) AssignTransfer(id, paymentID uuid.UUID) error {
	res := t.db.Model(&transferRow{}).Where("id = ? AND payment_id IS NULL", id).Update("payment_id", paymentID)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: transfer %s is already attributed", ErrConflict, id)
	}
	return nil
}

// MarkCredited records that the merchant's balance holds these transfers.
func (t *Tx) MarkCredited(ids []uuid.UUID, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return translate(t.db.Model(&transferRow{}).Where("id IN ?", ids).
		Updates(map[string]any{"credited": true, "updated_at": now.UTC()}).Error)
}

// UncreditedTransfers lists up to limit confirmed transfers of a chain that no credit holds yet,
// attributed to a payment that is final (its settlement did not count them).
func (t *Tx) UncreditedTransfers(chainID int64, limit int) ([]Transfer, error) {
	var rows []transferRow
	err := t.db.Model(&transferRow{}).Select("transfers.*").Joins("JOIN payments ON payments.id = transfers.payment_id").
		Where("transfers.chain_id = ? AND transfers.status = ? AND NOT transfers.credited AND payments.status IN ?", chainID,
			TransferConfirmed, []domain.PaymentStatus{domain.PaymentCompleted, domain.PaymentExpired, domain.PaymentFailed, domain.PaymentCancelled}).
		Order("transfers.block_number, transfers.log_index").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// OpenPaymentsWithTransfers lists up to limit open payments that have a transfer on a chain,
// for the watcher to settle.
func (t *Tx) OpenPaymentsWithTransfers(chainID int64, limit int) ([]uuid.UUID, error) {
	// From the open payments (their partial index, by expiry: the most urgent first), never from
	// the chain's transfers, which only grow.
	var ids []uuid.UUID
	err := t.db.Model(&paymentRow{}).
		Where("payments.status IN ? AND EXISTS (SELECT 1 FROM transfers WHERE transfers.payment_id = payments.id AND transfers.chain_id = ?)",
			[]domain.PaymentStatus{domain.PaymentPending, domain.PaymentProcessing}, chainID).
		Order("payments.expires_at").Limit(limit).Pluck("payments.id", &ids).Error
	return ids, translate(err)
}

// WatchedAddress is a deposit address the watcher follows: the payment it belongs to, or none
// for a customer's reusable address (each transfer is attributed when it is settled).
type WatchedAddress struct {
	DepositAddressID uuid.UUID
	MerchantID       uuid.UUID
	PaymentID        *uuid.UUID
}

// WatchedAddresses lists the deposit addresses to follow: those of payments open or expired
// within grace of since, and every customer's reusable address, keyed by lowercase address.
func (t *Tx) WatchedAddresses(since time.Time, grace time.Duration) (map[string]WatchedAddress, error) {
	type row struct {
		ID         uuid.UUID
		MerchantID uuid.UUID
		PaymentID  *uuid.UUID
		Address    string
	}
	var rows []row
	open := []domain.PaymentStatus{domain.PaymentPending, domain.PaymentProcessing}
	err := t.db.Raw(`SELECT da.id, da.merchant_id, da.payment_id, da.address FROM deposit_addresses da
		WHERE da.customer_ref_id IS NULL AND da.id IN (
			SELECT deposit_address_id FROM payments WHERE status IN ? UNION
			SELECT deposit_address_id FROM payments WHERE expires_at > ?)
		UNION ALL
		SELECT da.id, da.merchant_id, da.payment_id, da.address FROM deposit_addresses da WHERE da.customer_ref_id IS NOT NULL`,
		open, since.Add(-grace).UTC()).Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[string]WatchedAddress, len(rows))
	for _, r := range rows {
		out[strings.ToLower(r.Address)] = WatchedAddress{DepositAddressID: r.ID, MerchantID: r.MerchantID, PaymentID: r.PaymentID}
	}
	return out, nil
}

// OpenPaymentAt finds the newest open payment using a deposit address (ErrNotFound: none).
func (t *Tx) OpenPaymentAt(depositAddressID uuid.UUID) (uuid.UUID, error) {
	var ids []uuid.UUID
	err := t.db.Model(&paymentRow{}).Where("deposit_address_id = ? AND status IN ?", depositAddressID,
		[]domain.PaymentStatus{domain.PaymentPending, domain.PaymentProcessing}).Order("created_at DESC").Limit(1).Pluck("id", &ids).Error
	if err != nil {
		return uuid.Nil, translate(err)
	}
	if len(ids) == 0 {
		return uuid.Nil, ErrNotFound
	}
	return ids[0], nil
}

// DepositAddressByID reads a deposit address.
func (t *Tx) DepositAddressByID(id uuid.UUID) (domain.DepositAddress, error) {
	var r depositAddressRow
	if err := t.db.Take(&r, "id = ?", id).Error; err != nil {
		return domain.DepositAddress{}, translate(err)
	}
	return r.domain(), nil
}

// ResetChain starts a chain over (its node now serves a different genesis): the stored blocks
// are forgotten and transfers still unconfirmed there are orphaned; they are returned.
func (t *Tx) ResetChain(chainID int64, now time.Time) ([]Transfer, error) {
	if err := t.db.Where("chain_id = ?", chainID).Delete(&chainBlockRow{}).Error; err != nil {
		return nil, translate(err)
	}
	seen, _, err := t.OrphanTransfers(chainID, -1, now)
	return seen, err
}
