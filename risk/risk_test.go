package risk_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/risk"
)

func TestSanctionsList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "list.txt")
	require.NoError(t, os.WriteFile(path, []byte("# OFAC sample\n\n0x8589427373D6D84E98730D7795D8f6f8731FDA16\n"), 0o600))
	l, err := risk.LoadSanctionsFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, l.Len())
	got, err := l.Screen(context.Background(), 1, "0x8589427373d6d84e98730d7795d8f6f8731fda16")
	require.NoError(t, err)
	assert.Equal(t, risk.Result{Score: 1, Severity: risk.Critical, Provider: "sanctions-list"}, got, "listed, whatever the case")
	got, err = l.Screen(context.Background(), 1, "0x0000000000000000000000000000000000000001")
	require.NoError(t, err)
	assert.Equal(t, risk.Result{Score: 100, Severity: risk.None, Provider: "sanctions-list"}, got)

	var empty *risk.SanctionsList // no file configured: everyone passes, and the provider is still named
	got, err = empty.Screen(context.Background(), 1, "0x8589427373d6d84e98730d7795d8f6f8731fda16")
	require.NoError(t, err)
	assert.Equal(t, risk.None, got.Severity)

	require.NoError(t, os.WriteFile(path, []byte("0x1234\n"), 0o600))
	_, err = risk.LoadSanctionsFile(path)
	assert.ErrorContains(t, err, "line 1")
	_, err = risk.LoadSanctionsFile(filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
}
