#!/usr/bin/env bash
# Run a command against a PostgreSQL database.
#
#   scripts/with-postgres.sh CMD [ARGS...]
#
# If DATABASE_URL is already set, CMD is simply exec'd: the caller brought its
# own database (a developer's long-lived cluster, a CI service, ...).
#
# Otherwise a throwaway cluster is created in a temp dir, tuned for speed
# rather than durability (fsync off etc. -- the data is discarded anyway),
# started on a free loopback port, given a database `paymentsd_test`, and
# DATABASE_URL is exported for CMD. The cluster is always stopped and its
# directory removed on exit, and CMD's exit code is preserved.
#
# Works as root (CI, dev containers) and as an ordinary user.
set -euo pipefail

log() { printf 'with-postgres: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$#" -ge 1 ] || die "usage: $0 CMD [ARGS...]"

# Caller supplied a database: nothing to set up, and exec keeps signals and
# the exit code entirely the command's own.
if [ -n "${DATABASE_URL:-}" ]; then
  log "DATABASE_URL already set; running command against it"
  exec "$@"
fi

# --- locate (or install) the server binaries ---------------------------------

# Debian installs each major version side by side under
# /usr/lib/postgresql/<major>/bin and does not put initdb/pg_ctl on PATH.
# Pick the newest major present.
find_pg_bin() {
  local f newest=""
  # Glob order is lexical (10 < 9); sort -V orders major versions properly.
  # An unmatched glob stays literal and fails the -x test.
  while IFS= read -r f; do
    [ -x "$f" ] && newest=$f
  done < <(printf '%s\n' /usr/lib/postgresql/*/bin/initdb | sort -V)
  [ -n "$newest" ] && dirname "$newest"
}

PG_BIN=$(find_pg_bin || true)
if [ -z "$PG_BIN" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    # A fresh machine (e.g. a new CI box) may lack the server; as root we can
    # install it. DEBIAN_FRONTEND avoids any debconf prompt (CI has no stdin).
    log "PostgreSQL server binaries not found; installing package 'postgresql' via apt-get (takes a minute)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2 </dev/null
    PG_BIN=$(find_pg_bin || true)
    [ -n "$PG_BIN" ] || die "apt-get installed 'postgresql' but no /usr/lib/postgresql/*/bin/initdb appeared"
  else
    die "PostgreSQL server binaries not found (no /usr/lib/postgresql/*/bin/initdb) and not running as root; install them with: sudo apt-get install -y postgresql  (or set DATABASE_URL to an existing database)"
  fi
fi
for tool in initdb pg_ctl createdb; do
  [ -x "$PG_BIN/$tool" ] || die "$PG_BIN/$tool is missing or not executable"
done
log "using PostgreSQL binaries in $PG_BIN ($("$PG_BIN/initdb" --version))"

# --- who runs the server -----------------------------------------------------

# initdb and postgres refuse to run as root, so as root the cluster belongs to
# the `postgres` system user (created by the Debian package); otherwise the
# cluster simply belongs to the current user.
if [ "$(id -u)" -eq 0 ]; then
  id -u postgres >/dev/null 2>&1 \
    || die "running as root but there is no 'postgres' user to own the cluster (apt-get install -y postgresql creates it)"
  # cd into the cluster dir first: postgres cannot read root's cwd (e.g. /root)
  # and initdb/pg_ctl complain when they cannot stat their working directory.
  as_pg() { (cd "$PG_DIR" && runuser -u postgres -- "$@"); }
else
  as_pg() { (cd "$PG_DIR" && "$@"); }
fi

# --- create the cluster ------------------------------------------------------

# /tmp rather than $TMPDIR: the postgres user must be able to reach the
# directory, and a root-private TMPDIR would break that. The path must also
# stay short since it holds the unix socket (limit ~107 bytes).
PG_DIR=$(mktemp -d /tmp/paymentsd-pg.XXXXXX)
PG_DATA="$PG_DIR/data"
PG_LOG="$PG_DIR/log"
PG_STARTED=0

# shellcheck disable=SC2329  # invoked via trap
cleanup() {
  local rc=$?
  # Don't let a failing cleanup step abort the rest of the cleanup or
  # replace CMD's exit code.
  set +e
  if [ "$PG_STARTED" -eq 1 ]; then
    log "stopping cluster"
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1 \
      || as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w -t 30 stop >/dev/null 2>&1 \
      || log "WARNING: could not stop cluster in $PG_DIR"
  fi
  rm -rf "$PG_DIR"
  log "removed $PG_DIR"
  exit "$rc"
}
trap cleanup EXIT
# Turn signals into a normal exit so the EXIT trap tears the cluster down.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

if [ "$(id -u)" -eq 0 ]; then
  chown postgres: "$PG_DIR"
fi

log "initdb in $PG_DATA"
# trust auth: loopback-only throwaway cluster, no passwords to manage.
# --no-sync: nothing here needs to survive a crash.
# --locale=C: do not depend on which locales the machine has generated
#   (an unset or ungenerated LANG makes initdb fail), and keep collation
#   deterministic across machines.
if ! as_pg "$PG_BIN/initdb" -D "$PG_DATA" -A trust -U postgres --no-sync -E UTF8 --locale=C \
      >"$PG_DIR/initdb.log" 2>&1; then
  cat "$PG_DIR/initdb.log" >&2
  die "initdb failed"
fi

free_port() {
  # Bind port 0 and let the kernel pick; a tiny race remains until postgres
  # binds it, which the retry loop below covers.
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# --- start it ------------------------------------------------------------------

attempt=1
while :; do
  PG_PORT=$(free_port)
  log "starting cluster on 127.0.0.1:$PG_PORT (attempt $attempt)"
  # Durability settings off for speed; listen on loopback only; socket in our
  # own dir so we never touch /var/run/postgresql; generous max_connections
  # for parallel test packages each holding a pool.
  if as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -w -t 60 -l "$PG_LOG" \
       -o "-p $PG_PORT -k $PG_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c listen_addresses=127.0.0.1 -c max_connections=200" \
       start >/dev/null 2>&1; then
    PG_STARTED=1
    break
  fi
  # pg_ctl may have left a half-started postmaster behind; make sure it's gone.
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w stop >/dev/null 2>&1 || true
  if [ "$attempt" -lt 3 ] && grep -q 'could not bind\|already in use' "$PG_LOG" 2>/dev/null; then
    log "port $PG_PORT was taken meanwhile; retrying with another"
    attempt=$((attempt + 1))
    continue
  fi
  log "cluster failed to start; server log follows:"
  cat "$PG_LOG" >&2 2>/dev/null || log "(no log written)"
  die "could not start PostgreSQL"
done

log "creating database paymentsd_test"
# Client tools from the same bin dir so versions match; over TCP, so it works
# as any local user under trust auth.
"$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres paymentsd_test \
  || { cat "$PG_LOG" >&2; die "createdb failed"; }

export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/paymentsd_test?sslmode=disable"
log "DATABASE_URL=$DATABASE_URL"
log "running: $*"

# Not exec: we must stay around to stop the cluster. CMD runs in the
# background so that a signal sent only to this script (e.g. by a CI runner)
# is handled at once -- bash defers traps while a foreground child runs --
# and is forwarded to CMD; we then collect CMD's real exit status. `<&0`
# keeps CMD's stdin (bash would otherwise give a background job /dev/null);
# without job control CMD stays in our process group, so terminal Ctrl-C
# reaches it directly as usual.
"$@" <&0 &
child=$!
# shellcheck disable=SC2329  # invoked via trap
forward() { kill -s "$1" "$child" 2>/dev/null || true; }
trap 'forward INT' INT
trap 'forward TERM' TERM
trap 'forward HUP' HUP
# Capture the exit code explicitly instead of letting errexit fire.
set +e
while :; do
  wait "$child"
  rc=$?
  # wait also returns (status >128) when a trapped signal arrives; in that
  # case CMD is still running (or not yet reaped), so wait again for its
  # real exit status.
  kill -0 "$child" 2>/dev/null || break
done
set -e
log "command exited with status $rc"
# Leave through the EXIT trap, which stops the cluster and keeps $rc.
exit "$rc"
