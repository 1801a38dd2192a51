package store

import (
	"time"

	"github.com/google/uuid"
)

// Operators' sweep requests: a sweep of a chain regardless of the threshold, taken up by a worker.

// SweepRequest is an operator's request for a sweep of one chain regardless of the threshold.
type SweepRequest struct {
	ID        uuid.UUID
	ChainID   int64
	CreatedAt time.Time
	StartedAt *time.Time
	DoneAt    *time.Time
	Result    *string
}

type sweepRequestRow struct {
	ID        uuid.UUID `gorm:"primaryKey"`
	ChainID   int64
	CreatedAt time.Time
	StartedAt *time.Time
	DoneAt    *time.Time
	Result    *string
}

func (sweepRequestRow) TableName() string { return "sweep_requests" }

func (r sweepRequestRow) domain() SweepRequest {
	return SweepRequest{ID: r.ID, ChainID: r.ChainID, CreatedAt: r.CreatedAt.UTC(), StartedAt: r.StartedAt, DoneAt: r.DoneAt,
		Result: r.Result}
}

// InsertSweepRequest stores an operator's request.
func (t *Tx) InsertSweepRequest(r SweepRequest) error {
	return translate(t.db.Create(&sweepRequestRow{ID: r.ID, ChainID: r.ChainID, CreatedAt: r.CreatedAt.UTC()}).Error)
}

// OpenSweepRequests lists a chain's requests not done yet, oldest first.
func (t *Tx) OpenSweepRequests(chainID int64) ([]SweepRequest, error) {
	var rows []sweepRequestRow
	if err := t.db.Where("chain_id = ? AND done_at IS NULL", chainID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]SweepRequest, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// GetSweepRequest reads one request.
func (t *Tx) GetSweepRequest(id uuid.UUID) (SweepRequest, error) {
	var row sweepRequestRow
	if err := t.db.Take(&row, "id = ?", id).Error; err != nil {
		return SweepRequest{}, translate(err)
	}
	return row.domain(), nil
}

// StartSweepRequests marks requests taken up by a worker (once).
func (t *Tx) StartSweepRequests(ids []uuid.UUID, now time.Time) error {
	return translate(t.db.Model(&sweepRequestRow{}).Where("id IN ? AND started_at IS NULL", ids).
		Update("started_at", now.UTC()).Error)
}

// FinishSweepRequests marks requests done with what the sweeps did.
func (t *Tx) FinishSweepRequests(ids []uuid.UUID, result string, now time.Time) error {
	return translate(t.db.Model(&sweepRequestRow{}).Where("id IN ? AND done_at IS NULL", ids).
		Updates(map[string]any{"done_at": now.UTC(), "result": result}).Error)
}
