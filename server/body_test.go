package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/paymentsd/paymentsd/internal/testlog"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/settlement"
)

const utf8Refusal = "must be valid UTF-8 text (no invalid bytes or unpaired surrogates)"

func TestCheckJSONTextAccepts(t *testing.T) {
	accepted := []string{
		`{}`, `[]`, `""`, `"x"`, `0`, `-0.5e+3`, `true`, `null`,
		`{"orderId":"o-1"}`,
		`{"s":"\ud83d\ude00"}`,                    // a surrogate pair: U+1F600
		`{"s":"\uD83D\uDE00"}`,                    // upper-case hex
		"{\"s\":\"\U0001F600 caf\u00e9 \u4e2d\"}", // raw UTF-8: 4, 2 and 3 bytes
		"{\"s\":\"\U0010FFFF\"}",                  // the last code point
		`{"s":"\u00e9\u4e2d\uE000\uFFFF\u0000"}`,
		`{"s":"\"\\\/\b\f\n\r\t"}`,
		`{"\ud83d\ude00":1}`, // a member name with a pair
		"{\"caf\u00e9\":1}",
		`{"a":[1,-0.5e+3,true,false,null,{"b":"c"},[]],"d":{"e":{}}}`,
		" \t\r\n{ \"a\" : [ 1 , \"b\" ] } \n",
	}
	for _, body := range accepted {
		t.Run(fmt.Sprintf("%q", body), func(t *testing.T) {
			s := jsonScanner{data: []byte(body)}
			require.True(t, s.text(), "well-formed JSON")
			assert.Nil(t, s.fault)
			assert.NoError(t, checkJSONText([]byte(body)))
		})
	}
}

func TestCheckJSONTextRefuses(t *testing.T) {
	tests := []struct {
		name, body string
		param, msg string
	}{
		{"invalid byte", "{\"orderId\":\"o-\xff\"}", "orderId", "orderId: " + utf8Refusal},
		{"bad continuation", "{\"orderId\":\"\xc3\x28\"}", "orderId", ""},
		{"lone continuation byte", "{\"orderId\":\"\x80\"}", "orderId", ""},
		{"overlong slash, 2 bytes", "{\"orderId\":\"\xc0\xaf\"}", "orderId", ""},
		{"overlong slash, 3 bytes", "{\"orderId\":\"\xe0\x80\xaf\"}", "orderId", ""},
		{"overlong slash, 4 bytes", "{\"orderId\":\"\xf0\x80\x80\xaf\"}", "orderId", ""},
		{"surrogate encoded as UTF-8", "{\"orderId\":\"\xed\xa0\x80\"}", "orderId", ""},
		{"above U+10FFFF", "{\"orderId\":\"\xf4\x90\x80\x80\"}", "orderId", ""},
		{"truncated sequence", "{\"orderId\":\"\xe2\x82\"}", "orderId", ""},
		{"lone high surrogate", `{"orderId":"\ud800"}`, "orderId", "orderId: " + utf8Refusal},
		{"high surrogate then text", `{"orderId":"\ud83dx"}`, "orderId", ""},
		{"high surrogate then a non-surrogate escape", `{"orderId":"\ud83d\u0041"}`, "orderId", ""},
		{"two high surrogates", `{"orderId":"\ud83d\ud83d"}`, "orderId", ""},
		{"lone low surrogate", `{"orderId":"\ude00"}`, "orderId", ""},
		{"low before high", `{"orderId":"\ude00\ud83d"}`, "orderId", ""},
		{"high surrogate then escaped newline", `{"orderId":"\ud83d\n"}`, "orderId", ""},
		{"nested", "{\"a\":{\"b\":\"\xff\"}}", "a.b", "a.b: " + utf8Refusal},
		{"in an array of objects", `{"items":[{"name":"ok"},{"name":"\ud800"}]}`, "items.1.name", "items.1.name: " + utf8Refusal},
		{"in a nested array", "{\"m\":[[\"ok\",\"\xff\"]]}", "m.0.1", ""},
		{"top-level array", "[\"ok\",\"\xff\"]", "1", "1: " + utf8Refusal},
		{"escaped member names are decoded", "{\"\\u006frderId\":\"\xff\"}", "orderId", ""},
		{"the first fault wins", "{\"a\":\"\xff\",\"b\":\"\xff\"}", "a", ""},
		{"after valid members", "{\"ok\":\"\U0001F600\",\"n\":[1,{\"x\":null}],\"bad\":\"\xff\"}", "bad", ""},
		{"member name", "{\"or\xffder\":1}", "", "Member names " + utf8Refusal + "."},
		{"member name with a lone low surrogate", `{"\udc00":1}`, "", "Member names " + utf8Refusal + "."},
		{"nested member name", `{"a":{"\ud800":1}}`, "a", "a: member names " + utf8Refusal},
		{"the whole body is a string", "\"\xff\"", "", "The request body " + utf8Refusal + "."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkJSONText([]byte(tc.body))
			require.Error(t, err)
			ae := classify(err)
			require.NotNil(t, ae)
			assert.Equal(t, http.StatusBadRequest, ae.Status)
			assert.Equal(t, typeInvalidRequest, ae.Type)
			assert.Equal(t, domain.CodeParameterInvalid, ae.Code)
			assert.Equal(t, tc.param, ae.Param)
			if tc.msg == "" {
				tc.msg = tc.param + ": " + utf8Refusal
			}
			assert.Equal(t, tc.msg, ae.Message)
		})
	}
}

// Malformed JSON is openapi3filter's to report, even after a string that is not text.
func TestCheckJSONTextLeavesMalformedJSON(t *testing.T) {
	malformed := []string{
		"",
		"{\"a\":\"\xff\",",
		"{\"a\":\"\xff\"} x",
		`{"a":"\ud800`,
		`{"a":"\u12"}`,
		`{"a":"\ud800\u12"}`,
		`{"a":"\q"}`,
		"{\"a\":\"\x01\"}",
		"{\"a\":01,\"b\":\"\xff\"}",
		"{\"a\":1.,\"b\":\"\xff\"}",
		"{\"a\":tru,\"b\":\"\xff\"}",
		"{\"a\" \"\xff\"}",
		"{\"a\":\"\xff\",}",
		"[\"\xff\",]",
		"{'a':1}",
		strings.Repeat("[", maxJSONDepth+1) + "\"\xff\"" + strings.Repeat("]", maxJSONDepth+1),
	}
	for _, body := range malformed {
		name := body
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			assert.False(t, json.Valid([]byte(body)))
			assert.NoError(t, checkJSONText([]byte(body)))
		})
	}
	deep := strings.Repeat("[", maxJSONDepth) + "\"\xff\"" + strings.Repeat("]", maxJSONDepth)
	assert.True(t, json.Valid([]byte(deep)), "encoding/json's own limit")
	assert.Error(t, checkJSONText([]byte(deep)), "as deep as encoding/json goes")
}

// FuzzJSONText: the scanner's grammar is encoding/json's, and it finds a fault exactly when a
// string has an invalid byte or a surrogate escape (absent both, it finds none).
func FuzzJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"s":"\ud83d\ude00"}`, "{\"s\":\"\xff\"}", `{"s":"\ud800"}`, `[1,2.5e3,null]`, `{"a":{"b":[true]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s := jsonScanner{data: body}
		ok := s.text()
		if ok != json.Valid(body) {
			t.Fatalf("scanner says well-formed %v, encoding/json %v: %q", ok, !ok, body)
		}
		if !ok {
			return
		}
		surrogates := bytes.Contains(bytes.ToLower(body), []byte(`\ud`))
		if s.fault != nil && utf8.Valid(body) && !surrogates {
			t.Fatalf("fault %+v in valid UTF-8 without surrogate escapes: %q", s.fault, body)
		}
		if s.fault == nil && !utf8.Valid(body) {
			t.Fatalf("no fault in a body that is not UTF-8: %q", body)
		}
	})
}

func TestBodyReadErrors(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name   string
		err    error
		status int
		code   domain.ErrorCode
		msg    string
	}{
		{"body ended early", io.ErrUnexpectedEOF, 400, domain.CodeParameterInvalid, "The request body ended before its declared length."},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, 400, domain.CodeParameterInvalid, "The request body ended before its declared length."},
		{"bad chunked encoding", errors.New("malformed chunked encoding"), 400, domain.CodeParameterInvalid, "The request body could not be read."},
		{"read deadline", timeout, 408, domain.CodeRequestTimeout, "The request body was not received in time."},
		{"http.MaxBytesReader", &http.MaxBytesError{Limit: 10}, 413, domain.CodeRequestTooLarge, "Request body too large."},
		{"middleware.BodyLimit", echo.ErrStatusRequestEntityTooLarge, 413, domain.CodeRequestTooLarge, "Request body too large."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readBody(io.MultiReader(strings.NewReader("partial"), iotestErrReader{tc.err}))
			require.Error(t, err)
			ae := classify(fmt.Errorf("validate: %w", err))
			require.NotNil(t, ae)
			assert.Equal(t, tc.status, ae.Status)
			assert.Equal(t, typeInvalidRequest, ae.Type)
			assert.Equal(t, tc.code, ae.Code)
			assert.Equal(t, tc.msg, ae.Message)
		})
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

// runValidator sends req through the validation middleware.
func runValidator(t *testing.T, v *validator, req *http.Request) (*apiError, bool) {
	t.Helper()
	reached := false
	err := v.middleware(func(echo.Context) error { reached = true; return nil })(echo.New().NewContext(req, httptest.NewRecorder()))
	if err != nil {
		ae := classify(err)
		require.NotNil(t, ae, "must classify to a 4xx: %v", err)
		return ae, reached
	}
	return nil, reached
}

func TestValidationRefusesText(t *testing.T) {
	v := newTestValidator(t)
	printable := make([]byte, 0, 94)
	for c := byte(0x21); c <= 0x7e; c++ {
		printable = append(printable, c)
	}
	const payment = `{"amount":1000,"currency":"USD","orderId":"o-1"}`
	tests := []struct {
		name         string
		method, path string
		key, body    string
		param        string // "" with ok: reaches the handler
		ok           bool
	}{
		{"search not UTF-8", http.MethodGet, paymentsPath + "?search=%ff", "", "", "search", false},
		{"search with an encoded surrogate", http.MethodGet, paymentsPath + "?search=%ed%a0%80", "", "", "search", false},
		{"search with an overlong form", http.MethodGet, paymentsPath + "?search=%c0%af", "", "", "search", false},
		{"search in UTF-8", http.MethodGet, paymentsPath + "?search=caf%C3%A9%F0%9F%98%80", "", "", "", true},
		{"chains limit not UTF-8", http.MethodGet, "/v1/external/chains?limit=%ff", "", "", "limit", false},
		{"payment id not UTF-8", http.MethodGet, paymentsPath + "/%ff", "", "", "paymentId", false},
		{"orderId not UTF-8", http.MethodPost, paymentsPath, "", "{\"amount\":1000,\"currency\":\"USD\",\"orderId\":\"o-\xff\"}", "orderId", false},
		{"orderId with a lone surrogate", http.MethodPost, paymentsPath, "", `{"amount":1000,"currency":"USD","orderId":"o-\udfff"}`, "orderId", false},
		{"customMetadata with a lone surrogate", http.MethodPost, paymentsPath, "", `{"amount":1000,"currency":"USD","orderId":"o-1","customMetadata":"\ud800"}`, "customMetadata", false},
		{"withdrawal orderId not UTF-8", http.MethodPost, withdrawalsPath, "",
			"{\"amountInCents\":500,\"chainId\":\"eip155:8453\",\"recipientAddress\":\"" + validAddr + "\",\"orderId\":\"\xc3\x28\"}", "orderId", false},
		{"orderId with a surrogate pair", http.MethodPost, paymentsPath, "", `{"amount":1000,"currency":"USD","orderId":"o-\ud83d\ude00"}`, "", true},
		{"orderId with raw emoji", http.MethodPost, paymentsPath, "", "{\"amount\":1000,\"currency\":\"USD\",\"orderId\":\"o-\U0001F600\"}", "", true},
		{"key not UTF-8", http.MethodPost, paymentsPath, "k-\xff", payment, "Idempotency-Key", false},
		{"key not UTF-8 on a route without POST", http.MethodPost, paymentsPath + "/0190f4d2-0000-7000-8000-000000000000", "\xff", payment, "Idempotency-Key", false},
		{"key not UTF-8 off the spec", http.MethodPost, "/v1/external/secretkey-auth/nowhere", "\xff", payment, "Idempotency-Key", false},
		{"key in UTF-8 but not ASCII", http.MethodPost, paymentsPath, "cl\u00e9", payment, "Idempotency-Key", false},
		{"key with a space", http.MethodPost, paymentsPath, "a b", payment, "Idempotency-Key", false},
		{"key with DEL", http.MethodPost, paymentsPath, "a\x7f", payment, "Idempotency-Key", false},
		{"key of 256 characters", http.MethodPost, paymentsPath, strings.Repeat("k", 256), payment, "Idempotency-Key", false},
		{"key of every printable ASCII character", http.MethodPost, paymentsPath, string(printable), payment, "", true},
		{"key of 255 characters", http.MethodPost, paymentsPath, strings.Repeat("k", 255), payment, "", true},
		{"a uuid key", http.MethodPost, paymentsPath, "0190f4d2-0000-7000-8000-000000000000", payment, "", true},
		{"key on a GET is not read", http.MethodGet, paymentsPath, "\xff", "", "", true},
	}
	// Refused by the spec's schema for the key (pattern, maxLength), not as text.
	bySchema := map[string]bool{"key in UTF-8 but not ASCII": true, "key with a space": true, "key with DEL": true, "key of 256 characters": true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req := httptest.NewRequest(tc.method, tc.path, body)
			if tc.body != "" {
				req.Header.Set(echo.HeaderContentType, "application/json")
			}
			if tc.key != "" {
				req.Header.Set("Idempotency-Key", tc.key)
			}
			ae, reached := runValidator(t, v, req)
			if tc.ok {
				require.Nil(t, ae, "%+v", ae)
				assert.True(t, reached)
				return
			}
			require.NotNil(t, ae)
			assert.False(t, reached)
			assert.Equal(t, http.StatusBadRequest, ae.Status)
			assert.Equal(t, domain.CodeParameterInvalid, ae.Code)
			assert.Equal(t, tc.param, ae.Param)
			assert.True(t, utf8.ValidString(ae.Message), "the message itself is text: %q", ae.Message)
			if !bySchema[tc.name] {
				assert.Equal(t, tc.param+": "+utf8Refusal, ae.Message)
			}
		})
	}
}

// Sockets: the real application (New) behind the real net/http server (httpServer).

// logBuffer collects the JSON log lines of a server.
type logBuffer struct{ testlog.Buffer }

func (b *logBuffer) entries(t *testing.T) []map[string]any {
	t.Helper()
	out, err := b.Lines()
	require.NoError(t, err)
	return out
}

// waitEntry waits for the log line that match accepts.
func (b *logBuffer) waitEntry(t *testing.T, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range b.entries(t) {
			if match(m) {
				return m
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no such log line in:\n%s", b.String())
	return nil
}

// accessLine waits for the access log line of path.
func (b *logBuffer) accessLine(t *testing.T, path string) map[string]any {
	t.Helper()
	return b.waitEntry(t, func(m map[string]any) bool { return m["msg"] == "request" && m["path"] == path })
}

func (b *logBuffer) noInternalError(t *testing.T) {
	t.Helper()
	for _, m := range b.entries(t) {
		assert.NotEqual(t, "internal error", m["msg"], "%v", m)
		assert.NotEqual(t, "ERROR", m["level"], "%v", m)
	}
}

type socketServer struct {
	srv     *httptest.Server
	log     *logBuffer
	started chan struct{} // a /test/wait request reached its handler
	ended   chan error    // what its context ended with
}

// newSocketServer serves New's application, plus test routes, with httpServer's settings and
// the given BodyReadTimeout (and ReadTimeout when not zero).
func newSocketServer(t *testing.T, bodyTimeout, readTimeout time.Duration) *socketServer {
	t.Helper()
	doc, err := gen.GetSpec()
	require.NoError(t, err)
	s := &socketServer{log: &logBuffer{}, started: make(chan struct{}, 1), ended: make(chan error, 1)}
	e, err := New(Deps{Shape: settlement.Schema, Spec: doc, SpecYAML: []byte("openapi: 3.0.3\n"), MaxBodyBytes: "1M",
		BodyReadTimeout: bodyTimeout, Log: slog.New(slog.NewJSONHandler(s.log, nil))})
	require.NoError(t, err)
	// Reads the body the way the validator does, then waits as long as ?wait= says.
	e.Match([]string{http.MethodGet, http.MethodPost}, "/test/body", func(c echo.Context) error {
		b, err := peekBody(c.Request())
		if err != nil {
			return err
		}
		if d, err := time.ParseDuration(c.QueryParam("wait")); err == nil {
			time.Sleep(d)
		}
		if err := c.Request().Context().Err(); err != nil {
			return fmt.Errorf("after the body: %w", err)
		}
		return c.JSON(http.StatusOK, map[string]int{"bytes": len(b)})
	})
	// Runs until its context ends, and fails with the context's error like a store call would.
	e.GET("/test/wait", func(c echo.Context) error {
		s.started <- struct{}{}
		<-c.Request().Context().Done()
		err := fmt.Errorf("store: list payments: %w", c.Request().Context().Err())
		s.ended <- err
		return err
	})
	s.srv = httptest.NewUnstartedServer(nil)
	s.srv.Config = httpServer(e)
	s.srv.Listener = JSONErrorListener(s.srv.Listener, nil) // as Serve
	if readTimeout > 0 {
		s.srv.Config.ReadTimeout = readTimeout
	}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *socketServer) dial(t *testing.T) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", s.srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c.(*net.TCPConn)
}

// head is a request head declaring a JSON body of length bytes.
func head(method, target string, length int) string {
	return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", method, target, length)
}

// readError reads one response and its error body.
func readError(t *testing.T, r *bufio.Reader) (*http.Response, gen.Error) {
	t.Helper()
	res, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	_ = res.Body.Close()
	var body gen.Error
	require.NoError(t, json.Unmarshal(raw, &body), string(raw))
	assert.Equal(t, "application/json", res.Header.Get(echo.HeaderContentType))
	assert.NotEmpty(t, res.Header.Get(echo.HeaderXRequestID))
	return res, body
}

// The two ways a body is read: the validator on a spec route, peekBody on another.
var bodyTargets = []struct{ method, path string }{
	{http.MethodGet, "/v1/external/chains"},
	{http.MethodPost, "/test/body"},
}

func TestTruncatedBodyIs400(t *testing.T) {
	for _, target := range bodyTargets {
		t.Run(target.path, func(t *testing.T) {
			s := newSocketServer(t, 0, 0)
			conn := s.dial(t)
			_, err := io.WriteString(conn, head(target.method, target.path, 100)+`{"orderId":"only 20`)
			require.NoError(t, err)
			require.NoError(t, conn.CloseWrite()) // the body ends at 20 of 100 bytes
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
			r := bufio.NewReader(conn)
			res, body := readError(t, r)
			assert.Equal(t, http.StatusBadRequest, res.StatusCode)
			assert.True(t, res.Close, "Connection: close")
			assert.Equal(t, "invalid_request_error", body.Error.Type)
			assert.Equal(t, "parameter_invalid", body.Error.Code)
			assert.Equal(t, "The request body ended before its declared length.", body.Error.Message)
			_, err = r.ReadByte()
			assert.ErrorIs(t, err, io.EOF, "the server closes the connection")

			line := s.log.accessLine(t, target.path)
			assert.Equal(t, float64(400), line["status"])
			assert.Equal(t, "INFO", line["level"])
			s.log.noInternalError(t)
		})
	}
}

// A client that sends part of its body and hangs up cannot read the answer; the log must still
// not call it an internal error.
func TestAbandonedBodyIsNotAnInternalError(t *testing.T) {
	s := newSocketServer(t, 0, 0)
	conn := s.dial(t)
	_, err := io.WriteString(conn, head(http.MethodPost, "/test/body", 100)+`{"orderId":"only 20`)
	require.NoError(t, err)
	require.NoError(t, conn.SetLinger(0)) // a reset, not a polite close
	require.NoError(t, conn.Close())
	line := s.log.accessLine(t, "/test/body")
	assert.Equal(t, float64(400), line["status"])
	s.log.noInternalError(t)
}

func TestStalledBodyIs408(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, target := range bodyTargets {
		t.Run(target.path, func(t *testing.T) {
			s := newSocketServer(t, timeout, 0)
			conn := s.dial(t)
			start := time.Now()
			_, err := io.WriteString(conn, head(target.method, target.path, 100)+`{"orderId":"only 20`)
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
			r := bufio.NewReader(conn)
			res, body := readError(t, r) // the client is still there, waiting to send the rest
			elapsed := time.Since(start)
			assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
			assert.True(t, res.Close, "Connection: close")
			assert.Equal(t, "invalid_request_error", body.Error.Type)
			assert.Equal(t, "request_timeout", body.Error.Code)
			assert.Equal(t, "The request body was not received in time.", body.Error.Message)
			assert.GreaterOrEqual(t, elapsed, timeout)
			assert.Less(t, elapsed, 3*time.Second, "answered after BodyReadTimeout, not ReadTimeout")
			_, err = r.ReadByte()
			assert.ErrorIs(t, err, io.EOF, "the server closes the connection")

			line := s.log.accessLine(t, target.path)
			assert.Equal(t, float64(408), line["status"])
			s.log.noInternalError(t)
		})
	}
}

// The default BodyReadTimeout is 10 s, well before the server's 30 s ReadTimeout.
func TestStalledBodyDefaultTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 10 s")
	}
	s := newSocketServer(t, 0, 0)
	conn := s.dial(t)
	start := time.Now()
	_, err := io.WriteString(conn, head(http.MethodPost, "/test/body", 100)+`{"orderId":`)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	res, body := readError(t, bufio.NewReader(conn))
	assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	assert.Equal(t, "request_timeout", body.Error.Code)
	assert.InDelta(t, defaultBodyReadTimeout.Seconds(), time.Since(start).Seconds(), 1.5)
}

// The body's deadline ends with the body: neither a slow handler after it nor the next request
// on a kept-alive connection is cut short by it.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s := newSocketServer(t, timeout, 0)
	conn := s.dial(t)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	r := bufio.NewReader(conn)
	send := func(target, body string) *http.Response {
		t.Helper()
		_, err := io.WriteString(conn, head(http.MethodPost, target, len(body))+body)
		require.NoError(t, err)
		res, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, string(raw))
		assert.JSONEq(t, fmt.Sprintf(`{"bytes":%d}`, len(body)), string(raw))
		assert.False(t, res.Close)
		return res
	}
	send("/test/body?wait=600ms", `{"a":1}`) // the handler outlives the body's deadline
	time.Sleep(3 * timeout)                  // idle on the kept-alive connection
	send("/test/body", `{"b":2}`)

	// The same connection: a third request stalls, and gets its own 408 after its own deadline.
	start := time.Now()
	_, err := io.WriteString(conn, head(http.MethodPost, "/test/body", 10)+`{`)
	require.NoError(t, err)
	res, body := readError(t, r)
	assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	assert.Equal(t, "request_timeout", body.Error.Code)
	assert.GreaterOrEqual(t, time.Since(start), timeout)
	s.log.noInternalError(t)
}

func TestClientDisconnectIsNotAnInternalError(t *testing.T) {
	s := newSocketServer(t, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL+"/test/wait", nil)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		res, err := s.srv.Client().Do(req)
		if err == nil {
			_ = res.Body.Close()
		}
		errc <- err
	}()
	<-s.started
	cancel() // the client gives up mid-flight: its transport closes the connection
	require.ErrorIs(t, <-errc, context.Canceled)
	select {
	case err := <-s.ended:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not canceled")
	}

	gone := s.log.waitEntry(t, func(m map[string]any) bool { return m["msg"] == "client disconnected" })
	assert.Equal(t, "INFO", gone["level"])
	assert.Equal(t, "/test/wait", gone["path"])
	assert.Contains(t, gone["err"], "context canceled")
	line := s.log.accessLine(t, "/test/wait")
	assert.Equal(t, float64(statusClientClosedRequest), line["status"])
	assert.Equal(t, "INFO", line["level"])
	assert.NotEmpty(t, gone["request_id"])
	assert.Equal(t, line["request_id"], gone["request_id"])
	s.log.noInternalError(t)
}

// net/http clears the read deadline once the body has been read (or at once when there is
// none), to watch for the client leaving: neither ReadTimeout nor BodyReadTimeout cuts a slow
// handler short, so a canceled request context means the client went away.
func TestTimeoutsDoNotCutHandlersShort(t *testing.T) {
	for _, bodyTimeout := range []time.Duration{200 * time.Millisecond, time.Hour} {
		t.Run(bodyTimeout.String(), func(t *testing.T) {
			s := newSocketServer(t, bodyTimeout, 300*time.Millisecond)
			for _, body := range []string{"", `{"a":1}`} {
				req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/test/body?wait=700ms", strings.NewReader(body))
				require.NoError(t, err)
				res, err := s.srv.Client().Do(req)
				require.NoError(t, err)
				raw, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				_ = res.Body.Close()
				assert.Equal(t, http.StatusOK, res.StatusCode, string(raw))
				assert.JSONEq(t, fmt.Sprintf(`{"bytes":%d}`, len(body)), string(raw))
			}
			s.log.noInternalError(t)
		})
	}
}

// With a ReadTimeout shorter than BodyReadTimeout, the ReadTimeout ends a stalled body: 408 too.
func TestStalledBodyUnderReadTimeout(t *testing.T) {
	s := newSocketServer(t, time.Hour, 300*time.Millisecond)
	conn := s.dial(t)
	_, err := io.WriteString(conn, head(http.MethodPost, "/test/body", 100)+`{"orderId":`)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	res, body := readError(t, bufio.NewReader(conn))
	assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	assert.Equal(t, "request_timeout", body.Error.Code)
	s.log.noInternalError(t)
}

// httpServer's limits: the error of a stalled body (10 s) is written well within WriteTimeout.
func TestHTTPServerTimeouts(t *testing.T) {
	srv := httpServer(http.NotFoundHandler())
	assert.Less(t, defaultBodyReadTimeout, srv.ReadTimeout)
	assert.Less(t, defaultBodyReadTimeout+errorWriteTimeout, srv.WriteTimeout)
	assert.NotZero(t, srv.ReadHeaderTimeout)
	assert.NotZero(t, srv.IdleTimeout)
}
