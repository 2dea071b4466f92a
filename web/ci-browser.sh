#!/usr/bin/env bash
# Browser-side checks of the WGSL the test suite emitted, then the
# conformance cases in headless Chromium. Run after the test step that
# dumped the WGSL:
#
#   MSL2WGSL_DUMP_WGSL=DIR cargo test      # (the lead's .ci/run does this)
#   web/ci-browser.sh DIR
#
# 1. Tint (Dawn's node bindings, npm `webgpu`): every dumped module
#    compiles and every entry point makes a pipeline (web/tint-check.mjs);
# 2. wgpu on the local adapter (lavapipe in CI): the same pipelines
#    (tests/dumped_pipelines.rs);
# 3. every conformance case in Chromium's WebGPU, checked as on wgpu
#    (tests/browser_conformance.rs, web/conformance/run.mjs).
#
# Needs node, /usr/bin/chromium (or CHROMIUM=...) and `npm ci` in web/.
set -euo pipefail

dir=${1:?usage: web/ci-browser.sh DUMP_DIR}
dir=$(cd "$dir" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ ! -d web/node_modules/webgpu ] || [ ! -d web/node_modules/playwright-core ]; then
    (cd web && npm ci)
fi
# The checks below translate too; they must not add to the folder they check.
unset MSL2WGSL_DUMP_WGSL
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/xdg-$(id -u)}
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

echo "== Tint: every dumped module and pipeline"
node web/tint-check.mjs "$dir"

echo "== wgpu: every dumped pipeline on the local adapter"
MSL2WGSL_CHECK_DUMP="$dir" MSL2WGSL_REQUIRE_GPU=1 \
    cargo test --test dumped_pipelines -- --nocapture

echo "== Chromium WebGPU: the conformance cases"
MSL2WGSL_BROWSER=1 cargo test --test browser_conformance -- --nocapture
