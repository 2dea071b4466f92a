// Smoke test of the package as Node loads it: initSync with the .wasm's
// bytes, one kernel translated, one error located. `npm test` after build.sh.
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { initSync, translate, version } from './index.js';

initSync({ module: readFileSync(new URL('./pkg/msl2wgsl_wasm_bg.wasm', import.meta.url)) });
assert.match(version(), /^\d+\.\d+\.\d+/);
const ok = translate(
  'kernel void twice(device float* v [[buffer(0)]], uint i [[thread_position_in_grid]]) { v[i] *= 2.0; }',
  { threadgroupSize: 32 },
);
assert.equal(ok.ok, true);
assert.match(ok.wgsl, /@workgroup_size\(32/);
assert.equal(ok.reflection.functions[0].name, 'twice');
assert.equal(ok.reflection.functions[0].arguments[0].binding.binding, 0);
const bad = translate('kernel void k(device float* v [[buffer(0)]]) { v[0] = nope; }', { name: 'bad.metal' });
assert.equal(bad.ok, false);
assert.equal(bad.diagnostics[0].code, 'E0301');
assert.equal(bad.diagnostics[0].line, 1);
console.log('ok: msl2wgsl', version());
