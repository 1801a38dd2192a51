package server

import (
	"bytes"
	"encoding/csv"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNeutraliseFormulaCells(t *testing.T) {
	for in, want := range map[string]string{
		"=cmd": "'=cmd", "+1": "'+1", "-5": "'-5", "@x": "'@x", "\tx": "'\tx", "\rx": "'\rx",
		"": "", "plain": "plain", "5": "5", `"q"`: `"q"`, "a\nb": "a\nb", "'=already": "'=already", " =x": " =x",
	} {
		assert.Equal(t, want, neutralise(in), "%q", in)
	}
}

func TestExportRange(t *testing.T) {
	f, to, err := exportRange("2026-01-01", "2026-02-01T12:00:00+02:00")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), f)
	assert.Equal(t, time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC), to)
	_, _, err = exportRange("2025-01-01", "2026-01-02")
	assert.NoError(t, err, "366 days exactly")
	for _, c := range [][2]string{{"2025-01-01", "2026-01-02T00:00:00.000000001Z"}, {"2026-01-02", "2026-01-01"},
		{"2026-01-01", "2026-01-01"}, {"", "2026-01-01"}, {"2026-01-01", "soon"}, {"01/02/2026", "2026-03-01"}} {
		_, _, err := exportRange(c[0], c[1])
		assert.Error(t, err, "%v", c)
	}
}

// The export writes RFC 4180 page by page, neutralising every cell, the header included.
func TestCSVExportStreamsPages(t *testing.T) {
	pages := [][][]string{{{"1", "=a"}, {"2", "x\ny"}}, {{"3", `"q"`}}}
	calls := 0
	e := csvExport{ctx: t.Context(), filename: "f.csv", header: []string{"id", "-h"}, next: func() ([][]string, error) {
		calls++
		if len(pages) == 0 {
			return nil, nil
		}
		p := pages[0]
		pages = pages[1:]
		return p, nil
	}}
	rec := httptest.NewRecorder()
	require.NoError(t, e.write(rec))
	assert.Equal(t, 3, calls, "two pages, then the empty one")
	assert.Equal(t, "text/csv; charset=utf-8", rec.Header().Get("Content-Type"))
	rows, err := csv.NewReader(bytes.NewReader(rec.Body.Bytes())).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"id", "'-h"}, {"1", "'=a"}, {"2", "x\ny"}, {"3", `"q"`}}, rows)

	// A failure before the first byte is an ordinary error (the JSON 500).
	bad := csvExport{ctx: t.Context(), filename: "f.csv", next: func() ([][]string, error) { return nil, errors.New("db down") }}
	rec = httptest.NewRecorder()
	assert.Error(t, bad.write(rec))
	assert.Empty(t, rec.Body.String())
}
