#!/usr/bin/env bash
# The TypeScript client in clients/typescript: types generated from openapi.yaml by
# openapi-typescript (src/schema.d.ts, committed), calls through openapi-fetch, and a runnable
# example (src/example.ts). Versions are pinned in clients/typescript/package.json and its
# package-lock.json; dependencies are installed with `npm ci` into clients/typescript/node_modules.
#
#   scripts/ts-client.sh check                    # deps, schema.d.ts freshness, strict type-check
#   scripts/ts-client.sh run BASE_URL SECRET_KEY  # build and run the example against a live server
#   scripts/ts-client.sh e2e                      # start bin/paymentsd, make a merchant, run the example
#
# check:  `npm ci` when node_modules is missing or older than package.json/package-lock.json;
#         regenerates schema.d.ts into a temp file and fails if it differs from the committed one
#         (fix: `cd clients/typescript && npm run generate`, commit); then `tsc --noEmit`.
# run:    compiles src/ to dist/ (tsconfig.build.json) and runs `node dist/example.js` with
#         PAYMENTS_BASE_URL and PAYMENTS_SECRET_KEY. The server must serve the `schema` shape.
# e2e:    needs an already-built bin/paymentsd. Serves it on a free loopback port in the
#         `schema` shape on $DATABASE_URL (PostgreSQL under scripts/with-postgres.sh), or on a
#         throwaway SQLite file when DATABASE_URL is unset; creates a fresh merchant with
#         `paymentsd merchants create --json`; runs `run` against it; stops the server.
#
# Needs node (>= 20) and npm. Progress goes to stderr; the example's summary to stdout.
# Environment: TS_CLIENT_TIMEOUT seconds allowed for the example run (default 120).
set -euo pipefail

log() { printf 'ts-client: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLIENT="$ROOT/clients/typescript"
STAMP="$CLIENT/node_modules/.ts-client-deps.sha256"
# shellcheck source=scripts/lib/npm-deps.sh
. "$ROOT/scripts/lib/npm-deps.sh"
TIMEOUT=${TS_CLIENT_TIMEOUT:-120}

need_node() {
  command -v node >/dev/null || die "node not found (Node.js 20 or later is needed for clients/typescript)"
  command -v npm >/dev/null || die "npm not found (it comes with Node.js)"
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 20 ] || die "node $(node --version) is too old: clients/typescript needs Node.js 20 or later"
}

ensure_deps() {
  need_node
  npm_ensure_deps "$CLIENT" clients/typescript "$STAMP"
}

bin() { printf '%s/node_modules/.bin/%s' "$CLIENT" "$1"; }

cmd_check() {
  ensure_deps
  local tmp rc=0
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/ts-client-check.XXXXXX")
  # shellcheck disable=SC2064  # expand now: tmp is local
  trap "rm -rf '$tmp'" EXIT
  log "regenerating src/schema.d.ts from openapi.yaml into a temp file"
  (cd "$CLIENT" && "$(bin openapi-typescript)" ../../openapi.yaml -o "$tmp/schema.d.ts" </dev/null >"$tmp/gen.log" 2>&1) \
    || { cat "$tmp/gen.log" >&2; die "openapi-typescript failed"; }
  if ! cmp -s "$tmp/schema.d.ts" "$CLIENT/src/schema.d.ts"; then
    diff -u "$CLIENT/src/schema.d.ts" "$tmp/schema.d.ts" | head -n 40 >&2 || true
    die "clients/typescript/src/schema.d.ts is stale: run 'cd clients/typescript && npm run generate' and commit"
  fi
  log "schema.d.ts is fresh; type-checking (tsc --noEmit, strict)"
  (cd "$CLIENT" && "$(bin tsc)" -p tsconfig.json </dev/null >&2) || rc=$?
  [ "$rc" -eq 0 ] || die "type-check failed"
  log "check passed"
}

cmd_run() {
  [ $# -eq 2 ] || usage
  local base=$1 key=$2
  [ -n "$base" ] || die "BASE_URL is empty"
  [ -n "$key" ] || die "SECRET_KEY is empty"
  ensure_deps
  log "building the example (tsc -p tsconfig.build.json → clients/typescript/dist)"
  rm -rf "$CLIENT/dist"
  (cd "$CLIENT" && "$(bin tsc)" -p tsconfig.build.json </dev/null >&2) || die "build failed"
  log "running the example against $base"
  # Loopback servers are never reached through a proxy configured in the environment.
  local rc=0
  (cd "$CLIENT" && NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}" \
    PAYMENTS_BASE_URL="$base" PAYMENTS_SECRET_KEY="$key" \
    timeout --kill-after=10 "$TIMEOUT" node dist/example.js </dev/null) || rc=$?
  [ "$rc" -ne 124 ] || die "the example did not finish within ${TIMEOUT}s"
  [ "$rc" -eq 0 ] || die "the example failed (exit $rc)"
  log "example passed"
}

cmd_e2e() {
  [ $# -eq 0 ] || usage
  local bin_paymentsd="$ROOT/bin/paymentsd"
  [ -x "$bin_paymentsd" ] || die "$bin_paymentsd not found or not executable; build it first (make build)"
  need_node
  local port base key
  # Globals, not locals: the EXIT trap runs after this function has returned.
  E2E_WORK=$(mktemp -d "${TMPDIR:-/tmp}/ts-client-e2e.XXXXXX")
  E2E_PID=""
  local work=$E2E_WORK
  # shellcheck disable=SC2317,SC2329  # invoked via trap
  e2e_cleanup() {
    local rc=$?
    set +e
    if [ -n "$E2E_PID" ] && kill -0 "$E2E_PID" 2>/dev/null; then
      kill -TERM "$E2E_PID" 2>/dev/null
      for _ in $(seq 1 50); do kill -0 "$E2E_PID" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$E2E_PID" 2>/dev/null
    fi
    [ -n "$E2E_PID" ] && wait "$E2E_PID" 2>/dev/null
    if [ "$rc" -ne 0 ] && [ -f "$E2E_WORK/server.log" ]; then
      log "last 50 lines of the server log:"
      tail -n 50 "$E2E_WORK/server.log" >&2
    fi
    rm -rf "$E2E_WORK"
    exit "$rc"
  }
  trap e2e_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  export DATABASE_URL="${DATABASE_URL:-$work/db.sqlite}"
  # Same environment as scripts/contract.sh: no market-data provider in CI, every chain served.
  export PAYMENTS_PRICING="${PAYMENTS_PRICING:-static}" PAYMENTS_NETWORKS="${PAYMENTS_NETWORKS:-all}"
  export PAYMENTS_DEVNET="${PAYMENTS_DEVNET:-off}" PAYMENTS_SERVE_UNWATCHED="${PAYMENTS_SERVE_UNWATCHED:-true}"
  export PAYMENTS_RESPONSE_SHAPE=schema # the generated types are the typed-schema shape
  # The TypeScript webhook receiver runs on loopback; webhook secrets need a key on PostgreSQL.
  export PAYMENTS_WEBHOOKS_ALLOW_PRIVATE=true
  export PAYMENTS_SECRETS_KEY="${PAYMENTS_SECRETS_KEY:-$(node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')}"
  case "$DATABASE_URL" in postgres*) log "database: PostgreSQL from DATABASE_URL" ;; *) log "database: SQLite $DATABASE_URL" ;; esac

  "$bin_paymentsd" migrate </dev/null >"$work/migrate.log" 2>&1 || { cat "$work/migrate.log" >&2; die "paymentsd migrate failed"; }
  "$bin_paymentsd" merchants create --name "ts-client-e2e-$(date +%s)-$$" --deposits --withdrawals --json \
    </dev/null >"$work/merchant.json" 2>"$work/merchant.err" || { cat "$work/merchant.err" >&2; die "paymentsd merchants create failed"; }
  key=$(node -e 'const o = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); if (!o.secretKey) process.exit(1); console.log(o.secretKey)' "$work/merchant.json") \
    || { cat "$work/merchant.json" >&2; die "no secretKey in 'merchants create --json' output"; }

  port=$(node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
  base="http://127.0.0.1:$port"
  log "starting bin/paymentsd serve on $base (schema shape)"
  "$bin_paymentsd" serve --addr "127.0.0.1:$port" </dev/null >"$work/server.log" 2>&1 &
  E2E_PID=$!

  local deadline=$((SECONDS + 30))
  until node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(2000) }).then(r => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$base/readyz"; do
    kill -0 "$E2E_PID" 2>/dev/null || die "the server exited before becoming ready"
    [ "$SECONDS" -lt "$deadline" ] || die "$base/readyz not 200 within 30s"
    sleep 0.3
  done
  cmd_run "$base" "$key"
  kill -0 "$E2E_PID" 2>/dev/null || die "the server died during the run"
  webhook_e2e "$bin_paymentsd" "$base" "$key"
}

# webhook_e2e runs the TypeScript webhook receiver (dist/webhook-receiver.js) as a merchant's
# endpoint, makes a payment, and waits for the receiver to have verified its payment.created.
webhook_e2e() {
  local bin_paymentsd=$1 base=$2 key=$3 work=$E2E_WORK hport merchant secret
  merchant=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).merchantId)' "$work/merchant.json")
  hport=$(node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
  "$bin_paymentsd" webhooks create --merchant "$merchant" --url "http://127.0.0.1:$hport/hooks" --events payment.created --json \
    </dev/null >"$work/endpoint.json" 2>"$work/endpoint.err" || { cat "$work/endpoint.err" >&2; die "paymentsd webhooks create failed"; }
  secret=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).secret)' "$work/endpoint.json")
  log "starting the TypeScript webhook receiver on 127.0.0.1:$hport"
  (cd "$CLIENT" && WEBHOOK_SECRET="$secret" PORT="$hport" exec node dist/webhook-receiver.js </dev/null >"$work/receiver.log" 2>&1) &
  local rpid=$!
  sleep 0.5
  node -e 'fetch(process.argv[1] + "/v1/external/secretkey-auth/payments", { method: "POST", headers: { "X-Service-Secret-Key": process.argv[2],
    "Content-Type": "application/json" }, body: JSON.stringify({ amount: 1234, currency: "USD", orderId: "ts-webhook" }) })
    .then(r => process.exit(r.status === 201 ? 0 : 1), () => process.exit(1))' "$base" "$key" || { kill "$rpid"; die "creating the payment failed"; }
  local deadline=$((SECONDS + 20))
  until grep -q "verified payment.created evt_" "$work/receiver.log"; do
    if [ "$SECONDS" -ge "$deadline" ]; then kill "$rpid"; cat "$work/receiver.log" >&2; die "the TypeScript receiver verified no payment.created within 20s"; fi
    sleep 0.3
  done
  kill "$rpid" 2>/dev/null || true
  wait "$rpid" 2>/dev/null || true
  log "webhook receiver: $(grep -m1 "verified payment.created" "$work/receiver.log")"
}

[ $# -ge 1 ] || usage
sub=$1
shift
case "$sub" in
  check) [ $# -eq 0 ] || usage; cmd_check ;;
  run) cmd_run "$@" ;;
  e2e) cmd_e2e "$@" ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
