#!/usr/bin/env bash
# The merchant dashboard web app in webapp/: React + Vite + strict TypeScript, its API types
# from clients/typescript/src/schema.d.ts. The built output (webapp/dist) is committed and
# embedded in the Go binary (webapp/embed.go), so building paymentsd never needs Node.
#
#   scripts/web.sh build   # deps, type-check, vite build into webapp/dist (commit the result)
#   scripts/web.sh check   # deps, type-check, build into a temp dir; fail if it differs from webapp/dist
#
# Dependencies are pinned in webapp/package.json and its package-lock.json and installed with
# `npm ci --ignore-scripts` into webapp/node_modules when the lockfile (or the node major)
# changed since the last install (a stamp file; scripts/lib/npm-deps.sh, shared with scripts/ts-client.sh).
# The build is deterministic (no timestamps, hashed file names), so a fresh build of the
# committed sources must equal the committed dist byte for byte.
#
# Needs node (>= 20.19, Vite 8's floor) and npm.
set -euo pipefail

log() { printf 'web: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
APP="$ROOT/webapp"
STAMP="$APP/node_modules/.web-deps.sha256"
# shellcheck source=scripts/lib/npm-deps.sh
. "$ROOT/scripts/lib/npm-deps.sh"

need_node() {
  command -v node >/dev/null || die "node not found (Node.js 20.19 or later is needed for webapp/)"
  command -v npm >/dev/null || die "npm not found (it comes with Node.js)"
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
    || die "node $(node --version) is too old: webapp/ (Vite 8) needs Node.js 20.19 or later"
}

ensure_deps() {
  need_node
  npm_ensure_deps "$APP" webapp "$STAMP"
}

bin() { printf '%s/node_modules/.bin/%s' "$APP" "$1"; }

typecheck() {
  log "type-checking (tsc --noEmit, strict)"
  (cd "$APP" && "$(bin tsc)" -p tsconfig.json --noEmit </dev/null >&2) || die "type-check failed"
}

# vite_build OUTDIR builds the app into OUTDIR (absolute).
vite_build() {
  (cd "$APP" && "$(bin vite)" build --logLevel warn --outDir "$1" --emptyOutDir </dev/null >&2) || die "vite build failed"
}

cmd_build() {
  ensure_deps
  typecheck
  log "building webapp/dist"
  vite_build "$APP/dist"
  log "built: $(du -sh "$APP/dist" | cut -f1) in webapp/dist (commit it)"
}

cmd_check() {
  ensure_deps
  typecheck
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/web-check.XXXXXX")
  # shellcheck disable=SC2064  # expand now: tmp is local
  trap "rm -rf '$tmp'" EXIT
  log "building into a temp dir to compare with the committed webapp/dist"
  vite_build "$tmp/dist"
  if ! diff -r "$tmp/dist" "$APP/dist" >"$tmp/diff.txt" 2>&1; then
    head -n 20 "$tmp/diff.txt" >&2
    die "webapp/dist is stale: run 'scripts/web.sh build' and commit"
  fi
  log "check passed: webapp/dist is fresh"
}

[ $# -eq 1 ] || usage
case "$1" in
  build) cmd_build ;;
  check) cmd_check ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
