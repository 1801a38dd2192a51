//go:build tools

// Package tools pins the code generators used by `make generate` and the staticcheck of
// `make lint`, so their versions come from go.mod.
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "github.com/speakeasy-api/openapi/overlay"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
