#!/usr/bin/env bash
# Installs the distribution's Chromium when no Chromium is on the machine (the checkout page's
# browser tests drive it with chromedp), as make test does for PostgreSQL. CHROMIUM names
# another binary.
set -euo pipefail
log() { echo "ensure-chromium: $*" >&2; }
if [ -n "${CHROMIUM:-}" ] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null \
  || command -v google-chrome-stable >/dev/null || command -v google-chrome >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  log "no Chromium, and cannot install it here (needs root and apt-get): apt-get install -y chromium"
  exit 1
fi
log "installing the distribution's chromium (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq chromium >/dev/null </dev/null || { apt-get update -qq </dev/null && apt-get install -y -qq chromium >/dev/null </dev/null; }
command -v chromium >/dev/null || { log "chromium did not install"; exit 1; }
log "$(chromium --version 2>/dev/null || echo chromium installed)"
