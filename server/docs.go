package server

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The API reference page: GET /docs renders the spec served at /openapi.yaml (the active
// shape's) with Redoc's standalone bundle, vendored by scripts/vendor-redoc.sh (release pinned in
// docs/redoc/package.json) and embedded here, so the page needs no CDN and no network.
//
//go:embed docs/redoc.standalone.js
var vendoredRedocJS []byte

// redocJS is the vendored bundle with its one outside reference — the Redocly logo in the menu
// footer, fetched from Redocly's CDN — replaced by an empty inline image: the page makes no
// request to another host (the CSP would block it anyway, with a console error each load).
var redocJS = bytes.ReplaceAll(vendoredRedocJS, []byte("https://cdn.redoc.ly/redoc/logo-mini.svg"),
	[]byte("data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"))

const redocJSPath = "/docs/redoc.standalone.js"

// redocJSVersion is part of the script's URL, so the script can be cached for a year and a
// re-vendored bundle is still fetched at once.
var redocJSVersion = func() string {
	sum := sha256.Sum256(redocJS)
	return hex.EncodeToString(sum[:6])
}()

// docsCSP allows the page nothing but its own origin: the bundle's one outside reference (the
// Redocly logo image in the menu footer, which hides itself when it fails to load) is never
// fetched. Redoc injects its styles (styled-components) and runs its search index in a blob:
// worker.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var docsPage = []byte(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference — paymentsd</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.yaml" expand-responses="200,201" required-props-first="true"></redoc>
<script src="` + redocJSPath + `?v=` + redocJSVersion + `"></script>
</body>
</html>
`)

// registerDocs serves the reference page at /docs and the vendored Redoc bundle it loads.
func registerDocs(e *echo.Echo) {
	e.GET("/docs", func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", docsCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache") // cheap to revalidate; follows the binary's version
		return c.Blob(http.StatusOK, echo.MIMETextHTMLCharsetUTF8, docsPage)
	})
	e.GET(redocJSPath, func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if c.QueryParam("v") == redocJSVersion {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache") // an unversioned URL must not pin an old bundle
		}
		return c.Blob(http.StatusOK, "application/javascript; charset=utf-8", redocJS)
	})
}
