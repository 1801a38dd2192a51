package reqlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/reqlog"
)

func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

func TestHandlerAddsRequestIDFromContext(t *testing.T) {
	var buf bytes.Buffer
	log := reqlog.Wrap(slog.New(slog.NewJSONHandler(&buf, nil)))
	ctx := reqlog.WithRequestID(context.Background(), "req-1")

	log.WarnContext(ctx, "no quote for token", "token", "eip155:1/slip44:60")
	log.With("component", "x").InfoContext(ctx, "with attrs")
	log.LogAttrs(ctx, slog.LevelInfo, "explicit", slog.String(reqlog.Key, "req-1"))
	log.Info("no context")
	log.InfoContext(context.Background(), "context without id")

	got := lines(t, &buf)
	require.Len(t, got, 5)
	assert.Equal(t, "req-1", got[0]["request_id"])
	assert.Equal(t, "eip155:1/slip44:60", got[0]["token"])
	assert.Equal(t, "req-1", got[1]["request_id"])
	assert.Equal(t, "x", got[1]["component"])
	assert.Equal(t, "req-1", got[2]["request_id"])
	assert.NotContains(t, got[3], "request_id")
	assert.NotContains(t, got[4], "request_id")
	// An explicit request_id is not doubled.
	assert.Equal(t, 1, strings.Count(strings.Split(buf.String(), "\n")[2], `"request_id"`))
}

func TestWrapIsIdempotent(t *testing.T) {
	var buf bytes.Buffer
	log := reqlog.Wrap(reqlog.Wrap(slog.New(slog.NewTextHandler(&buf, nil))))
	log.InfoContext(reqlog.WithRequestID(context.Background(), "abc"), "once")
	assert.Equal(t, 1, strings.Count(buf.String(), "request_id=abc"), buf.String())
}

func TestRequestIDOfEmptyContext(t *testing.T) {
	assert.Empty(t, reqlog.RequestID(context.Background()))
	assert.Equal(t, "x", reqlog.RequestID(reqlog.WithRequestID(context.Background(), "x")))
}
