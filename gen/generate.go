// Package gen holds code generated from openapi.yaml by oapi-codegen: models, the Echo
// strict-server interfaces and the embedded spec. Regenerate with `make generate`.
package gen

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config oapi-codegen.yaml ../openapi.yaml
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config client/oapi-codegen.yaml ../openapi.yaml
//go:generate go run ../cmd/applyoverlay -spec ../openapi.yaml -overlay guide-overlay.yaml -out guide-openapi.yaml
