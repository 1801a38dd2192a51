package store

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// Logical outgoing transactions and their signed attempts: stored before they are broadcast.

// HasOpenOutgoing reports whether a sender has a transaction in flight on a chain (signed, mined
// but not confirmed, or in conflict).
func (t *Tx) HasOpenOutgoing(chainID int64, sender string) (bool, error) {
	var n int64
	err := t.db.Model(&outgoingTxRow{}).Where("chain_id = ? AND sender = ? AND status IN ?", chainID, strings.ToLower(sender),
		[]OutgoingStatus{OutgoingSigned, OutgoingMined, OutgoingConflict}).Limit(1).Count(&n).Error
	return n > 0, translate(err)
}

// InsertOutgoingTx stores a logical transaction and its first attempt.
func (t *Tx) InsertOutgoingTx(o OutgoingTx) error {
	row := outgoingTxRow{ID: o.ID, ChainID: o.ChainID, Sender: strings.ToLower(o.Sender), Nonce: o.Nonce, Kind: o.Kind,
		KeyIndex: o.KeyIndex, GenesisHash: nonEmpty(o.GenesisHash), WithdrawalID: o.WithdrawalID, RefundID: o.RefundID, TokenID: o.TokenID, Recipient: strings.ToLower(o.Recipient), AmountAsset: o.AmountAsset,
		RateUSD: o.RateUSD, TxTo: strings.ToLower(o.TxTo), TxValue: o.TxValue, TxData: o.TxData, AuthList: nonEmpty(o.AuthList), GasLimit: o.GasLimit,
		Status: OutgoingSigned, CreatedAt: o.CreatedAt, UpdatedAt: o.CreatedAt}
	if err := t.db.Create(&row).Error; err != nil {
		return translate(err)
	}
	for _, a := range o.Attempts {
		if err := t.InsertAttempt(a); err != nil {
			return err
		}
	}
	return nil
}

// InsertAttempt stores a signed attempt (before it is broadcast).
func (t *Tx) InsertAttempt(a TxAttempt) error {
	return translate(t.db.Create(&txAttemptRow{ID: a.ID, OutgoingTxID: a.OutgoingTxID, Hash: strings.ToLower(a.Hash), Raw: a.Raw,
		TipCap: a.TipCap, FeeCap: a.FeeCap, CreatedAt: a.CreatedAt}).Error)
}

// MarkBroadcast records an attempt's broadcast: at, or the error the node answered.
func (t *Tx) MarkBroadcast(attemptID uuid.UUID, at time.Time, failure string) error {
	updates := map[string]any{"broadcast_at": at.UTC(), "last_error": nil}
	if failure != "" {
		updates = map[string]any{"last_error": failure}
	}
	return translate(t.db.Model(&txAttemptRow{}).Where("id = ?", attemptID).Updates(updates).Error)
}

// SetOutgoing moves a logical transaction: status, the mined attempt (nil clears it: a reorg
// dropped the receipt), an error.
func (t *Tx) SetOutgoing(id uuid.UUID, status OutgoingStatus, minedHash *string, minedBlock *int64, minedBlockHash *string, failure *string, now time.Time) error {
	return translate(t.db.Model(&outgoingTxRow{}).Where("id = ?", id).Updates(map[string]any{
		"status": status, "mined_hash": minedHash, "mined_block": minedBlock, "mined_block_hash": minedBlockHash,
		"error": failure, "updated_at": now.UTC()}).Error)
}

// OpenOutgoingTxs lists a chain's logical transactions still in flight (signed, mined, or in
// conflict — a receipt may still appear), of one sender ("" for every sender: the hot wallet and
// the deposit addresses being swept), by sender and nonce, with their attempts.
func (t *Tx) OpenOutgoingTxs(chainID int64, sender string) ([]OutgoingTx, error) {
	var rows []outgoingTxRow
	q := t.db.Where("chain_id = ? AND status IN ?", chainID, []OutgoingStatus{OutgoingSigned, OutgoingMined, OutgoingConflict})
	if sender != "" {
		q = q.Where("sender = ?", strings.ToLower(sender))
	}
	if err := q.Order("sender, nonce").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	return t.withAttempts(rows)
}

// OutgoingTxsByID reads logical transactions with their attempts.
func (t *Tx) OutgoingTxsByID(ids []uuid.UUID) ([]OutgoingTx, error) {
	var rows []outgoingTxRow
	if err := t.db.Where("id IN ?", ids).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	return t.withAttempts(rows)
}

// OutgoingForWithdrawal reads the payout transaction of a withdrawal (ErrNotFound: none yet).
func (t *Tx) OutgoingForWithdrawal(withdrawalID uuid.UUID) (OutgoingTx, error) {
	var row outgoingTxRow
	if err := t.db.Take(&row, "withdrawal_id = ?", withdrawalID).Error; err != nil {
		return OutgoingTx{}, translate(err)
	}
	out, err := t.withAttempts([]outgoingTxRow{row})
	if err != nil {
		return OutgoingTx{}, err
	}
	return out[0], nil
}

// OutgoingForRefund reads the payout transaction of a refund (ErrNotFound: none yet).
func (t *Tx) OutgoingForRefund(refundID uuid.UUID) (OutgoingTx, error) {
	var row outgoingTxRow
	if err := t.db.Take(&row, "refund_id = ?", refundID).Error; err != nil {
		return OutgoingTx{}, translate(err)
	}
	out, err := t.withAttempts([]outgoingTxRow{row})
	if err != nil {
		return OutgoingTx{}, err
	}
	return out[0], nil
}

func (t *Tx) withAttempts(rows []outgoingTxRow) ([]OutgoingTx, error) {
	out := make([]OutgoingTx, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var atts []txAttemptRow
	if err := t.db.Where("outgoing_tx_id IN ?", ids).Order("created_at, id").Find(&atts).Error; err != nil {
		return nil, translate(err)
	}
	by := map[uuid.UUID][]TxAttempt{}
	for _, a := range atts {
		by[a.OutgoingTxID] = append(by[a.OutgoingTxID], TxAttempt{ID: a.ID, OutgoingTxID: a.OutgoingTxID, Hash: a.Hash, Raw: a.Raw,
			TipCap: a.TipCap, FeeCap: a.FeeCap, CreatedAt: a.CreatedAt.UTC(), BroadcastAt: a.BroadcastAt, LastError: a.LastError})
	}
	for i, r := range rows {
		out[i] = OutgoingTx{ID: r.ID, ChainID: r.ChainID, Sender: r.Sender, Nonce: r.Nonce, Kind: r.Kind, KeyIndex: r.KeyIndex,
			GenesisHash:  deref(r.GenesisHash),
			WithdrawalID: r.WithdrawalID, RefundID: r.RefundID,
			TokenID: r.TokenID, Recipient: r.Recipient, AmountAsset: r.AmountAsset, RateUSD: r.RateUSD, TxTo: r.TxTo, TxValue: r.TxValue,
			TxData: r.TxData, AuthList: deref(r.AuthList), GasLimit: r.GasLimit, Status: r.Status, MinedHash: r.MinedHash, MinedBlock: r.MinedBlock,
			MinedBlockHash: r.MinedBlockHash, Error: r.Error, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
			Attempts: by[r.ID]}
	}
	return out, nil
}
