package store

import (
	"errors"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The nonces of the transaction manager: one counter per (chain, sender).

// TakeNonce takes the sender's next nonce on a chain under a row lock and advances it. The
// stored value is the source of truth; atLeast (the chain's count of the sender's mined
// transactions) only moves it forward — a nonce below it can never be mined again. On a chain
// whose genesis is not the one the stored nonce was counted on, the count starts over from
// atLeast when restart allows it (a development chain restarted); otherwise it is
// ErrGenesisChanged: a node serving another chain under the same id must not be paid from.
func (t *Tx) TakeNonce(chainID int64, sender string, atLeast int64, genesis string, restart bool) (int64, error) {
	sender = strings.ToLower(sender)
	var row txNonceRow
	err := t.forUpdate().Take(&row, "chain_id = ? AND sender = ?", chainID, sender).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		if err := t.db.Create(&txNonceRow{ChainID: chainID, Sender: sender, NextNonce: atLeast + 1, GenesisHash: &genesis}).Error; err != nil {
			return 0, translate(err)
		}
		return atLeast, nil
	}
	if err != nil {
		return 0, translate(err)
	}
	n := max(row.NextNonce, atLeast)
	if row.GenesisHash == nil {
		// Rows from before genesis hashes were kept: this sender's transactions were for the chain
		// as it is now. Saying so keeps their nonces unique against the ones taken from now on.
		if err := t.db.Model(&outgoingTxRow{}).Where("chain_id = ? AND sender = ? AND genesis_hash IS NULL", chainID, sender).
			Update("genesis_hash", genesis).Error; err != nil {
			return 0, translate(err)
		}
	} else if *row.GenesisHash != genesis {
		if !restart {
			return 0, ErrGenesisChanged
		}
		n = atLeast
	}
	if err := t.db.Model(&txNonceRow{}).Where("chain_id = ? AND sender = ?", chainID, sender).
		Updates(map[string]any{"next_nonce": n + 1, "genesis_hash": genesis}).Error; err != nil {
		return 0, translate(err)
	}
	return n, nil
}

// TakeChainNonce takes the chain's own count as a sender's next nonce (and stores the one after
// it). It is for a deposit address being swept, with nothing of ours in flight from it
// (HasOpenOutgoing): then the chain's count is the truth, whatever was given up before.
func (t *Tx) TakeChainNonce(chainID int64, sender string, chainNonce int64, genesis string) (int64, error) {
	row := txNonceRow{ChainID: chainID, Sender: strings.ToLower(sender), NextNonce: chainNonce + 1, GenesisHash: &genesis}
	err := t.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "chain_id"}, {Name: "sender"}},
		DoUpdates: clause.AssignmentColumns([]string{"next_nonce", "genesis_hash"})}).Create(&row).Error
	return chainNonce, translate(err)
}
