package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChainDownAfterSetting(t *testing.T) {
	t.Run("default: 30s", func(t *testing.T) {
		cliEnv(t)
		t.Setenv("PAYMENTS_CHAIN_DOWN_AFTER", "")
		c, err := loadConfig("x.db", "", "", "", "")
		require.NoError(t, err)
		assert.Equal(t, 30*time.Second, c.Chains.ChainDownAfter)
	})
	t.Run("set", func(t *testing.T) {
		cliEnv(t)
		t.Setenv("PAYMENTS_CHAIN_DOWN_AFTER", "2s")
		c, err := loadConfig("x.db", "", "", "", "")
		require.NoError(t, err)
		assert.Equal(t, 2*time.Second, c.Chains.ChainDownAfter)
	})
	for _, v := range []string{"500ms", "0", "-5s", "soon"} {
		t.Run(v, func(t *testing.T) {
			cliEnv(t)
			t.Setenv("PAYMENTS_CHAIN_DOWN_AFTER", v)
			_, err := loadConfig("x.db", "", "", "", "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "PAYMENTS_CHAIN_DOWN_AFTER")
		})
	}
}
