package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The users commands end to end on the embedded database: a generated password printed once (and
// only in the output), a given one never echoed, the list, a reset, a disable, an invitation link,
// and usage errors that change nothing.
func TestUsersCommands(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db)["merchantId"].(string)

	owner := cliJSON(t, "users", "create", "--email", "Owner@Example.com", "--merchant", mid, "--role", "owner", "--json")
	assert.Equal(t, "owner@example.com", owner["email"])
	assert.Equal(t, "owner", owner["role"])
	require.Len(t, owner["password"], 27, "a generated password, printed once")

	pwFile := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte("correct horse battery staple\n"), 0o600))
	dev := cliJSON(t, "users", "create", "--email", "dev@example.com", "--merchant", mid, "--role", "developer", "--password-file", pwFile, "--json")
	assert.NotContains(t, dev, "password", "a password given is never echoed")

	_, errOut, err := cli(t, "users", "create", "--email", "dev@example.com", "--merchant", mid, "--role", "viewer")
	require.Error(t, err, errOut)
	assert.Contains(t, err.Error(), "a user with this email exists")
	_, _, err = cli(t, "users", "create", "--email", "x@example.com", "--merchant", mid, "--role", "root")
	assert.ErrorIs(t, err, errUsage)
	_, _, err = cli(t, "users", "create", "--email", "x@example.com", "--merchant", "nope", "--role", "viewer")
	assert.ErrorIs(t, err, errUsage)

	list := cliJSON(t, "users", "list", "--merchant", mid, "--json")
	users := list["users"].([]any)
	require.Len(t, users, 2)
	assert.Equal(t, "dev@example.com", users[0].(map[string]any)["email"])
	assert.Equal(t, false, users[0].(map[string]any)["disabled"])
	assert.NotContains(t, users[0].(map[string]any), "passwordHash", "no hash leaves the database")

	out, errOut, err := cli(t, "users", "reset-password", "--email", "DEV@example.com")
	require.NoError(t, err, errOut)
	assert.Contains(t, out, "new password for DEV@example.com (shown once): ")
	_, _, err = cli(t, "users", "reset-password", "--email", "nobody@example.com")
	assert.ErrorContains(t, err, "no such user")

	_, errOut, err = cli(t, "users", "disable", "--email", "dev@example.com")
	require.NoError(t, err, errOut)
	list = cliJSON(t, "users", "list", "--merchant", mid, "--json")
	assert.Equal(t, true, list["users"].([]any)[0].(map[string]any)["disabled"])

	out, errOut, err = cli(t, "users", "invite", "--email", "new@example.com", "--merchant", mid, "--role", "admin")
	require.NoError(t, err, errOut)
	link := strings.TrimSpace(out)
	assert.True(t, strings.HasPrefix(link, "http://localhost:8080/dashboard/#/accept-invitation?token="), link)
	assert.Len(t, strings.TrimPrefix(link, "http://localhost:8080/dashboard/#/accept-invitation?token="), 43)
	assert.Contains(t, errOut, "single-use invitation for new@example.com as admin")
}
