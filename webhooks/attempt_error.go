package webhooks

import (
	"errors"
	"fmt"
	"net"
	"net/url"
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
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, ErrUnsafeURL):
		return refusedText(host)
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("lookup %s: %s", dnsErr.Name, dnsErr.Err)
	}
	return err.Error()
}

// scrubLog hides, in attempts recorded before recordedError existed, the internal address a
// refused connection named (such rows age out of the log after Retention).
func scrubLog(ds []store.Delivery) {
	for i := range ds {
		for j, a := range ds[i].Log {
			if a.Error != nil && strings.Contains(*a.Error, ErrUnsafeURL.Error()+": the endpoint's host now resolves to") {
				msg := refusedText("the endpoint's host")
				ds[i].Log[j].Error = &msg
			}
		}
	}
}
