package webhooks

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/paymentsd/paymentsd/store"
)

// refusedText is what the delivery log says of a connection the guard refused. Which address the
// host resolved to is not said (as at endpoint creation): the log is shown to dashboard users,
// who must not map the gateway's internal network with names that resolve into it.
func refusedText(host string) string {
	return fmt.Sprintf("%v: %s resolved to a non-public address (loopback, private, link-local or reserved); nothing was sent",
		ErrUnsafeURL, host)
}

// recordedError is the text the delivery log keeps of a failed attempt on endpointURL: the
// error as it is, except what would name the gateway's own network — the address a refused
// connection resolved to, and the resolver a failed lookup asked.
func recordedError(err error, endpointURL string) string {
	host := endpointURL
	if u, perr := url.Parse(endpointURL); perr == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	var (
		dnsErr *net.DNSError
		opErr  *net.OpError
	)
	switch {
	case errors.Is(err, ErrUnsafeURL):
		return refusedText(host)
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return fmt.Sprintf("lookup %s: no such host", dnsErr.Name)
		}
		if dnsErr.IsTimeout {
			return fmt.Sprintf("lookup %s: timed out", dnsErr.Name)
		}
		return fmt.Sprintf("lookup %s: failed", dnsErr.Name) // its text may name the resolver or our own address
	case errors.As(err, &opErr):
		// "read tcp 10.0.3.7:54458->…: connection reset by peer" names the gateway's own address:
		// keep the operation and the innermost cause only.
		inner := opErr.Err
		for next := errors.Unwrap(inner); next != nil; next = errors.Unwrap(inner) {
			inner = next
		}
		return fmt.Sprintf("%s %s: %s", opErr.Op, host, inner)
	}
	return err.Error()
}

// internalAddress finds, in error texts recorded before recordedError hid them, an address of
// the gateway's network: a resolver ("lookup h on 10.0.0.2:53") or a local socket ("tcp
// 10.0.3.7:54458->…").
var internalAddress = regexp.MustCompile(`(lookup \S+ on|tcp|udp) \[?[0-9a-fA-F.:]+\]?:\d+(->\S+)?`)

// scrubLog hides, in attempts recorded before recordedError existed, the internal address a
// refused connection named (such rows age out of the log after Retention).
func scrubLog(ds []store.Delivery) {
	for i := range ds {
		for j, a := range ds[i].Log {
			if a.Error == nil {
				continue
			}
			switch e := *a.Error; {
			case strings.Contains(e, ErrUnsafeURL.Error()+": the endpoint's host now resolves to"):
				msg := refusedText("the endpoint's host")
				ds[i].Log[j].Error = &msg
			case internalAddress.MatchString(e):
				msg := internalAddress.ReplaceAllString(e, "$1 (address hidden)")
				ds[i].Log[j].Error = &msg
			}
		}
	}
}
