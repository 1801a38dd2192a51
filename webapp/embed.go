// Package webapp embeds the merchant dashboard's built web app (webapp/dist, committed; built
// from webapp/src by `scripts/web.sh build`), so `make run` serves it without Node. The server
// serves it at /dashboard/ (server/dashboard_page.go); its sources, stack and build are
// described in docs/dashboard.md ("Web app").
package webapp

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist is the built app rooted at dist/: index.html and assets/ (content-hashed file names).
var Dist fs.FS = mustSub(dist, "dist")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // dir is a constant that the embed directive guarantees
	}
	return sub
}
