#!/usr/bin/env bash
# Run every Go fuzz target for a bounded time, one after another, stopping at the first failure.
#
#   scripts/fuzz.sh                        # each target for $FUZZTIME (default 10s)
#   FUZZTIME=1m scripts/fuzz.sh            # longer
#   scripts/fuzz.sh FuzzParseCAIP2 ...     # only the named targets
#
# `go test -fuzz` takes one target in one package at a time, hence the list below. A failing
# input is written by the fuzzer to <pkg>/testdata/fuzz/<Target>/; once the bug is fixed, commit
# it there so plain `go test ./...` replays it as a regression seed.
#
# Environment:
#   FUZZTIME   time (or Nx iterations) per target, as go test -fuzztime takes it  (default: 10s)
#   GO         the go command                                                     (default: go)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
FUZZTIME=${FUZZTIME:-10s}
GO=${GO:-go}

# package  target
TARGETS=(
  "server      FuzzValidateCreatePayment"
  "server      FuzzValidateCreateWithdrawal"
  "server      FuzzListPaymentsQuery"
  "settlement  FuzzSchemaRequest"
  "settlement  FuzzGuideQuoteRate"
  "money       FuzzNumberRoundTrip"
  "money       FuzzSettle"
  "money       FuzzUnitsToQuote"
  "chains      FuzzParseCAIP2"
  "idempotency FuzzRequestHash"
)

# wanted NAME [FILTER...]: true when no filter is given or NAME is one of them.
wanted() {
  local name=$1 w
  shift
  [ "$#" -eq 0 ] && return 0
  for w in "$@"; do [ "$w" = "$name" ] && return 0; done
  return 1
}

ran=0
for entry in "${TARGETS[@]}"; do
  read -r pkg name <<<"$entry"
  wanted "$name" "$@" || continue
  printf 'fuzz: %s (./%s/) for %s\n' "$name" "$pkg" "$FUZZTIME"
  if ! "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "./${pkg}/"; then
    printf 'fuzz: FAILED: %s in ./%s/ (failing input under %s/testdata/fuzz/%s/)\n' "$name" "$pkg" "$pkg" "$name" >&2
    exit 1
  fi
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { printf 'fuzz: no target matches: %s\n' "$*" >&2; exit 2; }
printf 'fuzz: all %d targets passed\n' "$ran"
