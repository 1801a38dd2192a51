package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Transaction reports have a budget of their own within the payment's (issue 24): ten at once,
// then 429 with Retry-After, while the payment's other operations are still answered; a refused
// report spends nothing of the payment's budget.
func TestGuardReportBudget(t *testing.T) {
	gt := newGuardTest(t)
	id, secret := gt.payment()
	report := func() (int, string) {
		req := httptest.NewRequest(http.MethodPost, paymentSecretPrefix+id+"/transactions", nil)
		req.RemoteAddr = "192.0.2.7:40000"
		req.Header.Set(paymentSecretHeader, secret)
		rec := httptest.NewRecorder()
		_, err := gt.g.open(gt.e.NewContext(req, rec))
		var limited *rateLimitedError
		if errors.As(err, &limited) {
			return http.StatusTooManyRequests, rec.Header().Get("Retry-After")
		}
		require.NoError(t, err)
		return http.StatusOK, ""
	}
	for i := range 10 {
		status, _ := report()
		require.Equal(t, http.StatusOK, status, "report %d", i+1)
	}
	status, retry := report()
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, "2", retry)
	// The payment's own budget (burst 20) had 10 taken: 10 more reads pass, the 11th does not.
	for i := range 10 {
		status, _ := gt.open("192.0.2.7", "", id, secret)
		require.Equal(t, http.StatusOK, status, "read %d", i+1)
	}
	status, _ = gt.open("192.0.2.7", "", id, secret)
	assert.Equal(t, http.StatusTooManyRequests, status)
}
