package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

// `tokens issue` mints a test-mode token unless --mode live says otherwise; --json reports the
// mode, and the token verifies in that mode.
func TestTokensIssueMode(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db)["merchantId"].(string)
	issue := func(extra ...string) map[string]any {
		t.Helper()
		return cliJSON(t, append([]string{"tokens", "issue", "--database-url", db, "--merchant", mid, "--json"}, extra...)...)
	}
	def := issue()
	assert.Equal(t, "test", def["mode"], "test unless asked otherwise")
	live := issue("--mode", "live", "--scope", "write")
	assert.Equal(t, "live", live["mode"])
	assert.Equal(t, "write", live["scope"])
	test := issue("--mode", "test")
	assert.Equal(t, "test", test["mode"])

	out, errOut, err := cli(t, "tokens", "issue", "--database-url", db, "--merchant", mid, "--mode", "live")
	require.NoError(t, err, errOut)
	human := strings.TrimSpace(out)
	assert.NotContains(t, human, "\n", "stdout holds the token alone")
	assert.Contains(t, errOut, "live-mode")

	a := openApp(t, db)
	ctx := context.Background()
	for _, tc := range []struct {
		token string
		mode  domain.Mode
	}{{def["accessToken"].(string), domain.ModeTest}, {live["accessToken"].(string), domain.ModeLive},
		{test["accessToken"].(string), domain.ModeTest}, {human, domain.ModeLive}} {
		p, err := a.Tokens.Verify(ctx, tc.token)
		require.NoError(t, err)
		assert.Equal(t, tc.mode, p.Mode)
	}
	p, err := a.Tokens.Verify(ctx, live["accessToken"].(string))
	require.NoError(t, err)
	assert.Equal(t, domain.RoleAdmin, p.Role)

	for _, bad := range []string{"prod", "", "sandbox"} {
		out, errOut, err := cli(t, "tokens", "issue", "--database-url", db, "--merchant", mid, "--mode", bad)
		require.ErrorIs(t, err, errUsage, bad)
		assert.Contains(t, errOut, "--mode must be test or live")
		assert.Empty(t, out)
	}
}

// `tokens issue --role` mints a service token with that role (viewer unless said); --scope, the
// older form, maps read to viewer and write to admin; both at once, or an unknown role, is a
// usage error.
func TestTokensIssueRole(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db)["merchantId"].(string)
	a := openApp(t, db)
	for args, want := range map[string]domain.Role{"": domain.RoleViewer, "--role viewer": domain.RoleViewer,
		"--role developer": domain.RoleDeveloper, "--role admin": domain.RoleAdmin, "--role owner": domain.RoleOwner,
		"--scope read": domain.RoleViewer, "--scope write": domain.RoleAdmin} {
		out := cliJSON(t, append([]string{"tokens", "issue", "--database-url", db, "--merchant", mid, "--json"}, strings.Fields(args)...)...)
		assert.Equal(t, string(want), out["role"], args)
		p, err := a.Tokens.Verify(context.Background(), out["accessToken"].(string))
		require.NoError(t, err, args)
		assert.Equal(t, want, p.Role, args)
	}
	for _, bad := range [][]string{{"--role", "root"}, {"--role", "Owner"}, {"--role", "admin", "--scope", "read"}, {"--scope", "admin"}} {
		_, errOut, err := cli(t, append([]string{"tokens", "issue", "--database-url", db, "--merchant", mid}, bad...)...)
		require.ErrorIs(t, err, errUsage, "%v", bad)
		assert.Contains(t, errOut, "tokens issue:", "%v", bad)
	}
}

// PAYMENTS_OIDC_MODE_CLAIM names the external issuer's mode claim: "mode" unless set.
func TestLoadConfigOIDCModeClaim(t *testing.T) {
	cliEnv(t)
	t.Setenv("PAYMENTS_OIDC_MODE_CLAIM", "")
	c, err := loadConfig("x.db", "", "", "", "")
	require.NoError(t, err)
	assert.Equal(t, "mode", c.Dashboard.OIDCModeClaim)
	t.Setenv("PAYMENTS_OIDC_MODE_CLAIM", "https://paymentsd.example/mode")
	c, err = loadConfig("x.db", "", "", "", "")
	require.NoError(t, err)
	assert.Equal(t, "https://paymentsd.example/mode", c.Dashboard.OIDCModeClaim)
}

// PAYMENTS_OIDC_ROLE_CLAIM names the external issuer's role claim: "paymentsd_role" unless set.
func TestLoadConfigOIDCRoleClaim(t *testing.T) {
	cliEnv(t)
	t.Setenv("PAYMENTS_OIDC_ROLE_CLAIM", "")
	c, err := loadConfig("x.db", "", "", "", "")
	require.NoError(t, err)
	assert.Equal(t, "paymentsd_role", c.Dashboard.OIDCRoleClaim)
	t.Setenv("PAYMENTS_OIDC_ROLE_CLAIM", "https://paymentsd.example/role")
	c, err = loadConfig("x.db", "", "", "", "")
	require.NoError(t, err)
	assert.Equal(t, "https://paymentsd.example/role", c.Dashboard.OIDCRoleClaim)
}
