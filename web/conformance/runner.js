// The page side of the browser conformance runner: runs one prepared job
// (see src/runner/conformance/browser.rs, `BrowserJob`) in this page's
// WebGPU and returns the bytes read back. `run.mjs` drives it through
// `window.conformance`.

/** Optional features a translated kernel may need; requested when present. */
const WANTED = ['shader-f16', 'subgroups'];

const statusLine = document.getElementById('status');

function fromHex(text) {
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(2 * i, 2), 16);
  return out;
}

function toHex(bytes) {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

async function openDevice() {
  if (!navigator.gpu) throw new Error('navigator.gpu is missing: WebGPU is off in this browser');
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('requestAdapter() returned null');
  const requiredFeatures = WANTED.filter((f) => adapter.features.has(f));
  // WebGPU's default limits, as a page gets without asking: a job that
  // needs more says so (its `requiredLimits`) and gets a device of its own.
  const device = await adapter.requestDevice({ requiredFeatures });
  const info = adapter.info || {};
  const description = [info.vendor, info.architecture, info.device, info.description]
    .filter((s) => s)
    .join(' / ');
  return { adapter, device, description };
}

const ready = openDevice();

/** The adapter's description and features (the page's report). */
async function adapterReport() {
  const { adapter, description } = await ready;
  return { adapter: description || 'unknown adapter', features: [...adapter.features].sort() };
}

/** Pops the three error scopes pushed by `runJob`; the first error, if any. */
async function popScopes(device) {
  const errors = [];
  for (let i = 0; i < 3; i++) errors.push(await device.popErrorScope());
  const error = errors.find((e) => e);
  return error ? error.message : null;
}

function makeBuffer(device, kind, bytes) {
  const usage =
    (kind === 'uniform' ? GPUBufferUsage.UNIFORM : GPUBufferUsage.STORAGE) |
    GPUBufferUsage.COPY_SRC |
    GPUBufferUsage.COPY_DST;
  const buffer = device.createBuffer({ size: bytes.length, usage, mappedAtCreation: true });
  new Uint8Array(buffer.getMappedRange()).set(bytes);
  buffer.unmap();
  return buffer;
}

/** One bind group per group index up to the highest used, for one part. */
function bindGroups(device, pipeline, job, buffers, uniform) {
  const count = Math.max(0, ...job.bindings.map((b) => b.group + 1));
  const groups = [];
  for (let g = 0; g < count; g++) {
    const entries = job.bindings
      .filter((b) => b.group === g)
      .map((b) => ({
        binding: b.binding,
        resource: { buffer: b.buffer === null ? uniform : buffers.get(b.buffer) },
      }));
    groups.push(device.createBindGroup({ layout: pipeline.getBindGroupLayout(g), entries }));
  }
  return groups;
}

/** Compiles, dispatches every part and reads the buffers back. */
async function execute(device, job, code) {
  const module = device.createShaderModule({ code, label: job.name });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length) {
    throw new Error(errors.map((m) => `WGSL ${m.lineNum}:${m.linePos}: ${m.message}`).join('\n'));
  }
  const pipeline = await device.createComputePipelineAsync({
    layout: 'auto',
    compute: { module, entryPoint: job.entryPoint },
  });
  const buffers = new Map();
  for (const b of job.bindings) {
    if (b.buffer !== null) buffers.set(b.buffer, makeBuffer(device, b.kind, fromHex(job.buffers[b.buffer])));
  }
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  for (const part of job.parts) {
    const uniform = makeBuffer(device, 'uniform', fromHex(part.dispatchUniform));
    bindGroups(device, pipeline, job, buffers, uniform).forEach((g, i) => pass.setBindGroup(i, g));
    pass.dispatchWorkgroups(...part.groups);
  }
  pass.end();
  const staging = new Map();
  for (const [index, buffer] of buffers) {
    const copy = device.createBuffer({
      size: buffer.size,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    encoder.copyBufferToBuffer(buffer, 0, copy, 0, buffer.size);
    staging.set(index, copy);
  }
  device.queue.submit([encoder.finish()]);
  const out = {};
  for (const [index, copy] of staging) {
    await copy.mapAsync(GPUMapMode.READ);
    const len = job.readBack[index];
    out[index] = toHex(new Uint8Array(copy.getMappedRange()).slice(0, len));
    copy.unmap();
  }
  return out;
}

/**
 * The device for `job`: the shared one at default limits, or, when the job's
 * reflection names limits above them, a device asking for exactly those
 * (an error naming the limit when the adapter cannot give it).
 */
async function deviceFor(job) {
  const { adapter, device } = await ready;
  const needed = Object.entries(job.requiredLimits || {}).filter(([k, v]) => device.limits[k] < v);
  if (!needed.length) return device;
  const short = needed.find(([k, v]) => !(adapter.limits[k] >= v));
  if (short) {
    throw new Error(`the kernel needs ${short[0]} = ${short[1]}; the adapter allows ${adapter.limits[short[0]]}`);
  }
  const requiredFeatures = [...device.features];
  return adapter.requestDevice({ requiredFeatures, requiredLimits: Object.fromEntries(needed) });
}

/** Runs one job: `{ buffers, error, usedF32Half }`. */
async function runJob(job) {
  let device;
  try {
    device = await deviceFor(job);
  } catch (e) {
    return { buffers: {}, error: String(e.message || e), usedF32Half: false };
  }
  statusLine.textContent = `running ${job.name}`;
  const usedF32Half = job.wgslWithoutF16 !== null && !device.features.has('shader-f16');
  const code = usedF32Half ? job.wgslWithoutF16 : job.wgsl;
  const missing = job.features.filter((f) => !device.features.has(f) && !(usedF32Half && f === 'shader-f16'));
  if (missing.length) {
    return { buffers: {}, error: `the adapter lacks ${missing.join(', ')}`, usedF32Half };
  }
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('internal');
  device.pushErrorScope('validation');
  let buffers = {};
  let error = null;
  try {
    buffers = await execute(device, job, code);
  } catch (e) {
    error = String(e.message || e);
  }
  const scoped = await popScopes(device);
  error = error || scoped;
  statusLine.textContent = `done ${job.name}`;
  return { buffers: error ? {} : buffers, error, usedF32Half };
}

window.conformance = { ready: ready.then(() => true), adapterReport, runJob };
ready.then(
  () => (statusLine.textContent = 'ready'),
  (e) => (statusLine.textContent = `no WebGPU: ${e.message}`),
);
