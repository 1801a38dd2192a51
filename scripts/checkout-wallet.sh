#!/usr/bin/env bash
# The checkout page's browser-wallet payment: checkout/wallet/src/wallet.js (EIP-6963 discovery,
# EIP-1193 requests, viem for encoding) bundled by esbuild into checkout/page/assets/wallet.js,
# which is committed and embedded in the Go binary with the rest of the page (checkout/page.go),
# so building paymentsd never needs Node.
#
#   scripts/checkout-wallet.sh build   # deps, esbuild into checkout/page/assets/wallet.js (commit the result)
#   scripts/checkout-wallet.sh check   # deps, build into a temp file; fail if it differs from the committed one
#
# viem and esbuild are pinned in checkout/wallet/package.json (exact versions) and its
# package-lock.json, installed with `npm ci --ignore-scripts` into checkout/wallet/node_modules
# when the lockfile (or the node major) changed since the last install (scripts/lib/npm-deps.sh).
# esbuild's output is deterministic: a fresh build of the committed sources equals the committed
# bundle byte for byte.
#
# Needs node (>= 20) and npm.
set -euo pipefail

log() { printf 'checkout-wallet: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG="$ROOT/checkout/wallet"
OUT="$ROOT/checkout/page/assets/wallet.js"
STAMP="$PKG/node_modules/.wallet-deps.sha256"
# shellcheck source=scripts/lib/npm-deps.sh
. "$ROOT/scripts/lib/npm-deps.sh"

ensure_deps() {
  command -v node >/dev/null || die "node not found (Node.js 20 or later builds checkout/wallet)"
  command -v npm >/dev/null || die "npm not found (it comes with Node.js)"
  npm_ensure_deps "$PKG" checkout/wallet "$STAMP"
}

# bundle OUTFILE builds the bundle into OUTFILE (absolute): the flags are package.json's build script's.
bundle() {
  (cd "$PKG" && node_modules/.bin/esbuild src/wallet.js --bundle --format=iife --target=es2020 --minify \
    --legal-comments=eof --charset=utf8 --log-level=warning --outfile="$1" </dev/null >&2) || die "esbuild failed"
}

cmd_build() {
  ensure_deps
  bundle "$OUT"
  log "built checkout/page/assets/wallet.js ($(wc -c <"$OUT") bytes; commit it)"
}

cmd_check() {
  ensure_deps
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/checkout-wallet.XXXXXX")
  # shellcheck disable=SC2064  # expand now: tmp is local
  trap "rm -rf '$tmp'" EXIT
  bundle "$tmp/wallet.js"
  cmp -s "$tmp/wallet.js" "$OUT" || die "checkout/page/assets/wallet.js is stale: run 'scripts/checkout-wallet.sh build' and commit"
  log "check passed: checkout/page/assets/wallet.js is fresh"
}

[ $# -eq 1 ] || usage
case "$1" in
  build) cmd_build ;;
  check) cmd_check ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
