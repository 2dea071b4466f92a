// Buffer contents in Metal's layout, from the reflection: the scalar
// "leaves" of an element type (offset and scalar type of every component),
// generated inputs (ramp or random), and values read back for display.

const SCALARS = {
  float: { size: 4, kind: 'f32' },
  half: { size: 2, kind: 'f16' },
  int: { size: 4, kind: 'i32' },
  uint: { size: 4, kind: 'u32' },
  short: { size: 2, kind: 'i16' },
  ushort: { size: 2, kind: 'u16' },
  char: { size: 1, kind: 'i8' },
  uchar: { size: 1, kind: 'u8' },
  bool: { size: 1, kind: 'u8' },
  int32_t: { size: 4, kind: 'i32' },
  uint32_t: { size: 4, kind: 'u32' },
  int16_t: { size: 2, kind: 'i16' },
  uint16_t: { size: 2, kind: 'u16' },
  int8_t: { size: 1, kind: 'i8' },
  uint8_t: { size: 1, kind: 'u8' },
};

const TYPE_PATTERN = /^(?:packed_|vector_|simd_)?(?:atomic_)?([a-z0-9_]+?)([234])?(?:x([234]))?$/;

/**
 * The leaves of a type named `dataType` (with its reflection `structType` /
 * `arrayType`, when a struct or an array): `[{offset, kind}]`, or null when
 * the playground cannot fill it.
 */
export function leavesOf(dataType, structType, arrayType, base = 0) {
  if (structType) {
    const out = [];
    for (const m of structType.members) {
      const leaves = leavesOf(m.dataType, m.structType, m.arrayType, base + m.offset);
      if (!leaves) return null;
      out.push(...leaves);
    }
    return out;
  }
  if (arrayType) {
    const out = [];
    for (let i = 0; i < arrayType.arrayLength; i++) {
      const leaves = leavesOf(arrayType.elementType, arrayType.elementStructType,
        arrayType.elementArrayType, base + i * arrayType.stride);
      if (!leaves) return null;
      out.push(...leaves);
    }
    return out;
  }
  return scalarOrVectorLeaves(dataType, base);
}

/** `float`, `uint2`, `packed_float3`, `float4x4` (columns of vectors). */
function scalarOrVectorLeaves(dataType, base) {
  const m = TYPE_PATTERN.exec(dataType.replace(/^(const|device|constant)\s+/, ''));
  if (!m || !SCALARS[m[1]]) return null;
  const scalar = SCALARS[m[1]];
  const packed = dataType.startsWith('packed_');
  const first = m[2] ? Number(m[2]) : 1;
  // Matrices floatCxR: C columns, each an R-vector aligned like one.
  const [count, columnCount] = m[3] ? [Number(m[3]), first] : [first, 1];
  const vectorBytes = count * scalar.size;
  const columnStride = packed || count !== 3 ? vectorBytes : 4 * scalar.size;
  const out = [];
  for (let c = 0; c < columnCount; c++) {
    for (let k = 0; k < count; k++) {
      out.push({ offset: base + c * columnStride + k * scalar.size, kind: scalar.kind });
    }
  }
  return out;
}

/** The leaves of a WebGPU vertex format (`float32x3`, `uint8x4`, `unorm8x4`). */
export function formatLeaves(format, base) {
  const m = /^(float|uint|sint|unorm|snorm)(8|16|32)(?:x([234]))?$/.exec(format);
  if (!m) return null;
  const bits = Number(m[2]);
  const count = m[3] ? Number(m[3]) : 1;
  const kind = {
    float: bits === 16 ? 'f16' : 'f32',
    uint: `u${bits}`, unorm: `u${bits}`,
    sint: `i${bits}`, snorm: `i${bits}`,
  }[m[1]];
  return Array.from({ length: count }, (_, k) => ({ offset: base + k * (bits / 8), kind }));
}

/** A deterministic pseudo-random sequence in [0, 1) (xorshift32). */
export function randomSource(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

/**
 * A generated value for leaf `leaf` of element `i`: `ramp` gives `i + offset`
 * (wrapped into the type), `random` floats in [-1, 1) and integers in [0, 100).
 */
export function generatedValue(mode, leaf, i, offset, random) {
  const isFloat = leaf.kind === 'f32' || leaf.kind === 'f16';
  if (mode === 'ramp') {
    return isFloat ? i + offset : wrap(leaf.kind, i + offset);
  }
  if (isFloat) {
    return Math.fround(random() * 2 - 1);
  }
  return Math.floor(random() * 100);
}

function wrap(kind, v) {
  const bits = Number(kind.slice(1));
  const span = 2 ** bits;
  let w = ((v % span) + span) % span;
  if (kind[0] === 'i' && w >= span / 2) w -= span;
  return w;
}

/** Writes `value` as a leaf of kind `kind` at byte `at` of `view`. */
export function writeLeaf(view, at, kind, value) {
  switch (kind) {
    case 'f32': view.setFloat32(at, value, true); break;
    case 'f16': view.setUint16(at, toHalfBits(value), true); break;
    case 'i32': view.setInt32(at, value, true); break;
    case 'u32': view.setUint32(at, value, true); break;
    case 'i16': view.setInt16(at, value, true); break;
    case 'u16': view.setUint16(at, value, true); break;
    case 'i8': view.setInt8(at, value); break;
    case 'u8': view.setUint8(at, value); break;
    default: throw new Error(`unknown leaf kind ${kind}`);
  }
}

/** Reads a leaf of kind `kind` at byte `at` of `view`. */
export function readLeaf(view, at, kind) {
  switch (kind) {
    case 'f32': return view.getFloat32(at, true);
    case 'f16': return fromHalfBits(view.getUint16(at, true));
    case 'i32': return view.getInt32(at, true);
    case 'u32': return view.getUint32(at, true);
    case 'i16': return view.getInt16(at, true);
    case 'u16': return view.getUint16(at, true);
    case 'i8': return view.getInt8(at);
    case 'u8': return view.getUint8(at);
    default: throw new Error(`unknown leaf kind ${kind}`);
  }
}

/** One element as text: a scalar alone, several leaves in parentheses. */
export function formatElement(values) {
  const text = values.map((v) => (Object.is(v, -0) ? '-0' : String(v)));
  return text.length === 1 ? text[0] : `(${text.join(', ')})`;
}

/** IEEE binary16 bits of `value`, rounded to nearest even. */
export function toHalfBits(value) {
  const f32 = new Float32Array([value]);
  const x = new Uint32Array(f32.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    if (rest > midpoint || (rest === midpoint && (half & 1))) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;
  return sign | half;
}

/** The value of IEEE binary16 bits. */
export function fromHalfBits(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}
