#!/usr/bin/env bash
# Spectral lint gate for the OpenAPI contract: lints openapi.yaml and the derived
# gen/guide-openapi.yaml with lint/.spectral.yaml and fails on any error (warnings are shown
# but do not fail). Installs the pinned Spectral from lint/package-lock.json when
# lint/node_modules is missing or older than the lockfile. Run from anywhere.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

lock=lint/package-lock.json
modules=lint/node_modules
spectral=$modules/.bin/spectral

# Scarf is a telemetry dependency of Spectral; keep its install hook from phoning home.
export SCARF_ANALYTICS=false

if [ ! -d "$modules" ] || [ ! -x "$spectral" ] || [ "$lock" -nt "$modules" ]; then
  echo "lint-spec: installing Spectral (npm ci in lint/)" >&2
  (cd lint && npm ci --no-audit --no-fund) >&2
  # npm ci recreates node_modules, but make its time explicit so the freshness check holds.
  touch "$modules"
else
  echo "lint-spec: lint/node_modules is up to date" >&2
fi

echo "lint-spec: $("$spectral" --version 2>/dev/null | head -n1 | sed 's/^/spectral /')" >&2
echo "lint-spec: linting openapi.yaml gen/guide-openapi.yaml" >&2
"$spectral" lint --fail-severity=error --ruleset lint/.spectral.yaml openapi.yaml gen/guide-openapi.yaml
echo "lint-spec: no errors" >&2
