package main

import (
	"context"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMerchantsCreateLogoURL(t *testing.T) {
	db := cliEnv(t)
	for _, bad := range []string{"http://acme.example/logo.png", "https:///logo.png", "acme.example/logo.png", "javascript:alert(1)"} {
		out, errOut, err := cli(t, "merchants", "create", "--database-url", db, "--name", "Acme", "--logo-url", bad)
		require.ErrorIs(t, err, errUsage, bad)
		assert.Contains(t, errOut, "merchants create: --logo-url must be an absolute https URL", bad)
		assert.Empty(t, out)
	}
	_, err := os.Stat(db)
	assert.True(t, os.IsNotExist(err), "refused before the database is opened")

	const logo = "https://acme.example/logo.png"
	m := createMerchant(t, db, "--logo-url", logo)
	got, err := openApp(t, db).Store.Read(context.Background()).GetMerchant(uuid.MustParse(m["merchantId"].(string)))
	require.NoError(t, err)
	require.NotNil(t, got.LogoURL)
	assert.Equal(t, logo, *got.LogoURL)
}
