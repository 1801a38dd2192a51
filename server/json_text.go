package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/domain"
)

// Text in JSON bodies.

// textMessage ends every refusal of a string that is not Unicode text.
const textMessage = "must be valid UTF-8 text (no invalid bytes or unpaired surrogates)"

// maxJSONDepth is encoding/json's nesting limit; deeper input is left for it to refuse.
const maxJSONDepth = 10000

// checkJSONText refuses a JSON body with a string (member names included) that is not Unicode
// text: bytes that are not UTF-8, or a \u escape of a UTF-16 surrogate that is not part of a
// high-low pair. encoding/json, and so openapi3filter and the generated binder, would replace
// each with U+FFFD without a word. The error names the string's path: member names joined with
// dots, array indexes as numbers (items.0.name). A body that is not well-formed JSON is left
// for openapi3filter to report.
func checkJSONText(body []byte) error {
	s := jsonScanner{data: body}
	if !s.text() || s.fault == nil {
		return nil
	}
	f := s.fault
	switch {
	case !f.name && f.path == "":
		return invalidRequest(domain.CodeParameterInvalid, "", "The request body "+textMessage+".")
	case !f.name:
		return invalidRequest(domain.CodeParameterInvalid, f.path, f.path+": "+textMessage)
	case f.path == "":
		return invalidRequest(domain.CodeParameterInvalid, "", "Member names "+textMessage+".")
	}
	return invalidRequest(domain.CodeParameterInvalid, f.path, f.path+": member names "+textMessage)
}

// textFault is the first string of a body that is not Unicode text.
type textFault struct {
	path string // of the value; of the object holding it for a member name
	name bool   // the string is a member name
}

// jsonScanner walks one JSON text (RFC 8259), checking its grammar and the text of its strings.
type jsonScanner struct {
	data  []byte
	pos   int
	path  []pathSegment
	fault *textFault
}

// pathSegment is a member name as written (quotes and escapes included) or an array index.
type pathSegment struct {
	name  []byte
	index int
}

// text scans the whole input as one JSON value with white space around it; false when it is not.
func (s *jsonScanner) text() bool {
	s.space()
	if !s.value(0) {
		return false
	}
	s.space()
	return s.pos == len(s.data)
}

func (s *jsonScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

func (s *jsonScanner) value(depth int) bool {
	if s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return depth < maxJSONDepth && s.object(depth+1)
	case c == '[':
		return depth < maxJSONDepth && s.array(depth+1)
	case c == '"':
		return s.str(false)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

func (s *jsonScanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return false
	}
	s.pos += len(lit)
	return true
}

func (s *jsonScanner) object(depth int) bool {
	s.pos++ // {
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return true
	}
	for {
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return false
		}
		start := s.pos
		if !s.str(true) {
			return false
		}
		s.path = append(s.path, pathSegment{name: s.data[start:s.pos]})
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return false
		}
		s.pos++
		s.space()
		if !s.value(depth) {
			return false
		}
		s.path = s.path[:len(s.path)-1]
		if more, ok := s.separator('}'); !ok || !more {
			return ok
		}
	}
}

// separator consumes what follows a member or an element: a comma (more follow) or the closing
// bracket (done). ok is false on anything else.
func (s *jsonScanner) separator(closing byte) (more, ok bool) {
	s.space()
	if s.pos >= len(s.data) {
		return false, false
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		s.space()
		return true, true
	case closing:
		s.pos++
		return false, true
	}
	return false, false
}

func (s *jsonScanner) array(depth int) bool {
	s.pos++ // [
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return true
	}
	for i := 0; ; i++ {
		s.path = append(s.path, pathSegment{index: i})
		if !s.value(depth) {
			return false
		}
		s.path = s.path[:len(s.path)-1]
		if more, ok := s.separator(']'); !ok || !more {
			return ok
		}
	}
}

// number checks the JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() bool {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case !s.digits():
		return false
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if !s.digits() {
			return false
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits consumes [0-9]+.
func (s *jsonScanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

// str consumes a string, noting the first one that is not Unicode text; false on bad grammar.
func (s *jsonScanner) str(name bool) bool {
	s.pos++ // "
	text := true
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			if !text && s.fault == nil {
				s.fault = &textFault{path: s.pathString(), name: name}
			}
			return true
		case c == '\\':
			if s.pos+1 >= len(s.data) {
				return false
			}
			switch s.data[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				r, ok := s.escape(s.pos)
				if !ok {
					return false
				}
				s.pos += 6
				switch {
				case 0xD800 <= r && r < 0xDC00: // high surrogate: a low one must follow at once
					if low, ok := s.escape(s.pos); ok && 0xDC00 <= low && low < 0xE000 {
						s.pos += 6
					} else {
						text = false // what follows is scanned on its own
					}
				case 0xDC00 <= r && r < 0xE000: // low surrogate without a high one
					text = false
				}
			default:
				return false
			}
		case c < 0x20: // control characters must be escaped
			return false
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 { // also overlong forms, encoded surrogates, > U+10FFFF
				text = false
			}
			s.pos += size
		}
	}
	return false
}

// escape reads the \uXXXX escape at i; false when there is none.
func (s *jsonScanner) escape(i int) (rune, bool) {
	if i+6 > len(s.data) || s.data[i] != '\\' || s.data[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s.data[i+2:i+6]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

// pathString is the current path in the `param` form: names joined with dots, indexes as numbers.
func (s *jsonScanner) pathString() string {
	parts := make([]string, len(s.path))
	for i, seg := range s.path {
		if seg.name == nil {
			parts[i] = strconv.Itoa(seg.index)
			continue
		}
		// Only strings before the first fault are on the path, so each name is text.
		var name string
		if err := json.Unmarshal(seg.name, &name); err != nil {
			name = string(seg.name)
		}
		parts[i] = name
	}
	return strings.Join(parts, ".")
}
