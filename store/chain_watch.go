package store

import (
	"fmt"
	"time"

	"gorm.io/gorm/clause"
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

// ResetChain starts a chain over (its node now serves a different genesis): the stored blocks
// are forgotten and transfers still unconfirmed there are orphaned; they are returned.
func (t *Tx) ResetChain(chainID int64, now time.Time) ([]Transfer, error) {
	if err := t.db.Where("chain_id = ?", chainID).Delete(&chainBlockRow{}).Error; err != nil {
		return nil, translate(err)
	}
	seen, _, err := t.OrphanTransfers(chainID, -1, now)
	return seen, err
}
