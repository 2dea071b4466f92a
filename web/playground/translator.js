// Loads msl2wgsl's WebAssembly build (pkg/, made by web/build-wasm.sh) and
// wraps its `translate` so that an internal compiler error (a Rust panic,
// which aborts the wasm instance) becomes an error diagnostic and the next
// call gets a fresh instance.

let instance = null;
let generation = 0;

async function load() {
  // A new URL gives a new module record, hence a new wasm instance: the
  // aborted one may have left its stack and heap in any state.
  const suffix = generation === 0 ? '' : `?instance=${generation}`;
  const module = await import(`./pkg/msl2wgsl_wasm.js${suffix}`);
  await module.default();
  return module;
}

/** Loads the translator once; resolves to the module's exports. */
export async function ready() {
  if (!instance) {
    instance = await load();
  }
  return instance;
}

/**
 * Calls `call(wasm)`: `{ value }`, or `{ panic }` with the panic message when
 * the translator aborted (the next call then gets a fresh instance).
 */
async function guarded(call) {
  const wasm = await ready();
  try {
    return { value: call(wasm) };
  } catch (err) {
    if (!(err instanceof WebAssembly.RuntimeError)) {
      throw err;
    }
    const panic = safely(() => wasm.lastPanic()) || String(err);
    instance = null;
    generation += 1;
    return { panic };
  }
}

/**
 * translate(source, options) → { ok, wgsl, reflection, diagnostics, functionWgsl? }.
 * Bad options throw; a crash of the translator is returned as a failed
 * translation with one unlocated error.
 */
export async function translate(source, options = {}) {
  const result = await guarded((wasm) => wasm.translate(source, options));
  if (!('panic' in result)) {
    return result.value;
  }
  const message = `internal compiler error (a bug in msl2wgsl): ${result.panic}`;
  return {
    ok: false,
    wgsl: null,
    reflection: null,
    diagnostics: [{
      severity: 'error', message, code: null, file: null, line: null, column: null, notes: [],
      rendered: `msl2wgsl: error: ${message}\n`,
    }],
  };
}

/** Makes the translator panic; resolves to the panic message it reported. */
export async function panicForTesting() {
  return (await guarded((wasm) => wasm.panicForTesting())).panic;
}

function safely(f) {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** The translator's version. */
export async function version() {
  return (await ready()).version();
}
