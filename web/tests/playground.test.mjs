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
// pair renders the colours its formula gives. Saves docs/playground.png.

import { chromium } from 'playwright-core';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { servePlayground, PLAYGROUND } from './playground-server.mjs';
import { decodePng } from './playground-png.mjs';

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
    const defaults = { target: 'webgpu', platform: 'macos', half: 'auto', 'threadgroup-size': '', defines: '', entries: '', 'threadgroup-memory': '' };
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

/** Pixels of the canvas as the page shows them (a screenshot of its content box). */
async function canvasPixels(page) {
  await page.locator('#canvas').scrollIntoViewIfNeeded();
  const box = await page.evaluate(() => {
    const c = document.getElementById('canvas');
    const r = c.getBoundingClientRect();
    return { x: r.left + c.clientLeft, y: r.top + c.clientTop, width: c.clientWidth, height: c.clientHeight };
  });
  return decodePng(await page.screenshot({ clip: box }));
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
  const image = await canvasPixels(page);
  check('canvas screenshot is 256x256', image.width === 256 && image.height === 256, `${image.width}x${image.height}`);
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
    await page.goto(server.url);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60000 });
    const adapter = await page.evaluate(async () => {
      const a = await navigator.gpu?.requestAdapter();
      return a ? { f16: a.features.has('shader-f16') } : null;
    });
    check('the page has a WebGPU adapter', adapter !== null);
    const count = await checkFixtures(page);
    check('fixtures were found', count > 10, String(count));
    await checkInvalidSource(page);
    await checkReduce(page);
    await checkAddArrays(page);
    await checkPanicRecovery(page);
    await checkHalfKernel(page, adapter?.f16);
    await checkGradient(page);
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
