package chains

// Fuzz target for CAIP-2 parsing. Run with scripts/fuzz.sh.

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseCAIP2: ParseCAIP2 never panics; what it accepts is a positive id whose canonical
// form is the input; and every positive id's canonical form parses back to it.
func FuzzParseCAIP2(f *testing.F) {
	f.Add("eip155:8453")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseCAIP2(s)
		if err == nil {
			if id <= 0 {
				t.Fatalf("%q parsed to %d, not a positive id", s, id)
			}
			if got := CAIP2(id); got != s {
				t.Fatalf("%q parsed to %d, whose CAIP-2 form is %q", s, id, got)
			}
		} else if !strings.Contains(err.Error(), strconv.Quote(s)) {
			t.Fatalf("the error for %q does not quote the input: %v", s, err)
		}
		if n, err := strconv.ParseInt(strings.TrimPrefix(s, "eip155:"), 10, 64); err == nil && n > 0 {
			if back, err := ParseCAIP2(CAIP2(n)); err != nil || back != n {
				t.Fatalf("CAIP2(%d) = %q parses to %d, %v", n, CAIP2(n), back, err)
			}
		}
	})
}
