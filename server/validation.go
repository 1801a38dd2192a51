package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"
)

// validator checks each request against the active spec with openapi3filter. Security is our
// own middleware's job, so validation authenticates nothing.
type validator struct {
	router routers.Router
}

func newValidator(doc *openapi3.T) (*validator, error) {
	doc.Servers = nil // match paths regardless of the host we are served on
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("server: build validation router: %w", err)
	}
	return &validator{router: r}, nil
}

func (v *validator) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		route, params, err := v.router.FindRoute(req)
		if err != nil {
			if errors.Is(err, routers.ErrMethodNotAllowed) {
				return echo.ErrMethodNotAllowed
			}
			return next(c) // not an API route (health, spec, docs): Echo answers or 404s
		}
		input := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, KeepValidatedValue: true}}
		if err := openapi3filter.ValidateRequest(req.Context(), input); err != nil {
			return err
		}
		return next(c)
	}
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
	code := "parameter_invalid"
	reason := e.Reason
	if errors.As(e.Err, &schemaErr) {
		if ptr := schemaErr.JSONPointer(); len(ptr) > 0 && e.Parameter == nil {
			param = strings.Join(ptr, ".")
		}
		reason = schemaErr.Reason
		switch schemaErr.SchemaField {
		case "required":
			code = "parameter_missing"
			// The pointer names the object; the reason names the missing property.
			if name := missingProperty(schemaErr.Reason); name != "" {
				param = joinParam(param, name)
			}
		case "minimum", "maximum":
			if param == "amount" || param == "amountInCents" {
				code = "invalid_amount"
			}
		}
	} else if errors.Is(e.Err, openapi3filter.ErrInvalidRequired) {
		code = "parameter_missing"
	} else if e.Err != nil {
		reason = e.Err.Error()
	}
	if e.RequestBody != nil && e.Err != nil && strings.Contains(e.Err.Error(), "Content-Type") {
		return &apiError{http.StatusUnsupportedMediaType, "invalid_request_error", "unsupported_media_type", "Content-Type must be application/json.", ""}
	}
	if e.RequestBody != nil && errors.Is(e.Err, openapi3filter.ErrInvalidRequired) {
		return &apiError{http.StatusBadRequest, "invalid_request_error", "parameter_missing", "A JSON request body is required.", ""}
	}
	if reason == "" {
		reason = "invalid value"
	}
	msg := reason
	if param != "" {
		msg = param + ": " + reason
	}
	return &apiError{http.StatusBadRequest, "invalid_request_error", code, msg, param}
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
