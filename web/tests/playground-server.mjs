// A tiny static file server for web/playground on 127.0.0.1, used by
// playground.test.mjs and for trying the page by hand:
//   node web/tests/playground-server.mjs [PORT]   → prints the page's URL
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.metal': 'text/plain; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
};

export const PLAYGROUND = resolve(fileURLToPath(new URL('../playground', import.meta.url)));

/** Serves `root` on 127.0.0.1:`port` (0: any free port); resolves to { url, close }. */
export function servePlayground(root = PLAYGROUND, port = 0) {
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
    const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    if (file !== root && !file.startsWith(root + sep)) {
      response.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, {
        'content-type': TYPES[extname(file)] || 'application/octet-stream',
        'cache-control': 'no-store',
      });
      response.end(body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  return new Promise((resolvePromise) => {
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address();
      resolvePromise({
        url: `http://127.0.0.1:${bound}/`,
        close: () => new Promise((done) => server.close(done)),
      });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { url } = await servePlayground(PLAYGROUND, Number(process.argv[2] || 8080));
  console.log(`playground: ${url}`);
}
