package chain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/stretchr/testify/assert"
)

// rpcErr is a JSON-RPC error as the rpc package returns it (code and message).
type rpcErr struct {
	code int
	msg  string
}

func (e rpcErr) Error() string  { return e.msg }
func (e rpcErr) ErrorCode() int { return e.code }

var _ rpc.Error = rpcErr{}

func TestClassify(t *testing.T) {
	dial := &url.Error{Op: "Post", URL: "http://h", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	reset := &url.Error{Op: "Post", URL: "http://h", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
	eof := &url.Error{Op: "Post", URL: "http://h", Err: io.EOF}
	timeout := &url.Error{Op: "Post", URL: "http://h", Err: context.DeadlineExceeded}
	tests := []struct {
		name       string
		err        error
		read, send class
	}{
		{"429", rpc.HTTPError{StatusCode: 429, Status: "429 Too Many Requests"}, rateLimited, rateLimited},
		{"503", rpc.HTTPError{StatusCode: 503}, transient, final},
		{"500", rpc.HTTPError{StatusCode: 500}, transient, final},
		{"401", rpc.HTTPError{StatusCode: 401}, endpointBad, endpointBad},
		{"403 rate limit body", rpc.HTTPError{StatusCode: 403, Body: []byte("rate limit exceeded")}, rateLimited, rateLimited},
		{"-32005 limit exceeded", rpcErr{-32005, "limit exceeded"}, rateLimited, rateLimited},
		{"rate limit message", rpcErr{-32000, "Your app has exceeded its compute units per second capacity. Rate limited"}, rateLimited, rateLimited},
		{"too many requests", rpcErr{-32099, "Too Many Requests"}, rateLimited, rateLimited},
		{"invalid params", rpcErr{-32602, "invalid argument 0: hex string without 0x prefix"}, final, final},
		{"reverted", rpcErr{3, "execution reverted"}, final, final},
		{"insufficient funds", rpcErr{-32000, "insufficient funds for gas * price + value"}, final, final},
		{"header not found", rpcErr{-32000, "header not found"}, transient, final},
		{"internal", rpcErr{-32603, "internal error"}, transient, final},
		{"refused", dial, transient, transient},
		{"reset", reset, transient, final},
		{"EOF", eof, transient, final},
		{"timeout", timeout, transient, final},
		{"no result", rpc.ErrNoResult, endpointBad, final},
		{"bad response", &badResponse{"x"}, endpointBad, final},
		{"not found", withKind(ErrNotFound, errors.New("x")), final, final},
		{"nonce too low", withKind(ErrNonceTooLow, errors.New("x")), final, final},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), final, final},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.read, classify(tc.err), "read")
			assert.Equal(t, tc.send, classifySend(tc.err), "send")
		})
	}
}

func TestIsRangeTooLarge(t *testing.T) {
	yes := []error{
		rpcErr{-32005, "query returned more than 10000 results"},
		rpcErr{-32005, "block range too large"},
		rpcErr{-32602, "eth_getLogs is limited to a 10,000 range"},
		rpcErr{-32000, "exceed maximum block range: 5000"},
		rpcErr{-32600, "limit exceeded"},
		rpcErr{-32000, "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range"},
		rpcErr{-32003, "response too large"},
		rpc.HTTPError{StatusCode: 400, Body: []byte(`{"error":{"code":-32602,"message":"block range is too wide"}}`)},
	}
	no := []error{
		rpcErr{-32005, "limit exceeded"},
		rpcErr{-32005, "rate limited"},
		rpcErr{-32000, "rate limit exceeded"},
		rpcErr{-32602, "invalid argument"},
		rpc.HTTPError{StatusCode: 429, Body: []byte("block range")},
		io.EOF,
	}
	for _, err := range yes {
		assert.True(t, isRangeTooLarge(err), err.Error())
	}
	for _, err := range no {
		assert.False(t, isRangeTooLarge(err), err.Error())
	}
}

func TestSendMessages(t *testing.T) {
	assert.True(t, isAlreadyKnown("already known"))
	assert.True(t, isAlreadyKnown("Known transaction: 0xabc"))
	assert.True(t, isAlreadyKnown("AlreadyKnown"))
	assert.False(t, isAlreadyKnown("nonce too low"))
	assert.True(t, isNonceTooLow("nonce too low: address 0x1, tx: 0 state: 1"))
	assert.True(t, isNonceTooLow("OldNonce"))
	assert.True(t, isUnderpriced("replacement transaction underpriced"))
	assert.True(t, isUnderpriced("transaction underpriced: tip needed 1, tip permitted 0"))
	assert.False(t, isUnderpriced("insufficient funds"))
}

func TestKindErrorMessage(t *testing.T) {
	e := withKind(ErrNonceTooLow, errors.New("nonce too low: address 0x1"))
	assert.Equal(t, "nonce too low: address 0x1", e.Error())
	assert.ErrorIs(t, e, ErrNonceTooLow)
	e = withKind(ErrRangeTooLarge, errors.New("query returned more than 10000 results"))
	assert.Equal(t, "log query range too large: query returned more than 10000 results", e.Error())
}
