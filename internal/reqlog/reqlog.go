// Package reqlog carries the HTTP request id in a request's context and puts it on every log
// line written with that context: a slog.Handler wrapper, so any package that logs with the
// ctx variants (InfoContext, WarnContext, LogAttrs(ctx, …)) gets request_id without knowing HTTP.
package reqlog

import (
	"context"
	"log/slog"
)

// Key is the attribute name of the request id on a log line.
const Key = "request_id"

type ctxKey struct{}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// RequestID returns the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Handler adds request_id from the record's context to every record that does not already
// carry one. It is added after the record's own attributes (inside any group opened with
// WithGroup).
type Handler struct {
	inner slog.Handler
}

// NewHandler wraps inner.
func NewHandler(inner slog.Handler) *Handler {
	if h, ok := inner.(*Handler); ok {
		return h
	}
	return &Handler{inner: inner}
}

// Wrap returns l logging through a Handler; a logger already wrapped is returned as is.
func Wrap(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(*Handler); ok {
		return l
	}
	return slog.New(NewHandler(l.Handler()))
}

// Enabled reports whether the wrapped handler handles level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle adds request_id when ctx has one and the record has none.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" && !hasKey(r) {
		r = r.Clone()
		r.AddAttrs(slog.String(Key, id))
	}
	return h.inner.Handle(ctx, r)
}

func hasKey(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == Key
		return !found
	})
	return found
}

// WithAttrs wraps the inner handler's WithAttrs.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(attrs)}
}

// WithGroup wraps the inner handler's WithGroup.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name)}
}
