// Decodes the PNGs Chromium's screenshots are (8-bit RGB or RGBA, not
// interlaced) into RGBA pixels, so the test can check colours without a
// PNG package.
import { inflateSync } from 'node:zlib';

/** { width, height, data: Uint8Array RGBA } of a PNG buffer. */
export function decodePng(png) {
  const bytes = new Uint8Array(png);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 8;
  let header = null;
  const idat = [];
  while (at < bytes.length) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const body = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      const h = new DataView(body.buffer, body.byteOffset, body.length);
      header = { width: h.getUint32(0), height: h.getUint32(4), depth: body[8], color: body[9], interlace: body[12] };
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
    at += 12 + length;
  }
  if (!header || header.depth !== 8 || header.interlace !== 0 || ![2, 6].includes(header.color)) {
    throw new Error(`unsupported PNG ${JSON.stringify(header)}`);
  }
  const channels = header.color === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = header.width * channels;
  const pixels = new Uint8Array(header.height * stride);
  for (let y = 0; y < header.height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const prior = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels] : 0;
      const b = prior[i];
      const c = i >= channels ? prior[i - channels] : 0;
      out[i] = (line[i] + predictor(filter, a, b, c)) & 0xff;
    }
  }
  const data = new Uint8Array(header.width * header.height * 4);
  for (let p = 0; p < header.width * header.height; p++) {
    data.set(pixels.subarray(p * channels, p * channels + 3), p * 4);
    data[p * 4 + 3] = channels === 4 ? pixels[p * channels + 3] : 255;
  }
  return { width: header.width, height: header.height, data };
}

function predictor(filter, a, b, c) {
  switch (filter) {
    case 0: return 0;
    case 1: return a;
    case 2: return b;
    case 3: return (a + b) >> 1;
    case 4: {
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    default: throw new Error(`bad PNG filter ${filter}`);
  }
}
