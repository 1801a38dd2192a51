package tests

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// auditLog reads the merchant's audit log through the API with a query.
func (e *env) auditLog(merchantID uuid.UUID, query string) (items []map[string]any, next any) {
	e.t.Helper()
	r := e.do(http.MethodGet, "/v1/merchants/"+merchantID.String()+"/audit-log"+query, "", nil, bearerHeader(e.token(merchantID, dashauth.ScopeRead))...)
	require.Equal(e.t, http.StatusOK, r.Status, string(r.Body))
	page := r.JSON(e.t)
	for _, it := range page["items"].([]any) {
		items = append(items, it.(map[string]any))
	}
	return items, page["nextBefore"]
}

// The audit log: an entry for each recorded change, written with the change, naming the actor
// (a dashboard token's subject, a secret key's id and prefix), its address and user agent;
// filters and keyset paging; secrets never in it.
func TestAuditLogRecordsChanges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		c := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		m := c.Merchant.ID
		base := "/v1/merchants/" + m.String()
		ua := []string{"User-Agent", "audit-test/1.0"}
		tok := append(bearerHeader(e.token(m, dashauth.ScopeWrite)), ua...)

		r := e.do(http.MethodPost, base+"/api-keys", "", map[string]any{"mode": "live"}, tok...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		key := r.JSON(t)
		keyID := key["key"].(map[string]any)["id"].(string)
		require.Equal(t, http.StatusOK, e.do(http.MethodDelete, base+"/api-keys/"+keyID, "", nil, tok...).Status)
		require.Equal(t, http.StatusOK, e.do(http.MethodDelete, base+"/api-keys/"+keyID, "", nil, tok...).Status) // no change: no entry

		r = e.do(http.MethodPost, base+"/webhooks", "", map[string]any{"url": "https://93.184.215.14/hook?token=sekrit"}, tok...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		ep := r.JSON(t)
		epID := ep["endpoint"].(map[string]any)["id"].(string)
		require.Equal(t, http.StatusOK, e.do(http.MethodPost, base+"/webhooks/"+epID+"/rotate-secret", "", nil, tok...).Status)
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, base+"/webhooks/"+epID, "", nil, tok...).Status)

		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", map[string]any{"minAmountInCents": 500, "withdrawalsEnabled": true}, tok...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		r = e.do(http.MethodPut, base+"/accepted-assets", "", map[string]any{"assets": []string{"eip155:8453/USDC"}}, tok...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))

		// A withdrawal by secret key, cancelled by the dashboard.
		e.fund(c.SecretKey, 5_000)
		r = e.do(http.MethodPost, withdrawalsPath, c.SecretKey, withdrawal(1_000), ua...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		wID := r.JSON(t)["id"].(string)
		require.Equal(t, http.StatusOK, e.do(http.MethodPost, base+"/withdrawals/"+wID+"/cancel", "", nil, tok...).Status)

		items, next := e.auditLog(m, "")
		assert.Nil(t, next)
		byAction := map[string][]map[string]any{}
		for _, it := range items {
			byAction[it["action"].(string)] = append(byAction[it["action"].(string)], it)
		}
		for _, want := range []string{"api_key.created", "api_key.revoked", "webhook_endpoint.created", "webhook_endpoint.secret_rotated",
			"webhook_endpoint.deleted", "settings.withdrawal_config_updated", "settings.withdrawals_enabled_changed",
			"settings.accepted_assets_updated", "withdrawal.created", "withdrawal.cancelled"} {
			assert.Len(t, byAction[want], 1, want)
		}
		// Newest first.
		assert.Equal(t, "withdrawal.cancelled", items[0]["action"])
		created := byAction["api_key.created"][0]
		actor := created["actor"].(map[string]any)
		assert.Equal(t, "service", actor["kind"])
		assert.Equal(t, m.String(), actor["id"], "the built-in issuer's token names the merchant")
		assert.Equal(t, "127.0.0.1", actor["ip"])
		assert.Equal(t, "audit-test/1.0", actor["userAgent"])
		assert.Equal(t, "api_key", created["targetType"])
		assert.Equal(t, keyID, created["targetId"])
		assert.Equal(t, "live", created["details"].(map[string]any)["mode"])
		// The secret-key request's actor is the key.
		wc := byAction["withdrawal.created"][0]
		wActor := wc["actor"].(map[string]any)
		assert.Equal(t, "service", wActor["kind"])
		assert.Equal(t, c.Key.ID.String(), wActor["id"])
		assert.Equal(t, c.KeyPrefix, wActor["label"])
		assert.Equal(t, "audit-test/1.0", wActor["userAgent"])
		assert.Equal(t, wID, wc["targetId"])
		// No secret: not the key, the webhook secret, nor the URL's query.
		r = e.do(http.MethodGet, base+"/audit-log", "", nil, bearerHeader(e.token(m, dashauth.ScopeRead))...)
		for _, secret := range []string{key["secretKey"].(string), ep["secret"].(string), "sekrit", c.SecretKey} {
			assert.NotContains(t, string(r.Body), secret)
		}
		assert.Equal(t, "93.184.215.14", byAction["webhook_endpoint.created"][0]["details"].(map[string]any)["host"])

		// Filters.
		got, _ := e.auditLog(m, "?action=api_key.revoked")
		require.Len(t, got, 1)
		assert.Equal(t, keyID, got[0]["targetId"])
		got, _ = e.auditLog(m, "?targetId="+epID)
		assert.Len(t, got, 3)
		got, _ = e.auditLog(m, "?actorId="+c.Key.ID.String())
		assert.Len(t, got, 1)
		got, _ = e.auditLog(m, "?to=2000-01-01T00:00:00Z")
		assert.Empty(t, got)
		got, _ = e.auditLog(m, "?from=2000-01-01T00:00:00Z&action=withdrawal.created")
		assert.Len(t, got, 1)
		// Another merchant's log is its own.
		o := e.merchant(merchantOpts{name: "Other"}).Merchant.ID
		got, _ = e.auditLog(o, "")
		assert.Empty(t, got)
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodGet, base+"/audit-log", "", nil, bearerHeader(e.token(o, dashauth.ScopeRead))...).Status)

		// Keyset paging: pages of 3 give every entry once, in order.
		var paged []any
		query := "?limit=3"
		for {
			page, next := e.auditLog(m, query)
			require.LessOrEqual(t, len(page), 3)
			for _, it := range page {
				paged = append(paged, it["id"])
			}
			if next == nil {
				break
			}
			query = "?limit=3&before=" + jsonNumber(next)
		}
		var all []any
		for _, it := range items {
			all = append(all, it["id"])
		}
		assert.Equal(t, all, paged)

		// The command line acts as the operator.
		k2, err := e.app.Merchants.CreateKey(context.Background(), m, domain.ModeTest)
		require.NoError(t, err)
		_, err = e.app.Merchants.RevokeKeys(audit.WithActor(context.Background(), audit.Operator), k2.KeyPrefix)
		require.NoError(t, err)
		got, _ = e.auditLog(m, "?targetId="+k2.Key.ID.String())
		require.Len(t, got, 2)
		assert.Equal(t, "api_key.revoked", got[0]["action"])
		assert.Equal(t, "operator", got[0]["actor"].(map[string]any)["kind"])
		assert.Equal(t, "system", got[1]["actor"].(map[string]any)["kind"], "no actor in the context: the system")

		// Read-only: the path has no other method.
		assert.Equal(t, http.StatusMethodNotAllowed, e.do(http.MethodDelete, base+"/audit-log", "", nil, tok...).Status)
		assert.Equal(t, http.StatusBadRequest, e.do(http.MethodGet, base+"/audit-log?limit=201", "", nil, tok...).Status)
	})
}

func jsonNumber(v any) string { return strconv.FormatInt(int64(v.(float64)), 10) }

// The database itself refuses to change or delete an audit entry, whatever the caller.
func TestAuditLogAppendOnly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		c := e.merchant(merchantOpts{})
		ctx := context.Background()
		require.NoError(t, e.app.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.AppendAudit(store.AuditEntry{MerchantID: c.Merchant.ID, ActorKind: "system", Action: "test.appended"})
		}))
		db, err := e.app.Store.SQLDB()
		require.NoError(t, err)
		stmts := []string{"UPDATE audit_log SET action = 'rewritten'", "DELETE FROM audit_log"}
		if e.app.Store.Dialect() == store.Postgres {
			stmts = append(stmts, "TRUNCATE audit_log")
		}
		for _, q := range stmts {
			_, err := db.ExecContext(ctx, q)
			require.Error(t, err, q)
			assert.Contains(t, err.Error(), "append-only", q)
		}
		entries, _, err := e.app.Store.Read(ctx).AuditLog(store.AuditFilter{MerchantID: c.Merchant.ID})
		require.NoError(t, err)
		require.Len(t, entries, 1)
		assert.Equal(t, "test.appended", entries[0].Action)
	})
}
