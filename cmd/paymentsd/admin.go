package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// newAdminHandler serves the operator-only endpoints of the admin listener: net/http/pprof
// under /debug/pprof/ (mounted explicitly on a mux of its own, never http.DefaultServeMux) and
// the same /metrics as the main listener.
func newAdminHandler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // also serves the named profiles (heap, goroutine, …)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.Handle("GET /metrics", metrics)
	return mux
}

// adminServer is the running admin listener.
type adminServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// startAdmin listens on addr and serves h there; an empty addr (the default) starts nothing
// and returns nil. A listen failure is a startup error.
func startAdmin(addr string, h http.Handler, log *slog.Logger) (*adminServer, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener on %s: %w", addr, err)
	}
	// No WriteTimeout: /debug/pprof/profile and /trace stream for as long as asked (?seconds=).
	a := &adminServer{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second},
		ln: ln, done: make(chan error, 1)}
	go func() { a.done <- a.srv.Serve(ln) }()
	log.Info("admin listening (pprof, metrics)", "addr", ln.Addr().String(), "pprof", "/debug/pprof/", "metrics", "/metrics")
	return a, nil
}

// Addr is the address the admin listener is bound to.
func (a *adminServer) Addr() string { return a.ln.Addr().String() }

// Stop shuts the admin listener down, giving in-flight requests up to grace, then closing
// them (a profile still streaming does not hold up the exit). A nil server is a no-op.
func (a *adminServer) Stop(grace time.Duration) error {
	if a == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := a.srv.Shutdown(ctx); err != nil {
		_ = a.srv.Close()
	}
	if err := <-a.done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
