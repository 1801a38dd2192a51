package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/reqlog"
)

// Refusals net/http writes itself, before any handler runs.
//
// When net/http cannot read a request (a malformed request line or header, Content-Length sent
// twice with different values, headers over MaxHeaderBytes, a Transfer-Encoding other than
// chunked, an HTTP version it does not speak), its conn.serve writes a fixed plain-text answer
// straight on the connection and closes it; an Expect other than 100-continue gets a body-less
// 417 before the handler. Echo never sees these requests, so its error renderer cannot answer
// them. JSONErrorListener does: its connections recognise exactly those writes and put the
// documented error body in their place, with the same status.

// plainErrorHeaders is what net/http's conn.serve writes between the status line and the body of
// each refusal (go/src/net/http/server.go: errorHeaders).
const plainErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// maxRefusalWrite bounds the writes inspected: net/http's refusals are a few hundred bytes.
const maxRefusalWrite = 1024

// JSONErrorListener wraps ln (plain HTTP: the connections net/http reads requests from) so that
// net/http's own refusals answer the documented JSON error body. log, when not nil, gets a line
// per refusal with the request id of its answer (net/http logs nothing about them).
func JSONErrorListener(ln net.Listener, log *slog.Logger) net.Listener {
	return &jsonErrorListener{Listener: ln, log: log}
}

type jsonErrorListener struct {
	net.Listener
	log *slog.Logger
}

func (l *jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if _, ok := c.(*tls.Conn); ok {
		return c, nil // net/http needs the *tls.Conn itself; nor could a refusal be read through it
	}
	return &jsonErrorConn{Conn: c, log: l.log}, nil
}

// jsonErrorConn rewrites net/http's refusals written on it; every other write passes unchanged.
type jsonErrorConn struct {
	net.Conn
	log *slog.Logger
}

func (c *jsonErrorConn) Write(p []byte) (int, error) {
	ae, reason, ok := netHTTPRefusal(p)
	if !ok {
		return c.Conn.Write(p)
	}
	rid := uuid.Must(uuid.NewV7()).String()
	if c.log != nil {
		c.log.LogAttrs(context.Background(), slog.LevelInfo, "request refused by the HTTP server",
			slog.String(reqlog.Key, rid), slog.Int("status", ae.Status), slog.String("reason", reason),
			slog.String("remote_addr", c.RemoteAddr().String()))
	}
	if _, err := c.Conn.Write(refusalResponse(ae, rid, time.Now())); err != nil {
		return 0, err
	}
	return len(p), nil // what net/http wrote has been answered in its place
}

// CloseWrite keeps net/http's half-close after a 431 (closeWriteAndWait), which lets the client
// read the answer before the connection is reset.
func (c *jsonErrorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps *net.TCPConn's sendfile/splice for response bodies net/http copies from a file
// (those bytes are never a refusal).
func (c *jsonErrorConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c}, r)
}

// netHTTPRefusal recognises a write that is one of net/http's own refusals, whole, and returns
// its row of the error table and net/http's reason. It matches the exact forms conn.serve writes
// (one Write each): "HTTP/1.1 <status line>" + plainErrorHeaders + the same status line (431, 400,
// 400 and 505 with a reason), or 501 with "Unsupported transfer encoding"; and the body-less
// 417 answering an unknown Expect. A handler's response has none of these forms: net/http adds
// Date to it (no handler of ours removes it), and our error bodies are JSON.
func netHTTPRefusal(p []byte) (ae *apiError, reason string, ok bool) {
	const prefix = "HTTP/1.1 "
	if len(p) > maxRefusalWrite || len(p) < len(prefix) || !bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return nil, "", false
	}
	if bytes.HasPrefix(p[len("HTTP/1.x"):], []byte(" 417 ")) { // HTTP/1.0 too: its status line is the request's version
		return expectationFailed(p)
	}
	if !bytes.HasPrefix(p, []byte(prefix)) {
		return nil, "", false
	}
	line, body, found := bytes.Cut(p[len(prefix):], []byte(plainErrorHeaders))
	if !found || len(line) < 4 || line[3] != ' ' || bytes.ContainsAny(line, "\r\n") {
		return nil, "", false
	}
	status, err := strconv.Atoi(string(line[:3]))
	if err != nil || status < 400 || status > 599 {
		return nil, "", false
	}
	phrase := string(line[4:])
	text := http.StatusText(status)
	switch {
	case status == http.StatusNotImplemented && phrase == text && string(body) == "Unsupported transfer encoding":
		return refusalError(status, ""), "unsupported transfer encoding", true
	case !bytes.Equal(line, body):
		return nil, "", false
	case phrase == text:
		return refusalError(status, ""), text, true
	case len(phrase) > len(text)+2 && phrase[:len(text)+2] == text+": ":
		return refusalError(status, phrase[len(text)+2:]), phrase[len(text)+2:], true
	}
	return nil, "", false
}

// expectationFailed recognises net/http's answer to an Expect other than 100-continue
// (response.sendExpectationFailed): 417 with Connection: close, Date and Content-Length: 0 only.
// No handler of ours answers 417, let alone without a body.
func expectationFailed(p []byte) (*apiError, string, bool) {
	head, ok := bytes.CutSuffix(p, []byte("\r\n\r\n"))
	lines := bytes.Split(head, []byte("\r\n"))
	if !ok || len(lines) != 4 || string(lines[0][len("HTTP/1.x"):]) != " 417 Expectation Failed" ||
		(lines[0][len("HTTP/1.")] != '0' && lines[0][len("HTTP/1.")] != '1') {
		return nil, "", false
	}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		name, value, _ := bytes.Cut(l, []byte(": "))
		switch n := string(name); {
		case n == "Connection" && string(value) == "close", n == "Content-Length" && string(value) == "0":
			seen[n] = true
		case n == "Date" && len(value) > 0 && !bytes.ContainsAny(value, "\r\n"):
			seen[n] = true
		}
	}
	if len(seen) != 3 {
		return nil, "", false
	}
	return refusalError(http.StatusExpectationFailed, ""), "unsupported Expect", true
}

// refusalError is the error table row of one of net/http's refusals; text is the reason it gave
// after the status text ("missing required Host header"), "" when none.
func refusalError(status int, text string) *apiError {
	invalid := func(code domain.ErrorCode, param, msg string) *apiError {
		return &apiError{status, typeInvalidRequest, code, msg, param}
	}
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return invalid(domain.CodeRequestTooLarge, "", "The request line and headers are too large.")
	case http.StatusNotImplemented:
		return invalid(domain.CodeParameterInvalid, "Transfer-Encoding",
			"Transfer-Encoding: unsupported; the only transfer coding accepted is chunked, on its own.")
	case http.StatusHTTPVersionNotSupported:
		return invalid(domain.CodeParameterInvalid, "", "Unsupported HTTP version: send HTTP/1.1.")
	case http.StatusExpectationFailed:
		return invalid(domain.CodeParameterInvalid, "Expect", "Expect: the only expectation supported is 100-continue.")
	}
	switch text {
	case "":
		return invalid(domain.CodeParameterInvalid, "",
			"Malformed HTTP request: the request line, a header or the message framing (such as Content-Length sent twice with different values) could not be read.")
	case "missing required Host header":
		return invalid(domain.CodeParameterMissing, "Host", "Host: a Host header is required.")
	case "malformed Host header":
		return invalid(domain.CodeParameterInvalid, "Host", "Host: malformed header value.")
	case "invalid header name":
		return invalid(domain.CodeParameterInvalid, "", "A header name is not a valid HTTP field name.")
	case "invalid header value":
		return invalid(domain.CodeParameterInvalid, "", "A header value contains characters HTTP does not allow.")
	}
	return invalid(domain.CodeParameterInvalid, "", "Malformed HTTP request: "+text+".")
}

// refusalResponse is the answer written in place of a refusal: the same status, the documented
// error body, and Connection: close (net/http closes the connection after it either way).
func refusalResponse(ae *apiError, requestID string, now time.Time) []byte {
	body := errorBody(ae)
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", ae.Status, http.StatusText(ae.Status))
	fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n", len(body))
	fmt.Fprintf(&b, "Date: %s\r\nX-Request-Id: %s\r\n\r\n", now.UTC().Format(http.TimeFormat), requestID)
	b.Write(body)
	return b.Bytes()
}
