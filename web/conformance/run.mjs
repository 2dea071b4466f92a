// Runs prepared conformance jobs in headless Chromium's WebGPU.
//
//   node web/conformance/run.mjs JOBS.json RESULTS.json
//
// JOBS.json is what `msl2wgsl test --browser` (src/runner/conformance/
// browser.rs) writes: an array of jobs. This script serves this folder on
// 127.0.0.1, opens index.html in Chromium (CHROMIUM, default
// /usr/bin/chromium; SwiftShader's WebGPU adapter, no GPU needed) with a
// fresh profile, runs each job in the page and writes RESULTS.json:
// `{ adapter, features, results: { NAME: { buffers, error, usedF32Half } } }`.
// The Rust side checks the bytes. Exit status: 0 when every job ran (its
// result may still be an error), 1 when the browser could not be driven.

import { chromium } from 'playwright-core';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu-sandbox',
  '--enable-unsafe-webgpu',
  '--use-webgpu-adapter=swiftshader',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];
/** Milliseconds one job may take (SwiftShader is slow, not that slow). */
const JOB_TIMEOUT = 120_000;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript' };

/** Serves this folder's files (and nothing above it) on 127.0.0.1. */
function serve() {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = join(HERE, path === '/' ? 'index.html' : path);
    if (!file.startsWith(HERE) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    const type = TYPES[file.slice(file.lastIndexOf('.'))] || 'application/octet-stream';
    res.writeHead(200, { 'content-type': type }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function main() {
  const [jobsPath, resultsPath] = process.argv.slice(2);
  if (!jobsPath || !resultsPath) {
    console.error('usage: node web/conformance/run.mjs JOBS.json RESULTS.json');
    process.exit(2);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (set CHROMIUM)`);
  const jobs = JSON.parse(readFileSync(jobsPath, 'utf8'));
  const server = await serve();
  const profile = mkdtempSync(join(tmpdir(), 'msl2wgsl-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
    });
    const page = context.pages()[0] || (await context.newPage());
    const log = [];
    page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => log.push(`page error: ${e.message}`));
    await page.goto(`http://127.0.0.1:${server.address().port}/index.html`);
    try {
      await page.waitForFunction(() => window.conformance, null, { timeout: 30_000 });
      await page.evaluate(() => window.conformance.ready);
    } catch (e) {
      throw new Error(`the page has no WebGPU device: ${e.message}\n${log.join('\n')}`);
    }
    const report = await page.evaluate(() => window.conformance.adapterReport());
    console.error(`browser: ${await context.browser()?.version?.() ?? 'chromium'}; adapter: ${report.adapter}`);
    console.error(`adapter features: ${report.features.join(', ') || 'none'}`);
    const results = {};
    for (const job of jobs) {
      try {
        results[job.name] = await withTimeout(
          page.evaluate((j) => window.conformance.runJob(j), job),
          JOB_TIMEOUT,
          job.name,
        );
      } catch (e) {
        results[job.name] = { buffers: {}, error: String(e.message || e), usedF32Half: false };
      }
      if (results[job.name].usedF32Half) {
        console.error(`${job.name}: no shader-f16, ran with half as f32`);
      }
    }
    writeFileSync(resultsPath, JSON.stringify({ ...report, results }));
  } finally {
    if (context) await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`run.mjs: ${e.stack || e}`);
  process.exit(1);
});
