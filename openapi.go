// Package paymentsd embeds the API contract, openapi.yaml, so the binary serves exactly the
// spec it was built from.
package paymentsd

import _ "embed"

// OpenAPIYAML is the typed-schema spec, served at GET /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
