# shellcheck shell=bash
# npm_ensure_deps DIR NAME STAMP installs the pinned dependencies of the npm package in DIR
# (`npm ci --ignore-scripts`) into DIR/node_modules when its package.json, package-lock.json or
# the node major changed since the last install, recorded as a hash in the STAMP file. NAME is
# how DIR is spoken of in messages (its path from the repository root).
# Sourced by scripts/web.sh and scripts/ts-client.sh; uses their log and die.

# npm_deps_hash DIR identifies the dependency set: package.json and the lockfile, plus the node
# major (a node upgrade reinstalls, in case a package ever ships per-version files).
npm_deps_hash() {
  { cat "$1/package.json" "$1/package-lock.json"; node -p 'process.versions.node.split(".")[0]'; } \
    | sha256sum | cut -d' ' -f1
}

npm_ensure_deps() {
  local dir=$1 name=$2 stamp=$3 want
  [ -f "$dir/package-lock.json" ] || die "$name/package-lock.json is missing"
  want=$(npm_deps_hash "$dir")
  if [ -d "$dir/node_modules" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  log "installing pinned dependencies (npm ci) in $name"
  # --ignore-scripts: none of the pinned packages needs an install script (native binaries, such
  # as webapp's rolldown/lightningcss, come as optional per-platform packages); running none is safer.
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error </dev/null >&2) \
    || die "npm ci failed in $name (is package-lock.json in sync with package.json? run npm install there and commit the lockfile)"
  printf '%s\n' "$want" >"$stamp"
}
