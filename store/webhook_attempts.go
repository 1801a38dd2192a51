package store

import (
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm/clause"

	"github.com/paymentsd/paymentsd/domain"
)

// Due is a claimed delivery with what its attempt needs.
type Due struct {
	Delivery Delivery
	Event    domain.Event
	Endpoint Endpoint
}

// ClaimDue takes up to limit deliveries due at now for holder until now+lease: an attempt is
// made by one process. On PostgreSQL the rows are picked FOR UPDATE SKIP LOCKED, so processes
// claiming together take different rows; SQLite has one writer.
func (t *Tx) ClaimDue(holder string, now time.Time, lease time.Duration, limit int) ([]Due, error) {
	if t.readOnly {
		return nil, ErrLockOutsideTx
	}
	q := t.db.Model(&deliveryRow{}).Select("id").
		Where("status = ? AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until < ?)", DeliveryPending, now.UTC(), now.UTC()).
		Order("next_attempt_at, id").Limit(limit)
	if t.dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
	}
	var ids []uuid.UUID
	if err := q.Pluck("id", &ids).Error; err != nil {
		return nil, translate(err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if err := t.db.Model(&deliveryRow{}).Where("id IN ?", ids).
		Updates(map[string]any{"locked_until": now.Add(lease).UTC(), "locked_by": holder}).Error; err != nil {
		return nil, translate(err)
	}
	var rows []deliveryRow
	if err := t.db.Where("id IN ?", ids).Order("next_attempt_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Due, 0, len(rows))
	for _, r := range rows {
		var ev eventRow
		if err := t.db.Take(&ev, "id = ?", r.EventID).Error; err != nil {
			return nil, translate(err)
		}
		var ep endpointRow
		if err := t.db.Take(&ep, "id = ?", r.EndpointID).Error; err != nil {
			return nil, translate(err)
		}
		out = append(out, Due{Delivery: r.domain(), Event: ev.domain(), Endpoint: ep.domain()})
	}
	return out, nil
}

// AttemptOutcome is what an attempt leads to.
type AttemptOutcome struct {
	Status DeliveryStatus // pending (next at Next), delivered, failed
	Next   time.Time
}

// RecordAttempt logs an attempt and moves its delivery on — only while holder still holds it
// (ErrConflict otherwise: the lease ran out and another process took the delivery over).
func (t *Tx) RecordAttempt(holder string, a Attempt, out AttemptOutcome, now time.Time) error {
	updates := map[string]any{"status": out.Status, "attempts": a.Attempt, "locked_until": nil, "locked_by": nil,
		"updated_at": now.UTC()}
	if out.Status == DeliveryPending {
		updates["next_attempt_at"] = out.Next.UTC()
	}
	res := t.db.Model(&deliveryRow{}).Where("id = ? AND locked_by = ? AND status = ?", a.DeliveryID, holder, DeliveryPending).Updates(updates)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return ErrConflict
	}
	return translate(t.db.Create(&attemptRow{ID: a.ID, DeliveryID: a.DeliveryID, Attempt: a.Attempt, StartedAt: a.StartedAt.UTC(),
		LatencyMs: a.LatencyMS, StatusCode: a.StatusCode, Error: a.Error, ResponseHead: a.ResponseHead}).Error)
}
