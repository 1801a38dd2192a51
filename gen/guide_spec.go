package gen

import _ "embed"

// GuideOpenAPIYAML is the guide-shape spec, derived from openapi.yaml by guide-overlay.yaml.
//
//go:embed guide-openapi.yaml
var GuideOpenAPIYAML []byte
