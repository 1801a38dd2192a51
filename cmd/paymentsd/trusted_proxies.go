package main

import (
	"fmt"
	"net/netip"
	"strings"
)

// parseTrustedProxies reads PAYMENTS_TRUSTED_PROXIES: comma-separated CIDRs (a bare address is
// that one host). A CIDR with host bits set is refused rather than widened (10.0.0.7/8 is more
// likely a typo of a /32 than a wish to trust 16 million addresses), and so is a /0: trusting
// every peer would let any client write its own address into X-Forwarded-For.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var p netip.Prefix
		if strings.Contains(part, "/") {
			var err error
			if p, err = netip.ParsePrefix(part); err != nil {
				return nil, fmt.Errorf("%q is not a CIDR (e.g. 10.0.0.0/8, 2001:db8::/32)", part)
			}
		} else {
			a, err := netip.ParseAddr(part)
			if err != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%q is not a CIDR (e.g. 10.0.0.0/8, 2001:db8::/32)", part)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 { // ::ffff:10.0.0.0/104 is 10.0.0.0/8
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		if m := p.Masked(); m != p {
			return nil, fmt.Errorf("%q has host bits set: did you mean %s?", part, m)
		}
		if p.Bits() == 0 {
			return nil, fmt.Errorf("%q trusts every peer: any client could choose its own address", part)
		}
		out = append(out, p)
	}
	return out, nil
}
