package tests

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// Benchmarks of the hot paths through the full HTTP stack (validation, auth, store) on each
// backend. Numbers are recorded in docs/benchmarks.md, never asserted.
//
//	scripts/with-postgres.sh go test -run '^$' -bench . -benchtime 2s ./tests/
func BenchmarkCreatePayment(b *testing.B) {
	for _, backend := range testdb.Backends() {
		b.Run(backend, func(b *testing.B) {
			e := newEnv(b, backend)
			key := benchMerchant(b, e)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := postJSON(e, key, fmt.Sprintf(`{"amount": %d, "currency": "USD", "orderId": "b"}`, 400+i%1000))
				if err != nil || res != http.StatusCreated {
					b.Fatalf("status %d err %v", res, err)
				}
			}
		})
	}
}

func BenchmarkListPayments(b *testing.B) {
	for _, backend := range testdb.Backends() {
		b.Run(backend, func(b *testing.B) {
			e := newEnv(b, backend)
			key := benchMerchant(b, e)
			for i := 0; i < 200; i++ {
				_, err := postJSON(e, key, `{"amount": 1000, "currency": "USD", "orderId": "b"}`)
				require.NoError(b, err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req, _ := http.NewRequest(http.MethodGet, e.srv.URL+paymentsPath+"?limit=20&sortBy=amountInCents", nil)
				req.Header.Set("X-Service-Secret-Key", key)
				res, err := http.DefaultClient.Do(req)
				if err != nil || res.StatusCode != 200 {
					b.Fatal(err)
				}
				res.Body.Close()
			}
		})
	}
}

func benchMerchant(b *testing.B, e *env) string {
	b.Helper()
	return e.merchant(merchantOpts{}).SecretKey
}

func postJSON(e *env, key, body string) (int, error) {
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+paymentsPath, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Secret-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

// The same operations under 16 concurrent clients (what a checkout's traffic looks like), each
// create with its own Idempotency-Key: contention shows here, not in the sequential runs.
func BenchmarkCreatePaymentParallel(b *testing.B) {
	for _, backend := range testdb.Backends() {
		b.Run(backend, func(b *testing.B) {
			e := newEnv(b, backend)
			key := benchMerchant(b, e)
			var n atomic.Int64
			b.SetParallelism(16 / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					req, _ := http.NewRequest(http.MethodPost, e.srv.URL+paymentsPath,
						strings.NewReader(fmt.Sprintf(`{"amount": %d, "currency": "USD", "orderId": "b-%d"}`, 400+i%1000, i)))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Service-Secret-Key", key)
					req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%d", i))
					res, err := http.DefaultClient.Do(req)
					if err != nil || res.StatusCode != http.StatusCreated {
						b.Fatalf("create: %v %v", err, res)
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			})
		})
	}
}

func BenchmarkGetPaymentParallel(b *testing.B) {
	for _, backend := range testdb.Backends() {
		b.Run(backend, func(b *testing.B) {
			e := newEnv(b, backend)
			key := benchMerchant(b, e)
			id := e.createPayment(key, payment(1000))["paymentId"].(string)
			b.SetParallelism(16 / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest(http.MethodGet, e.srv.URL+paymentsPath+"/"+id, nil)
					req.Header.Set("X-Service-Secret-Key", key)
					res, err := http.DefaultClient.Do(req)
					if err != nil || res.StatusCode != http.StatusOK {
						b.Fatalf("get: %v %v", err, res)
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			})
		})
	}
}
