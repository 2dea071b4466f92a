// Checks every WGSL module dumped with MSL2WGSL_DUMP_WGSL=DIR (see
// src/library/dump.rs) with Tint, the WGSL compiler of Chromium's WebGPU,
// through Dawn's node bindings (npm `webgpu`, null backend: Tint's front end
// and Dawn's validation run, no GPU is needed).
//
//   node web/tint-check.mjs DIR
//
// For each DIR/<hash>.wgsl of target "webgpu" (the sidecar DIR/<hash>.json
// says): createShaderModule + getCompilationInfo, then one pipeline per
// entry point: compute with layout 'auto'; vertex with its sidecar vertex
// buffers and a depth target (no fragment stage); fragment with the
// sidecar's stub vertex module, its colour targets and a depth target.
// Modules of target "wgpu" may use wgpu's extensions and are skipped.
//
// Prints one line per failure (`FAIL FILE: entry: message`), one per
// module over a WebGPU size limit (`LIMIT ...`, not a failure: see LIMITS),
// one per module refused for a barrier the translator warned about
// (`WARNED ...`, not a failure: W0418)
// and a summary; exits 1 if anything failed, 2 on bad usage or an empty
// folder. Modules with `loweredForWgpu` are the WebGPU text of modules the
// GPU tests translated for wgpu (see src/library/dump.rs).

import { create, globals } from 'webgpu';
import { readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);

Object.assign(globalThis, globals);

/** Prints a line at once: Dawn may abort the process at exit, losing
 * anything console.log still buffers for a pipe. */
function say(line) {
  writeSync(1, `${line}\n`);
}

/** Optional features the translator may need; all requested when present. */
const WANTED = ['shader-f16', 'subgroups', 'dual-source-blending', 'clip-distances', 'primitive-index'];
/** Every object made, kept alive to the end of the (child) process. */
const keep = [];
/** Every render pipeline gets this depth target (fragments may write depth). */
const DEPTH = { format: 'depth32float', depthWriteEnabled: true, depthCompare: 'always' };

async function openDevice() {
  const gpu = create(['backend=null']);
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('no Dawn adapter (backend=null)');
  const requiredFeatures = WANTED.filter((f) => adapter.features.has(f));
  const missing = WANTED.filter((f) => !adapter.features.has(f));
  // The adapter's own limits: Metal kernels use more than WebGPU's defaults.
  const requiredLimits = {};
  for (const key in adapter.limits) {
    if (typeof adapter.limits[key] === 'number') requiredLimits[key] = adapter.limits[key];
  }
  const device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
  // The instance must outlive the device: when the garbage collector takes
  // it, Dawn's node bindings crash (futex and mutex assertions, segfaults).
  keep.push(gpu, adapter);
  return { device, requiredFeatures, missing };
}

/** The compilation errors of a module, as one string ('' when none). */
async function compileErrors(module) {
  const info = await module.getCompilationInfo();
  return info.messages
    .filter((m) => m.type === 'error')
    .map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`)
    .join('\n');
}

function blendFor(target) {
  if (!target.dualSource) return undefined;
  const component = { operation: 'add', srcFactor: 'one', dstFactor: 'src1' };
  return { color: component, alpha: component };
}

/** The descriptor of one entry point's pipeline. */
function pipelineDescriptor(device, module, entry, stubModules) {
  const constants = entry.constants;
  if (entry.stage === 'compute') {
    return ['compute', { layout: 'auto', compute: { module, entryPoint: entry.wgslEntryPoint, constants } }];
  }
  if (entry.stage === 'vertex') {
    return ['render', {
      layout: 'auto',
      vertex: { module, entryPoint: entry.wgslEntryPoint, constants, buffers: entry.vertexBuffers },
      depthStencil: DEPTH,
    }];
  }
  if (!entry.stubVertex) throw new Error('the sidecar has no stub vertex stage for this fragment');
  let stub = stubModules.get(entry.stubVertex);
  if (!stub) {
    stub = device.createShaderModule({ code: entry.stubVertex });
    stubModules.set(entry.stubVertex, stub);
  }
  const targets = entry.targets.map((t) => t && { format: t.format, blend: blendFor(t) });
  return ['render', {
    layout: 'auto',
    vertex: { module: stub, entryPoint: 'stub_vertex' },
    fragment: { module, entryPoint: entry.wgslEntryPoint, constants, targets },
    depthStencil: DEPTH,
  }];
}

async function checkFile(device, dir, name, stubModules, counts) {
  const sidecar = JSON.parse(readFileSync(join(dir, name.replace(/\.wgsl$/, '.json')), 'utf8'));
  if (sidecar.target !== 'webgpu') {
    counts.skipped += 1;
    return [];
  }
  counts.modules += 1;
  const code = readFileSync(join(dir, name), 'utf8');
  // Caught in a scope: an uncaptured error would only reach the console.
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code, label: name });
  keep.push(module);
  const errors = await compileErrors(module);
  const scoped = await device.popErrorScope();
  const message = errors || (scoped && scoped.message);
  // The translator warned that browsers refuse this module (W0418).
  if (message && sidecar.nonuniformBarrier && message.includes(NONUNIFORM_BARRIER)) {
    return [`${name}: ${WARNED} ${message}`];
  }
  if (message) return [`${name}: ${message}`];
  const failures = [];
  for (const entry of sidecar.entryPoints) {
    counts.entryPoints += 1;
    let error = null;
    device.pushErrorScope('validation');
    try {
      const [kind, desc] = pipelineDescriptor(device, module, entry, stubModules);
      keep.push(kind === 'compute' ? device.createComputePipeline(desc) : device.createRenderPipeline(desc));
    } catch (e) {
      error = e.message;
    }
    const scoped = await device.popErrorScope();
    error = error || (scoped && scoped.message);
    if (error) failures.push(`${name}: ${entry.wgslEntryPoint} (${entry.stage}): ${error}`);
  }
  return failures;
}

/**
 * Messages of Tint's and Dawn's size limits, reported as LIMIT (not failing):
 * the input exceeds what WebGPU guarantees, and the translator warns about
 * all but the third (src/library/limits.rs).
 */
const LIMITS = [
  'larger than the maximum allowed', // workgroup storage over 16 KiB
  'must be less than 65536', // thread-memory arrays of 65536 elements or more
  'exceeds limit of 127', // statement nesting or expression chains
  'exceeds the maximum per-stage limit', // bindings per stage (W0405, requiredLimits)
  'that exceeds the maximum allowed', // workgroup sizes (W0405, requiredLimits)
];

/**
 * Tint's message for a barrier in non-uniform control flow: expected (not
 * failing, reported as WARNED) in a module whose sidecar says the
 * translator warned about it (`nonuniformBarrier`, W0418).
 */
const NONUNIFORM_BARRIER = 'must only be called from uniform control flow';
/** The mark of such a failure, between the child and the parent. */
const WARNED = '(W0418)';

/** Files checked per child process. */
const CHUNK = 100;
/** Milliseconds a child may run. */
const CHILD_TIMEOUT = 60_000;

/**
 * Child mode (`--child DIR FILE...`): checks the files on one device and
 * prints one JSON line per file: `{ name, failures, counts }`.
 */
async function child(dir, files) {
  const { device } = await openDevice();
  const stubModules = new Map();
  for (const name of files) {
    const counts = { modules: 0, entryPoints: 0, skipped: 0 };
    const failures = await checkFile(device, dir, name, stubModules, counts);
    say(JSON.stringify({ name, failures, counts }));
  }
  device.destroy();
  process.exit(0);
}

/** Runs a child on `files`; the results of the files it finished. */
function runChild(dir, files) {
  const out = spawnSync(process.execPath, [SELF, '--child', dir, ...files], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    // A hang counts as a crash: a child gets a minute.
    timeout: CHILD_TIMEOUT,
    killSignal: 'SIGKILL',
  });
  const results = new Map();
  for (const line of (out.stdout || '').split('\n')) {
    if (line.startsWith('{')) {
      const r = JSON.parse(line);
      results.set(r.name, r);
    }
  }
  return results;
}

/**
 * Files are checked in child processes of CHUNK files, so that a crash or a
 * hang of Tint on one module (a Tint bug) is reported as a failure of that
 * module: a file whose child died first is checked again alone (twice at
 * most).
 */
async function main() {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node web/tint-check.mjs DIR');
    process.exit(2);
  }
  const files = readdirSync(dir).filter((f) => f.endsWith('.wgsl') && !f.startsWith('.')).sort();
  if (files.length === 0) {
    console.error(`tint-check: no .wgsl files in ${dir}`);
    process.exit(2);
  }
  const { device, requiredFeatures, missing } = await openDevice();
  device.destroy();
  say(`tint-check: Dawn null device with ${requiredFeatures.join(', ') || 'no optional features'}`);
  if (missing.length) say(`tint-check: missing features: ${missing.join(', ')}`);
  const results = new Map();
  for (let i = 0; i < files.length; i += CHUNK) {
    for (const [k, v] of runChild(dir, files.slice(i, i + CHUNK))) results.set(k, v);
  }
  let retried = 0;
  for (const name of files) {
    for (let attempt = 0; attempt < 2 && !results.has(name); attempt++) {
      retried += 1;
      for (const [k, v] of runChild(dir, [name])) results.set(k, v);
    }
  }
  const counts = { modules: 0, entryPoints: 0, skipped: 0 };
  const failures = [];
  const overLimits = [];
  const warned = [];
  for (const name of files) {
    const r = results.get(name);
    if (!r) {
      failures.push(`${name}: Dawn crashed while checking it (alone, twice)`);
      continue;
    }
    for (const f of r.failures) {
      if (f.includes(WARNED)) warned.push(f);
      else (LIMITS.some((l) => f.includes(l)) ? overLimits : failures).push(f);
    }
    for (const key in counts) counts[key] += r.counts[key];
  }
  for (const f of overLimits) say(`LIMIT ${f}`);
  for (const f of warned) say(`WARNED ${f}`);
  for (const f of failures) say(`FAIL ${f}`);
  say(
    `tint-check: ${counts.modules} webgpu modules, ${counts.entryPoints} entry points, ` +
      `${counts.skipped} wgpu-target modules skipped, ${overLimits.length} over limits, ` +
      `${warned.length} refused as warned (W0418), ` +
      `${failures.length} failed (${retried} files checked again after a crash)`,
  );
  process.exit(failures.length ? 1 : 0);
}

try {
  if (process.argv[2] === '--child') await child(process.argv[3], process.argv.slice(4));
  else await main();
} catch (e) {
  console.error(`tint-check: ${e.stack || e}`);
  process.exit(1);
}
