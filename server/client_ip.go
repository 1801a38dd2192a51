package server

import (
	"net"
	"net/netip"

	"github.com/labstack/echo/v4"
)

// clientIPExtractor is how c.RealIP() (the rate limits' client key) finds the client. With no
// trusted proxies it is the TCP peer: a client cannot choose its key with a header. A peer inside
// a trusted range vouches for X-Forwarded-For, read from the right: the client is the right-most
// address that is not itself a trusted proxy (anything left of it the client wrote). Echo trusts
// loopback, link-local and private peers by default; here only the configured ranges are
// trusted, so a deployment behind a proxy on 10.0.0.0/8 says so and nothing else is assumed.
func clientIPExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
