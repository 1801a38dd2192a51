package main

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTrustedProxiesSetting(t *testing.T) {
	t.Run("default: none", func(t *testing.T) {
		cliEnv(t)
		t.Setenv("PAYMENTS_TRUSTED_PROXIES", "")
		c, err := loadConfig("x.db", "", "", "", "")
		require.NoError(t, err)
		assert.Empty(t, c.TrustedProxies)
	})
	t.Run("CIDRs and addresses", func(t *testing.T) {
		cliEnv(t)
		t.Setenv("PAYMENTS_TRUSTED_PROXIES", " 10.0.0.0/8, 2001:db8::/32,192.0.2.7,::ffff:172.16.0.0/108,")
		c, err := loadConfig("x.db", "", "", "", "")
		require.NoError(t, err)
		assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32"),
			netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("172.16.0.0/12")}, c.TrustedProxies)
	})
	for _, tc := range []struct{ value, msg string }{
		{"10.0.0.0/33", `"10.0.0.0/33" is not a CIDR`},
		{"10.0.0.0/8,proxy.internal", `"proxy.internal" is not a CIDR`},
		{"fe80::1%eth0", "is not a CIDR"},
		{"10.0.0.7/8", "did you mean 10.0.0.0/8?"},
		{"0.0.0.0/0", "trusts every peer"},
		{"::/0", "trusts every peer"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			cliEnv(t)
			t.Setenv("PAYMENTS_TRUSTED_PROXIES", tc.value)
			_, err := loadConfig("x.db", "", "", "", "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "PAYMENTS_TRUSTED_PROXIES=")
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
