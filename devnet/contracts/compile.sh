#!/usr/bin/env bash
# Regenerates the devnet contract artifacts (<Name>.bin, <Name>.abi.json: the tokens of
# DevToken.sol, the sweep contracts of Sweep.sol) with the exact solc-js version pinned in
# package.json/package-lock.json. The artifacts are committed and embedded by devnet/tokens.go
# and devnet/sweep_contracts.go; node_modules is not. `make check-generated` runs this and
# fails when the committed artifacts differ from a fresh compile.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
node compile.js
