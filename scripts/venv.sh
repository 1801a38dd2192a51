#!/usr/bin/env bash
# Create or update the project-local Python venv (.venv) holding the contract
# test tooling pinned in requirements-contract.txt.
#
#   scripts/venv.sh
#
# Idempotent and cheap when nothing changed: pip runs only when the
# requirements file (or the venv's Python) differs from what was last
# installed, recorded as a sha256 stamp inside the venv. A fresh clone (CI)
# builds the venv from scratch; later runs reuse it.
set -euo pipefail

log() { printf 'venv: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
REQS="$ROOT/requirements-contract.txt"
STAMP="$VENV/.requirements-contract.sha256"
PYTHON=${PYTHON:-python3}

[ -f "$REQS" ] || die "$REQS not found"
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found on PATH"

# A venv whose interpreter no longer runs (its base Python was upgraded or
# removed, or the venv was copied from elsewhere) cannot be repaired by pip:
# rebuild it from scratch.
if [ -e "$VENV" ] && ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  log "existing $VENV is broken; recreating it"
  rm -rf "$VENV"
fi

if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV with $("$PYTHON" --version 2>&1)"
  if ! "$PYTHON" -m venv "$VENV"; then
    rm -rf "$VENV"
    # Debian splits venv/ensurepip into a separate package.
    die "'$PYTHON -m venv' failed; on Debian install python3-venv (apt-get install -y python3-venv)"
  fi
fi

# The stamp covers the requirements and the exact interpreter, so either
# changing triggers a reinstall.
want=$( { sha256sum <"$REQS"; "$VENV/bin/python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)
have=$(cat "$STAMP" 2>/dev/null || true)

if [ "$want" = "$have" ]; then
  log "$VENV is up to date with requirements-contract.txt"
  exit 0
fi

log "installing requirements-contract.txt into $VENV (quiet; this takes a few seconds)"
# Drop a stale stamp first so an interrupted install is retried next time.
rm -f "$STAMP"
# --no-input: never prompt (CI has no stdin); --disable-pip-version-check:
# no extra index request just to nag about pip's own version.
start=$SECONDS
"$VENV/bin/python" -m pip install --quiet --no-input --disable-pip-version-check -r "$REQS" \
  || die "pip install -r requirements-contract.txt failed"
printf '%s\n' "$want" >"$STAMP"
log "done in $((SECONDS - start))s: $("$VENV/bin/schemathesis" --version 2>/dev/null || echo 'schemathesis not runnable?')"
