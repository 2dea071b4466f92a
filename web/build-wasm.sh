#!/usr/bin/env bash
# Builds msl2wgsl's translator as WebAssembly for the playground:
#   cargo build --profile $WASM_PROFILE --target wasm32-unknown-unknown   (in web/wasm)
#   wasm-bindgen --target web  →  web/playground/pkg/        (git-ignored)
# Needs the wasm32-unknown-unknown target (`rustup target add
# wasm32-unknown-unknown`) and wasm-bindgen-cli of the same version as the
# wasm-bindgen crate in web/wasm/Cargo.lock (web/ci-playground.sh installs it).
# Prints the .wasm size, raw and gzipped.
set -euo pipefail
web="$(cd "$(dirname "$0")" && pwd)"
cd "$web/wasm"
# WASM_PROFILE picks the cargo profile: `release` (the default: what the
# playground ships, size-optimised with LTO) or `ci` (web/wasm/Cargo.toml:
# no LTO, parallel code generation; for checks of behaviour, not of size).
profile=${WASM_PROFILE:-release}
cargo build --profile "$profile" --target wasm32-unknown-unknown
wasm="${CARGO_TARGET_DIR:-$web/wasm/target}/wasm32-unknown-unknown/$profile/msl2wgsl_wasm.wasm"
rm -rf "$web/playground/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$web/playground/pkg" "$wasm"
out="$web/playground/pkg/msl2wgsl_wasm_bg.wasm"
raw=$(wc -c <"$out")
gz=$(gzip -9 -c "$out" | wc -c)
echo "msl2wgsl_wasm_bg.wasm: $raw bytes ($((raw / 1024)) KiB), gzip -9: $gz bytes ($((gz / 1024)) KiB)"
