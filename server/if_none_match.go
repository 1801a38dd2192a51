package server

import (
	"net/http"
	"strings"
	"unicode/utf8"
)

// noneMatch reports whether an If-None-Match value names tag (RFC 9110 §13.1.2: "*" or a list
// of entity tags, compared weakly). The header is only a cache hint, so a value that is not a
// well-formed list, whatever its length, is no match and the full view is sent: refusing it
// would fail a client that merely sent a stale or odd hint.
func noneMatch(header, tag string) bool {
	rest := header
	for {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			return false
		}
		if rest[0] == '*' {
			return true
		}
		etag, tail, ok := scanETag(rest)
		if !ok {
			return false
		}
		if etag == strings.TrimPrefix(tag, "W/") {
			return true
		}
		rest = tail
	}
}

// scanETag reads one entity tag from the start of s, without its weak prefix ("W/" compares
// weakly), and returns what follows it.
func scanETag(s string) (etag, rest string, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' {
		return "", "", false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return "", "", false
	}
	etag, rest = s[:end+2], s[end+2:]
	// etagc (RFC 9110 §8.8.3): visible ASCII but the quote, and obs-text; no spaces or controls.
	for i := 1; i < len(etag)-1; i++ {
		if c := etag[i]; c < 0x21 || c == 0x7f {
			return "", "", false
		}
	}
	if rest != "" && rest[0] != ',' && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", false
	}
	return etag, rest, true
}

// ifNoneMatchHeader is the cache hint of GET checkout.
const ifNoneMatchHeader = "If-None-Match"

// normalizeIfNoneMatch makes the hint one header, as the binder takes it: lines sent separately
// are one list (RFC 9110 §5.3), and a list that is not text cannot name one of our ETags, so it
// is dropped rather than refused like a parameter the service would store.
func normalizeIfNoneMatch(req *http.Request) {
	vals := req.Header.Values(ifNoneMatchHeader)
	if len(vals) == 0 {
		return
	}
	joined := strings.Join(vals, ", ")
	if !utf8.ValidString(joined) || strings.ContainsRune(joined, 0) {
		req.Header.Del(ifNoneMatchHeader)
		return
	}
	req.Header.Set(ifNoneMatchHeader, joined)
}
