-- +goose Up
-- The audit log (issue 22): who changed what on a merchant's account, appended in the
-- transaction of the change. Append-only by the database itself: triggers refuse UPDATE and
-- DELETE, so no code path rewrites history. Invitations gain revoked_at (a revoked link is dead).
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    at          DATETIME NOT NULL,
    actor_kind  TEXT NOT NULL CHECK (actor_kind IN ('person', 'service', 'operator', 'system')),
    actor_id    TEXT NOT NULL,
    actor_label TEXT NOT NULL,
    ip          TEXT NOT NULL,
    user_agent  TEXT NOT NULL,
    action      TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    details     TEXT NOT NULL
);
CREATE INDEX audit_log_merchant_idx ON audit_log (merchant_id, id);

-- +goose StatementBegin
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: UPDATE refused');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: DELETE refused');
END;
-- +goose StatementEnd

ALTER TABLE invitations ADD COLUMN revoked_at DATETIME;

-- +goose Down
ALTER TABLE invitations DROP COLUMN revoked_at;
DROP TABLE audit_log;
