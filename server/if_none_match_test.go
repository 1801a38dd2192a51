package server

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNoneMatchReadsAnETagList(t *testing.T) {
	const tag = `"0123abcd"`
	for header, want := range map[string]bool{
		tag:                               true,
		`W/"0123abcd"`:                    true,
		`"old", ` + tag:                   true,
		` "old" ,W/"0123abcd" `:           true,
		"*":                               true,
		"":                                false,
		`"old"`:                           false,
		`"0123abcdef"`:                    false,
		`x` + tag:                         false, // not a list: a substring is no match
		`"old" garbage ` + tag:            false,
		`"0123 abcd"`:                     false,
		`"0123abcd`:                       false,
		strings.Repeat(`"x",`, 500):       false,
		strings.Repeat(`"x",`, 500) + tag: true, // long lists are read, not refused
		strings.Repeat("z", 5000):         false,
	} {
		assert.Equal(t, want, noneMatch(header, tag), "%.60q", header)
	}
}
