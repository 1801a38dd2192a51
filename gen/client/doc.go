// Package client is the Go client generated from openapi.yaml by oapi-codegen (make generate).
// The black-box HTTP tests use it, so the generated client is compiled and exercised in CI.
package client
