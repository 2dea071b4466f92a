// msl2wgsl's translator as an ES module: `await init()` once (in Node,
// `initSync({ module: bytes })` with the .wasm file's bytes), then
// `translate(source, options)`. Types: index.d.ts.
export {
  default,
  default as init,
  initSync,
  translate,
  lastPanic,
  version,
} from './pkg/msl2wgsl_wasm.js';
