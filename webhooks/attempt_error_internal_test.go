package webhooks

import (
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/store"
)

// A failed lookup is recorded without the resolver it asked (an internal address too).
func TestRecordedLookupErrorDoesNotNameTheResolver(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "https://hooks.example/x", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Name: "hooks.example", Server: "10.0.0.2:53", Err: "no such host", IsNotFound: true}}}
	assert.Contains(t, err.Error(), "10.0.0.2", "what the resolver says")
	got := recordedError(err, "https://hooks.example/x")
	assert.Equal(t, "lookup hooks.example: no such host", got)
}

// A connection error names the gateway's own socket address ("read tcp 10.0.3.7:54458->…"), and
// a lookup error's text may name our resolver or address: neither reaches the delivery log,
// nor does it in attempts recorded before, when read.
func TestRecordedErrorsNameNoInternalAddress(t *testing.T) {
	reset := &url.Error{Op: "Post", URL: "https://hooks.example/x", Err: &net.OpError{Op: "read", Net: "tcp",
		Source: &net.TCPAddr{IP: net.ParseIP("10.0.3.7"), Port: 54458}, Addr: &net.TCPAddr{IP: net.ParseIP("93.184.216.34"), Port: 443},
		Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}
	require.Contains(t, reset.Error(), "10.0.3.7")
	got := recordedError(reset, "https://hooks.example/x")
	assert.NotContains(t, got, "10.0.3.7")
	assert.Equal(t, "read hooks.example: connection reset by peer", got)

	dns := &url.Error{Op: "Post", URL: "https://hooks.example/x", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Name: "hooks.example", Server: "10.0.0.2:53", Err: "read udp 10.0.3.7:53114->10.0.0.2:53: read: connection refused"}}}
	got = recordedError(dns, "https://hooks.example/x")
	assert.Equal(t, "lookup hooks.example: failed", got)

	for _, old := range []string{
		`Post "https://hooks.example/x": read tcp 10.0.3.7:54458->93.184.216.34:443: read: connection reset by peer`,
		`Post "https://hooks.example/x": dial tcp: lookup hooks.example on 10.0.0.2:53: no such host`,
	} {
		ds := []store.Delivery{{Log: []store.Attempt{{Error: &old}}}}
		scrubLog(ds)
		assert.NotContains(t, *ds[0].Log[0].Error, "10.0.", old)
	}
}
