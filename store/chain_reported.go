package store

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// Transfers recorded ahead of the watcher: a checkout page reports the hash of the transaction
// its wallet sent, the server reads it from the chain at once and records its transfers through
// RecordTransfer like the watcher does (Transfer.Reported). Such a transfer may sit in a block the
// watcher has not scanned yet; when the watcher scans that block and finds another block there
// (a reorg since the report), OrphanStaleTransfers un-counts it, and the scan's own record revives
// it if the transaction is in the new branch. It is confirmed only once the watcher's cursor is
// its chain's depth past its block, as any transfer.

// TxTransfers lists the transfers a chain's transaction made to one deposit address, in log order.
func (t *Tx) TxTransfers(chainID int64, txHash string, depositAddressID uuid.UUID) ([]Transfer, error) {
	var rows []transferRow
	err := t.db.Where("chain_id = ? AND tx_hash = ? AND deposit_address_id = ?", chainID, strings.ToLower(txHash), depositAddressID).
		Order("log_index").Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// MarkReported records that a checkout page reported these transfers' transaction and the
// server read them from the chain on that report (whoever recorded them first).
func (t *Tx) MarkReported(ts []Transfer, now time.Time) error {
	for _, tr := range ts {
		err := t.db.Model(&transferRow{}).Where("chain_id = ? AND tx_hash = ? AND log_index = ? AND NOT reported", tr.ChainID,
			strings.ToLower(tr.TxHash), tr.LogIndex).Updates(map[string]any{"reported": true, "updated_at": now.UTC()}).Error
		if err != nil {
			return translate(err)
		}
	}
	return nil
}

// OrphanStaleTransfers un-counts a chain's seen transfers in the blocks just scanned whose block
// hash is not the scanned block's (recorded from a report before a reorg replaced their block).
// It reports how many.
func (t *Tx) OrphanStaleTransfers(chainID int64, scanned []BlockRef, now time.Time) (int, error) {
	if len(scanned) == 0 {
		return 0, nil
	}
	canonical := make(map[int64]string, len(scanned))
	from, to := scanned[0].Number, scanned[0].Number
	for _, b := range scanned {
		canonical[b.Number] = strings.ToLower(b.Hash)
		from, to = min(from, b.Number), max(to, b.Number)
	}
	var rows []transferRow
	if err := t.db.Select("id", "block_number", "block_hash").
		Where("chain_id = ? AND status = ? AND block_number BETWEEN ? AND ?", chainID, TransferSeen, from, to).Find(&rows).Error; err != nil {
		return 0, translate(err)
	}
	var stale []uuid.UUID
	for _, r := range rows {
		if h, ok := canonical[r.BlockNumber]; ok && h != strings.ToLower(r.BlockHash) {
			stale = append(stale, r.ID)
		}
	}
	if len(stale) == 0 {
		return 0, nil
	}
	err := t.db.Model(&transferRow{}).Where("id IN ? AND status = ?", stale, TransferSeen).
		Updates(map[string]any{"status": TransferOrphaned, "updated_at": now.UTC()}).Error
	return len(stale), translate(err)
}
