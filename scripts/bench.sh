#!/usr/bin/env bash
# make bench: the API under wrk, then pgbench running the SQL the same operations cannot avoid,
# in one run on one PostgreSQL, printing req/s, p50/p99 and each operation's ratio to its limit.
# Needs DATABASE_URL (make bench wraps this in scripts/with-postgres.sh) and bin/paymentsd.
#
#   BENCH_SECONDS   duration of each phase (default 10)
#   BENCH_CONNS     connections for wrk and clients for pgbench (default 16)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'bench: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

: "${DATABASE_URL:?DATABASE_URL must be set (make bench starts a throwaway PostgreSQL)}"
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNS:-16}
BIN=bin/paymentsd
[ -x "$BIN" ] || die "$BIN missing: run make build"

if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    log "installing wrk from the distribution"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq wrk >/dev/null </dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null </dev/null; }
  else
    die "wrk not found: sudo apt-get install -y wrk"
  fi
fi
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -1)
[ -x "$PGBENCH" ] || die "pgbench not found under /usr/lib/postgresql/*/bin"

export PAYMENTS_PRICING=static PAYMENTS_NETWORKS=mainnet PAYMENTS_LOG_FORMAT=json PAYMENTS_DEVNET=off PAYMENTS_SERVE_UNWATCHED=true
export PAYMENTS_SECRETS_KEY="${PAYMENTS_SECRETS_KEY:-$(python3 -c 'import secrets; print(secrets.token_hex(32))')}"
WORK=$(mktemp -d)
SERVE_PID=""
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN" migrate 2>/dev/null
CREATED=$("$BIN" merchants create --name Bench --mode live --json)   # mainnets: a live key
MERCHANT=$(printf '%s' "$CREATED" | python3 -c 'import json,sys; print(json.load(sys.stdin)["merchantId"])')
export BENCH_KEY
BENCH_KEY=$(printf '%s' "$CREATED" | python3 -c 'import json,sys; print(json.load(sys.stdin)["secretKey"])')

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
BASE="http://127.0.0.1:$PORT"
"$BIN" serve --addr "127.0.0.1:$PORT" >"$WORK/serve.out" 2>"$WORK/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do curl -fsS "$BASE/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$BASE/readyz" >/dev/null || { tail -20 "$WORK/serve.log" >&2; die "paymentsd did not start"; }
log "paymentsd on $BASE (PostgreSQL, mainnet: 21 quotes a payment, static prices), $CONNS connections, ${SECS}s a phase"

# wrk_run NAME ARGS...: runs wrk, keeps its report in $WORK/NAME.wrk
wrk_run() {
  local name=$1; shift
  wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "$@" >"$WORK/$name.wrk"
}
wrk_run create -s scripts/bench/create.lua "$BASE"
PAYMENT=$(curl -fsS "$BASE/v1/external/secretkey-auth/payments?limit=1" -H "X-Service-Secret-Key: $BENCH_KEY" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
wrk_run get -s scripts/bench/key.lua "$BASE/v1/external/secretkey-auth/payments/$PAYMENT"
wrk_run list -s scripts/bench/key.lua "$BASE/v1/external/secretkey-auth/payments?limit=20"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=""
errors=$(grep -c '"status":5' "$WORK/serve.log" || true)

"$PGBENCH" "$DATABASE_URL" -q -f scripts/bench/setup.sql -t 1 -c 1 -n >/dev/null 2>&1 || true
psql "$DATABASE_URL" -qAt -f scripts/bench/setup.sql >/dev/null 2>&1 || true
pg_run() {
  local name=$1
  "$PGBENCH" -n -c "$CONNS" -j 2 -T "$SECS" -f "scripts/bench/$name.sql" \
    -D merchant="$MERCHANT" -D payment="$PAYMENT" -D key="$BENCH_KEY" "$DATABASE_URL" >"$WORK/$name.pgb" 2>&1 ||
    { cat "$WORK/$name.pgb" >&2; die "pgbench $name failed"; }
}
# create last: its rows would otherwise make the reads run on more data than the API saw.
for op in get list create; do pg_run "$op"; done

python3 - "$WORK" "$errors" <<'PY'
import re, sys, pathlib
work, errors = pathlib.Path(sys.argv[1]), sys.argv[2]
def ms(v):
    n, unit = re.match(r'([\d.]+)(us|ms|s)', v).groups()
    return float(n) * {'us': 0.001, 'ms': 1, 's': 1000}[unit]
print(f"{'operation':<8} {'API req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8} {'pgbench tx/s':>13} {'ratio':>6}")
for op in ('create', 'get', 'list'):
    w = (work / f'{op}.wrk').read_text()
    rps = float(re.search(r'Requests/sec:\s+([\d.]+)', w).group(1))
    p50 = ms(re.search(r'\n\s+50%\s+(\S+)', w).group(1))
    p99 = ms(re.search(r'\n\s+99%\s+(\S+)', w).group(1))
    bad = re.search(r'Non-2xx or 3xx responses: (\d+)', w)
    tps = float(re.search(r'tps = ([\d.]+)', (work / f'{op}.pgb').read_text()).group(1))
    print(f"{op:<8} {rps:>10.0f} {p50:>8.1f} {p99:>8.1f} {bad.group(1) if bad else '0':>8} {tps:>13.0f} {rps / tps:>6.2f}")
print(f"5xx logged by paymentsd: {errors}")
PY
