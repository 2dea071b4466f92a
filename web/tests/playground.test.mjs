// End-to-end test of the playground (web/playground) in headless Chromium
// on SwiftShader's WebGPU adapter. Plain node script: exit 0 when every
// check passed, 1 otherwise; the last line is `N passed, M failed`.
//
//   bash web/build-wasm.sh && node web/tests/playground.test.mjs
//
// Checks: every kernel fixture (fixtures/*.metal) translates through the
// page with WGSL and no error diagnostic; an invalid source marks its line;
// add_arrays and reduce_fixed run on WebGPU and their shown outputs match
// values computed here from the shown inputs; the gradient vertex/fragment
// pair renders the colours its formula gives; result rows stay one line
// high; a new translation clears the last run's results; diagnostics show
// their codes; a header tab's file is what `#include` reads; a
// `[[stage_in]]` triangle from the vertex data field is drawn; the grayscale
// filter's output pixels match a CPU computation from its input pixels.
// Saves docs/playground.png.

import { chromium } from 'playwright-core';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { servePlayground, PLAYGROUND } from './playground-server.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu-sandbox', '--enable-unsafe-webgpu',
  '--use-webgpu-adapter=swiftshader', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-quic',
];

/** Options some fixtures need, as the Rust tests give them. */
const FIXTURE_OPTIONS = {
  'long_ints.metal': { target: 'wgpu' },
  'simd_ragged.metal': { target: 'wgpu' },
  'reduce.metal': { 'threadgroup-memory': '0=256' },
};

let passed = 0;
let failed = 0;

function check(name, ok, detail = '') {
  if (ok) {
    passed += 1;
    console.log(`PASS ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}${detail ? `: ${detail}` : ''}`);
  }
}

/** Puts `source` and option fields into the page and translates, as the UI does. */
async function translateInPage(page, source, fields = {}) {
  return page.evaluate(async ({ source, fields }) => {
    const defaults = { target: 'webgpu', platform: 'macos', half: 'auto', 'threadgroup-size': '', defines: '', entries: '', 'threadgroup-memory': '', 'header-name': 'MyTypes.h', 'header-source': '' };
    for (const [id, value] of Object.entries({ ...defaults, ...fields })) {
      document.getElementById(id).value = value;
    }
    document.getElementById('example').value = '';
    document.getElementById('source').value = source;
    await window.playground.retranslate();
    return {
      ok: document.body.dataset.ok === 'true',
      wgsl: document.getElementById('wgsl').textContent,
      errors: [...document.querySelectorAll('#diagnostics li.error')].map((li) => li.textContent),
      codes: [...document.querySelectorAll('#diagnostics li .code')].map((c) => c.textContent),
      diagnostics: [...document.querySelectorAll('#diagnostics li')].map((li) => li.textContent),
      gutterErrors: [...document.querySelectorAll('#gutter .error')].map((d) => Number(d.dataset.line)),
      highlighted: [...document.querySelectorAll('#highlights div')]
        .map((d, i) => (d.classList.contains('error') ? i + 1 : 0)).filter(Boolean),
      reflectionRows: document.querySelectorAll('#reflection tbody tr').length,
    };
  }, { source, fields });
}

async function checkFixtures(page) {
  const dir = join(ROOT, 'fixtures');
  const files = readdirSync(dir).filter((f) => f.endsWith('.metal')).sort();
  for (const file of files) {
    const source = readFileSync(join(dir, file), 'utf8');
    const r = await translateInPage(page, source, FIXTURE_OPTIONS[file]);
    const detail = r.errors.join('\n').slice(0, 400);
    check(`translate fixtures/${file}`, r.ok && r.errors.length === 0 && /@compute/.test(r.wgsl) && r.reflectionRows > 0, detail);
  }
  return files.length;
}

async function checkInvalidSource(page) {
  const lines = readFileSync(join(ROOT, 'fixtures/add_arrays.metal'), 'utf8').split('\n');
  const line = lines.findIndex((l) => l.includes('result[index] =')) + 1;
  lines[line - 1] = '    result[index] = inA[index] + undeclared_name[index];';
  const r = await translateInPage(page, lines.join('\n'));
  check('invalid source fails with an error diagnostic', !r.ok && r.errors.length > 0, JSON.stringify(r.errors));
  check(`the error names the line (${line})`, r.errors.some((e) => e.includes(`:${line}:`)), r.errors.join('\n'));
  check(`the gutter marks line ${line} and only it`, JSON.stringify(r.gutterErrors) === JSON.stringify([line]), JSON.stringify(r.gutterErrors));
  check(`line ${line} is highlighted`, r.highlighted.includes(line), JSON.stringify(r.highlighted));
  check('the error shows its code, error[E....]', r.codes.some((c) => /^error\[E\d{4}\]$/.test(c)), JSON.stringify(r.codes));
}

/** The page's own field, not the CLI's flag, is named for an unknown threadgroup length. */
async function checkThreadgroupMemoryHint(page) {
  const source = readFileSync(join(PLAYGROUND, 'examples', 'reduce.metal'), 'utf8');
  const r = await translateInPage(page, source);
  const hint = r.diagnostics.find((d) => /W0406/.test(d));
  check('W0406 names the Threadgroup memory field, not --threadgroup-memory',
    hint && /Threadgroup memory field/.test(hint) && !/--threadgroup-memory/.test(hint), hint || r.diagnostics.join('\n'));
}

/** `#include "NAME"` reads the header tab's text, under the name typed there. */
async function checkHeaderTab(page) {
  const source = '#include "Defs.h"\nkernel void k(device Pair* o [[buffer(0)]]) { o[0].b = kScale; }\n';
  const header = 'struct Pair { int a; int b; };\nconstant int kScale = 3;\n';
  await page.click('#tab-header');
  const visible = await page.isVisible('#header-source') && !(await page.isVisible('#source'));
  check('the header tab shows the header editor', visible);
  await page.click('#tab-source');
  const missing = await translateInPage(page, source, { 'header-name': 'Other.h', 'header-source': header });
  check('an include of a name the header tab does not have fails', !missing.ok);
  const found = await translateInPage(page, source, { 'header-name': 'Defs.h', 'header-source': header });
  check('#include "Defs.h" reads the header tab', found.ok && /kScale|3/.test(found.wgsl), found.errors.join('\n'));
  const bad = await translateInPage(page, source, { 'header-name': 'Defs.h', 'header-source': 'struct Pair { int a; int b; }\n' });
  check('an error in the header names the header file', !bad.ok && bad.errors.some((e) => e.includes('Defs.h:')), bad.errors.join('\n'));
}

async function loadExample(page, name) {
  const before = await page.evaluate(() => Number(document.body.dataset.translations || 0));
  await page.selectOption('#example', name);
  await page.waitForFunction((n) => Number(document.body.dataset.translations || 0) > n, before);
}

async function clickRun(page) {
  const before = await page.evaluate(() => Number(document.body.dataset.runs || 0));
  await page.click('#run');
  await page.waitForFunction((n) => Number(document.body.dataset.runs || 0) > n, before, { timeout: 60000 });
  return page.evaluate(() => ({
    ok: document.body.dataset.runOk === 'true',
    status: document.getElementById('run-status').textContent,
  }));
}

/** The shown columns of buffer `name`'s table: { input: [...], output: [...] } as text. */
async function shownBuffer(page, name) {
  return page.evaluate((name) => {
    const table = document.querySelector(`#run-output table[data-buffer="${name}"]`);
    if (!table) return null;
    const column = (cls) => [...table.querySelectorAll(`td.${cls}`)].map((td) => td.textContent);
    return { input: column('input'), output: column('output') };
  }, name);
}

async function checkAddArrays(page) {
  await loadExample(page, 'add_arrays');
  const n = 100;
  await page.fill('#run-n', String(n));
  await page.fill('#run-k', String(n));
  await page.selectOption('#run-mode', 'random');
  await page.fill('#run-seed', '7');
  const run = await clickRun(page);
  check('add_arrays runs on WebGPU', run.ok, run.status);
  if (!run.ok) return;
  const a = (await shownBuffer(page, 'inA')).input.map(Number);
  const b = (await shownBuffer(page, 'inB')).input.map(Number);
  const result = (await shownBuffer(page, 'result')).output.map(Number);
  check(`add_arrays shows ${n} values of each buffer`, a.length === n && b.length === n && result.length === n,
    `${a.length} ${b.length} ${result.length}`);
  check('add_arrays inputs are random, not a ramp', new Set(a).size > n / 2 && a.some((x) => !Number.isInteger(x)));
  const wrong = result.map((r, i) => [i, r, Math.fround(a[i] + b[i])]).filter(([, r, e]) => r !== e);
  check('add_arrays result[i] == fround(inA[i] + inB[i]) for every shown i', wrong.length === 0,
    JSON.stringify(wrong.slice(0, 4)));
  const heights = await page.evaluate(() => [...document.querySelectorAll('#run-output tr')]
    .map((tr) => tr.getBoundingClientRect().height));
  check(`every result row is under 40 px (${heights.length} rows, tallest ${Math.max(...heights)} px)`,
    heights.length > n && heights.every((h) => h < 40));
  // A new translation makes the shown results stale: they are cleared.
  await page.fill('#source', `${await page.inputValue('#source')}\n// edited\n`);
  await page.waitForFunction(() => document.querySelectorAll('#run-output table').length === 0, null, { timeout: 5000 })
    .then(() => check('editing the source clears the last run\'s results', true))
    .catch(() => check('editing the source clears the last run\'s results', false));
}

/** RGBA pixels of a 2D canvas of the page. */
async function canvasData(page, id) {
  return page.evaluate((id) => {
    const c = document.getElementById(id);
    return { width: c.width, height: c.height, data: [...c.getContext('2d').getImageData(0, 0, c.width, c.height).data] };
  }, id);
}

/** The stage_in example draws the vertex data field's default triangle. */
async function checkStageIn(page) {
  await loadExample(page, 'stage_in');
  const field = await page.isVisible('#vertex-data');
  const lines = (await page.inputValue('#vertex-data')).split('\n').filter((l) => l.trim());
  check('a [[stage_in]] vertex function shows the vertex data field, 3 vertices', field && lines.length === 3, lines.join(' | '));
  const run = await clickRun(page);
  check('the stage_in triangle renders', run.ok, run.status);
  if (!run.ok) return;
  const image = await canvasData(page, 'canvas');
  // Vertex data: positions (-0.8,-0.8), (0.8,-0.8), (0,0.8) with red, green,
  // blue; at the canvas centre (clip (0,0)) the barycentrics are 1/4, 1/4, 1/2.
  const at = (128 * 256 + 128) * 4;
  const centre = image.data.slice(at, at + 3);
  const expected = [0.25, 0.25, 0.5].map((c) => c * 255);
  check('the triangle covers the centre with colour (1/4, 1/4, 1/2) within 3/255',
    centre.every((c, i) => Math.abs(c - expected[i]) <= 3), `${centre} vs ${expected}`);
  check('outside the triangle the canvas is black', image.data.slice(0, 3).every((c) => c === 0));
  // Edited vertex data is what is drawn: one triangle over the top-left corner.
  await page.fill('#vertex-data', '-1 1  1 1 1\n-0.5 1  1 1 1\n-1 0.5  1 1 1');
  const edited = await clickRun(page);
  const after = await canvasData(page, 'canvas');
  const corner = after.data.slice((4 * 256 + 4) * 4, (4 * 256 + 4) * 4 + 3);
  const middle = after.data.slice(at, at + 3);
  check('edited vertex data is drawn (white top-left corner, black centre)', edited.ok
    && corner.every((c) => c === 255) && middle.every((c) => c === 0), `${corner} ${middle}`);
}

/**
 * The grayscale filter over the built-in test image: every output pixel is
 * round(255 * dot(rgb / 255, (0.299, 0.587, 0.114))) within 1/255 (the
 * float-to-unorm8 conversion may round either way at a half step, and the
 * GPU's f32 dot product may differ from the CPU's f64 one in the last bit),
 * and alpha is kept.
 */
async function checkGrayscale(page) {
  await loadExample(page, 'grayscale');
  const header = await page.inputValue('#header-source');
  check('the grayscale example comes with its header in the header tab', /kLuminanceWeights/.test(header));
  await page.click('#image-default');
  const run = await clickRun(page);
  check('the grayscale filter runs', run.ok, run.status);
  if (!run.ok) return;
  const input = await canvasData(page, 'image-in');
  const output = await canvasData(page, 'image-out');
  check('the output image has the input\'s size', output.width === input.width && output.height === input.height,
    `${output.width}x${output.height}`);
  let worst = 0;
  let where = '';
  for (let p = 0; p < input.width * input.height; p++) {
    const [r, g, b, a] = input.data.slice(p * 4, p * 4 + 4);
    const gray = Math.round(255 * (0.299 * r / 255 + 0.587 * g / 255 + 0.114 * b / 255));
    const got = output.data.slice(p * 4, p * 4 + 4);
    const error = Math.max(...[gray, gray, gray, a].map((e, c) => Math.abs(got[c] - e)));
    if (error > worst) {
      worst = error;
      where = `pixel ${p}: ${got} vs ${gray} (alpha ${a})`;
    }
  }
  check(`grayscale output matches the CPU luminance within 1/255 (worst ${worst})`, worst <= 1, where);
  const distinct = new Set(input.data.filter((_, i) => i % 4 === 0)).size;
  check('the test image is not flat', distinct > 100, String(distinct));
}

/** The 3x3 box blur over the test image: the mean of the clamped 3x3 neighbourhood, within 1/255 (as grayscale). */
async function checkBlur(page) {
  await loadExample(page, 'blur');
  await page.click('#image-default');
  const run = await clickRun(page);
  check('the box blur filter runs', run.ok, run.status);
  if (!run.ok) return;
  const input = await canvasData(page, 'image-in');
  const output = await canvasData(page, 'image-out');
  const { width, height } = input;
  const clamp = (v, hi) => Math.min(Math.max(v, 0), hi);
  let worst = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 4; c++) {
        let sum = 0;
        for (let dy = -1; dy <= 1; dy++) {
          for (let dx = -1; dx <= 1; dx++) {
            sum += input.data[(clamp(y + dy, height - 1) * width + clamp(x + dx, width - 1)) * 4 + c] / 255;
          }
        }
        worst = Math.max(worst, Math.abs(output.data[(y * width + x) * 4 + c] - Math.round((sum / 9) * 255)));
      }
    }
  }
  check(`box blur output matches the CPU 3x3 mean within 1/255 (worst ${worst})`, worst <= 1);
}

async function checkReduce(page) {
  await loadExample(page, 'reduce');
  await page.fill('#run-n', '256');
  await page.fill('#run-k', '8');
  await page.selectOption('#run-mode', 'ramp');
  await page.selectOption('#run-function', 'reduce_fixed');
  const run = await clickRun(page);
  check('reduce_fixed runs on WebGPU', run.ok, run.status);
  if (!run.ok) return;
  const input = (await shownBuffer(page, 'in')).input.map(Number);
  const partial = await shownBuffer(page, 'partial_sums');
  check('reduce_fixed input is the ramp 0, 1, 2, ...', input.every((x, i) => x === i), input.join(' '));
  // Ramp: in[i] = i; threadgroups of 64 sum 64g .. 64g + 63.
  const expected = partial.input.map((x, g) => (g < 4 ? String(64 * 64 * g + (63 * 64) / 2) : x));
  check('reduce_fixed partial sums of 4 threadgroups (the rest untouched)',
    JSON.stringify(partial.output) === JSON.stringify(expected), `${partial.output} vs ${expected}`);
}

/** `v` rounded to the nearest binary16 value (ties to even; normal range and subnormals). */
function roundToHalf(v) {
  if (v === 0) return 0;
  const exponent = Math.max(Math.floor(Math.log2(Math.abs(v))), -14);
  const spacing = 2 ** (exponent - 10);
  const scaled = v / spacing;
  let rounded = Math.round(scaled);
  if (Math.abs(scaled % 1) === 0.5 && rounded % 2 !== 0) rounded -= Math.sign(scaled);
  return rounded * spacing;
}

/**
 * A `half` kernel: with half "auto" it runs (as f32 rounded to half where
 * the adapter lacks shader-f16); with "f16" on such an adapter the run is
 * refused with a message, not a crash.
 */
async function checkHalfKernel(page, adapterHasF16) {
  const source = 'kernel void scale(device half* data [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n'
    + '    data[i] = data[i] * 2.0h + 0.001h;\n}\n';
  const runScale = async () => {
    await page.selectOption('#run-function', 'scale');
    await page.fill('#run-n', '8');
    await page.fill('#run-k', '8');
    await page.selectOption('#run-mode', 'ramp');
    return clickRun(page);
  };
  const auto = await translateInPage(page, source, { half: 'auto' });
  check('a half kernel translates (half: auto)', auto.ok, auto.errors.join('\n'));
  const run = await runScale();
  const data = await shownBuffer(page, 'data');
  const expected = data?.input.map((x) => roundToHalf(2 * Number(x) + roundToHalf(0.001)));
  check('the half kernel computes 2x + 0.001 in half precision', run.ok
    && data.output.every((x, i) => Number(x) === expected[i]), `${run.status} ${data?.output}`);
  if (!adapterHasF16) {
    const f16 = await translateInPage(page, source, { half: 'f16' });
    check('half: f16 emits `enable f16;`', f16.ok && /enable f16;/.test(f16.wgsl));
    const refused = await runScale();
    check('without shader-f16 an f16 run is refused with a message', !refused.ok && /shader-f16/.test(refused.status), refused.status);
  }
}

/** A translator crash is reported, and the next translation gets a fresh instance. */
async function checkPanicRecovery(page) {
  const result = await page.evaluate(async () => {
    const panic = await window.playground.panicForTesting();
    const after = await window.playground.translate('kernel void k(device int* o [[buffer(0)]]) { o[0] = 1; }', {});
    return { panic, ok: after.ok };
  });
  check('a translator panic is reported with its message', /panicForTesting was called/.test(result.panic || ''), result.panic);
  check('the translator works again after a panic', result.ok);
}

async function checkGradient(page) {
  // The page as a visitor first sees it (this state is also docs/playground.png).
  await page.selectOption('#half', 'auto');
  await page.fill('#run-n', '64');
  await page.fill('#run-seed', '1');
  await page.fill('#run-k', '16');
  await loadExample(page, 'gradient');
  const run = await clickRun(page);
  check('gradient vertex + fragment pair renders', run.ok, run.status);
  if (!run.ok) return;
  const tint = (await shownBuffer(page, 'tint')).input[0].replace(/[()]/g, '').split(',').map(Number);
  // The canvas's own pixels (a 2D canvas the page puts the rendered
  // texture into), not a screenshot, which depends on the scroll position.
  const image = await canvasData(page, 'canvas');
  check('canvas is 256x256', image.width === 256 && image.height === 256, `${image.width}x${image.height}`);
  // The full-screen triangle: uv = pixel centre / size; colour (u, v, 0.25, 1) * tint.
  let worst = 0;
  let where = '';
  for (let y = 8; y < 256; y += 16) {
    for (let x = 8; x < 256; x += 16) {
      const u = (x + 0.5) / 256;
      const v = (y + 0.5) / 256;
      const expected = [u * tint[0], v * tint[1], 0.25 * tint[2]].map((c) => Math.round(Math.min(1, c) * 255));
      const at = (y * image.width + x) * 4;
      for (let c = 0; c < 3; c++) {
        const error = Math.abs(image.data[at + c] - expected[c]);
        if (error > worst) {
          worst = error;
          where = `(${x},${y}) channel ${c}: ${image.data[at + c]} vs ${expected[c]}`;
        }
      }
    }
  }
  check('gradient pixels match (u, v, 0.25) * tint within 2/255', worst <= 2, where);
}

async function main() {
  if (!existsSync(join(PLAYGROUND, 'pkg', 'msl2wgsl_wasm_bg.wasm'))) {
    console.log('FAIL the wasm build is missing: run web/build-wasm.sh first');
    console.log('0 passed, 1 failed');
    return 1;
  }
  if (!existsSync(CHROMIUM)) {
    console.log(`FAIL no Chromium at ${CHROMIUM} (apt-get install chromium)`);
    console.log('0 passed, 1 failed');
    return 1;
  }
  const server = await servePlayground();
  const profile = mkdtempSync(join(tmpdir(), 'playground-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, args: ARGS,
      viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1,
    });
    const page = context.pages()[0] || await context.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
    // The wasm module held back: the default example's source and a
    // loading Run button show before it arrives.
    let releaseWasm;
    const wasmHeld = new Promise((resolveHeld) => { releaseWasm = resolveHeld; });
    await page.route('**/*.wasm', async (route) => { await wasmHeld; await route.continue(); });
    await page.goto(server.url);
    await page.waitForFunction(() => document.getElementById('source').value.length > 0, null, { timeout: 10000 })
      .catch(() => {});
    const loading = await page.evaluate(() => ({
      source: document.getElementById('source').value.length,
      run: document.getElementById('run').textContent,
      disabled: document.getElementById('run').disabled,
    }));
    check('before the wasm arrives: the example source shows, Run says loading',
      loading.source > 0 && /loading/i.test(loading.run) && loading.disabled, JSON.stringify(loading));
    releaseWasm();
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60000 });
    await page.unroute('**/*.wasm');
    const adapter = await page.evaluate(async () => {
      const a = await navigator.gpu?.requestAdapter();
      return a ? { f16: a.features.has('shader-f16') } : null;
    });
    check('the page has a WebGPU adapter', adapter !== null);
    const count = await checkFixtures(page);
    check('fixtures were found', count > 10, String(count));
    const early = await page.evaluate(() => ({
      source: document.getElementById('source').value.length,
      run: document.getElementById('run').textContent,
    }));
    check('the default example is shown and Run is enabled after loading', early.source > 0 && early.run === 'Run', JSON.stringify(early));
    await checkInvalidSource(page);
    await checkThreadgroupMemoryHint(page);
    await checkHeaderTab(page);
    await checkReduce(page);
    await checkAddArrays(page);
    await checkPanicRecovery(page);
    await checkHalfKernel(page, adapter?.f16);
    await checkGradient(page);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    check(`after a default run the page is under 2500 px high (${height})`, height < 2500);
    await checkStageIn(page);
    await checkBlur(page);
    await checkGrayscale(page);
    check('no page errors', pageErrors.length === 0, pageErrors.join('\n'));
    await page.setViewportSize({ width: 1400, height: 1000 });
    await page.evaluate(() => window.scrollTo(0, 0));
    writeFileSync(join(ROOT, 'docs', 'playground.png'), await page.screenshot({ fullPage: true }));
  } catch (err) {
    check('the test ran to the end', false, err.stack || String(err));
  } finally {
    await context?.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

process.exit(await main());
