package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func getDocs(t *testing.T, e *echo.Echo, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

// Any absolute or protocol-relative URL: the page may only reference its own origin.
var externalURL = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.\-]+`)

// The script the page loads, with its version query.
var scriptSrc = regexp.MustCompile(`<script src="(/docs/redoc\.standalone\.js\?v=[0-9a-f]+)"></script>`)

func TestDocsPage(t *testing.T) {
	e := echo.New()
	registerDocs(e)

	rec := getDocs(t, e, "/docs")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/html; charset=UTF-8", rec.Header().Get(echo.HeaderContentType))
	body := rec.Body.String()

	assert.Contains(t, body, `<redoc spec-url="/openapi.yaml"`)
	m := scriptSrc.FindStringSubmatch(body)
	require.NotNil(t, m, "the page loads the vendored bundle from /docs/redoc.standalone.js:\n%s", body)
	assert.Equal(t, 1, strings.Count(body, "<script"), "one script, the local bundle")
	assert.Empty(t, externalURL.FindAllString(body, -1), "no URL to another host in the page")

	csp := rec.Header().Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "script-src 'self';")
	assert.Contains(t, csp, "img-src 'self' data:;", "images (the bundle's Redocly logo) only from this origin")
	assert.Contains(t, csp, "connect-src 'self';", "the spec only from this origin")
	assert.Empty(t, externalURL.FindAllString(csp, -1), "the policy names no other host")
	assert.EqualValues(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))

	// The URL the page names serves the bundle, cacheable for a year.
	js := getDocs(t, e, m[1])
	require.Equal(t, http.StatusOK, js.Code)
	assert.Equal(t, "application/javascript; charset=utf-8", js.Header().Get(echo.HeaderContentType))
	assert.Equal(t, "public, max-age=31536000, immutable", js.Header().Get("Cache-Control"))
	assert.EqualValues(t, "nosniff", js.Header().Get("X-Content-Type-Options"))
	assert.True(t, bytes.Equal(redocJS, js.Body.Bytes()), "the embedded bundle, byte for byte")
}

func TestDocsScript(t *testing.T) {
	e := echo.New()
	registerDocs(e)

	rec := getDocs(t, e, "/docs/redoc.standalone.js")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/javascript; charset=utf-8", rec.Header().Get(echo.HeaderContentType))
	assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"), "only the versioned URL is cached for long")
	// The real Redoc standalone bundle (scripts/vendor-redoc.sh), not a placeholder.
	assert.Greater(t, rec.Body.Len(), 500_000)
	assert.True(t, strings.HasPrefix(rec.Body.String(), "/*! For license information please see redoc.standalone.js.LICENSE.txt */"))
	assert.Contains(t, rec.Body.String(), "spec-url")

	stale := getDocs(t, e, "/docs/redoc.standalone.js?v=000000000000")
	require.Equal(t, http.StatusOK, stale.Code)
	assert.Equal(t, "no-cache", stale.Header().Get("Cache-Control"), "another version's URL is not pinned")

	for _, target := range []string{"/docs/", "/docs/other.js", "/docs/redoc.standalone.js.map"} {
		assert.Equal(t, http.StatusNotFound, getDocs(t, e, target).Code, target)
	}
}

// The served bundle references no other host: Redocly's CDN logo is replaced.
func TestDocsBundleFetchesNothingElsewhere(t *testing.T) {
	if bytes.Contains(redocJS, []byte("https://cdn.redoc.ly")) {
		t.Fatal("the Redoc bundle still loads its logo from cdn.redoc.ly")
	}
	if !bytes.Contains(vendoredRedocJS, []byte("https://cdn.redoc.ly/redoc/logo-mini.svg")) {
		t.Fatal("the vendored bundle changed: check what it fetches now")
	}
}
