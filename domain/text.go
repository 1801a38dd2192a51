package domain

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text a merchant gives us and we show again: order ids, customer references, URLs.

// CheckText refuses a value that would not show as the text it looks like: bytes that are not
// UTF-8, a control character (Unicode Cc: C0, DEL and C1, NUL and tab included) or a
// bidirectional formatting character (the embeddings and overrides U+202A–U+202E, the isolates
// U+2066–U+2069, the marks U+200E, U+200F and U+061C), which reorder what a dashboard, a CSV
// export or a terminal displays around them ("Trojan Source"). param names the field.
func CheckText(param, s string) error {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return Invalid(CodeParameterInvalid, param, "must be valid UTF-8 text")
		case unicode.IsControl(r):
			return Invalid(CodeParameterInvalid, param, "must not contain control characters (found %U)", r)
		case isBidiControl(r):
			return Invalid(CodeParameterInvalid, param, "must not contain bidirectional formatting characters (found %U)", r)
		}
	}
	return nil
}

// CheckOptionalLines is CheckText of a value that may be absent and may span lines: tab, line
// feed and carriage return are allowed, every other character CheckText refuses is refused.
func CheckOptionalLines(param string, s *string) error {
	if s == nil {
		return nil
	}
	return CheckText(param, strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(*s))
}

// CheckOptionalText is CheckText of a value that may be absent (nil passes).
func CheckOptionalText(param string, s *string) error {
	if s == nil {
		return nil
	}
	return CheckText(param, *s)
}

// isBidiControl reports the characters of Unicode's Bidi_Control property.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// CheckWebURL refuses a URL that is not absolute with one of schemes (lower case) and a host
// name: `https:///x` (no host), `http:foo` (opaque), `https://:443/` (a port alone) and
// relative references are all refused, as are user information (`https://bank.example@evil.example/`
// reads as the wrong host), white space and what CheckText refuses. param names the field.
func CheckWebURL(param, raw string, schemes ...string) error {
	if err := CheckText(param, raw); err != nil {
		return err
	}
	want := strings.Join(schemes, " or ")
	u, err := url.Parse(raw)
	switch {
	case err != nil || strings.ContainsFunc(raw, unicode.IsSpace):
		return Invalid(CodeParameterInvalid, param, "must be an absolute %s URL", want)
	case !slices.Contains(schemes, u.Scheme): // url.Parse lower-cases the scheme
		return Invalid(CodeParameterInvalid, param, "must be an absolute %s URL (not %s)", want, schemeOf(u))
	case u.Opaque != "" || u.Hostname() == "":
		return Invalid(CodeParameterInvalid, param, "must be an absolute %s URL with a host (%s://host/…)", want, schemes[0])
	case u.User != nil:
		return Invalid(CodeParameterInvalid, param, "must not contain user information (user@ before the host)")
	}
	return nil
}

func schemeOf(u *url.URL) string {
	if u.Scheme == "" {
		return "a relative reference"
	}
	return fmt.Sprintf("%q", u.Scheme+":")
}
