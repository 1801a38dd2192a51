package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/settlement"
)

// validator checks each request against the active spec with openapi3filter. Security is our
// own middleware's job, so validation authenticates nothing.
type validator struct {
	router routers.Router
	shape  settlement.Shape
}

var defineFormats sync.Once

// uriFormat checks `format: uri` as RFC 3986 defines it: an absolute URI with a scheme.
func uriFormat(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || strings.ContainsAny(s, " \t\r\n") {
		return errors.New("must be an absolute URI")
	}
	return nil
}

func newValidator(doc *openapi3.T, shape settlement.Shape) (*validator, error) {
	// kin-openapi keeps format validators in a package-level table; register ours once.
	defineFormats.Do(func() {
		openapi3.DefineStringFormatValidator("uri", openapi3.NewCallbackValidator(uriFormat))
	})
	doc.Servers = nil // match paths regardless of the host we are served on
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("server: build validation router: %w", err)
	}
	return &validator{router: r, shape: shape}, nil
}

func (v *validator) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		// Before the route: the idempotency middleware reads the key on any POST.
		if err := checkIdempotencyKeyText(req); err != nil {
			return err
		}
		route, params, err := v.router.FindRoute(req)
		if err != nil {
			// Not an API route (health, spec) or a method the route lacks: Echo's router answers,
			// with its 404, or its 405 and Allow header.
			return next(c)
		}
		if err := checkContentType(req, route); err != nil {
			return err
		}
		// Path parameters are matched on the escaped path: validate their decoded text, which is
		// what the schema's maxLength counts (characters) and what the handler receives.
		params = decodePathParams(params)
		normalizeIfNoneMatch(req)
		if err := checkParamText(req, route, params); err != nil {
			return err
		}
		if err := checkEmptyQuery(req, route); err != nil {
			return err
		}
		// Read the body once; the checks below and the shape rewrite share it.
		raw, err := peekBody(req)
		if err != nil {
			return err
		}
		if err := checkSingleJSONValue(raw, route); err != nil {
			return err
		}
		if route.Operation.RequestBody != nil && raw != nil {
			if err := checkJSONText(raw); err != nil {
				return err
			}
			if err := checkDuplicateMembers(raw); err != nil {
				return err
			}
		}
		if err := checkIntegerLiterals(raw, route); err != nil {
			return err
		}
		input := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, KeepValidatedValue: true,
				// Defaults are the domain's job; kin-openapi would also overwrite an explicit null with one.
				SkipSettingDefaults: true}}
		if err := openapi3filter.ValidateRequest(req.Context(), input); err != nil {
			return v.paymentAmountError(err, raw)
		}
		if raw != nil {
			// Hand the generated binder the typed-schema form of what the active shape accepted.
			body, err := v.shape.SchemaRequest(route.Operation.OperationID, raw)
			if err != nil {
				return err
			}
			if !bytes.Equal(body, raw) {
				// Keep a ValidatedValue on the body, as openapi3filter left one: without it the
				// generated binder decodes again with encoding/json, whose member names match
				// case-insensitively ("orderid" would override the validated "orderId").
				value, err := decodeValue(body)
				if err != nil {
					return err
				}
				req.Body = validatedBody{ReadCloser: io.NopCloser(bytes.NewReader(body)), value: value}
				req.ContentLength = int64(len(body))
			}
		}
		return next(c)
	}
}

// paymentAmountError refines the create-payment anyOf failure — the contract's only anyOf: a
// payment states an amount within the limits, a deposit's is ignored — into the documented
// answer: parameter_missing when no amount was sent, invalid_amount with the bounds when it is
// out of them. This is the one place the anyOf is interpreted.
func (v *validator) paymentAmountError(err error, raw []byte) error {
	var reqErr *openapi3filter.RequestError
	var schemaErr *openapi3.SchemaError
	if !errors.As(err, &reqErr) || reqErr.Input == nil || reqErr.Input.Route == nil ||
		!strings.EqualFold(reqErr.Input.Route.Operation.OperationID, "createPayment") || !errors.As(reqErr.Err, &schemaErr) ||
		schemaErr.SchemaField != "anyOf" || len(schemaErr.JSONPointer()) != 0 {
		return err
	}
	var body struct {
		Type   json.RawMessage `json:"type"`
		Amount json.RawMessage `json:"amount"`
	}
	_ = json.Unmarshal(raw, &body) // not an object: no amount either
	// kin-openapi reports the anyOf before the properties: name a bad type first.
	if t := string(body.Type); t != "" && t != `"payment"` && t != `"deposit"` {
		return invalidRequest(domain.CodeParameterInvalid, "type", "type: must be payment or deposit")
	}
	if len(body.Amount) == 0 || string(body.Amount) == "null" {
		return invalidRequest(domain.CodeParameterMissing, "amount", "amount: required unless type is deposit")
	}
	if _, err := strconv.ParseInt(string(body.Amount), 10, 64); err != nil {
		return invalidRequest(domain.CodeParameterInvalid, "amount", "amount: must be an integer number of cents")
	}
	l := v.shape.PaymentLimits()
	return invalidRequest(domain.CodeInvalidAmount, "amount",
		fmt.Sprintf("amount: must be between %d and %d cents", l.MinAmountCents, l.MaxAmountCents))
}

// peekBody reads the request body and puts an identical reader back, keeping a validated value
// openapi3filter left on it (see validatedBody); nil when there is none.
func peekBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	vb, validated := req.Body.(interface{ ValidatedValue() any })
	body, err := readBody(req.Body) // a failure is the client's: 400, 408 or 413 (bodyReadError)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if validated {
		req.Body = validatedBody{ReadCloser: req.Body, value: vb.ValidatedValue()}
	}
	return body, nil
}

// fromRequestError turns a validation failure into a 400 naming the offending field.
func fromRequestError(e *openapi3filter.RequestError) *apiError {
	param := ""
	switch {
	case e.Parameter != nil:
		param = e.Parameter.Name
	case e.RequestBody != nil:
		param = ""
	}
	var schemaErr *openapi3.SchemaError
	code := domain.CodeParameterInvalid
	reason := e.Reason
	if errors.As(e.Err, &schemaErr) {
		if ptr := schemaErr.JSONPointer(); len(ptr) > 0 && e.Parameter == nil {
			param = strings.Join(ptr, ".")
		}
		reason = schemaErr.Reason
		switch schemaErr.SchemaField {
		case "required":
			code = domain.CodeParameterMissing
			// The pointer names the object; the reason names the missing property.
			if name := missingProperty(schemaErr.Reason); name != "" && !strings.HasSuffix("."+param, "."+name) {
				param = joinParam(param, name)
			}
		case "minimum", "maximum":
			if param == "amount" || param == "amountInCents" {
				code = domain.CodeInvalidAmount
			}
		case "pattern":
			if param == "redirectUrl" { // a regular expression is no explanation
				reason = "must be an absolute http(s) URL"
			}
		}
	} else if errors.Is(e.Err, openapi3filter.ErrInvalidRequired) {
		code = domain.CodeParameterMissing
	} else if e.Err != nil {
		reason = e.Err.Error()
	}
	if e.RequestBody != nil && errors.Is(e.Err, openapi3filter.ErrInvalidRequired) {
		return invalidRequest(domain.CodeParameterMissing, "", "A JSON request body is required.")
	}
	if reason == "" {
		reason = "invalid value"
	}
	msg := reason
	if param != "" {
		msg = param + ": " + reason
	}
	return invalidRequest(code, param, msg)
}

func missingProperty(reason string) string {
	// kin-openapi: `property "orderId" is missing`
	if i := strings.Index(reason, `"`); i >= 0 {
		if j := strings.Index(reason[i+1:], `"`); j >= 0 {
			return reason[i+1 : i+1+j]
		}
	}
	return ""
}

func joinParam(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// validatedBody is a request body carrying the value the binder is to bind (see
// openapi3filter.Options.KeepValidatedValue).
type validatedBody struct {
	io.ReadCloser
	value any
}

// ValidatedValue returns the value to bind.
func (b validatedBody) ValidatedValue() any { return b.value }

func decodeValue(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
