package webapp

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

var (
	scriptTag = regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`)
	srcHref   = regexp.MustCompile(`(?i)\b(?:src|href)="([^"]*)"`)
	styleTag  = regexp.MustCompile(`(?i)<style\b|\sstyle=`)
	eventAttr = regexp.MustCompile(`(?i)\son[a-z]+=`)
)

// The page's CSP (script-src 'self'; style-src 'self') allows no inline script or style, and
// the server serves only /dashboard/…: the built index.html must reference nothing else.
func TestIndexReferencesOnlyDashboardAssets(t *testing.T) {
	b, err := fs.ReadFile(Dist, "index.html")
	if err != nil {
		t.Fatalf("dist/index.html: %v (run scripts/web.sh build and commit)", err)
	}
	html := string(b)
	scripts := scriptTag.FindAllStringSubmatch(html, -1)
	if len(scripts) == 0 {
		t.Fatal("index.html loads no script")
	}
	for _, m := range scripts {
		if !strings.Contains(m[1], `src="`) || strings.TrimSpace(m[2]) != "" {
			t.Errorf("inline <script> in index.html (the CSP refuses it): %s", m[0])
		}
	}
	if loc := styleTag.FindStringIndex(html); loc != nil {
		t.Errorf("inline style in index.html at %d", loc[0])
	}
	if loc := eventAttr.FindStringIndex(html); loc != nil {
		t.Errorf("inline event handler in index.html at %d", loc[0])
	}
	refs := srcHref.FindAllStringSubmatch(html, -1)
	for _, m := range refs {
		ref := m[1]
		if ref == "data:," { // the empty favicon: no request at all
			continue
		}
		if !strings.HasPrefix(ref, "/dashboard/assets/") {
			t.Errorf("index.html references %q: only /dashboard/assets/… may be loaded", ref)
			continue
		}
		if _, err := fs.Stat(Dist, strings.TrimPrefix(ref, "/dashboard/")); err != nil {
			t.Errorf("index.html references %q, which is not in dist: %v", ref, err)
		}
	}
}

// No source maps (they would double the binary's share and publish the sources' paths).
func TestDistHasNoSourceMaps(t *testing.T) {
	err := fs.WalkDir(Dist, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".map") {
			t.Errorf("source map in dist: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
