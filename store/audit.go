package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// The audit log: append-only (the database's triggers refuse UPDATE and DELETE), read newest
// first with keyset paging on the id, which grows with every entry.

// AuditEntry is one recorded change.
type AuditEntry struct {
	ID         int64
	MerchantID uuid.UUID
	At         time.Time // zero: now
	ActorKind  string    // person, service, operator or system
	ActorID    string
	ActorLabel string
	IP         string
	UserAgent  string
	Action     string
	TargetType string
	TargetID   string
	Details    map[string]any // never a secret
}

type auditRow struct {
	ID         int64 `gorm:"primaryKey;autoIncrement"`
	MerchantID uuid.UUID
	At         time.Time
	ActorKind  string
	ActorID    string
	ActorLabel string
	IP         string `gorm:"column:ip"`
	UserAgent  string
	Action     string
	TargetType string
	TargetID   string
	Details    string
}

func (auditRow) TableName() string { return "audit_log" }

// MaxAuditPage bounds one page of the audit log.
const MaxAuditPage = 200

// AppendAudit appends an entry; call it in the transaction of the change it records.
func (t *Tx) AppendAudit(e AuditEntry) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if e.ActorKind == "" {
		e.ActorKind = "system"
	}
	details := []byte("{}")
	if len(e.Details) > 0 {
		var err error
		if details, err = json.Marshal(e.Details); err != nil {
			return fmt.Errorf("store: audit details: %w", err)
		}
	}
	return translate(t.db.Create(&auditRow{MerchantID: e.MerchantID, At: e.At.UTC(), ActorKind: e.ActorKind, ActorID: e.ActorID,
		ActorLabel: e.ActorLabel, IP: e.IP, UserAgent: e.UserAgent, Action: e.Action, TargetType: e.TargetType,
		TargetID: e.TargetID, Details: string(details)}).Error)
}

// AuditFilter selects a merchant's entries; zero fields select everything.
type AuditFilter struct {
	MerchantID uuid.UUID
	Action     string
	ActorID    string
	TargetID   string
	From, To   *time.Time // at >= From, at < To
	Before     int64      // entries older than this id (the previous page's NextBefore)
	Limit      int        // 1..MaxAuditPage (others: MaxAuditPage)
}

// AuditLog lists entries newest first; next is the Before of the following page (0: none).
func (t *Tx) AuditLog(f AuditFilter) (entries []AuditEntry, next int64, err error) {
	if f.Limit <= 0 || f.Limit > MaxAuditPage {
		f.Limit = MaxAuditPage
	}
	q := t.db.Model(&auditRow{}).Where("merchant_id = ?", f.MerchantID)
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.ActorID != "" {
		q = q.Where("actor_id = ?", f.ActorID)
	}
	if f.TargetID != "" {
		q = q.Where("target_id = ?", f.TargetID)
	}
	if f.From != nil {
		q = q.Where("at >= ?", f.From.UTC())
	}
	if f.To != nil {
		q = q.Where("at < ?", f.To.UTC())
	}
	if f.Before > 0 {
		q = q.Where("id < ?", f.Before)
	}
	var rows []auditRow
	if err := q.Order("id DESC").Limit(f.Limit + 1).Find(&rows).Error; err != nil {
		return nil, 0, translate(err)
	}
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		next = rows[len(rows)-1].ID
	}
	entries = make([]AuditEntry, len(rows))
	for i, r := range rows {
		e := AuditEntry{ID: r.ID, MerchantID: r.MerchantID, At: r.At.UTC(), ActorKind: r.ActorKind, ActorID: r.ActorID,
			ActorLabel: r.ActorLabel, IP: r.IP, UserAgent: r.UserAgent, Action: r.Action, TargetType: r.TargetType,
			TargetID: r.TargetID, Details: map[string]any{}}
		if err := json.Unmarshal([]byte(r.Details), &e.Details); err != nil {
			return nil, 0, fmt.Errorf("store: audit entry %d details: %w", r.ID, err)
		}
		entries[i] = e
	}
	return entries, next, nil
}
