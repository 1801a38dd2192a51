#!/usr/bin/env bash
# Contract-test the running service against the OpenAPI spec it serves,
# using schemathesis (property-based, positive and negative inputs).
#
#   DATABASE_URL=... scripts/contract.sh
#   scripts/with-postgres.sh scripts/contract.sh     # throwaway database
#
# Needs DATABASE_URL and an already-built bin/paymentsd (this script does not
# build: the caller decides how). For each response shape in $SHAPES it
# starts `bin/paymentsd serve` on a free loopback port, waits for /readyz,
# and runs schemathesis against that server's own /openapi.yaml, so the spec
# checked is always the one the shape actually serves.
#
# Environment:
#   SHAPES                 space-separated shapes to test   (default: schema)
#   CONTRACT_MAX_EXAMPLES  max test cases per operation     (default: 50)
#   CONTRACT_SEED          generation seed, for repeatable runs (default: 1)
#   CONTRACT_TIMEOUT       seconds allowed per shape's schemathesis run
#                          before it is killed                (default: 1200)
#   CONTRACT_REPORT_DIR    if set, write a JUnit report per shape there
set -euo pipefail

log() { printf 'contract: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN="$ROOT/bin/paymentsd"

[ -n "${DATABASE_URL:-}" ] \
  || die "DATABASE_URL is not set (run under scripts/with-postgres.sh for a throwaway database)"
[ -x "$BIN" ] || die "$BIN not found or not executable; build it first (e.g. go build -o bin/paymentsd ./cmd/paymentsd)"

SHAPES=${SHAPES:-schema}
MAX_EXAMPLES=${CONTRACT_MAX_EXAMPLES:-50}
SEED=${CONTRACT_SEED:-1}
RUN_TIMEOUT=${CONTRACT_TIMEOUT:-1200}

# Every request goes to the local server: never route loopback traffic
# through a proxy that may be configured in the environment.
export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}"
export no_proxy="$NO_PROXY"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/paymentsd-contract.XXXXXX")
SERVER_PID=""

stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    # Give it a graceful-shutdown window, then force.
    for _ in $(seq 1 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
      log "server did not stop on SIGTERM within 10s; killing it"
      kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
  fi
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# shellcheck disable=SC2329  # invoked via trap
cleanup() {
  local rc=$?
  set +e
  stop_server
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Install/refresh the pinned schemathesis (no-op when unchanged).
bash "$ROOT/scripts/venv.sh"
SCHEMATHESIS="$ROOT/.venv/bin/schemathesis"
[ -x "$SCHEMATHESIS" ] || die "$SCHEMATHESIS missing after scripts/venv.sh"

# CI has no route to a market-data provider: price volatile tokens from the static table.
# Serve every chain so quotes and withdrawals exercise testnets and mainnets alike.
export PAYMENTS_PRICING="${PAYMENTS_PRICING:-static}"
export PAYMENTS_NETWORKS="${PAYMENTS_NETWORKS:-all}"
# Every seeded chain quoted without a watcher (no RPC here): the contract is the same on each.
# The devnet's chains (eip155:1337 and eip155:31337, catalogue chains a withdrawal may name) are served
# only when they run, so the serve process runs them on free ports (:0 for both); the operator
# commands (migrate, merchants create, payments settle) then count them as served too, and the
# merchant's withdrawal configuration includes them. With them off, a schema-valid withdrawal to
# either is refused (chain_not_supported) and schemathesis reports ST202.
export PAYMENTS_DEVNET="${PAYMENTS_DEVNET:-127.0.0.1:0}" PAYMENTS_SERVE_UNWATCHED="${PAYMENTS_SERVE_UNWATCHED:-true}"
# Seals webhook secrets and the dashboard's signing keys (PostgreSQL has no key file).
export PAYMENTS_SECRETS_KEY="${PAYMENTS_SECRETS_KEY:-$(python3 -c 'import secrets; print(secrets.token_hex(32))')}"

log "migrating database"
"$BIN" migrate </dev/null || die "bin/paymentsd migrate failed"

# create_merchant makes a fresh merchant for one shape and sets SECRET_KEY. One merchant per
# shape: Idempotency-Key replays return the stored body, which is in the shape that first
# answered, so shapes must not share a merchant's keys. (Body left unindented for the heredoc.)
create_merchant() {
# A unique name so reruns against a persistent database don't collide.
MERCHANT_NAME="contract-$1-$(date +%s)-$$"
log "creating merchant $MERCHANT_NAME"
"$BIN" merchants create --name "$MERCHANT_NAME" --deposits --withdrawals --json \
  >"$WORK/merchant.json" </dev/null \
  || die "bin/paymentsd merchants create failed"
# The command prints one JSON object; tolerate stray non-JSON lines around it
# by falling back to the first line that parses as an object.
SECRET_KEY=$(python3 - "$WORK/merchant.json" <<'PY'
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
obj = None
try:
    obj = json.loads(text)
except ValueError:
    for line in text.splitlines():
        try:
            cand = json.loads(line)
        except ValueError:
            continue
        if isinstance(cand, dict):
            obj = cand
            break
if not isinstance(obj, dict) or not obj.get("secretKey"):
    sys.exit("no JSON object with a non-empty secretKey in `merchants create` output")
print(obj["secretKey"])
PY
) || { cat "$WORK/merchant.json" >&2; die "could not parse secretKey from merchants create output"; }
MERCHANT_ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("merchantId",""))' "$WORK/merchant.json" 2>/dev/null || true)
log "merchant created (merchantId=${MERCHANT_ID:-?})"
# A merchant of its own for the dashboard (BearerAuth) operations, and its write token:
# schemathesis.toml puts DASHBOARD_MERCHANT_ID in their path, so their fuzzed settings changes
# never disturb the secret-key merchant.
"$BIN" merchants create --name "$MERCHANT_NAME-dashboard" --deposits --withdrawals --mode live --json \
  >"$WORK/dashboard.json" </dev/null || die "bin/paymentsd merchants create (dashboard) failed"
DASHBOARD_MERCHANT_ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["merchantId"])' "$WORK/dashboard.json") \
  || die "could not parse the dashboard merchant's id"
DASHBOARD_SECRET_KEY=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["secretKey"])' "$WORK/dashboard.json")
export DASHBOARD_MERCHANT_ID
TOKEN=$("$BIN" tokens issue --merchant "$DASHBOARD_MERCHANT_ID" --mode live --role owner --ttl 2h </dev/null) || die "bin/paymentsd tokens issue failed"
log "dashboard merchant $DASHBOARD_MERCHANT_ID with a write token"
}


# Poll /readyz until 200, the server exits, or the deadline passes.
wait_ready() {
  local url=$1 deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$SERVER_PID" 2>/dev/null || return 2
    if python3 -c 'import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=2).status == 200 else 1)
except Exception:
    sys.exit(1)' "$url"; then
      return 0
    fi
    sleep 0.3
  done
  return 1
}

# fund_merchant gives the merchant a settled balance, so schema-valid withdrawals are accepted
# rather than refused for insufficient balance: a deposit is created through the API and
# settled by the operator CLI with a large amount of the chain's native token.
fund_merchant() {
  local base=$1 key=$2 pid
  pid=$(curl -sf -X POST "$base/v1/external/secretkey-auth/payments" \
      -H "X-Service-Secret-Key: $key" -H 'Content-Type: application/json' \
      -d '{"type":"deposit","currency":"USD","orderId":"contract-funding"}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["paymentId"])') \
    || die "could not create the funding deposit"
  "$BIN" payments settle --payment "$pid" --tx-hash "0x$(printf 'f%.0s' $(seq 64))" \
    --amount-asset 10000000000000000000000000 --json >"$WORK/funding.json" </dev/null \
    || die "could not settle the funding deposit"
  log "merchant funded: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["amountMerchantNetCents"])' "$WORK/funding.json") cents"
}

# checkout_payment creates the payment the payment-secret (checkout) operations act on, so they
# run for real instead of answering 404 to generated ids: schemathesis.toml puts its id and
# secret (CHECKOUT_PAYMENT_ID, CHECKOUT_PAYMENT_SECRET) on every request of those operations and
# its quote ids, from the dictionary file written beside the config, into their quoteId.
checkout_payment() {
  local base=$1 key=$2 dir=$3
  curl -sf -X POST "$base/v1/external/secretkey-auth/payments" \
      -H "X-Service-Secret-Key: $key" -H 'Content-Type: application/json' \
      -d '{"type":"payment","amount":2500,"currency":"USD","orderId":"contract-checkout"}' \
      >"$WORK/checkout.json" || die "could not create the checkout payment"
  CHECKOUT_PAYMENT_ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paymentId"])' "$WORK/checkout.json") \
    || die "could not parse the checkout payment's id"
  CHECKOUT_PAYMENT_SECRET=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["secret"])' "$WORK/checkout.json")
  export CHECKOUT_PAYMENT_ID CHECKOUT_PAYMENT_SECRET
  # A libFuzzer-style dictionary, one quoted quote id a line.
  python3 - "$WORK/checkout.json" >"$dir/checkout-quotes.dict" <<'PY' || die "the checkout payment has no quotes"
import json, sys
quotes = json.load(open(sys.argv[1]))["payment"]["quotes"]
if not quotes:
    sys.exit(1)
for q in quotes:
    print('"%s"' % q["id"])
PY
  log "checkout payment $CHECKOUT_PAYMENT_ID with $(wc -l <"$dir/checkout-quotes.dict") quotes"
}

# checkout_reached prints, from the server's access log, the statuses each payment-secret
# operation answered on the run's payment, and fails when one of them never answered 2xx: the
# run must reach their success paths, not only their refusals.
checkout_reached() {
  python3 - "$1" "$CHECKOUT_PAYMENT_ID" <<'PY'
import collections, re, sys
log, pid = sys.argv[1], sys.argv[2]
prefix = "/v1/external/payment-secret-auth/payments/" + pid
ops = {"getCheckout": ("GET", ""), "selectCheckoutQuote": ("POST", "/select-quote"),
       "refreshCheckoutQuotes": ("POST", "/refresh-quotes"), "getCheckoutQuoteQR": ("GET", "/qr"),
       "reportCheckoutTransaction": ("POST", "/transactions")}
counts = {op: collections.Counter() for op in ops}
line_re = re.compile(r'msg=request method=(\S+) path="?(\S+?)"? status=(\d+)')
for line in open(log, encoding="utf-8", errors="replace"):
    m = line_re.search(line)
    if not m or not m.group(2).startswith(prefix):
        continue
    method, rest, status = m.group(1), m.group(2)[len(prefix):], m.group(3)
    for op, (want_method, suffix) in ops.items():
        if method == want_method and ((suffix == "" and rest == "") or (suffix and rest.endswith(suffix))):
            counts[op][status] += 1
missing = []
for op, c in counts.items():
    print("contract:   %-25s %s" % (op, " ".join("%s×%d" % kv for kv in sorted(c.items())) or "no requests"), file=sys.stderr)
    if not any(s.startswith("2") for s in c):
        missing.append(op)
if missing:
    sys.exit("no 2xx answer from " + ", ".join(missing))
PY
}

failed_shapes=()
for shape in $SHAPES; do
  port=$(free_port)
  base="http://127.0.0.1:$port"
  server_log="$WORK/server-$shape.log"
  log "[$shape] starting bin/paymentsd serve on 127.0.0.1:$port (log: $server_log)"
  PAYMENTS_RESPONSE_SHAPE="$shape" "$BIN" serve --addr "127.0.0.1:$port" \
    >"$server_log" 2>&1 </dev/null &
  SERVER_PID=$!

  ready=0
  wait_ready "$base/readyz" || ready=$?
  if [ "$ready" -ne 0 ]; then
    if [ "$ready" -eq 2 ]; then
      log "[$shape] server exited before becoming ready; its log:"
    else
      log "[$shape] /readyz not 200 within 30s; server log:"
    fi
    tail -n 100 "$server_log" >&2 || true
    stop_server
    failed_shapes+=("$shape")
    continue
  fi
  create_merchant "$shape"
  fund_merchant "$base" "$SECRET_KEY"
  fund_merchant "$base" "$DASHBOARD_SECRET_KEY"

  # schemathesis runs from a scratch dir: it writes a crash cache
  # (.schemathesis/) and hypothesis its own caches (.hypothesis/) into the
  # current directory, which would litter the work tree.
  st_dir="$WORK/schemathesis-$shape"
  mkdir -p "$st_dir"
  # The config is copied beside the run's dictionary file, which it names relative to itself.
  cp "$ROOT/schemathesis.toml" "$st_dir/schemathesis.toml"
  global_args=(--config-file "$st_dir/schemathesis.toml")
  checkout_payment "$base" "$SECRET_KEY" "$st_dir"
  log "[$shape] ready; running schemathesis (mode all, max-examples $MAX_EXAMPLES, seed $SEED)"
  report_args=()
  if [ -n "${CONTRACT_REPORT_DIR:-}" ]; then
    mkdir -p "$CONTRACT_REPORT_DIR"
    report_dir=$(cd "$CONTRACT_REPORT_DIR" && pwd)
    report_args=(--report junit --report-junit-path "$report_dir/contract-$shape.junit.xml")
  fi

  # Flags (schemathesis 4.x `run`):
  #   -H                        the merchant's secret key on every request
  #   --checks all              every response check, incl. negative_data_rejection
  #                             and positive_data_acceptance
  #   --mode all                both positive and negative generation
  #   --phases ...              all phases explicitly (examples, coverage,
  #                             fuzzing, stateful), independent of defaults
  #   --max-examples/--seed     bounded, reproducible run
  #   --generation-database none  no hypothesis example database: replaying
  #                             past failures would make a run depend on local
  #                             history, not only on the seed
  #   --request-timeout         one hung request fails fast instead of
  #                             stalling the run
  #   --no-color                plain logs in CI
  # schemathesis 4.x has no telemetry or upload to a remote service, and
  # nothing interactive; stdin is /dev/null anyway. `timeout` bounds the
  # whole run so CI cannot hang here.
  st_rc=0
  (cd "$st_dir" && HYPOTHESIS_STORAGE_DIRECTORY="$st_dir/.hypothesis" \
  timeout --kill-after=30 "$RUN_TIMEOUT" \
    "$SCHEMATHESIS" "${global_args[@]}" run "$base/openapi.yaml" \
      -H "X-Service-Secret-Key: $SECRET_KEY" \
      -H "Authorization: Bearer $TOKEN" \
      --checks all \
      --mode all \
      --phases examples,coverage,fuzzing,stateful \
      --max-examples "$MAX_EXAMPLES" \
      --seed "$SEED" \
      --generation-database none \
      --request-timeout 10 \
      --no-color \
      "${report_args[@]}" \
      </dev/null) || st_rc=$?

  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "[$shape] server died during the run"
    if [ "$st_rc" -eq 0 ]; then st_rc=1; fi
  fi
  stop_server
  log "[$shape] the payment-secret operations on the run's payment answered:"
  if ! checkout_reached "$server_log"; then
    log "[$shape] a payment-secret operation was never reached with its payment's secret"
    if [ "$st_rc" -eq 0 ]; then st_rc=1; fi
  fi

  if [ "$st_rc" -ne 0 ]; then
    [ "$st_rc" -eq 124 ] && log "[$shape] schemathesis exceeded CONTRACT_TIMEOUT=${RUN_TIMEOUT}s"
    log "[$shape] FAILED (schemathesis exit $st_rc); last 100 lines of the server log:"
    tail -n 100 "$server_log" >&2 || true
    failed_shapes+=("$shape")
  else
    log "[$shape] passed"
  fi
done

if [ "${#failed_shapes[@]}" -ne 0 ]; then
  die "contract tests failed for shape(s): ${failed_shapes[*]}"
fi
log "contract tests passed for shape(s): $SHAPES"
