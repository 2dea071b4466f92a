// Runs translated functions on the page's WebGPU device: a kernel as
// dispatchThreads(N) with generated buffers, or a vertex + fragment pair
// drawn into a canvas. Bindings come from the reflection (Metal index →
// group/binding) and from the per-function WGSL's declarations (which say
// how each binding is declared, so the layouts are explicit and exact).

import {
  leavesOf, formatLeaves, randomSource, generatedValue, writeLeaf, readLeaf, formatElement,
} from './buffers.js';

/** WebGPU features the playground asks for when the adapter has them. */
const OPTIONAL_FEATURES = ['shader-f16', 'subgroups'];

/** wgpu feature names (the reflection's) → WebGPU names. */
const FEATURE_NAMES = { 'shader-f16': 'shader-f16', subgroup: 'subgroups', subgroups: 'subgroups' };

/** The limits a function's `requiredLimits` may name (src/library/limits.rs). */
const REFLECTED_LIMITS = [
  'maxStorageBuffersPerShaderStage', 'maxUniformBuffersPerShaderStage',
  'maxSampledTexturesPerShaderStage', 'maxStorageTexturesPerShaderStage', 'maxSamplersPerShaderStage',
  'maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY', 'maxComputeWorkgroupSizeZ',
];

let devicePromise = null;

/** The page's device (one for the page), with every optional feature the adapter has. */
export function gpu() {
  if (!devicePromise) {
    devicePromise = (async () => {
      if (!navigator.gpu) throw new Error('this browser has no WebGPU (navigator.gpu)');
      const adapter = await navigator.gpu.requestAdapter();
      if (!adapter) throw new Error('no WebGPU adapter');
      const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
      // The adapter's own values of the limits reflection's `requiredLimits`
      // may name, so that functions over WebGPU's defaults run where they can.
      const requiredLimits = {};
      for (const key of REFLECTED_LIMITS) {
        if (typeof adapter.limits[key] === 'number') requiredLimits[key] = adapter.limits[key];
      }
      const device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
      device.lost.then((info) => console.warn(`WebGPU device lost: ${info.reason} ${info.message}`));
      device.addEventListener("uncapturederror", (e) => console.warn(`WebGPU error: ${e.error.message}`));
      const info = adapter.info || {};
      const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(' ') || 'WebGPU adapter';
      return { adapter, device, name };
    })();
    devicePromise.catch(() => { devicePromise = null; });
  }
  return devicePromise;
}

/** `@group(g) @binding(b) var<space, access> name: type;` of a WGSL module. */
export function declaredBindings(wgsl) {
  const pattern = /@group\((\d+)\)\s*@binding\((\d+)\)\s*var(?:<([^>]*)>)?\s+(\w+)\s*:\s*([^;]+);/g;
  const out = [];
  for (const m of wgsl.matchAll(pattern)) {
    const [space, access] = (m[3] || '').split(',').map((s) => s.trim());
    out.push({ group: Number(m[1]), binding: Number(m[2]), space, access, name: m[4], type: m[5].trim() });
  }
  return out;
}

/** `texture_2d<f32>`'s sample type. */
function sampleType(type) {
  if (/<\s*u32\s*>/.test(type)) return 'uint';
  if (/<\s*i32\s*>/.test(type)) return 'sint';
  return 'float';
}

const STORAGE_ACCESS = { read: 'read-only', write: 'write-only', read_write: 'read-write' };

function layoutEntry(decl, visibility) {
  const storage = /^texture_storage_2d<\s*(\w+)\s*,\s*(\w+)\s*>$/.exec(decl.type);
  if (storage) {
    return { binding: decl.binding, visibility, storageTexture: { format: storage[1], access: STORAGE_ACCESS[storage[2]] } };
  }
  if (/^texture_2d</.test(decl.type)) {
    return { binding: decl.binding, visibility, texture: { sampleType: sampleType(decl.type) } };
  }
  if (decl.type === 'sampler') return { binding: decl.binding, visibility, sampler: { type: 'filtering' } };
  if (decl.space === 'uniform') return { binding: decl.binding, visibility, buffer: { type: 'uniform' } };
  if (decl.space === 'storage') {
    const type = decl.access === 'read_write' ? 'storage' : 'read-only-storage';
    return { binding: decl.binding, visibility, buffer: { type } };
  }
  throw new Error(`the playground cannot bind \`${decl.name}: ${decl.type}\` (it binds buffers, 2D textures and samplers)`);
}

function checkFeatures(fn, device) {
  for (const [limit, needed] of Object.entries(fn.requiredLimits || {})) {
    if (typeof device.limits[limit] === 'number' && device.limits[limit] < needed) {
      throw new Error(`\`${fn.name}\` needs ${limit} of ${needed}, but this adapter allows ${device.limits[limit]}`);
    }
  }
  for (const feature of fn.requiredFeatures || []) {
    const name = FEATURE_NAMES[feature];
    if (!name || !device.features.has(name)) {
      throw new Error(`\`${fn.name}\` needs the ${feature} feature, which this adapter does not have`);
    }
  }
}

/** Pipeline constants for the required function constants: 0 (false). */
function functionConstants(fn) {
  const constants = {};
  for (const c of fn.functionConstants || []) {
    if (c.required) constants[String(c.index)] = 0;
  }
  return constants;
}

/** The bytes and leaves of one buffer argument, filled as the run panel says. */
function argumentBuffer(arg, stage, settings) {
  const info = arg.buffer;
  const leaves = leavesOf(info.dataType, info.structType, info.arrayType);
  if (!leaves || leaves.length === 0) {
    throw new Error(`cannot generate \`${info.dataType}\` for buffer \`${arg.name}\``);
  }
  const preset = settings.presets?.[`${stage}:${arg.index}`];
  const count = preset ? Math.max(1, Math.ceil(preset.length / leaves.length))
    : info.isPointer ? settings.n : 1;
  const bytes = new ArrayBuffer(roundUp(info.dataSize * count + 16, 16));
  const view = new DataView(bytes);
  const random = randomSource(settings.seed * 7919 + arg.index + (stage === 'fragment' ? 4099 : 0));
  const isCount = !info.isPointer && leaves.length === 1 && !leaves[0].kind.startsWith('f');
  for (let i = 0; i < count; i++) {
    leaves.forEach((leaf, l) => {
      const value = preset ? preset[i * leaves.length + l] ?? 0
        : isCount ? settings.n
          : generatedValue(settings.mode, leaf, i, arg.index, random);
      writeLeaf(view, i * info.dataSize + leaf.offset, leaf.kind, value);
    });
  }
  return { arg, stage, leaves, count, stride: info.dataSize, bytes };
}

function roundUp(x, to) {
  return Math.ceil(x / to) * to;
}

/** The first `k` elements of a buffer as text. */
function shownValues(bytes, item, k) {
  const view = new DataView(bytes);
  const out = [];
  for (let i = 0; i < Math.min(k, item.count); i++) {
    out.push(formatElement(item.leaves.map((leaf) => readLeaf(view, i * item.stride + leaf.offset, leaf.kind))));
  }
  return out;
}

async function withValidation(device, what, f) {
  device.pushErrorScope('validation');
  let result;
  try {
    result = await f();
  } finally {
    const error = await device.popErrorScope();
    if (error) throw new Error(`${what}: ${error.message}`);
  }
  return result;
}

async function shaderModule(device, code, label) {
  const module = device.createShaderModule({ code, label });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length) {
    throw new Error(`the browser rejected the WGSL of ${label}:\n${errors.map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`).join('\n')}`);
  }
  return module;
}

/** Bind group layouts (explicit, from the declarations) and the bind groups for `items`. */
function bindGroups(device, declsByVisibility, resources) {
  const groups = new Map();
  for (const { decls, visibility } of declsByVisibility) {
    for (const decl of decls) {
      if (!groups.has(decl.group)) groups.set(decl.group, new Map());
      const entries = groups.get(decl.group);
      const previous = entries.get(decl.binding);
      const entry = layoutEntry(decl, visibility);
      if (previous) entry.visibility |= previous.entry.visibility;
      entries.set(decl.binding, { entry, decl });
    }
  }
  const count = groups.size ? Math.max(...groups.keys()) + 1 : 0;
  const layouts = [];
  const bound = [];
  for (let g = 0; g < count; g++) {
    const entries = [...(groups.get(g) || new Map()).values()];
    const layout = device.createBindGroupLayout({ entries: entries.map((e) => e.entry) });
    layouts.push(layout);
    const bindings = entries.map(({ entry, decl }) => {
      const resource = resources.get(`${g}:${entry.binding}`);
      if (!resource) throw new Error(`nothing to bind at @group(${g}) @binding(${entry.binding}) (\`${decl.name}\`)`);
      return { binding: entry.binding, resource: resource instanceof GPUBuffer ? { buffer: resource } : resource };
    });
    bound.push(device.createBindGroup({ layout, entries: bindings }));
  }
  return { layout: device.createPipelineLayout({ bindGroupLayouts: layouts }), groups: bound };
}

/** GPU buffers for generated argument contents; `resources` maps "g:b" to each. */
function uploadArguments(device, items, resources) {
  for (const item of items) {
    // `constant` arguments may be uniforms (reflection's `bindingType`).
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    item.gpuBuffer = device.createBuffer({ size: item.bytes.byteLength, usage });
    device.queue.writeBuffer(item.gpuBuffer, 0, item.bytes);
    const b = item.arg.binding;
    resources.set(`${b.group}:${b.binding}`, item.gpuBuffer);
  }
}

async function readBack(device, buffers) {
  const encoder = device.createCommandEncoder();
  const staging = buffers.map((b) => {
    const s = device.createBuffer({ size: b.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(b, 0, s, 0, b.size);
    return s;
  });
  device.queue.submit([encoder.finish()]);
  return Promise.all(staging.map(async (s) => {
    await s.mapAsync(GPUMapMode.READ);
    const copy = s.getMappedRange().slice(0);
    s.destroy();
    return copy;
  }));
}

function bufferArguments(fn, stage, settings, texturesBound = false) {
  const items = [];
  for (const arg of fn.arguments) {
    if (arg.type === 'texture' || arg.type === 'sampler') {
      if (arg.active && !texturesBound) throw new Error(`the playground runs buffers only: \`${fn.name}\` uses ${arg.type} \`${arg.name}\``);
      continue;
    }
    if (arg.type !== 'buffer' || !arg.binding) continue;
    items.push(argumentBuffer(arg, stage, settings));
  }
  return items;
}

/** The 48-byte dispatch uniform: grid size, group offset, threadgroups (vec4<u32> each). */
function dispatchUniform(device, grid, threadgroups) {
  const words = new Uint32Array(12);
  words.set(grid, 0);
  words.set(threadgroups, 8);
  const buffer = device.createBuffer({ size: 48, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(buffer, 0, words);
  return buffer;
}

/**
 * Runs kernel `fn` (reflection) whose own module is `wgsl` over a grid of
 * `settings.n` threads. Resolves to `[{name, index, access, type, input, output}]`
 * (the first `settings.k` elements, as text; `output` for written buffers).
 */
export async function runKernel(fn, wgsl, settings) {
  const { device } = await gpu();
  checkFeatures(fn, device);
  const size = fn.workgroupSize || [64, 1, 1];
  const threadgroups = [Math.ceil(settings.n / size[0]), 1, 1];
  if (threadgroups[0] > device.limits.maxComputeWorkgroupsPerDimension) {
    throw new Error(`N = ${settings.n} needs ${threadgroups[0]} threadgroups, over this device's limit`);
  }
  const items = bufferArguments(fn, 'kernel', settings);
  const resources = new Map();
  uploadArguments(device, items, resources);
  if (fn.dispatchBinding) {
    const d = fn.dispatchBinding;
    resources.set(`${d.group}:${d.binding}`, dispatchUniform(device, [settings.n, 1, 1], threadgroups));
  }
  await withValidation(device, 'compute pass', async () => {
    const module = await shaderModule(device, wgsl, fn.name);
    const decls = declaredBindings(wgsl);
    const { layout, groups } = bindGroups(device, [{ decls, visibility: GPUShaderStage.COMPUTE }], resources);
    const pipeline = await device.createComputePipelineAsync({
      layout,
      compute: { module, entryPoint: fn.wgslEntryPoint, constants: functionConstants(fn) },
    });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    groups.forEach((g, i) => pass.setBindGroup(i, g));
    pass.dispatchWorkgroups(...threadgroups);
    pass.end();
    device.queue.submit([encoder.finish()]);
  });
  const after = await readBack(device, items.map((i) => i.gpuBuffer));
  items.forEach((i) => i.gpuBuffer.destroy());
  return shownArguments(items, after, settings.k);
}

function shownArguments(items, after, k) {
  return items.map((item, i) => ({
    stage: item.stage,
    name: item.arg.name,
    index: item.arg.index,
    access: item.arg.access,
    type: item.arg.buffer.dataType,
    count: item.count,
    input: shownValues(item.bytes, item, k),
    output: item.arg.access === 'read' ? null : shownValues(after[i], item, k),
  }));
}

/** The `[[stage_in]]` vertex buffer: `count` vertices in the reflection's packed layout. */
function stageInBuffer(device, fn, count, settings) {
  const attributes = fn.vertexAttributes || [];
  if (attributes.length === 0) return null;
  const stride = fn.vertexStride;
  if (stride % 4 !== 0) throw new Error(`a ${stride}-byte [[stage_in]] vertex is not 4-byte aligned, as WebGPU needs`);
  const bytes = new ArrayBuffer(stride * count);
  const view = new DataView(bytes);
  const random = randomSource(settings.seed * 31 + 17);
  const preset = settings.presets?.['stage_in'];
  const leavesPerAttribute = attributes.map((a) => {
    const leaves = formatLeaves(a.format, a.offset);
    if (!leaves) throw new Error(`cannot generate vertex format ${a.format}`);
    return leaves;
  });
  const allLeaves = leavesPerAttribute.flat();
  for (let v = 0; v < count; v++) {
    allLeaves.forEach((leaf, l) => {
      const value = preset ? preset[v * allLeaves.length + l] ?? 0
        : generatedValue(settings.mode, leaf, v, 0, random);
      writeLeaf(view, v * stride + leaf.offset, leaf.kind, value);
    });
  }
  const buffer = device.createBuffer({ size: bytes.byteLength, usage: GPUBufferUsage.VERTEX | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(buffer, 0, bytes);
  const layout = {
    arrayStride: stride,
    attributes: attributes.map((a) => ({ shaderLocation: a.index, offset: a.offset, format: a.format })),
  };
  return { buffer, layout };
}

/**
 * Draws `settings.vertexCount` vertices (a triangle list) with vertex
 * function `vertex` and fragment function `fragment` into `canvas`. Resolves
 * to the buffers shown as for `runKernel`.
 */
export async function runRender(vertex, fragment, vertexWgsl, fragmentWgsl, canvas, settings) {
  const { device } = await gpu();
  checkFeatures(vertex, device);
  checkFeatures(fragment, device);
  const items = [
    ...bufferArguments(vertex, 'vertex', settings),
    ...bufferArguments(fragment, 'fragment', settings),
  ];
  const resources = new Map();
  uploadArguments(device, items, resources);
  // An offscreen target read back into a 2D canvas: headless Chromium on
  // SwiftShader destroys the device when a WebGPU canvas is presented.
  const format = 'rgba8unorm';
  const target = device.createTexture({
    size: [canvas.width, canvas.height], format,
    usage: GPUTextureUsage.RENDER_ATTACHMENT | GPUTextureUsage.COPY_SRC,
  });
  await withValidation(device, 'render pass', async () => {
    const vertexModule = await shaderModule(device, vertexWgsl, vertex.name);
    const fragmentModule = await shaderModule(device, fragmentWgsl, fragment.name);
    const { layout, groups } = bindGroups(device, [
      { decls: declaredBindings(vertexWgsl), visibility: GPUShaderStage.VERTEX },
      { decls: declaredBindings(fragmentWgsl), visibility: GPUShaderStage.FRAGMENT },
    ], resources);
    const stageIn = stageInBuffer(device, vertex, settings.vertexCount, settings);
    const targets = [];
    for (const output of fragment.colorOutputs || [{ index: 0 }]) targets[output.index] = null;
    targets[0] = { format };
    const pipeline = await device.createRenderPipelineAsync({
      layout,
      vertex: {
        module: vertexModule, entryPoint: vertex.wgslEntryPoint,
        constants: functionConstants(vertex), buffers: stageIn ? [stageIn.layout] : [],
      },
      fragment: {
        module: fragmentModule, entryPoint: fragment.wgslEntryPoint,
        constants: functionConstants(fragment), targets,
      },
      primitive: { topology: 'triangle-list' },
    });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginRenderPass({
      colorAttachments: [{
        view: target.createView(),
        clearValue: { r: 0, g: 0, b: 0, a: 1 }, loadOp: 'clear', storeOp: 'store',
      }],
    });
    pass.setPipeline(pipeline);
    groups.forEach((g, i) => pass.setBindGroup(i, g));
    if (stageIn) pass.setVertexBuffer(0, stageIn.buffer);
    pass.draw(settings.vertexCount);
    pass.end();
    device.queue.submit([encoder.finish()]);
  });
  await showTexture(device, target, canvas);
  target.destroy();
  const after = await readBack(device, items.map((i) => i.gpuBuffer));
  items.forEach((i) => i.gpuBuffer.destroy());
  return shownArguments(items, after, settings.k);
}

/** Copies an rgba8unorm texture into `canvas` (2D) at its size. */
async function showTexture(device, texture, canvas) {
  const { width, height } = canvas;
  const bytesPerRow = roundUp(width * 4, 256);
  const staging = device.createBuffer({ size: bytesPerRow * height, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyTextureToBuffer({ texture }, { buffer: staging, bytesPerRow }, [width, height]);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const rows = new Uint8Array(staging.getMappedRange());
  const pixels = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    pixels.set(rows.subarray(y * bytesPerRow, y * bytesPerRow + width * 4), y * width * 4);
  }
  staging.destroy();
  canvas.getContext('2d').putImageData(new ImageData(pixels, width, height), 0, 0);
}

/** Whether kernel `fn` is a texture filter: it has a texture argument. */
export function isFilter(fn) {
  return fn?.stage === 'kernel' && fn.arguments.some((a) => a.type === 'texture' && a.binding);
}

/**
 * Runs texture filter `fn` (a kernel) over the pixels of canvas `input`, one
 * thread per pixel: textures it reads get the image, textures it writes an
 * rgba8unorm texture of its size, shown in canvas `output` afterwards.
 * Buffers are filled as for `runKernel`; resolves to them shown likewise.
 */
export async function runFilter(fn, wgsl, input, output, settings) {
  const { device } = await gpu();
  checkFeatures(fn, device);
  const { width, height } = input;
  const size = fn.workgroupSize || [8, 8, 1];
  const grid = [width, height, 1];
  const threadgroups = grid.map((g, i) => Math.ceil(g / size[i]));
  const items = bufferArguments(fn, 'kernel', settings, true);
  const resources = new Map();
  uploadArguments(device, items, resources);
  if (fn.dispatchBinding) {
    const d = fn.dispatchBinding;
    resources.set(`${d.group}:${d.binding}`, dispatchUniform(device, grid, threadgroups));
  }
  const decls = declaredBindings(wgsl);
  const source = device.createTexture({
    size: [width, height], format: 'rgba8unorm',
    usage: GPUTextureUsage.TEXTURE_BINDING | GPUTextureUsage.COPY_DST,
  });
  const pixels = input.getContext('2d').getImageData(0, 0, width, height).data;
  device.queue.writeTexture({ texture: source }, pixels, { bytesPerRow: width * 4 }, [width, height]);
  let written = null;
  for (const decl of decls) {
    const key = `${decl.group}:${decl.binding}`;
    if (/^texture_storage_2d</.test(decl.type)) {
      const format = /<\s*(\w+)/.exec(decl.type)[1];
      if (written) throw new Error('the playground shows one written texture; this filter writes several');
      if (format !== 'rgba8unorm') throw new Error(`the written texture \`${decl.name}\` is ${format}; the playground shows rgba8unorm`);
      written = device.createTexture({
        size: [width, height], format,
        usage: GPUTextureUsage.STORAGE_BINDING | GPUTextureUsage.COPY_SRC,
      });
      resources.set(key, written.createView());
    } else if (/^texture_2d</.test(decl.type)) {
      resources.set(key, source.createView());
    } else if (decl.type === 'sampler') {
      resources.set(key, device.createSampler({ magFilter: 'linear', minFilter: 'linear' }));
    }
  }
  if (!written) throw new Error(`\`${fn.name}\` writes no texture to show`);
  await withValidation(device, 'compute pass', async () => {
    const module = await shaderModule(device, wgsl, fn.name);
    const { layout, groups } = bindGroups(device, [{ decls, visibility: GPUShaderStage.COMPUTE }], resources);
    const pipeline = await device.createComputePipelineAsync({
      layout,
      compute: { module, entryPoint: fn.wgslEntryPoint, constants: functionConstants(fn) },
    });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    groups.forEach((g, i) => pass.setBindGroup(i, g));
    pass.dispatchWorkgroups(...threadgroups);
    pass.end();
    device.queue.submit([encoder.finish()]);
  });
  output.width = width;
  output.height = height;
  await showTexture(device, written, output);
  source.destroy();
  written.destroy();
  const after = await readBack(device, items.map((i) => i.gpuBuffer));
  items.forEach((i) => i.gpuBuffer.destroy());
  return shownArguments(items, after, settings.k);
}
