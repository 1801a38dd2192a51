package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/internal/testlog"
	"github.com/paymentsd/paymentsd/settlement"
)

// servedApp runs New's application with Serve (what `paymentsd serve` runs) on a local port.
func servedApp(t *testing.T) (addr string, log *testlog.Buffer) {
	t.Helper()
	doc, err := gen.GetSpec()
	require.NoError(t, err)
	log = &testlog.Buffer{}
	logger := slog.New(slog.NewJSONHandler(log, nil))
	e, err := New(Deps{Shape: settlement.Schema, Spec: doc, SpecYAML: []byte("openapi: 3.0.3\n"), MaxBodyBytes: "1M", Log: logger})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, e, ln, 5*time.Second, logger) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ln.Addr().String(), log
}

// rawExchange writes request on a new connection (while reading: net/http may answer before
// the request has all been sent) and reads one response with its body.
func rawExchange(t *testing.T, addr, request string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	go func() { _, _ = io.WriteString(conn, request) }() // the server may stop reading and close first
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, body
}

func TestTransportRefusalsAnswerJSON(t *testing.T) {
	addr, log := servedApp(t)
	const payments = "POST /v1/external/secretkey-auth/payments HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
	cases := []struct {
		name, request string
		status        int
		code, param   string
	}{
		{"duplicate Content-Length", payments + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, "parameter_invalid", ""},
		{"negative Content-Length", payments + "Content-Length: -1\r\n\r\n", 400, "parameter_invalid", ""},
		{"headers over 1 MiB", "GET /v1/external/chains HTTP/1.1\r\nHost: test\r\nX-Padding: " +
			strings.Repeat("a", 1<<20+8192) + "\r\n\r\n", 431, "request_too_large", ""},
		{"Transfer-Encoding chunked, identity", payments + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 501, "parameter_invalid", "Transfer-Encoding"},
		{"Transfer-Encoding gzip", payments + "Transfer-Encoding: gzip\r\n\r\n", 501, "parameter_invalid", "Transfer-Encoding"},
		{"Transfer-Encoding twice", payments + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501, "parameter_invalid", "Transfer-Encoding"},
		{"malformed request line", "GARBAGE\r\n\r\n", 400, "parameter_invalid", ""},
		{"request line without version", "GET /healthz\r\n\r\n", 400, "parameter_invalid", ""},
		{"HTTP/3.0", "GET /healthz HTTP/3.0\r\nHost: test\r\n\r\n", 505, "parameter_invalid", ""},
		{"no Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "parameter_missing", "Host"},
		{"malformed Host", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "parameter_invalid", "Host"},
		{"invalid header name", "GET /healthz HTTP/1.1\r\nHost: test\r\nBad Name: v\r\n\r\n", 400, "parameter_invalid", ""},
		{"unknown Expect", "GET /healthz HTTP/1.1\r\nHost: test\r\nExpect: tea\r\n\r\n", 417, "parameter_invalid", "Expect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, raw := rawExchange(t, addr, tc.request)
			assert.Equal(t, tc.status, res.StatusCode)
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			assert.EqualValues(t, len(raw), res.ContentLength, "Content-Length is the body's")
			assert.True(t, res.Close, "Connection: close")
			rid := res.Header.Get("X-Request-Id")
			assert.NotEmpty(t, rid)
			var body gen.Error
			require.NoError(t, json.Unmarshal(raw, &body), string(raw))
			assert.Equal(t, "invalid_request_error", body.Error.Type)
			assert.Equal(t, tc.code, body.Error.Code)
			assert.NotEmpty(t, body.Error.Message)
			assert.NotContains(t, body.Error.Message, "\n")
			if tc.param == "" {
				assert.Nil(t, body.Error.Param)
			} else if assert.NotNil(t, body.Error.Param) {
				assert.Equal(t, tc.param, *body.Error.Param)
			}
			// The operator sees the refusal, under the id the client was given.
			var line map[string]any
			require.Eventually(t, func() bool {
				lines, err := log.Lines()
				require.NoError(t, err)
				for _, l := range lines {
					if l["request_id"] == rid {
						line = l
						return true
					}
				}
				return false
			}, 5*time.Second, 10*time.Millisecond)
			assert.Equal(t, "request refused by the HTTP server", line["msg"])
			assert.EqualValues(t, tc.status, line["status"])
		})
	}
}

// The wrapped connections carry ordinary requests as before: keep-alive, bodies, Echo's answers.
func TestTransportRefusalsLeaveOtherAnswers(t *testing.T) {
	addr, _ := servedApp(t)
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	r := bufio.NewReader(conn)
	_, err = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: test\r\n\r\nGET /no/such/route HTTP/1.1\r\nHost: test\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	assert.Equal(t, 200, res.StatusCode)
	assert.JSONEq(t, `{"status":"ok"}`, string(raw))
	assert.False(t, res.Close)
	res, err = http.ReadResponse(r, nil) // the same connection
	require.NoError(t, err)
	raw, _ = io.ReadAll(res.Body)
	assert.Equal(t, 404, res.StatusCode)
	assert.Contains(t, string(raw), `"resource_not_found"`)
}

func TestNetHTTPRefusalMatchesOnlyItsForms(t *testing.T) {
	const h = plainErrorHeaders
	refusals := map[string]int{
		"HTTP/1.1 400 Bad Request" + h + "400 Bad Request":                                                             400,
		"HTTP/1.1 431 Request Header Fields Too Large" + h + "431 Request Header Fields Too Large":                     431,
		"HTTP/1.1 501 Not Implemented" + h + "Unsupported transfer encoding":                                           501,
		"HTTP/1.1 400 Bad Request: missing required Host header" + h + "400 Bad Request: missing required Host header": 400,
		"HTTP/1.1 400 Bad Request: some future reason" + h + "400 Bad Request: some future reason":                     400,
		"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version" + h +
			"505 HTTP Version Not Supported: unsupported protocol version": 505,
		"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Thu, 26 Nov 2026 13:52:45 GMT\r\nContent-Length: 0\r\n\r\n": 417,
		"HTTP/1.0 417 Expectation Failed\r\nConnection: close\r\nDate: Thu, 26 Nov 2026 13:52:45 GMT\r\nContent-Length: 0\r\n\r\n": 417,
	}
	for p, status := range refusals {
		ae, _, ok := netHTTPRefusal([]byte(p))
		if assert.True(t, ok, p) {
			assert.Equal(t, status, ae.Status, p)
		}
	}
	assert.Equal(t, "Malformed HTTP request: some future reason.", refusalError(400, "some future reason").Message)
	others := []string{
		"",
		"HTTP/1.1 ",
		"HTTP/1.1 200 OK\r\nDate: Thu, 26 Nov 2026 13:52:42 GMT\r\nContent-Length: 2\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nok",
		"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nDate: Thu, 26 Nov 2026 13:52:42 GMT\r\nContent-Length: 2\r\n\r\n{}",
		// A handler's answer that looks like a refusal still has its other headers first.
		"HTTP/1.1 400 Bad Request\r\nDate: Thu, 26 Nov 2026 13:52:42 GMT" + h + "400 Bad Request",
		"HTTP/1.1 400 Bad Request" + h + "400 Bad Request and more",
		"HTTP/1.1 400 Bad Request" + h + "something else",
		"HTTP/1.1 200 OK" + h + "200 OK",
		"HTTP/1.1 501 Not Implemented" + h + "Unsupported transfer encoding!",
		"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Thu, 26 Nov 2026 13:52:45 GMT\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Thu, 26 Nov 2026 13:52:45 GMT\r\nX-Request-Id: x\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Thu, 26 Nov 2026 13:52:45 GMT\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n",
		"body bytes: HTTP/1.1 400 Bad Request" + h + "400 Bad Request",
	}
	for _, p := range others {
		_, _, ok := netHTTPRefusal([]byte(p))
		assert.False(t, ok, "%q", p)
	}
}

// A refusal written on a wrapped connection is replaced whole; other writes pass through.
func TestJSONErrorConnWrites(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	c := &jsonErrorConn{Conn: server}
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(client); got <- b }()
	refusal := "HTTP/1.1 400 Bad Request" + plainErrorHeaders + "400 Bad Request"
	n, err := c.Write([]byte(refusal))
	require.NoError(t, err)
	assert.Equal(t, len(refusal), n, "net/http is told its write went out")
	n, err = c.Write([]byte("plain"))
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.NoError(t, c.CloseWrite()) // a pipe cannot half-close: nothing to do
	require.NoError(t, server.Close())
	out := string(<-got)
	require.True(t, strings.HasSuffix(out, "plain"), out)
	res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(strings.TrimSuffix(out, "plain"))), nil)
	require.NoError(t, err)
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, 400, res.StatusCode)
	assert.JSONEq(t, `{"error":{"type":"invalid_request_error","code":"parameter_invalid","message":"Malformed HTTP request: the request line, a header or the message framing (such as Content-Length sent twice with different values) could not be read."}}`, string(raw))
	_, err = c.ReadFrom(strings.NewReader("x"))
	assert.True(t, errors.Is(err, io.ErrClosedPipe), "%v", err)
}

// Whatever is written, the matcher neither panics nor recognises a status outside 4xx and 5xx.
func FuzzNetHTTPRefusal(f *testing.F) {
	f.Add([]byte("HTTP/1.1 400 Bad Request" + plainErrorHeaders + "400 Bad Request"))
	f.Add([]byte("HTTP/1.0 417 Expectation Failed\r\nConnection: close\r\nDate: x\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 417 "))
	f.Add([]byte("HTTP/1.1 4" + plainErrorHeaders))
	f.Fuzz(func(t *testing.T, p []byte) {
		if ae, _, ok := netHTTPRefusal(p); ok && (ae.Status < 400 || ae.Status > 599) {
			t.Fatalf("%q: status %d", p, ae.Status)
		}
	})
}
