// The playground page: MSL in, WGSL, diagnostics (marked in the source
// view), reflection, and a Run panel that executes the translation on the
// page's WebGPU. No framework: plain DOM.

import * as translator from './translator.js';
import { gpu, runKernel, runRender, runFilter, isFilter } from './gpu-run.js';
import { formatLeaves } from './buffers.js';

/** Bundled examples: the file under examples/, options, and run settings. */
const EXAMPLES = {
  add_arrays: { file: 'add_arrays.metal', run: { function: 'add_arrays', n: 64 } },
  reduce: {
    file: 'reduce.metal',
    options: { threadgroupMemory: '0=256' },
    run: { function: 'reduce_fixed', n: 256 },
  },
  gradient: {
    file: 'gradient.metal',
    run: {
      function: 'fullscreen_vertex', fragment: 'gradient_fragment', vertexCount: 3,
      presets: { 'fragment:0': [1, 0.75, 1, 1] },
    },
  },
  stage_in: {
    file: 'stage_in.metal',
    run: { function: 'vertex_main', fragment: 'fragment_main', vertexCount: 3 },
  },
  grayscale: {
    file: 'grayscale.metal',
    header: 'grayscale.h',
    options: { textureFormats: { 1: 'rgba8unorm' } },
    run: { function: 'grayscale' },
  },
  blur: {
    file: 'blur.metal',
    options: { textureFormats: { 1: 'rgba8unorm' } },
    run: { function: 'box_blur' },
  },
  hello_triangle: {
    file: 'hello_triangle.metal',
    run: {
      function: 'vertexShader', fragment: 'fragmentShader', vertexCount: 3,
      presets: {
        // AAPLVertex { float2 position; float4 color; }, in pixels from the centre.
        'vertex:0': [100, -100, 1, 0, 0, 1, -100, -100, 0, 1, 0, 1, 0, 100, 0, 0, 1, 1],
        'vertex:1': [256, 256],
      },
    },
  },
};

const $ = (id) => document.getElementById(id);

const state = {
  translation: null,
  translations: 0,
  /**
   * Translations asked for so far. Only the newest one's result is shown:
   * an older one finishing later (a debounced option change overtaken by
   * loading an example) would replace the newer source's WGSL and clear
   * the results of a run made with it.
   */
  requests: 0,
  presets: null,
  pending: null,
  adapterHasF16: false,
  /** Options of the loaded example that have no field (texture formats). */
  exampleOptions: {},
  /** The `[[stage_in]]` layout the vertex data field was filled for. */
  vertexLayout: null,
};

function options() {
  const words = (id) => $(id).value.split(/[\s,]+/).filter(Boolean);
  const opts = { target: $('target').value, platform: $('platform').value, functionWgsl: true, name: 'shader.metal' };
  // auto: f16 where the adapter has shader-f16, else f32 rounded to half.
  const half = $('half').value;
  opts.half = half === 'auto' ? (state.adapterHasF16 ? 'f16' : 'f32') : half;
  const size = words('threadgroup-size').map(Number);
  if (size.length) opts.threadgroupSize = size;
  const defines = words('defines');
  if (defines.length) opts.defines = defines;
  const entries = words('entries');
  if (entries.length) opts.entries = entries;
  const memory = {};
  for (const item of words('threadgroup-memory')) {
    const [index, bytes] = item.split('=');
    memory[index] = Number(bytes);
  }
  if (Object.keys(memory).length) opts.threadgroupMemory = memory;
  if (state.exampleOptions.textureFormats) opts.textureFormats = state.exampleOptions.textureFormats;
  const headerName = $('header-name').value.trim();
  if (headerName && $('header-source').value) opts.headers = { [headerName]: $('header-source').value };
  return opts;
}

function setStatus(text, kind) {
  $('status').textContent = text;
  $('status').className = `status ${kind || ''}`;
}

async function retranslate() {
  clearTimeout(state.pending);
  const request = ++state.requests;
  const source = $('source').value;
  let result;
  const started = performance.now();
  try {
    result = await translator.translate(source, options());
  } catch (err) {
    if (request === state.requests) setStatus(`bad options: ${err.message}`, 'error');
    return;
  }
  if (request !== state.requests) return;
  const ms = performance.now() - started;
  clearRunResults();
  state.translation = result;
  state.translations += 1;
  showWgsl(result);
  showDiagnostics(result.diagnostics);
  showReflection(result.reflection);
  fillRunChoices(result.reflection);
  const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = result.diagnostics.length - errors;
  setStatus(result.ok ? `translated in ${ms.toFixed(1)} ms${warnings ? `, ${warnings} warning(s)` : ''}`
    : `${errors} error(s)`, result.ok ? 'ok' : 'error');
  document.body.dataset.translations = String(state.translations);
  document.body.dataset.ok = String(result.ok);
}

function scheduleTranslate() {
  clearTimeout(state.pending);
  state.pending = setTimeout(retranslate, 200);
}

function showWgsl(result) {
  $('wgsl').textContent = result.ok ? result.wgsl : '// no WGSL: see the diagnostics';
}

/** Gutter line numbers and highlighted lines, from the diagnostics. */
function markLines(diagnostics) {
  const lines = $('source').value.split('\n').length;
  const marks = new Map();
  for (const d of diagnostics) {
    if (!d.line || (d.file && d.file !== 'shader.metal')) continue;
    const last = d.endLine && d.endColumn > 1 ? d.endLine : d.line;
    for (let l = d.line; l <= Math.max(d.line, last); l++) {
      if (marks.get(l) !== 'error') marks.set(l, d.severity);
    }
  }
  const gutter = document.createDocumentFragment();
  const highlights = document.createDocumentFragment();
  for (let l = 1; l <= lines; l++) {
    const number = document.createElement('div');
    number.textContent = String(l);
    number.dataset.line = String(l);
    const band = document.createElement('div');
    const mark = marks.get(l);
    if (mark) {
      number.className = mark;
      band.className = mark;
      const messages = diagnostics.filter((d) => d.line === l).map((d) => `${d.severity}: ${d.message}`);
      number.title = messages.join('\n');
    }
    gutter.append(number);
    highlights.append(band);
  }
  $('gutter').replaceChildren(gutter);
  $('highlights').replaceChildren(highlights);
  syncScroll();
}

function syncScroll() {
  const source = $('source');
  $('gutter').scrollTop = source.scrollTop;
  $('highlights').scrollTop = source.scrollTop;
  $('highlights').scrollLeft = source.scrollLeft;
}

function showDiagnostics(diagnostics) {
  markLines(diagnostics);
  const list = $('diagnostics');
  list.replaceChildren();
  $('diagnostic-count').textContent = diagnostics.length ? `(${diagnostics.length})` : '';
  if (!diagnostics.length) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = 'none';
    list.append(li);
    return;
  }
  for (const d of diagnostics) {
    const li = document.createElement('li');
    li.className = d.severity;
    if (d.code) {
      const code = document.createElement('span');
      code.className = 'code';
      code.textContent = `${d.severity}[${d.code}]`;
      li.append(code);
    }
    li.append(d.rendered.trimEnd());
    if (d.line) li.dataset.line = String(d.line);
    li.addEventListener('click', () => selectLine(d));
    list.append(li);
  }
}

/** Selects the diagnostic's text in the source view. */
function selectLine(d) {
  if (!d.line) return;
  const source = $('source');
  const lines = source.value.split('\n');
  const offsetOf = (line, column) => lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + (column || 1) - 1;
  const start = offsetOf(d.line, d.column);
  const end = d.endLine ? offsetOf(d.endLine, d.endColumn) : start + 1;
  source.focus();
  source.setSelectionRange(start, Math.max(start + 1, end));
  source.scrollTop = Math.max(0, (d.line - 5) * 18);
  syncScroll();
}

function argumentType(arg) {
  if (arg.buffer) return `${arg.buffer.dataType}${arg.buffer.isPointer ? '*' : '&'}`;
  if (arg.texture) return `${arg.texture.textureType}<${arg.texture.dataType}>`;
  if (arg.threadgroup) return `${arg.threadgroup.dataSize} bytes`;
  if (arg.sampler) return arg.sampler.comparison ? 'sampler (comparison)' : 'sampler';
  return '';
}

function cell(row, text, mono) {
  const td = document.createElement('td');
  td.textContent = text;
  if (mono) td.className = 'mono';
  row.append(td);
  return td;
}

function showReflection(reflection) {
  const body = $('reflection').tBodies[0];
  body.replaceChildren();
  const notes = [];
  for (const fn of reflection?.functions || []) {
    const rows = fn.arguments.length ? fn.arguments : [null];
    rows.forEach((arg, i) => {
      const row = document.createElement('tr');
      cell(row, i === 0 ? fn.name : '', true);
      cell(row, i === 0 ? fn.stage : '');
      if (arg) {
        cell(row, arg.name, true);
        cell(row, String(arg.index));
        cell(row, arg.type);
        cell(row, argumentType(arg), true);
        cell(row, arg.access);
        cell(row, arg.active ? 'yes' : 'no');
        cell(row, arg.binding ? `${arg.binding.group}/${arg.binding.binding}` : '—');
      } else {
        for (let c = 0; c < 7; c++) cell(row, c === 0 ? '(no resources)' : '');
      }
      body.append(row);
    });
    const extra = [];
    if (fn.workgroupSize) extra.push(`@workgroup_size(${fn.workgroupSize.join(', ')})`);
    if (fn.dispatchBinding) extra.push(`dispatch uniform ${fn.dispatchBinding.group}/${fn.dispatchBinding.binding}`);
    if (fn.usesBarriers) extra.push('barriers');
    if (fn.requiredFeatures?.length) extra.push(`needs ${fn.requiredFeatures.join(', ')}`);
    if (fn.builtins?.length) extra.push(`built-ins: ${fn.builtins.map((b) => `${b.name} [[${b.attribute}]]`).join(', ')}`);
    if (extra.length) notes.push(`${fn.name} (WGSL ${fn.wgslEntryPoint}): ${extra.join('; ')}`);
  }
  $('reflection-notes').textContent = notes.join(' · ');
}

function fillSelect(select, names, wanted) {
  const previous = wanted ?? select.value;
  select.replaceChildren(...names.map((n) => new Option(n, n)));
  if (names.includes(previous)) select.value = previous;
}

function fillRunChoices(reflection) {
  const functions = reflection?.functions || [];
  const runnable = functions.filter((f) => f.stage !== 'fragment').map((f) => f.name);
  const fragments = functions.filter((f) => f.stage === 'fragment').map((f) => f.name);
  fillSelect($('run-function'), runnable, state.presets?.function);
  fillSelect($('run-fragment'), fragments, state.presets?.fragment);
  updateRunControls();
}

function selectedFunction(name) {
  return state.translation?.reflection?.functions.find((f) => f.name === name);
}

function updateRunControls() {
  const fn = selectedFunction($('run-function').value);
  const render = fn?.stage === 'vertex';
  const stageIn = render && (fn.vertexAttributes || []).length > 0;
  $('fragment-label').hidden = !render;
  $('vertex-count-label').hidden = !render || stageIn;
  $('canvas').hidden = !render;
  $('vertex-data-panel').hidden = !stageIn;
  $('image-panel').hidden = !isFilter(fn);
  if (stageIn) fillVertexData(fn.vertexAttributes);
  $('run').disabled = !state.ready || !fn || (render && !$('run-fragment').value);
}

/** The vertex data field's default for `attributes`: a triangle over the canvas centre. */
function defaultVertexData(attributes) {
  const position = attributes.find((a) => /^float32x[234]$/.test(a.format));
  const corners = [[-0.8, -0.8], [0.8, -0.8], [0, 0.8]];
  return corners.map((corner, v) => attributes.map((a) => {
    const count = formatLeaves(a.format, 0)?.length || 1;
    const values = a === position ? [...corner, 0, 1]
      : /^(float|unorm|snorm)/.test(a.format) ? [v === 0 ? 1 : 0, v === 1 ? 1 : 0, v === 2 ? 1 : 0, 1] : [v, v, v, v];
    return values.slice(0, count).join(' ');
  }).join('  ')).join('\n');
}

/** Shows the `[[stage_in]]` layout and, when it changed, the default data for it. */
function fillVertexData(attributes) {
  const layout = attributes.map((a) => `attribute(${a.index}) ${a.format}`).join(', ');
  $('vertex-layout').textContent = layout;
  if (state.vertexLayout !== layout) {
    state.vertexLayout = layout;
    $('vertex-data').value = defaultVertexData(attributes);
  }
}

/** The vertex data field: one array of numbers per non-empty line. */
function vertexDataLines() {
  return $('vertex-data').value.split('\n')
    .map((line) => line.trim().split(/[\s,]+/).filter(Boolean).map(Number))
    .filter((values) => values.length);
}

/** Forgets the shown results of the last run: they belong to an older source. */
function clearRunResults() {
  $('run-output').replaceChildren();
  $('run-status').textContent = '';
  $('run-status').className = 'run-status';
  for (const id of ['canvas', 'image-out']) {
    const c = $(id);
    c.getContext('2d').clearRect(0, 0, c.width, c.height);
  }
  delete document.body.dataset.runOk;
}

function runSettings() {
  const fn = $('run-function').value;
  let presets = state.presets && state.presets.function === fn ? state.presets.presets : null;
  let vertexCount = Math.max(1, Number($('vertex-count').value) | 0);
  if (!$('vertex-data-panel').hidden) {
    const lines = vertexDataLines();
    presets = { ...presets, stage_in: lines.flat() };
    vertexCount = Math.max(1, lines.length);
  }
  return {
    n: Math.max(1, Number($('run-n').value) | 0),
    k: Math.max(1, Number($('run-k').value) | 0),
    seed: Math.max(1, Number($('run-seed').value) | 0),
    mode: $('run-mode').value,
    vertexCount,
    presets,
  };
}

async function run() {
  const result = state.translation;
  const fn = selectedFunction($('run-function').value);
  if (!result?.ok || !fn) return;
  const settings = runSettings();
  clearRunResults();
  $('run-status').textContent = 'running…';
  try {
    let shown;
    if (isFilter(fn)) {
      shown = await runFilter(fn, result.functionWgsl[fn.name], $('image-in'), $('image-out'), settings);
      $('run-status').textContent = `${fn.name}: one thread per pixel of the ${$('image-in').width}×${$('image-in').height} image, threadgroups of ${fn.workgroupSize.join('×')}`;
    } else if (fn.stage === 'kernel') {
      shown = await runKernel(fn, result.functionWgsl[fn.name], settings);
      $('run-status').textContent = `${fn.name}: dispatchThreads(${settings.n}) in threadgroups of ${fn.workgroupSize.join('×')}`;
    } else {
      const fragment = selectedFunction($('run-fragment').value);
      shown = await runRender(fn, fragment, result.functionWgsl[fn.name], result.functionWgsl[fragment.name],
        $('canvas'), settings);
      $('run-status').textContent = `${fn.name} + ${fragment.name}: ${settings.vertexCount} vertices, triangle list, into the ${$('canvas').width}×${$('canvas').height} canvas`;
    }
    showRunOutput(shown);
    document.body.dataset.runOk = 'true';
  } catch (err) {
    $('run-status').textContent = err.message;
    $('run-status').className = 'run-status error';
    document.body.dataset.runOk = 'false';
  }
  document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
}

/** One table per buffer: index, input value, output value (written buffers). */
function showRunOutput(shown) {
  const out = $('run-output');
  for (const b of shown) {
    const table = document.createElement('table');
    table.className = 'buffer';
    table.dataset.buffer = b.name;
    table.dataset.index = String(b.index);
    table.dataset.stage = b.stage;
    const caption = table.createCaption();
    caption.textContent = `${b.stage === 'kernel' ? '' : `${b.stage} `}[[buffer(${b.index})]] ${b.name}: ${b.type} × ${b.count} (${b.access})`;
    const head = table.createTHead().insertRow();
    for (const h of ['i', 'input', ...(b.output ? ['output'] : [])]) {
      const th = document.createElement('th');
      th.textContent = h;
      head.append(th);
    }
    const body = table.createTBody();
    b.input.forEach((value, i) => {
      const row = body.insertRow();
      cell(row, String(i));
      cell(row, value).className = 'input';
      if (b.output) cell(row, b.output[i]).className = 'output';
    });
    out.append(table);
  }
}

async function fetchText(file) {
  const response = await fetch(`examples/${file}`);
  if (!response.ok) throw new Error(`cannot load examples/${file}: ${response.status}`);
  return response.text();
}

/** Puts example `name`'s source, header and settings into the page (no translation). */
async function fillExample(name) {
  const example = EXAMPLES[name];
  if (!example) return false;
  const [text, header] = await Promise.all([
    fetchText(example.file), example.header ? fetchText(example.header) : '',
  ]);
  $('threadgroup-memory').value = example.options?.threadgroupMemory || '';
  state.exampleOptions = example.options || {};
  state.presets = example.run;
  if (example.run.n) $('run-n').value = String(example.run.n);
  if (example.run.vertexCount) $('vertex-count').value = String(example.run.vertexCount);
  $('source').value = text;
  $('header-name').value = 'MyTypes.h';
  $('header-source').value = header;
  markLines([]);
  return true;
}

async function loadExample(name) {
  if (await fillExample(name)) await retranslate();
}

/** Shows the shader.metal tab or the header tab. */
function showTab(header) {
  $('tab-source').classList.toggle('active', !header);
  $('tab-header').classList.toggle('active', header);
  $('tab-source').setAttribute('aria-selected', String(!header));
  $('tab-header').setAttribute('aria-selected', String(header));
  $('editor').hidden = header;
  $('header-source').hidden = !header;
}

/**
 * The built-in test image: colour ramps, a checkerboard and a disc, so
 * filters have edges, flat areas and every hue to work on.
 */
function drawTestImage(canvas) {
  canvas.width = 128;
  canvas.height = 128;
  const image = new ImageData(128, 128);
  for (let y = 0; y < 128; y++) {
    for (let x = 0; x < 128; x++) {
      const at = (y * 128 + x) * 4;
      const checker = ((x >> 4) + (y >> 4)) % 2;
      const disc = (x - 80) ** 2 + (y - 48) ** 2 < 28 ** 2;
      image.data[at] = disc ? 255 : x * 2;
      image.data[at + 1] = disc ? 200 : y * 2;
      image.data[at + 2] = disc ? 40 : checker * 255;
      image.data[at + 3] = 255;
    }
  }
  canvas.getContext('2d').putImageData(image, 0, 0);
}

/** Draws an image file into the input canvas, scaled to at most 256 pixels a side. */
async function loadImageFile(file) {
  const bitmap = await createImageBitmap(file);
  const scale = Math.min(1, 256 / Math.max(bitmap.width, bitmap.height));
  const canvas = $('image-in');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  canvas.getContext('2d').drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  clearRunResults();
}

function wire() {
  $('source').addEventListener('input', () => {
    $('example').value = '';
    scheduleTranslate();
  });
  for (const id of ['header-source', 'header-name']) $(id).addEventListener('input', scheduleTranslate);
  $('tab-source').addEventListener('click', () => showTab(false));
  $('tab-header').addEventListener('click', () => showTab(true));
  $('vertex-data').addEventListener('input', clearRunResults);
  $('image-default').addEventListener('click', () => { drawTestImage($('image-in')); clearRunResults(); });
  $('image-file').addEventListener('change', () => $('image-file').files[0] && loadImageFile($('image-file').files[0]));
  $('source').addEventListener('scroll', syncScroll);
  for (const id of ['target', 'platform', 'half', 'threadgroup-size', 'defines', 'entries', 'threadgroup-memory']) {
    $(id).addEventListener('change', scheduleTranslate);
    $(id).addEventListener('input', scheduleTranslate);
  }
  $('example').addEventListener('change', () => loadExample($('example').value));
  $('file').addEventListener('change', async () => {
    const file = $('file').files[0];
    if (!file) return;
    $('example').value = '';
    state.presets = null;
    state.exampleOptions = {};
    $('source').value = await file.text();
    await retranslate();
  });
  $('run-function').addEventListener('change', updateRunControls);
  $('run-fragment').addEventListener('change', updateRunControls);
  $('run').addEventListener('click', run);
}

async function main() {
  wire();
  drawTestImage($('image-in'));
  // The example is static text: show it while the translator loads.
  const example = fillExample($('example').value);
  // Tests and the console can drive the page through this object.
  window.playground = {
    translate: translator.translate,
    panicForTesting: translator.panicForTesting,
    retranslate,
    get translation() { return state.translation; },
  };
  try {
    const version = await translator.version();
    setStatus(`msl2wgsl ${version} ready`, 'ok');
  } catch (err) {
    setStatus(`cannot load the translator (build it with web/build-wasm.sh): ${err.message}`, 'error');
    $('run').textContent = 'Run (no translator)';
    return;
  }
  state.ready = true;
  $('run').textContent = 'Run';
  try {
    const { name, device } = await gpu();
    state.adapterHasF16 = device.features.has('shader-f16');
    $('adapter').textContent = `(${name}${state.adapterHasF16 ? '' : ', no shader-f16: half runs as f32'})`;
  } catch (err) {
    $('adapter').textContent = `(${err.message})`;
  }
  await example;
  await retranslate();
  document.body.dataset.ready = 'true';
}

main();
