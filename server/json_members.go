package server

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/paymentsd/paymentsd/domain"
)

// Duplicate member names in JSON bodies.

// maxMemberDepth bounds the nesting checkDuplicateMembers walks: a megabyte of "[[[[…" would
// otherwise cost a frame per level (over 100 MB) on every such request.
const maxMemberDepth = 64

// checkDuplicateMembers refuses a JSON body with an object that names a member twice, at any
// depth: encoding/json (and so openapi3filter, the generated binder and the idempotency hash's
// canonical form) keeps the last value without a word, while another reader of the same bytes —
// a proxy, a WAF, the merchant's own log — may keep the first (RFC 8259 leaves it undefined).
// Names are compared as decoded ("a" and "\u0061" are one name) and exactly (member names are
// case-sensitive). Refused here, before the idempotency middleware: no such body is hashed or
// recorded, and the hashing of the others is unchanged. param is the duplicated member's path
// in the `param` form (items.0.name; the name alone at the top level). A body that is not
// well-formed JSON is left for openapi3filter to report.
func checkDuplicateMembers(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers out of float64's range are still JSON
	var (
		stack []*memberFrame
		dup   *string // path of the first duplicated member
	)
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // not JSON: openapi3filter says why
		}
		switch d, delim := tok.(json.Delim); {
		case delim && (d == '{' || d == '['):
			if len(stack) >= maxMemberDepth {
				return nil // no request of the spec nests this deep: schema validation refuses it, cheaply
			}
			f := &memberFrame{object: d == '{', wantName: d == '{'}
			if f.object {
				f.names = map[string]struct{}{}
			}
			stack = append(stack, f)
			continue
		case delim: // '}' or ']': the container is a value that ended
			stack = stack[:len(stack)-1]
		case len(stack) > 0 && stack[len(stack)-1].wantName:
			top, name := stack[len(stack)-1], tok.(string) // a member name is always a string token
			top.name, top.wantName = name, false
			if _, seen := top.names[name]; seen && dup == nil {
				path := memberPath(stack)
				dup = &path
			}
			top.names[name] = struct{}{}
			continue
		}
		if valueDone(stack) {
			break
		}
	}
	if _, err := dec.Token(); err != io.EOF { // more than one value: checkSingleJSONValue's to refuse
		return nil
	}
	switch {
	case dup == nil:
		return nil
	case *dup == "": // the empty name, at the top
		return invalidRequest(domain.CodeParameterInvalid, "", `The request body names the member "" more than once (duplicate JSON member name).`)
	}
	return invalidRequest(domain.CodeParameterInvalid, *dup, *dup+": member sent more than once (duplicate JSON member name)")
}

// memberFrame is an object or array being read: its current member name or element index.
type memberFrame struct {
	object   bool
	wantName bool                // an object's next token is a member name (or its end)
	names    map[string]struct{} // an object's member names so far
	name     string              // an object's current member
	index    int                 // an array's current element
}

// valueDone records that a value ended in the innermost open container; true when it was the
// whole body's value.
func valueDone(stack []*memberFrame) bool {
	if len(stack) == 0 {
		return true
	}
	top := stack[len(stack)-1]
	if top.object {
		top.wantName = true
	} else {
		top.index++
	}
	return false
}

// memberPath is the path of the current member of the innermost object: names joined with
// dots, indexes as numbers.
func memberPath(stack []*memberFrame) string {
	parts := make([]string, len(stack))
	for i, f := range stack {
		if f.object {
			parts[i] = f.name
		} else {
			parts[i] = strconv.Itoa(f.index)
		}
	}
	return strings.Join(parts, ".")
}
