// Types of msl2wgsl's WebAssembly translator. The objects `translate`
// returns are the crate's JSON: the reflection schema of docs/REFLECTION.md
// (schema version 1) and the diagnostics of docs/DIAGNOSTICS.md.

/** What `init` and `initSync` accept: the .wasm's URL, bytes or module. */
export type InitInput =
  | RequestInfo
  | URL
  | Response
  | BufferSource
  | WebAssembly.Module;

/**
 * Loads the WebAssembly module (by default from `msl2wgsl_wasm_bg.wasm`
 * next to this package's JavaScript, with `fetch`). Call once before
 * `translate`; later calls resolve to the same instance.
 */
export default function init(
  options?: { module_or_path?: InitInput | Promise<InitInput> },
): Promise<unknown>;
export { init };

/** Loads the module synchronously from its bytes (Node: `readFileSync`). */
export function initSync(options: { module: BufferSource | WebAssembly.Module }): unknown;

/** Translation options; every key is optional (`{}`: the defaults). */
export interface TranslateOptions {
  /** WGSL dialect: `"webgpu"` (default; browsers) or `"wgpu"` (wgpu's extensions). */
  target?: 'webgpu' | 'wgpu';
  /** Only these functions (all kernel, vertex and fragment functions when empty). */
  entries?: string[];
  /** `-D`: `["A", "B=2"]`, or `{ A: null, B: 2 }` (`null`/`true`: no value, i.e. 1). */
  defines?: string[] | Record<string, string | number | boolean | null>;
  /** `@workgroup_size` of every kernel: `64` or `[8, 8]` or `[4, 4, 4]`. */
  threadgroupSize?: number | [number] | [number, number] | [number, number, number];
  /** Which of `__METAL_MACOS__`/`__METAL_IOS__` is defined (default `"macos"`). */
  platform?: 'macos' | 'ios';
  /** `half` as WGSL `f16` (default; needs `shader-f16`) or as `f32` rounded to half. */
  half?: 'f16' | 'f32';
  /** Bytes of each `[[threadgroup(n)]]` argument, keyed by `n`. */
  threadgroupMemory?: Record<number, number>;
  /** Texel format of each storage `[[texture(n)]]`, keyed by `n` (`"rgba8unorm"`, ...). */
  textureFormats?: Record<number, string>;
  /** Bindings instead of the default scheme (docs/REFLECTION.md, "binding map"). */
  bindingMap?: Record<string, Partial<Record<'buffer' | 'texture' | 'sampler', Record<string, Binding>>>>;
  /** The file name diagnostics use (default `"shader.metal"`). */
  name?: string;
  /** Also return each function's own WGSL module in `functionWgsl`. */
  functionWgsl?: boolean;
  /**
   * In-memory headers by name, `{ "MyTypes.h": "..." }`: `#include "MyTypes.h"`
   * finds them after the includer's folder and the include paths.
   */
  headers?: Record<string, string>;
}

/** One error or warning, located for an editor. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  /** One line. */
  message: string;
  /** Stable code (`E0301`, `W0404`; docs/DIAGNOSTICS.md). */
  code: string | null;
  /** The file it points into; `null` when unlocated. */
  file: string | null;
  /** 1-based line of the start. */
  line: number | null;
  /** 1-based column of the start, in UTF-16 code units (JavaScript string indices). */
  column: number | null;
  /** 1-based line of the end (exclusive), when the extent is known. */
  endLine?: number;
  /** 1-based column of the end (exclusive), when the extent is known. */
  endColumn?: number;
  /** `note:` lines. */
  notes: string[];
  /** The compiler's text: `FILE:LINE:COL: error: MESSAGE [CODE]`, the line, a caret, the notes. */
  rendered: string;
}

/** A WGSL `@group(g) @binding(b)`. */
export interface Binding {
  group: number;
  binding: number;
}

export interface StructMember {
  name: string;
  offset: number;
  dataType: string;
  size: number;
  structType?: StructType;
  arrayType?: ArrayType;
  /** In an argument buffer: the member's `[[id(n)]]`, given or assigned. */
  argumentIndex?: number;
}

export interface StructType {
  name: string;
  members: StructMember[];
}

export interface ArrayType {
  elementType: string;
  arrayLength: number;
  stride: number;
  elementStructType?: StructType;
  elementArrayType?: ArrayType;
}

/** A function argument with a Metal index (`MTLArgument`). */
export interface Argument {
  name: string;
  type: 'buffer' | 'texture' | 'sampler' | 'threadgroupMemory';
  /** n of `[[buffer(n)]]`, `[[texture(n)]]`, `[[sampler(n)]]`, `[[threadgroup(n)]]`. */
  index: number;
  access: 'read' | 'write' | 'read_write';
  /** Used by the function (unused arguments need no resource). */
  active: boolean;
  /** `null` for threadgroup memory. */
  binding: Binding | null;
  buffer: {
    alignment: number;
    dataSize: number;
    dataType: string;
    isPointer: boolean;
    structType?: StructType;
    arrayType?: ArrayType;
    bindingType: 'uniform' | 'storage' | 'read-only-storage';
    /** A `constant T*` read at constant indices only (a uniform): the bytes to bind. */
    bindingSize?: number;
  } | null;
  threadgroup: { alignment: number; dataSize: number } | null;
  texture?: {
    textureType: string;
    dataType: string;
    viewDimension: string;
    bindingKind: string;
    sampleType: string;
    multisampled: boolean;
    storageFormat: string | null;
  };
  sampler?: { comparison: boolean };
  /**
   * An argument buffer's textures, samplers and pointers, each bound on its
   * own (`index`: its `[[id(n)]]`); the argument's `binding` holds its
   * plain data. See docs/REFLECTION.md, "Argument buffers".
   */
  argumentBufferMembers?: Argument[];
}

export interface SamplerDescriptor {
  addressModeU: string;
  addressModeV: string;
  addressModeW: string;
  magFilter: string;
  minFilter: string;
  mipmapFilter: string;
  lodMinClamp: number;
  lodMaxClamp: number;
  compare: string | null;
  anisotropyClamp: number;
  borderColor: string | null;
}

export interface FunctionConstant {
  name: string;
  /** n of `[[function_constant(n)]]`, also the WGSL `@id`. */
  index: number;
  dataType: string;
  required: boolean;
  /** Optional constants: the `@id` of the bool override saying whether it was set. */
  definedId?: number;
}

/** One translated function (docs/REFLECTION.md, `Function`). */
export interface FunctionReflection {
  name: string;
  /** Its name in the WGSL (reserved words are renamed). */
  wgslEntryPoint: string;
  stage: 'kernel' | 'vertex' | 'fragment';
  workgroupSize: [number, number, number] | null;
  arguments: Argument[];
  builtins: { name: string; attribute: string; dataType: string }[];
  /** Kernels: the uniform with Metal's grid. */
  dispatchBinding: Binding | null;
  /**
   * Kernels whose threads past the grid run, predicated, to the barriers.
   * Their module declares `override metal_whole_grid: bool = false;`: pass
   * `constants: { metal_whole_grid: 1 }` when the dispatch launches only
   * threads inside Metal's grid, and the per-store test goes.
   */
  usesBarriers: boolean;
  /** wgpu/WebGPU features the device needs (`"shader-f16"`, `"subgroups"`, ...). */
  requiredFeatures: string[];
  /** WebGPU limits needed above the defaults. */
  requiredLimits: Record<string, number>;
  constexprSamplers: { name: string; binding: Binding; descriptor: SamplerDescriptor }[];
  vertexAttributes?: { name: string; index: number; dataType: string; format: string; offset: number }[];
  vertexStride: number;
  varyings?: { name: string; location: number; dataType: string; interpolation: string }[];
  colorOutputs?: { index: number; blendSrc: number | null; dataType: string }[];
  functionConstants?: FunctionConstant[];
  /** `[[stitchable]]` functions: how SwiftUI would call them. */
  stitchable?: Record<string, unknown>;
  /**
   * Vertex functions reading `[[base_vertex]]`/`[[base_instance]]`, and
   * those run as compute dispatches: a uniform of 16 bytes holding the
   * draw's base vertex and base instance as little-endian u32s.
   */
  drawParametersBinding?: Binding;
  /**
   * `vertex void` functions (rasterization disabled): a `@compute` entry
   * point, dispatched over (vertexCount, instanceCount, 1) threads.
   */
  vertexDispatch?: { threadgroupSize: [number, number, number]; grid: ['vertexCount', 'instanceCount', '1'] };
  /** Fields added without a schema version bump. */
  [field: string]: unknown;
}

/** `msl2wgsl reflect`'s document. */
export interface ReflectionDocument {
  schemaVersion: 1;
  functions: FunctionReflection[];
}

/** What `translate` returns. */
export type Translation =
  | {
      ok: true;
      /** The WGSL module with every translated function. */
      wgsl: string;
      reflection: ReflectionDocument;
      /** Warnings. */
      diagnostics: Diagnostic[];
      /** With `functionWgsl: true`: each function's own module, by MSL name. */
      functionWgsl?: Record<string, string>;
    }
  | {
      ok: false;
      wgsl: null;
      reflection: null;
      /** The errors (and the warnings found before them). */
      diagnostics: Diagnostic[];
    };

/**
 * Translates MSL `source`. Throws only for bad options; a source that does
 * not translate gives `ok: false` and its diagnostics. An internal compiler
 * error aborts the instance (a `WebAssembly.RuntimeError`): `lastPanic()`
 * then gives its message, and a fresh instance is needed.
 */
export function translate(source: string, options?: TranslateOptions): Translation;

/** The message of the panic that aborted the last call, if any. */
export function lastPanic(): string | undefined;

/** The crate version of the translator. */
export function version(): string;
