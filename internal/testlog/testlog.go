// Package testlog is a log sink for tests: a buffer that concurrent requests may write JSON log
// lines to while the test reads them back.
package testlog

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Buffer collects the JSON log lines of a process or a server under test.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; safe for concurrent use.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines decodes every line written so far; a line that is not a JSON object is an error.
func (b *Buffer) Lines() ([]map[string]any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(b.buf.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}
