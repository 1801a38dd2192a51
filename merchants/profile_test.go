package merchants

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr(s string) *string { return &s }

func TestCheckProfile(t *testing.T) {
	c := ProfileChange{DisplayName: ptr("  Acme  "), AccentColor: ptr("#ABCDEF"), LogoURL: ptr("https://a.example/l.png")}
	require.NoError(t, CheckProfile(&c))
	assert.Equal(t, "Acme", *c.DisplayName)
	assert.Equal(t, "#abcdef", *c.AccentColor)
	require.NoError(t, CheckProfile(&ProfileChange{DisplayName: ptr(strings.Repeat("ß", 80))}))
	require.NoError(t, CheckProfile(&ProfileChange{}), "nothing to change")
	for name, bad := range map[string]ProfileChange{
		"empty":      {DisplayName: ptr("")},
		"spaces":     {DisplayName: ptr("  ")},
		"81":         {DisplayName: ptr(strings.Repeat("ß", 81))},
		"newline":    {DisplayName: ptr("a\nb")},
		"del":        {DisplayName: ptr("a\x7fb")},
		"http":       {LogoURL: ptr("http://a.example/l.png")},
		"data":       {LogoURL: ptr("data:image/png;base64,AAAA")},
		"too long":   {LogoURL: ptr("https://a.example/" + strings.Repeat("x", 2040))},
		"3 digits":   {AccentColor: ptr("#abc")},
		"no hash":    {AccentColor: ptr("abcdef")},
		"expression": {AccentColor: ptr("#abcdef;x")},
	} {
		assert.Error(t, CheckProfile(&bad), name)
	}
}
