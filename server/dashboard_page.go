package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/webapp"
)

// DashboardCSP is the web app's Content-Security-Policy: everything from this origin only (the
// API included: connect-src 'self'), no inline script or style (the build puts none in
// index.html, webapp/embed_test.go checks), images also as data: URIs and over https (a
// merchant's logo URL), and the page may not be framed (clickjacking of money-moving buttons).
const DashboardCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// dashboardTypes are the content types of the files a Vite build emits; anything else is
// served as bytes (and nosniff keeps the browser from guessing).
var dashboardTypes = map[string]string{
	".html":  echo.MIMETextHTMLCharsetUTF8,
	".js":    "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".woff2": "font/woff2",
	".json":  "application/json",
}

// registerDashboard serves the merchant dashboard (webapp/dist, embedded) at /dashboard/.
// The app routes with the URL fragment (#/withdrawals/…), so the server serves one page,
// /dashboard/, plus the content-hashed files under /dashboard/assets/ (cacheable for a year:
// a new build has new names). index.html is no-cache with an ETag, so a new binary's app is
// picked up on the next load.
func registerDashboard(e *echo.Echo) {
	registerDashboardFS(e, webapp.Dist)
}

func registerDashboardFS(e *echo.Echo, dist fs.FS) {
	index, indexErr := fs.ReadFile(dist, "index.html")
	sum := sha256.Sum256(index)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`

	securityHeaders := func(h http.Header) {
		h.Set("Content-Security-Policy", DashboardCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
	}
	e.GET("/dashboard", func(c echo.Context) error {
		securityHeaders(c.Response().Header())
		return c.Redirect(http.StatusMovedPermanently, "/dashboard/")
	})
	serveIndex := func(c echo.Context) error {
		if indexErr != nil {
			return indexErr // a binary built without the app: a 500, logged
		}
		h := c.Response().Header()
		securityHeaders(h)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", etag)
		if c.Request().Header.Get("If-None-Match") == etag {
			return c.NoContent(http.StatusNotModified)
		}
		return c.Blob(http.StatusOK, echo.MIMETextHTMLCharsetUTF8, index)
	}
	e.GET("/dashboard/", serveIndex)
	e.GET("/dashboard/index.html", serveIndex)
	e.GET("/dashboard/assets/*", func(c echo.Context) error {
		name := c.Param("*")
		// fs.FS names are clean, slash-separated and relative: anything else ("..", "//",
		// a leading slash) is not a file of the build.
		if name == "" || !fs.ValidPath(name) || strings.Contains(name, "\\") {
			return echo.NewHTTPError(http.StatusNotFound)
		}
		b, err := fs.ReadFile(dist, "assets/"+name)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			return echo.NewHTTPError(http.StatusNotFound)
		}
		if err != nil {
			return err
		}
		h := c.Response().Header()
		securityHeaders(h)
		h.Set("Cache-Control", "public, max-age=31536000, immutable") // names carry a content hash
		typ, ok := dashboardTypes[path.Ext(name)]
		if !ok {
			typ = echo.MIMEOctetStream
		}
		return c.Blob(http.StatusOK, typ, b)
	})
}
