package tests

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/merchants"
)

// BenchmarkExportPayments streams a 1,500-payment CSV export (three 500-row pages) through
// the whole stack and checks every row arrived. Numbers in docs/benchmarks.md.
//
//	scripts/with-postgres.sh go test -run '^$' -bench ExportPayments -benchtime 20x ./tests/
func BenchmarkExportPayments(b *testing.B) {
	const n = 1500
	for _, backend := range testdb.Backends() {
		b.Run(backend, func(b *testing.B) {
			e := newEnv(b, backend)
			c, err := e.app.Merchants.Create(context.Background(), merchants.CreateInput{Name: "Bench", ShortName: "Bench",
				DepositsEnabled: true, Mode: domain.ModeLive})
			require.NoError(b, err)
			for i := 0; i < n; i++ {
				st, err := postJSON(e, c.SecretKey, fmt.Sprintf(`{"amount": %d, "currency": "USD", "orderId": "=order-%d"}`, 400+i, i))
				require.NoError(b, err)
				require.Equal(b, http.StatusCreated, st)
			}
			tok, _, err := e.app.Tokens.MintMode(context.Background(), c.Merchant.ID, domain.ModeLive, dashauth.ScopeRead, time.Hour)
			require.NoError(b, err)
			url := fmt.Sprintf("%s/v1/merchants/%s/exports/payments.csv?from=%s&to=%s", e.srv.URL, c.Merchant.ID,
				time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly), time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				res, err := http.DefaultClient.Do(req)
				if err != nil || res.StatusCode != http.StatusOK {
					b.Fatalf("export: %v %v", err, res)
				}
				lines := 0
				sc := bufio.NewScanner(res.Body)
				for sc.Scan() {
					lines++
				}
				res.Body.Close()
				if lines != n+1 {
					b.Fatalf("%d lines, want %d", lines, n+1)
				}
			}
		})
	}
}
