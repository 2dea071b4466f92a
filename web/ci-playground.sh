#!/usr/bin/env bash
# CI for the playground: builds msl2wgsl as WebAssembly (installing the
# wasm32 target, wasm-bindgen-cli and Chromium when missing) and runs the
# bindings' unit tests and the end-to-end test in headless Chromium on SwiftShader's WebGPU adapter.
# Exit status: the test's (0 when every check passed).
set -euo pipefail
web="$(cd "$(dirname "$0")" && pwd)"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen-cli must be the version of the wasm-bindgen crate in the lock file.
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print }' "$web/wasm/Cargo.lock")
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have" != "$want" ]; then
    # --locked first; a registry mirror without one of its pinned
    # dependencies' versions makes that fail, then resolve afresh.
    # A debug build: it compiles in a third of a release build's time on
    # CI's two cores, and it only post-processes one small module.
    # Without debug information: less to generate and link, and nobody
    # debugs the tool here.
    export CARGO_PROFILE_DEV_DEBUG=false
    cargo install wasm-bindgen-cli --debug --version "$want" --locked \
        || cargo install wasm-bindgen-cli --debug --version "$want"
    unset CARGO_PROFILE_DEV_DEBUG
fi

if [ ! -x /usr/bin/chromium ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends chromium
fi

if [ ! -d "$web/node_modules/playwright-core" ]; then
    (cd "$web" && npm ci --no-audit --no-fund)
fi

# The bindings' own tests (options, diagnostics), natively.
(cd "$web/wasm" && cargo test --quiet)
WASM_PROFILE=${WASM_PROFILE:-ci} bash "$web/build-wasm.sh"
node "$web/tests/playground.test.mjs"
