package webhooks

import (
	"net"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A failed lookup is recorded without the resolver it asked (an internal address too).
func TestRecordedLookupErrorDoesNotNameTheResolver(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "https://hooks.example/x", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Name: "hooks.example", Server: "10.0.0.2:53", Err: "no such host", IsNotFound: true}}}
	assert.Contains(t, err.Error(), "10.0.0.2", "what the resolver says")
	got := recordedError(err, "https://hooks.example/x")
	assert.Equal(t, "lookup hooks.example: no such host", got)
}
