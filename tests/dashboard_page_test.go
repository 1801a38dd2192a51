package tests

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var dashboardAsset = regexp.MustCompile(`src="(/dashboard/assets/[^"]+\.js)"`)

// The web app through the whole middleware stack (authentication, validation, metrics): a
// path outside the spec, public, with its own security headers.
func TestDashboardWebApp(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		page := e.do(http.MethodGet, "/dashboard", "", nil) // redirected to /dashboard/
		require.Equal(t, http.StatusOK, page.Status)
		assert.Contains(t, page.Header.Get("Content-Security-Policy"), "script-src 'self';")
		assert.Contains(t, page.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
		assert.Equal(t, "no-cache", page.Header.Get("Cache-Control"))
		assert.Equal(t, "nosniff", page.Header.Get("X-Content-Type-Options"))
		assert.Equal(t, "no-referrer", page.Header.Get("Referrer-Policy"))
		m := dashboardAsset.FindSubmatch(page.Body)
		require.NotNil(t, m, "%s", page.Body)

		js := e.do(http.MethodGet, string(m[1]), "", nil)
		require.Equal(t, http.StatusOK, js.Status)
		assert.Equal(t, "public, max-age=31536000, immutable", js.Header.Get("Cache-Control"))
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodGet, "/dashboard/assets/..%2f..%2fgo.mod", "", nil).Status)
	})
}
