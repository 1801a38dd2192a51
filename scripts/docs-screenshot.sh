#!/usr/bin/env bash
# Screenshots a page in headless Chromium, e.g. the API reference a running paymentsd serves:
#
#   scripts/docs-screenshot.sh URL OUTPUT.png [TEXT...]
#   scripts/docs-screenshot.sh http://127.0.0.1:8080/docs /tmp/docs.png "Create a payment or deposit"
#
# Each TEXT must appear in the page as rendered (a second, --dump-dom pass), else the script
# fails: a half-loaded page is caught, not only photographed. A blank (single-colour) screenshot
# fails too. URLs with a #fragment are refused: headless Chromium's --screenshot captures a blank
# viewport once a page has scrolled to an anchor (any page, not only Redoc's).
#
# The browser can reach the URL's host and nothing else (every other host name resolves to
# nothing, no proxy): the screenshot shows what the page renders without the network. Console
# messages (e.g. Content-Security-Policy refusals) are printed. Set
# DOCS_SCREENSHOT_ALLOW_NETWORK=1 to lift the restriction.
#
# Needs Chromium (Debian: apt-get install -y chromium); CHROMIUM names another binary.
# Environment: DOCS_SCREENSHOT_WINDOW (default 1280,900), DOCS_SCREENSHOT_BUDGET_MS (virtual
# time for scripts to finish, default 10000), DOCS_SCREENSHOT_TIMEOUT (seconds per browser run,
# default 120). --no-sandbox is passed: Chromium's sandbox refuses to run as root in containers.
set -euo pipefail

log() { printf 'docs-screenshot: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

[ $# -ge 2 ] || usage
url=$1 out=$2
shift 2

browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
  for b in chromium chromium-browser google-chrome-stable google-chrome; do
    if command -v "$b" >/dev/null; then browser=$b; break; fi
  done
fi
[ -n "$browser" ] || die "no Chromium found (Debian: apt-get install -y chromium; or set CHROMIUM)"

[[ "$url" =~ ^https?://(\[[^]]+\]|[^/:?#]+) ]] || die "not an http(s) URL: $url"
host=${BASH_REMATCH[1]}
case "$url" in *'#'*) die "URL fragments are not supported (headless --screenshot renders a scrolled page blank): $url" ;; esac
case "$out" in *.png) ;; *) die "OUTPUT must be a .png path: $out" ;; esac
mkdir -p "$(dirname "$out")"

profile=$(mktemp -d "${TMPDIR:-/tmp}/docs-screenshot.XXXXXX")
trap 'rm -rf "$profile"' EXIT

args=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --disable-default-apps --disable-extensions --hide-scrollbars --mute-audio
  --user-data-dir="$profile/user-data" --enable-logging=stderr --v=0
  --virtual-time-budget="${DOCS_SCREENSHOT_BUDGET_MS:-10000}"
  --window-size="${DOCS_SCREENSHOT_WINDOW:-1280,900}")
if [ "${DOCS_SCREENSHOT_ALLOW_NETWORK:-0}" != 1 ]; then
  args+=(--no-proxy-server --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE $host")
  log "network limited to $host"
fi

# run_browser LOG ARGS...: one headless run, bounded; its log keeps only the console lines.
run_browser() {
  local logf=$1 rc=0
  shift
  timeout --kill-after=10 "${DOCS_SCREENSHOT_TIMEOUT:-120}" "$browser" "${args[@]}" "$@" </dev/null 2>"$profile/stderr" || rc=$?
  grep -F 'CONSOLE' "$profile/stderr" | sed 's/^\[[^]]*\] *//' >"$logf" || true
  if [ "$rc" -ne 0 ] || grep -q 'Page load failed' "$profile/stderr"; then
    grep -v -E 'dbus|UPower|ScreenSaver' "$profile/stderr" | tail -n 20 >&2 || true
    die "$browser failed on $url (exit $rc)"
  fi
}

rm -f "$out"
log "screenshot of $url → $out"
run_browser "$profile/console.log" --screenshot="$out" "$url" >/dev/null
[ -s "$out" ] || die "no screenshot written to $out"
# A blank capture decompresses to a handful of distinct byte values; a rendered page to hundreds.
if command -v python3 >/dev/null; then
  distinct=$(python3 - "$out" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
i, idat = 8, b""
while i < len(data):
    (n,) = struct.unpack(">I", data[i:i + 4])
    if data[i + 4:i + 8] == b"IDAT":
        idat += data[i + 8:i + 8 + n]
    i += 12 + n
print(len(set(zlib.decompress(idat))))
PY
) || die "could not read $out as a PNG"
  [ "$distinct" -ge 16 ] || die "the screenshot $out is blank (a single colour): the page did not render"
fi

if [ $# -gt 0 ]; then
  run_browser "$profile/console2.log" --dump-dom "$url" >"$profile/dom.html"
  missing=()
  for text in "$@"; do
    grep -qF -- "$text" "$profile/dom.html" || missing+=("$text")
  done
  [ "${#missing[@]}" -eq 0 ] || die "not in the rendered page: ${missing[*]}"
  log "rendered page contains all $# expected text(s)"
fi

if [ -s "$profile/console.log" ]; then
  log "browser console:"
  sed 's/^/  /' "$profile/console.log" >&2
fi
log "wrote $out ($(wc -c <"$out") bytes)"
