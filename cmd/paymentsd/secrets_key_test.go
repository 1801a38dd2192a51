package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On PostgreSQL every process needs PAYMENTS_SECRETS_KEY (the answers kept for Idempotency-Key
// retries are sealed with it): serve and operator commands refuse to start without it, before
// touching the database.
func TestPostgresNeedsTheSecretsKey(t *testing.T) {
	cliEnv(t)
	t.Setenv("PAYMENTS_SECRETS_KEY", "")
	pg := "postgres://nobody@127.0.0.1:1/none?sslmode=disable" // never dialled
	for _, args := range [][]string{
		{"merchants", "create", "--database-url", pg, "--name", "X"},
		{"serve", "--database-url", pg, "--addr", "127.0.0.1:0"},
	} {
		_, _, err := cli(t, args...)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), "PAYMENTS_SECRETS_KEY is required with PostgreSQL", "%v", args)
	}
}
