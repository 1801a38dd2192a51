package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

// capturedQuery is one statement as the driver received it: SQL with bind placeholders and
// the bound values.
type capturedQuery struct {
	SQL  string
	Vars []any
}

// queryRecorder records every query the store's gorm handle runs while on.
type queryRecorder struct {
	mu      sync.Mutex
	on      bool
	queries []capturedQuery
}

func recordQueries(t *testing.T, db *gorm.DB) *queryRecorder {
	t.Helper()
	r := &queryRecorder{}
	require.NoError(t, db.Callback().Query().After("gorm:query").Register("test:record_queries", func(d *gorm.DB) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.on {
			r.queries = append(r.queries, capturedQuery{SQL: d.Statement.SQL.String(),
				Vars: append([]any(nil), d.Statement.Vars...)})
		}
	}))
	return r
}

func (r *queryRecorder) during(fn func()) []capturedQuery {
	r.mu.Lock()
	r.on, r.queries = true, nil
	r.mu.Unlock()
	fn()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.queries
}

// planNode is the part of EXPLAIN (FORMAT JSON) output the assertions read.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	IndexCond    string     `json:"Index Cond"`
	Plans        []planNode `json:"Plans"`
}

// explain plans q as PostgreSQL would run it with sequential scans priced out, returning the
// text plan and the root of the JSON plan.
func explain(t *testing.T, db *gorm.DB, q capturedQuery) (string, planNode) {
	t.Helper()
	ctx := context.Background()
	sqlDB, err := db.DB()
	require.NoError(t, err)
	tx, err := sqlDB.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off")
	require.NoError(t, err)

	rows, err := tx.QueryContext(ctx, "EXPLAIN "+q.SQL, q.Vars...)
	require.NoError(t, err, "EXPLAIN %s", q.SQL)
	var lines []string
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		lines = append(lines, line)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())

	var raw string
	require.NoError(t, tx.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+q.SQL, q.Vars...).Scan(&raw))
	var doc []struct {
		Plan planNode `json:"Plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &doc))
	require.Len(t, doc, 1)
	return strings.Join(lines, "\n"), doc[0].Plan
}

// walk visits every node of a plan tree.
func walk(n planNode, fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		walk(c, fn)
	}
}

// TestSearchAndListUseIndexes proves, on PostgreSQL, that every query ListPayments issues for
// the merchant list and its search reads payments, deposit_addresses and payment_receipts through
// an index lookup (an Index Cond), never a sequential or full-index scan.
func TestSearchAndListUseIndexes(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			if backend != "postgres" {
				t.Skip("query plans are PostgreSQL's; SQLite is the embedded single-node store")
			}
			ctx := context.Background()
			st := openMigrated(t, testdb.URL(t, backend))
			cat := loadCatalog(t, st)
			acme := createMerchant(t, st, "Acme Corp", "acmeshop")
			glob := createMerchant(t, st, "Globex", "globex")

			var acmeP []domain.Payment
			statuses := []domain.PaymentStatus{"pending", "completed", "expired", "failed"}
			for i := range 200 {
				s := paymentSpec{Type: []domain.PaymentType{"payment", "deposit"}[i%2], Status: statuses[i%len(statuses)],
					Amount: int64(100 + i*37%5000), CreatedAt: t0.Add(time.Duration(i) * time.Minute),
					Address: fmt.Sprintf("0x%02x%038x", i%256, i)}
				if s.Status == "completed" {
					s.Status = "pending" // settled below, through the store
				}
				acmeP = append(acmeP, insertPayment(t, st, cat, acme, s))
			}
			for i := range 60 {
				insertPayment(t, st, cat, glob, paymentSpec{Amount: int64(200 + i), CreatedAt: t0.Add(time.Duration(i) * time.Second),
					Address: fmt.Sprintf("0xee%038x", i)})
			}
			for i := 1; i < 200; i += 4 {
				settle(t, st, acmeP[i], fmt.Sprintf("0x%064x", 0xfeed0000+i), fmt.Sprintf("0x%040x", 0xcafe0000+i))
			}
			db := st.GormDB()
			require.NoError(t, db.Exec("ANALYZE").Error)
			rec := recordQueries(t, db)

			target := acmeP[137]
			cases := []struct {
				name   string
				filter store.PaymentFilter
				total  int64
			}{
				{"list newest first", store.PaymentFilter{SortBy: "created_at"}, 200},
				{"list oldest first", store.PaymentFilter{SortBy: "created_at", Ascending: true}, 200},
				{"list by amount asc", store.PaymentFilter{SortBy: "amount_in_cents", Ascending: true}, 200},
				{"list by amount desc", store.PaymentFilter{SortBy: "amount_in_cents"}, 200},
				{"list by status", store.PaymentFilter{Status: "completed", SortBy: "created_at"}, 50},
				{"list by type", store.PaymentFilter{Type: "deposit", SortBy: "created_at"}, 100},
				{"search payment id", store.PaymentFilter{Search: target.ID.String()}, 1},
				{"search address prefix", store.PaymentFilter{Search: strings.ToUpper(target.DepositAddress.Address[:6])}, 1},
				{"search full address", store.PaymentFilter{Search: target.DepositAddress.Address}, 1},
				{"search full tx hash", store.PaymentFilter{Search: fmt.Sprintf("0x%064x", 0xfeed0000+5)}, 1},
				{"search sender prefix", store.PaymentFilter{Search: fmt.Sprintf("0x%040x", 0xcafe0000+9)}, 1},
				{"search with status", store.PaymentFilter{Search: "0x0c", Status: "pending"}, 1},
				{"search with amount sort", store.PaymentFilter{Search: "0x1", SortBy: "amount_in_cents", Ascending: true}, 16},
				{"search no match", store.PaymentFilter{Search: "0xzz"}, 0},
				{"search literal wildcard", store.PaymentFilter{Search: "0x%"}, 0},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					c.filter.MerchantID, c.filter.Limit = acme.ID, 20
					var total int64
					queries := rec.during(func() {
						var err error
						_, total, err = st.Read(ctx).ListPayments(c.filter, cat)
						require.NoError(t, err)
					})
					require.Equal(t, c.total, total, "the fixture matches as intended")

					var sawPayments, sawSearch bool
					for _, q := range queries {
						text, plan := explain(t, db, q)
						for _, table := range []string{"payments", "deposit_addresses", "payment_receipts"} {
							assert.NotContains(t, text, "Seq Scan on "+table, "query:\n%s\nplan:\n%s", q.SQL, text)
						}
						walk(plan, func(n planNode) {
							switch n.RelationName {
							case "payments", "deposit_addresses", "payment_receipts":
							default:
								return
							}
							if n.RelationName == "payments" {
								sawPayments = true
							}
							if n.NodeType == "Bitmap Heap Scan" {
								return // its Bitmap Index Scan child carries the condition
							}
							assert.NotEmpty(t, n.IndexCond, "%s on %s without an index condition\nquery:\n%s\nplan:\n%s",
								n.NodeType, n.RelationName, q.SQL, text)
						})
						if strings.Contains(q.SQL, "LIKE") {
							sawSearch = true
							assert.Contains(t, text, "on deposit_addresses", "plan:\n%s", text)
							assert.Contains(t, text, "on payment_receipts", "plan:\n%s", text)
						}
					}
					assert.True(t, sawPayments, "captured and explained the payments queries")
					assert.Equal(t, c.filter.Search != "" && !strings.Contains("acmeshop", strings.ToLower(c.filter.Search)),
						sawSearch, "the search conditions were explained")
				})
			}
		})
	}
}
