#!/usr/bin/env bash
# Vendors Redoc's standalone bundle into the Go binary's embedded files: GET /docs renders the
# served spec with it (server/docs.go), with no CDN and no network access.
#
#   scripts/vendor-redoc.sh           # copy the pinned release's bundle into server/docs/
#   scripts/vendor-redoc.sh --check   # fail if server/docs/ differs from the pinned release
#
# The release is pinned, exactly, in docs/redoc/package.json, with the integrity of every
# package in docs/redoc/package-lock.json. To move to another release:
#   (cd docs/redoc && npm install --save-exact --ignore-scripts redoc@X.Y.Z) && scripts/vendor-redoc.sh
# then run the Go tests, look at /docs (scripts/docs-screenshot.sh), commit all of it.
#
# It runs `npm ci --omit=peer --ignore-scripts` in docs/redoc (node_modules there is ignored
# by git; only the bundle is needed, not react & co.), then copies, byte for byte:
#   bundles/redoc.standalone.js              → server/docs/redoc.standalone.js   (embedded)
#   bundles/redoc.standalone.js.LICENSE.txt  → server/docs/redoc.standalone.js.LICENSE.txt
#   LICENSE                                  → server/docs/redoc.LICENSE
# and writes server/docs/README.md naming the release and the bundle's sha256.
# Redoc 2.x is used on purpose: 3.x bundles are ES modules of ~2.3 MB with telemetry on by
# default and need Node >= 22 to install.
# Needs node and npm. Progress goes to stderr.
set -euo pipefail

log() { printf 'vendor-redoc: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG="$ROOT/docs/redoc"
OUT="$ROOT/server/docs"

mode="write"
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

command -v npm >/dev/null || die "npm not found (install Node.js)"
[ -f "$PKG/package-lock.json" ] || die "docs/redoc/package-lock.json is missing"

pinned=$(node -p 'require(process.argv[1]).dependencies.redoc' "$PKG/package.json")
[[ "$pinned" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "docs/redoc/package.json must pin redoc to an exact version, not '$pinned'"

log "installing redoc $pinned from docs/redoc/package-lock.json (npm ci)"
(cd "$PKG" && npm ci --omit=peer --ignore-scripts --no-audit --no-fund --loglevel=error </dev/null >&2) \
  || die "npm ci failed in docs/redoc"

src="$PKG/node_modules/redoc"
installed=$(node -p 'require(process.argv[1]).version' "$src/package.json")
[ "$installed" = "$pinned" ] || die "installed redoc $installed, but $pinned is pinned (is package-lock.json in sync?)"
[ -s "$src/bundles/redoc.standalone.js" ] || die "redoc $installed has no bundles/redoc.standalone.js"

sum=$(sha256sum "$src/bundles/redoc.standalone.js" | cut -d' ' -f1)
stage=$(mktemp -d "${TMPDIR:-/tmp}/vendor-redoc.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cp "$src/bundles/redoc.standalone.js" "$stage/redoc.standalone.js"
cp "$src/bundles/redoc.standalone.js.LICENSE.txt" "$stage/redoc.standalone.js.LICENSE.txt"
cp "$src/LICENSE" "$stage/redoc.LICENSE"
cat >"$stage/README.md" <<EOF
# Vendored Redoc

\`redoc.standalone.js\` is \`bundles/redoc.standalone.js\` of the npm package
[\`redoc\`](https://www.npmjs.com/package/redoc) **$pinned**, unmodified
(sha256 \`$sum\`), embedded in the binary by \`server/docs.go\` and served at
\`/docs/redoc.standalone.js\` for the API reference page \`/docs\`. Its licence notices are in
\`redoc.standalone.js.LICENSE.txt\` and \`redoc.LICENSE\` (MIT).

Do not edit these files: the version is pinned in \`docs/redoc/package.json\` (and its lockfile),
and \`scripts/vendor-redoc.sh\` rewrites this directory from it (\`--check\` verifies it).
EOF

if [ "$mode" = check ]; then
  if ! diff -r -q "$stage" "$OUT" >&2; then
    die "server/docs/ does not match redoc $pinned: run scripts/vendor-redoc.sh and commit"
  fi
  log "server/docs/ matches redoc $pinned (sha256 $sum)"
  exit 0
fi

mkdir -p "$OUT"
for f in "$stage"/*; do
  cp "$f" "$OUT/$(basename "$f")"
done
log "vendored redoc $pinned into server/docs/ ($(wc -c <"$OUT/redoc.standalone.js") bytes, sha256 $sum)"
