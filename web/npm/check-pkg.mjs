// `npm pack` runs this first: a package without the WebAssembly module
// would install and fail at the first call.
import { existsSync } from 'node:fs';

const missing = ['pkg/msl2wgsl_wasm.js', 'pkg/msl2wgsl_wasm_bg.wasm'].filter(
  (f) => !existsSync(new URL(f, import.meta.url)),
);
if (missing.length > 0) {
  console.error(`missing ${missing.join(', ')}: run \`npm run build\` (build.sh) first`);
  process.exit(1);
}
