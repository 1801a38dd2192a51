package tests

// Client faults are 4xx, never 5xx: a body that ends early, text that is not UTF-8 in a body,
// a query or an Idempotency-Key. (Stalled bodies and clients that hang up mid-request are
// covered in package server, where BodyReadTimeout can be set and a handler can be made slow.)

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client that declares Content-Length 100, sends 20 bytes and half-closes gets a 400 in the
// documented error body, not a 500.
func TestTruncatedBodyIsAClientError(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: test\r\nX-Service-Secret-Key: %s\r\nIdempotency-Key: trunc-1\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n", paymentsPath, m.SecretKey)
		_, err = io.WriteString(conn, head+`{"amount":1000,"cur`)
		require.NoError(t, err)
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, string(raw))
		assert.True(t, res.Close, "Connection: close")
		var body struct {
			Error struct{ Type, Code, Message string }
		}
		require.NoError(t, json.Unmarshal(raw, &body), string(raw))
		assert.Equal(t, "invalid_request_error", body.Error.Type)
		assert.Equal(t, "parameter_invalid", body.Error.Code)
		assert.Equal(t, "The request body ended before its declared length.", body.Error.Message)

		// Nothing was created, and the key was not taken: the full request runs.
		r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "trunc-1")
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	})
}

func TestTextThatIsNotUTF8IsAClientError(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{withdrawals: true})
		tests := []struct {
			name, method, path, body string
			headers                  []string
			param                    string
		}{
			{"orderId with an invalid byte", http.MethodPost, paymentsPath,
				"{\"amount\":1000,\"currency\":\"USD\",\"orderId\":\"o-\xff\"}", nil, "orderId"},
			{"orderId with a lone surrogate", http.MethodPost, paymentsPath,
				`{"amount":1000,"currency":"USD","orderId":"o-\ud800"}`, nil, "orderId"},
			{"customMetadata with a lone low surrogate", http.MethodPost, paymentsPath,
				`{"amount":1000,"currency":"USD","orderId":"o-1","customMetadata":"\udc00"}`, nil, "customMetadata"},
			{"a member name", http.MethodPost, paymentsPath,
				"{\"amount\":1000,\"currency\":\"USD\",\"orderId\":\"o-1\",\"\xc3\x28\":1}", nil, ""},
			{"withdrawal orderId", http.MethodPost, withdrawalsPath,
				"{\"amountInCents\":500,\"chainId\":\"eip155:8453\",\"recipientAddress\":\"0x9858effd232b4033e47d90003d41ec34ecaeda94\",\"orderId\":\"\xed\xa0\x80\"}", nil, "orderId"},
			{"search", http.MethodGet, paymentsPath + "?search=%ff", "", nil, "search"},
			{"search, encoded surrogate", http.MethodGet, paymentsPath + "?search=0x%ed%a0%80", "", nil, "search"},
			{"withdrawals limit", http.MethodGet, withdrawalsPath + "?limit=%ff", "", nil, "limit"},
			{"Idempotency-Key", http.MethodPost, paymentsPath, `{"amount":1000,"currency":"USD","orderId":"o-1"}`,
				[]string{"Idempotency-Key", "k-\xff"}, "Idempotency-Key"},
			// (A POST to a route without POST is a 405 before any header is read: authentication
			// answers a method the spec's path lacks.)
			{"Idempotency-Key off the spec", http.MethodPost, "/v1/external/secretkey-auth/nowhere",
				`{}`, []string{"Idempotency-Key", "\xc0\xaf"}, "Idempotency-Key"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				var body any
				if tc.body != "" {
					body = tc.body
				}
				r := e.do(tc.method, tc.path, m.SecretKey, body, tc.headers...)
				require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
				code, typ, param := r.errorFields(t)
				assert.Equal(t, "parameter_invalid", code)
				assert.Equal(t, "invalid_request_error", typ)
				assert.Equal(t, tc.param, param)
				assert.Contains(t, string(r.Body), "must be valid UTF-8 text")
			})
		}

		// Text the spec allows is stored and read back as sent.
		const orderID = "o-\U0001F600-caf\u00e9"
		r := e.do(http.MethodPost, paymentsPath, m.SecretKey, `{"amount":1000,"currency":"USD","orderId":"o-\ud83d\ude00-caf\u00e9"}`)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		assert.Contains(t, string(r.Body), orderID)
		r = e.do(http.MethodGet, paymentsPath+"?search=caf%C3%A9", m.SecretKey, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	})
}

// Every key the spec allows (1 to 255 printable ASCII characters) is accepted and replays.
func TestIdempotencyKeysTheSpecAllows(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		var printable strings.Builder
		for c := byte(0x21); c <= 0x7e; c++ {
			printable.WriteByte(c)
		}
		for i, key := range []string{printable.String(), strings.Repeat("~", 255), "a", `"';--\`} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				body := payment(1000, "orderId", fmt.Sprintf("key-%d", i))
				first := e.do(http.MethodPost, paymentsPath, m.SecretKey, body, "Idempotency-Key", key)
				require.Equal(t, http.StatusCreated, first.Status, string(first.Body))
				again := e.do(http.MethodPost, paymentsPath, m.SecretKey, body, "Idempotency-Key", key)
				require.Equal(t, http.StatusCreated, again.Status, string(again.Body))
				assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
				assert.JSONEq(t, string(first.Body), string(again.Body))
			})
		}
		for _, key := range []string{strings.Repeat("k", 256), "a b", "cl\u00e9"} {
			r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", key)
			require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
			_, _, param := r.errorFields(t)
			assert.Equal(t, "Idempotency-Key", param)
		}
	})
}
