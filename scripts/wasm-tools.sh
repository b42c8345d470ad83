#!/usr/bin/env bash
# Installs what building and testing for the browser needs, and prints the
# directory of the wasm-bindgen tools (for PATH) as its only output:
#
#   - the Rust target wasm32-unknown-unknown (through rustup);
#   - wasm-bindgen-cli (`wasm-bindgen`, `wasm-bindgen-test-runner`) at
#     exactly the version of `wasm-bindgen` in Cargo.lock, which the two
#     must agree on, built from crates.io into a cache directory kept
#     between runs (WASM_TOOLS_DIR, default ~/.cache/bevy_anyangle).
#
# Quick when everything is there already. Usage:
#
#   PATH="$(scripts/wasm-tools.sh):$PATH"
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "$@" >&2; }

# The target's standard library.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "== installing the Rust target wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown >&2
fi

# The wasm-bindgen version the crate's dependencies are locked to.
version=$(awk '
    $0 == "name = \"wasm-bindgen\"" { found = 1; next }
    found && /^version = / { gsub(/"/, "", $3); print $3; exit }
' Cargo.lock)
if [ -z "$version" ]; then
    log "no wasm-bindgen in Cargo.lock"
    exit 1
fi

root="${WASM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bevy_anyangle}/wasm-bindgen-$version"
bin="$root/bin"
have() {
    [ -x "$bin/wasm-bindgen-test-runner" ] &&
        [ "$("$bin/wasm-bindgen" --version 2>/dev/null)" = "wasm-bindgen $version" ]
}
if ! have; then
    log "== installing wasm-bindgen-cli $version into $root (a few minutes)"
    # Its own target directory, so that a CARGO_TARGET_DIR set for the
    # crate's builds is not mixed with the tool's. With the tool's own
    # Cargo.lock first; if a registry lacks a version locked there, with
    # the newest compatible dependencies instead.
    install() {
        CARGO_TARGET_DIR="$root/build" cargo install wasm-bindgen-cli \
            --version "=$version" --root "$root" --force "$@" >&2
    }
    if ! install --locked; then
        log "== wasm-bindgen-cli $version with its Cargo.lock failed; again without --locked"
        install
    fi
    rm -rf "$root/build"
    have
fi

# `wasm-bindgen-test-runner` runs the tests in Node.
if ! command -v node >/dev/null; then
    log "warning: no node on PATH; wasm-bindgen-test-runner needs it to run tests"
fi

echo "$bin"
