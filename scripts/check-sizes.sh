#!/usr/bin/env bash
# Refuses a tracked file over 2 MiB: a build output (the 87 MB paymentsd binary once) or a data
# dump must never be committed — a submission has a size limit and history keeps every copy.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
limit=$((2 * 1024 * 1024))
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  size=$(stat -c %s "$f")
  if [ "$size" -gt "$limit" ]; then
    echo "check-sizes: $f is $size bytes (over 2 MiB): build outputs and data do not belong in git" >&2
    bad=1
  fi
done < <(git ls-files -z)
exit "$bad"
