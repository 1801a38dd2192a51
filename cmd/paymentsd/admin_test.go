package main

import (
	"context"
	"github.com/paymentsd/paymentsd/internal/testlog"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/metrics"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body)
}

func TestAdminServer(t *testing.T) {
	m, err := metrics.New(prometheus.NewRegistry())
	require.NoError(t, err)
	admin, err := startAdmin("127.0.0.1:0", newAdminHandler(m.Handler()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NotNil(t, admin)
	base := "http://" + admin.Addr()

	status, body := get(t, base+"/debug/pprof/")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "goroutine")
	status, _ = get(t, base+"/debug/pprof/goroutine?debug=1")
	assert.Equal(t, http.StatusOK, status)
	status, _ = get(t, base+"/debug/pprof/cmdline")
	assert.Equal(t, http.StatusOK, status)
	status, body = get(t, base+"/metrics")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "go_goroutines")
	assert.Contains(t, body, "paymentsd_payments_created_total")
	status, _ = get(t, base+"/")
	assert.Equal(t, http.StatusNotFound, status, "only pprof and metrics are mounted")

	require.NoError(t, admin.Stop(time.Second))
	_, err = http.Get(base + "/debug/pprof/")
	assert.Error(t, err, "the admin listener is closed")
}

func TestAdminServerOffByDefault(t *testing.T) {
	admin, err := startAdmin("", newAdminHandler(http.NotFoundHandler()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	assert.Nil(t, admin)
	assert.NoError(t, admin.Stop(time.Second), "stopping no admin server is a no-op")
}

func TestLoadConfigAdminAddr(t *testing.T) {
	cliEnv(t)
	t.Setenv("PAYMENTS_ADMIN_ADDR", "")
	c, err := loadConfig("x.db", "", "", "", "")
	require.NoError(t, err)
	assert.Empty(t, c.AdminAddr, "off by default")
	t.Setenv("PAYMENTS_ADMIN_ADDR", "127.0.0.1:6060")
	c, err = loadConfig("x.db", "", "", "", "")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:6060", c.AdminAddr)
}

// lockedBuffer is the log sink shared by serve's logger and the test.
type lockedBuffer struct{ testlog.Buffer }

// logged returns the addr attribute of the first JSON log line with message msg, or "".
func (b *lockedBuffer) logged(msg string) string {
	lines, _ := b.Lines() // the lines before any that is not JSON
	for _, line := range lines {
		if line["msg"] == msg {
			addr, _ := line["addr"].(string)
			return addr
		}
	}
	return ""
}

// serve with PAYMENTS_ADMIN_ADDR runs the admin listener beside the API and stops it with the API.
func TestServeStartsAndStopsTheAdminListener(t *testing.T) {
	cliEnv(t)
	t.Setenv("PAYMENTS_ADMIN_ADDR", "127.0.0.1:0")
	t.Setenv("PAYMENTS_LOG_FORMAT", "json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, io.Discard, &stderr) }()

	var api, admin string
	require.Eventually(t, func() bool {
		api, admin = stderr.logged("listening"), stderr.logged("admin listening (pprof, metrics)")
		return api != "" && admin != ""
	}, 20*time.Second, 20*time.Millisecond, "serve did not log both listeners")

	status, _ := get(t, "http://"+admin+"/debug/pprof/")
	assert.Equal(t, http.StatusOK, status)
	status, _ = get(t, "http://"+api+"/metrics")
	assert.Equal(t, http.StatusOK, status)
	status, body := get(t, "http://"+api+"/metrics") // a scrape is counted once answered: the second sees the first
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `paymentsd_http_requests_total{method="GET",route="/metrics",status="200"} 1`)
	status, _ = get(t, "http://"+api+"/debug/pprof/")
	assert.Equal(t, http.StatusNotFound, status, "pprof is never on the API listener")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	_, err := http.Get("http://" + admin + "/debug/pprof/")
	assert.Error(t, err, "the admin listener stops with serve")
	assert.False(t, strings.Contains(stderr.logged("admin listening (pprof, metrics)"), ":0"), "the bound port is logged")
}
