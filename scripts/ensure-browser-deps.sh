#!/usr/bin/env bash
# Installs what the Chromium tests inject into pages: axe-core, pinned in tests/browser/package.json
# and its lockfile (npm ci into tests/browser/node_modules when the lockfile changed). Run by make test.
set -euo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/browser"
stamp="$dir/node_modules/.deps.sha256"
want=$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dir/node_modules/axe-core/axe.min.js" ]; then
  exit 0
fi
echo "ensure-browser-deps: npm ci in tests/browser (axe-core)" >&2
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error </dev/null >&2)
printf '%s\n' "$want" >"$stamp"
