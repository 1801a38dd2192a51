package server

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/domain"
)

// checkContentType answers 415 when a body is sent in a media type the operation does not take.
func checkContentType(req *http.Request, route *routers.Route) error {
	rb := route.Operation.RequestBody
	if rb == nil || rb.Value == nil || req.ContentLength == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || rb.Value.Content.Get(mt) == nil {
		return &apiError{http.StatusUnsupportedMediaType, typeInvalidRequest, domain.CodeUnsupportedMediaType, "Content-Type must be application/json.", ""}
	}
	return nil
}

// checkSingleJSONValue refuses a body with anything but whitespace after its JSON value: both
// the validator and the binder stop at the first value and would silently ignore the rest.
func checkSingleJSONValue(body []byte, route *routers.Route) error {
	if route.Operation.RequestBody == nil || body == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil // empty or malformed: openapi3filter reports it
	}
	if len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0 { // JSON white space only (RFC 8259)
		return invalidRequest(domain.CodeParameterInvalid, "", "The request body must be a single JSON value.")
	}
	return nil
}

// idempotencyKeyHeader names the header that makes a POST safe to retry.
const idempotencyKeyHeader = "Idempotency-Key"

// checkIdempotencyKeyText refuses an Idempotency-Key on a POST that the database cannot store
// as text (bytes that are not UTF-8, NUL), on any route: the idempotency middleware reads the key
// of every authenticated POST, spec route or not. Spec routes further restrict the key to what
// the spec's schema allows (1 to 255 printable ASCII characters), checked by openapi3filter.
func checkIdempotencyKeyText(req *http.Request) error {
	if req.Method != http.MethodPost {
		return nil
	}
	for _, key := range req.Header.Values(idempotencyKeyHeader) {
		if !utf8.ValidString(key) || strings.ContainsRune(key, 0) {
			return invalidRequest(domain.CodeParameterInvalid, idempotencyKeyHeader, idempotencyKeyHeader+": "+textMessage)
		}
	}
	return nil
}

// checkParamText refuses a parameter of the operation (query, header, path: decoded) whose value
// is not UTF-8: openapi3filter measures and matches strings as text (an invalid byte reads as U+FFFD),
// so `?search=%ff` would pass and reach the database, which cannot store or compare it.
func checkParamText(req *http.Request, route *routers.Route, pathParams map[string]string) error {
	q := req.URL.Query()
	for _, ref := range route.Operation.Parameters {
		p := ref.Value
		if p == nil {
			continue
		}
		var vals []string
		switch p.In {
		case openapi3.ParameterInQuery:
			vals = q[p.Name]
		case openapi3.ParameterInHeader:
			vals = req.Header.Values(p.Name)
		case openapi3.ParameterInPath:
			if v, ok := pathParams[p.Name]; ok {
				vals = []string{v}
			}
		}
		for _, v := range vals {
			if !utf8.ValidString(v) {
				return invalidRequest(domain.CodeParameterInvalid, p.Name, p.Name+": "+textMessage)
			}
			if strings.ContainsRune(v, 0) { // PostgreSQL text cannot hold it: a lookup by it would fail as a 500
				return invalidRequest(domain.CodeParameterInvalid, p.Name, p.Name+": must not contain NUL characters")
			}
		}
	}
	return nil
}

// decodePathParams percent-decodes the router's path parameters ("%C3%A9" is one character, é).
// A value that does not decode is kept as sent, for the schema to judge.
func decodePathParams(params map[string]string) map[string]string {
	out := make(map[string]string, len(params))
	for name, raw := range params {
		out[name] = raw
		if v, err := url.PathUnescape(raw); err == nil {
			out[name] = v
		}
	}
	return out
}

// checkEmptyQuery rejects `?limit=` and the like. openapi3filter treats an empty query value as
// absent, which would let `limit=` through as the default; a value that was sent must be valid.
func checkEmptyQuery(req *http.Request, route *routers.Route) error {
	q := req.URL.Query()
	for _, ref := range route.Operation.Parameters {
		p := ref.Value
		if p == nil || p.In != openapi3.ParameterInQuery || p.Schema == nil || p.Schema.Value == nil {
			continue
		}
		vals, sent := q[p.Name]
		if len(vals) > 1 && !p.Schema.Value.Type.Is(openapi3.TypeArray) {
			return invalidRequest(domain.CodeParameterInvalid, p.Name, p.Name+": sent more than once")
		}
		if !sent || (len(vals) > 0 && vals[0] != "") {
			continue
		}
		if err := p.Schema.Value.VisitJSON(""); err != nil {
			return invalidRequest(domain.CodeParameterInvalid, p.Name, p.Name+": a value is required when the parameter is sent")
		}
	}
	return nil
}

// checkIntegerLiterals refuses an integer member spelled with a fraction or an exponent
// (1000.0, 1e3): JSON Schema calls it an integer, but the generated binder cannot take it.
func checkIntegerLiterals(body []byte, route *routers.Route) error {
	rb := route.Operation.RequestBody
	if rb == nil || rb.Value == nil || body == nil {
		return nil
	}
	mt := rb.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	v, err := decodeValue(body)
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil // openapi3filter reports it
	}
	for name, prop := range mt.Schema.Value.Properties {
		n, ok := obj[name].(json.Number)
		if !ok || prop.Value == nil || !prop.Value.Type.Is(openapi3.TypeInteger) {
			continue
		}
		if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
			return invalidRequest(domain.CodeParameterInvalid, name, name+": must be an integer without a fraction or exponent")
		}
	}
	return nil
}
