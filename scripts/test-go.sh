#!/usr/bin/env bash
# The Go tests, as `make test-go` runs them: every package with the race detector.
#
# The fault tests (./tests/fault: real paymentsd processes, devnets and Chromium, mostly waiting
# on blocks and pages) start at once, beside the other packages (mostly CPU: the race detector,
# both databases), instead of last: `go test ./...` would start them after nearly everything
# else, and the run's last ten minutes would be them and ./tests side by side. Their output is
# kept and printed when they end, so the two runs' lines do not interleave; either failing fails
# the whole.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
flags=(-count=1 -race -timeout 30m)

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$GO" test "${flags[@]}" ./tests/fault/ >"$log" 2>&1 &
fault=$!

mapfile -t rest < <("$GO" list ./... | grep -v '/tests/fault$')
"$GO" test "${flags[@]}" "${rest[@]}"
rc=$?

wait "$fault"
frc=$?
echo "test-go: the fault tests (./tests/fault), run beside the rest:"
cat "$log"
if [ "$rc" -ne 0 ] || [ "$frc" -ne 0 ]; then
  echo "test-go: failed (packages: exit $rc; fault tests: exit $frc)" >&2
  exit 1
fi
