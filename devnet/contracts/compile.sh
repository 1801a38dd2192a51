#!/usr/bin/env bash
# Regenerates the devnet token artifacts (DevToken*.bin, DevToken*.abi.json) from
# DevToken.sol with the exact solc-js version pinned in package.json/package-lock.json.
# The artifacts are committed and embedded by devnet/tokens.go; node_modules is not.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
node compile.js
