package server

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"testing/fstest"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/webapp"
)

func getDashboard(t *testing.T, e *echo.Echo, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func assertDashboardSecurityHeaders(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	h := rec.Header()
	assert.Equal(t, "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; "+
		"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'", h.Get("Content-Security-Policy"))
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
}

var dashboardScript = regexp.MustCompile(`<script type="module" crossorigin src="(/dashboard/assets/[^"]+\.js)"></script>`)

// The embedded build, as New serves it: the page, its assets, the redirect and the headers.
func TestDashboardServesEmbeddedApp(t *testing.T) {
	e := echo.New()
	registerDashboard(e)

	red := getDashboard(t, e, "/dashboard")
	assert.Equal(t, http.StatusMovedPermanently, red.Code)
	assert.Equal(t, "/dashboard/", red.Header().Get("Location"))

	page := getDashboard(t, e, "/dashboard/")
	require.Equal(t, http.StatusOK, page.Code)
	assert.Equal(t, "text/html; charset=UTF-8", page.Header().Get(echo.HeaderContentType))
	assert.Equal(t, "no-cache", page.Header().Get("Cache-Control"))
	assertDashboardSecurityHeaders(t, page)
	want, err := fs.ReadFile(webapp.Dist, "index.html")
	require.NoError(t, err)
	assert.Equal(t, string(want), page.Body.String())
	m := dashboardScript.FindStringSubmatch(page.Body.String())
	require.NotNil(t, m, "the page loads its bundle from /dashboard/assets/:\n%s", page.Body.String())

	etag := page.Header().Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, http.StatusNotModified, getDashboard(t, e, "/dashboard/", "If-None-Match", etag).Code)

	js := getDashboard(t, e, m[1])
	require.Equal(t, http.StatusOK, js.Code)
	assert.Equal(t, "text/javascript; charset=utf-8", js.Header().Get(echo.HeaderContentType))
	assert.Equal(t, "public, max-age=31536000, immutable", js.Header().Get("Cache-Control"))
	assertDashboardSecurityHeaders(t, js)
	assert.Positive(t, js.Body.Len())
}

func TestDashboardAssetsOnlyFromTheBuild(t *testing.T) {
	e := echo.New()
	registerDashboardFS(e, fstest.MapFS{
		"index.html":        {Data: []byte("<!doctype html><title>x</title>")},
		"assets/app-1.css":  {Data: []byte("body{}")},
		"assets/font.woff3": {Data: []byte("x")},
		"secret.txt":        {Data: []byte("not an asset")},
	})
	css := getDashboard(t, e, "/dashboard/assets/app-1.css")
	require.Equal(t, http.StatusOK, css.Code)
	assert.Equal(t, "text/css; charset=utf-8", css.Header().Get(echo.HeaderContentType))

	odd := getDashboard(t, e, "/dashboard/assets/font.woff3")
	require.Equal(t, http.StatusOK, odd.Code)
	assert.Equal(t, echo.MIMEOctetStream, odd.Header().Get(echo.HeaderContentType))
	assert.Equal(t, "nosniff", odd.Header().Get("X-Content-Type-Options"))

	for _, target := range []string{
		"/dashboard/assets/missing.js",
		"/dashboard/assets/../secret.txt",
		"/dashboard/assets/%2e%2e/secret.txt",
		"/dashboard/assets/",
		"/dashboard/secret.txt",
		"/dashboard/withdrawals", // the app routes in the fragment: no path but / is a page
	} {
		assert.Equal(t, http.StatusNotFound, getDashboard(t, e, target).Code, target)
	}
	assert.Equal(t, http.StatusOK, getDashboard(t, e, "/dashboard/index.html").Code)
}

// A binary built without dist/index.html answers 500 rather than an empty page.
func TestDashboardWithoutBuild(t *testing.T) {
	e := echo.New()
	registerDashboardFS(e, fstest.MapFS{})
	assert.Equal(t, http.StatusInternalServerError, getDashboard(t, e, "/dashboard/").Code)
}
