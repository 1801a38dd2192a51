package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Guard keeps webhook deliveries off the gateway's own network: a URL whose host resolves to a
// loopback, private, link-local (cloud metadata), shared or otherwise non-public address is
// refused when the endpoint is created and again at every connection (a name can be made to
// resolve elsewhere later: DNS rebinding).
type Guard struct {
	AllowPrivate bool // PAYMENTS_WEBHOOKS_ALLOW_PRIVATE: development and tests only
	AllowHTTP    bool // plain http (the embedded default, or AllowPrivate); otherwise https only
	Resolver     *net.Resolver
}

// resolveTimeout bounds a URL check's DNS lookup.
const resolveTimeout = 5 * time.Second

// ErrUnsafeURL is why a URL is refused.
var ErrUnsafeURL = errors.New("webhook URL refused")

// nonPublic are the ranges netip's own predicates do not cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT, shared
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may reach private IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated): ::127.0.0.1
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001::/32"),       // Teredo: may embed any IPv4
	netip.MustParsePrefix("2002::/16"),       // 6to4: may embed private IPv4
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// Public reports whether an address is one a webhook may be sent to.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// CheckURL parses and checks an endpoint URL: scheme, host, and every address the host
// resolves to now.
func (g Guard) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: %q is not an absolute URL", ErrUnsafeURL, raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && (g.AllowHTTP || g.AllowPrivate):
	default:
		return nil, fmt.Errorf("%w: the scheme must be https (got %q)", ErrUnsafeURL, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: credentials in the URL are not allowed (use the signature to authenticate)", ErrUnsafeURL)
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%w: a URL with a #fragment", ErrUnsafeURL)
	}
	if g.AllowPrivate {
		return u, nil
	}
	addrs, err := g.resolve(ctx, u.Hostname())
	if err != nil {
		// Not the resolver's own words: they name internal resolvers and hosts to whoever asks.
		return nil, fmt.Errorf("%w: %s does not resolve to an address", ErrUnsafeURL, u.Hostname())
	}
	for _, a := range addrs {
		if !Public(a) {
			// Which address is not said: a dashboard user must not map internal names.
			return nil, fmt.Errorf("%w: %s resolves to a loopback, private, link-local or reserved address "+
				"(PAYMENTS_WEBHOOKS_ALLOW_PRIVATE=true allows it for development)", ErrUnsafeURL, u.Hostname())
		}
	}
	return u, nil
}

func (g Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	// A slow resolver must not hold a request (or a delivery) for long.
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, errors.New("no addresses")
	}
	return ips, nil
}

// Dialer connects only to public addresses (unless AllowPrivate): the check runs on the
// address actually dialled, after resolution.
func (g Guard) Dialer() *net.Dialer {
	d := &net.Dialer{Resolver: g.Resolver} // the resolver CheckURL asks (nil: the system's)
	if g.AllowPrivate {
		return d
	}
	d.Control = func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: dial %s: %v", ErrUnsafeURL, address, err)
		}
		if !Public(ap.Addr()) {
			return fmt.Errorf("%w: the endpoint's host now resolves to %s, a non-public address", ErrUnsafeURL, ap.Addr())
		}
		return nil
	}
	return d
}
