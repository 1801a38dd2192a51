package store

import (
	"time"

	"gorm.io/gorm/clause"
)

// ChainHealth is a chain's health as the worker process publishing it last saw it.
type ChainHealth struct {
	ChainID   int64
	State     string // chain.State: up, degraded, down, wrong_chain_id
	Serving   bool   // offered in new quotes
	UpdatedAt time.Time
}

type chainHealthRow struct {
	ChainID   int64 `gorm:"primaryKey;autoIncrement:false"`
	State     string
	Serving   bool
	UpdatedAt time.Time
}

func (chainHealthRow) TableName() string { return "chain_health" }

// PublishChainHealth records each chain's health (one upsert per chain).
func (t *Tx) PublishChainHealth(hs []ChainHealth) error {
	for _, h := range hs {
		row := chainHealthRow{ChainID: h.ChainID, State: h.State, Serving: h.Serving, UpdatedAt: h.UpdatedAt.UTC()}
		err := t.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "chain_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"state", "serving", "updated_at"})}).Create(&row).Error
		if err != nil {
			return translate(err)
		}
	}
	return nil
}

// PublishedChainHealth reads every chain's published health.
func (t *Tx) PublishedChainHealth() (map[int64]ChainHealth, error) {
	var rows []chainHealthRow
	if err := t.db.Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make(map[int64]ChainHealth, len(rows))
	for _, r := range rows {
		out[r.ChainID] = ChainHealth{ChainID: r.ChainID, State: r.State, Serving: r.Serving, UpdatedAt: r.UpdatedAt.UTC()}
	}
	return out, nil
}
