#!/usr/bin/env bash
# Builds the WebAssembly translator into web/npm/pkg/ for `npm pack`:
# web/build-wasm.sh (cargo build --release --target wasm32-unknown-unknown
# in web/wasm, then wasm-bindgen --target web), copied here.
# Needs what web/build-wasm.sh needs: `rustup target add
# wasm32-unknown-unknown` and wasm-bindgen-cli of the version of the
# wasm-bindgen crate in web/wasm/Cargo.lock.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/../build-wasm.sh"
rm -rf "$here/pkg"
mkdir -p "$here/pkg"
cp "$here/../playground/pkg/msl2wgsl_wasm.js" "$here/../playground/pkg/msl2wgsl_wasm_bg.wasm" "$here/pkg/"
