//! `[[threadgroup(n)]]` pointers without a length from the host: a kernel
//! that uses one only as one object (`*p`, `p->m`, `p[0]`) gets one
//! element, `sizeof(T)` in Metal's layout (a larger allocation could not
//! be observed); one that indexes, offsets or passes it on needs the length
//! and gets an error at that use.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use common::source::{assert_error, translate_body};

/// Thread 0 fills a struct in threadgroup memory through `->`, `*` and
/// `[0]`; after the barrier every thread reads it back.
const SINGLE_OBJECT: &str = "struct S { float3 v; int k; uint c[3]; };
kernel void k(device uint* out [[buffer(0)]],
              threadgroup S* s [[threadgroup(0)]],
              uint i [[thread_position_in_grid]],
              uint l [[thread_index_in_threadgroup]]) {
  if (l == 0) {
    s->v = float3(1.5f, 2.5f, 3.5f);
    (*s).k = 7;
    s[0].c[0] = 100u; s[0].c[1] = 200u; s[0].c[2] = 300u;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  threadgroup float3& v = (*s).v;
  out[i] = uint(v.y * 2.0f) + uint(s->k) * 10u + s[0u].c[i % 3u] + i * 1000u;
}
";

#[test]
fn a_single_object_pointer_needs_no_length_and_reflects_sizeof() {
    let lib = translate_body(SINGLE_OBJECT);
    let arg = lib
        .function("k")
        .unwrap()
        .arguments
        .iter()
        .find(|a| a.name == "s")
        .unwrap();
    let tg = arg.threadgroup.as_ref().unwrap();
    // float3 is 16 bytes at alignment 16; int, then uint[3]: 32 bytes.
    assert_eq!(
        (tg.alignment, tg.data_size, arg.active),
        (16, Some(32), true)
    );
}

/// Translates `body` (after the prelude) with default options and returns
/// the library and its first warning, rendered.
fn translate_warning(body: &str) -> (msl2wgsl::Library, String) {
    let lib = translate_body(body);
    let warning = lib
        .warnings()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    (lib, warning)
}

/// `t.metal:LINE:COL` of the first `at` in `body` (after the prelude).
fn location(body: &str, at: &str) -> String {
    let offset = body
        .find(at)
        .unwrap_or_else(|| panic!("`{at}` not in the source"));
    let before = &body[..offset];
    let line = before.matches('\n').count() + 3;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("t.metal:{line}:{col}")
}

const INDEXED: &str = "kernel void k(threadgroup float* t [[threadgroup(0)]], device float* o [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
  t[0] = 1.0f;
  *t = 2.0f;
  t[i] = 3.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  o[i] = t[(i + 1) % 4];
}
kernel void other(device float* o [[buffer(0)]]) { o[0] = 1.0f; }
";

#[test]
fn an_indexed_pointer_is_reflected_with_no_length_and_left_out_of_the_wgsl() {
    let (lib, warning) = translate_warning(INDEXED);
    let want = format!(
        "{}: warning: the length of threadgroup memory `[[threadgroup(0)]]` is not known, and indexing `t` here needs it",
        location(INDEXED, "t[i]")
    );
    assert!(
        warning.starts_with(&want),
        "want `{want}`\n got `{warning}`"
    );
    let codes: Vec<_> = lib
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(
        codes,
        [msl2wgsl::diagnostics::Code::ThreadgroupLengthAtDispatch]
    );
    let all = lib.warnings();
    assert!(all.contains("--threadgroup-memory 0=BYTES"), "{all}");
    assert!(all.contains("Options::threadgroup_memory"), "{all}");
    assert!(all.contains("set_threadgroup_memory_length"), "{all}");
    assert!(all.contains("just one `float`"), "{all}");
    let k = lib.function("k").unwrap();
    let tg = k.arguments.iter().find(|a| a.name == "t").unwrap();
    assert_eq!(tg.threadgroup.as_ref().unwrap().data_size, None);
    let json = serde_json::to_value(tg).unwrap();
    assert!(json["threadgroup"]["dataSize"].is_null(), "{json}");
    // The other kernel is translated as usual; `k` waits for its length.
    assert!(lib.function_wgsl("other").is_some());
    assert!(lib.function_wgsl("k").is_none());
    let other = &lib.function("other").unwrap().wgsl_entry_point;
    assert!(
        lib.wgsl().contains(&format!("fn {other}(")),
        "{}",
        lib.wgsl()
    );
    assert_eq!(lib.wgsl().matches("@compute").count(), 1, "{}", lib.wgsl());
}

#[test]
fn offsetting_passing_and_re_addressing_need_the_length() {
    let cases = [
        (
            "threadgroup float* q = t + 1; *q = 1.0f;",
            "t + 1",
            "pointer arithmetic on `t` needs it",
        ),
        ("f(t);", "f(t)", "passing `t` to a function needs it"),
        (
            "threadgroup float* q = &t[0]; q[1] = 1.0f;",
            "&t[0]",
            "taking the address of `t`'s element needs it",
        ),
        (
            "threadgroup float* q = t; *q = 1.0f;",
            "t;",
            "this use of `t` needs it",
        ),
    ];
    for (stmt, at, what) in cases {
        let body = format!(
            "void f(threadgroup float* p) {{ p[1] = 0.0f; }}\n\
             kernel void k(threadgroup float* t [[threadgroup(2)]]) {{\n  *t = 0.0f;\n  {stmt}\n}}\n"
        );
        let (lib, warning) = translate_warning(&body);
        let want = format!(
            "{}: warning: the length of threadgroup memory `[[threadgroup(2)]]` is not known, and {what}",
            location(&body, at)
        );
        assert!(
            warning.starts_with(&want),
            "want `{want}`\n got `{warning}`"
        );
        assert!(lib.function_wgsl("k").is_none());
    }
}

#[test]
fn a_given_length_still_allows_indexing() {
    let src = format!(
        "{}kernel void k(threadgroup float* t [[threadgroup(0)]], uint i [[thread_index_in_threadgroup]]) {{ t[i] = 1.0f; threadgroup float* q = &t[i]; q[0] += 1.0f; }}\n",
        common::source::PRELUDE
    );
    let options = msl2wgsl::Options {
        threadgroup_memory: vec![(0, 64)],
        ..msl2wgsl::Options::default()
    };
    let lib = msl2wgsl::Library::from_source("t.metal", &src, &options)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    assert!(lib.wgsl().contains("array<f32, 16>"), "{}", lib.wgsl());
}

#[cfg(feature = "runner")]
#[test]
fn a_single_object_pointer_runs() {
    use common::u32s;
    let n = 8u32;
    let Some(out) = common::source::run_body(
        SINGLE_OBJECT,
        "k",
        (n, 4),
        vec![(0, vec![0u8; n as usize * 4])],
    ) else {
        return;
    };
    let c = [100u32, 200, 300];
    let want: Vec<u32> = (0..n)
        .map(|i| 5 + 70 + c[(i % 3) as usize] + i * 1000)
        .collect();
    assert_eq!(u32s(&out[&0]), want);
}

/// Pointers made by `&` to a member of a buffer or of threadgroup memory
/// are in that memory's address space (a cast naming it changes nothing),
/// and a vector or array viewed as a pointer to its elements reaches each
/// component, as SPIR-V Cross's partial access chains write it.
const ELEMENT_VIEWS: &str = "struct S { float4 v; float4x4 m; };
kernel void k(device S& s [[buffer(0)]]) {
  threadgroup float4 tg;
  ((device float*)&s.v)[1u] = 40.0f;
  ((device float*)&s.m[2])[3] = 20.0f;
  tg = float4(1.0f, 2.0f, 3.0f, 4.0f);
  ((threadgroup float*)&tg)[2u] = 9.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float a[4] = {5.0f, 6.0f, 7.0f, 8.0f};
  thread float* pa = (thread float*)&a;
  const device float* c = (const device float*)&s.m[1];
  s.v.w = pa[2] + tg.z + *(c + 1);
}
";

#[test]
fn a_cast_to_another_address_space_is_still_refused() {
    let body = "kernel void k(device float4* b [[buffer(0)]]) {
  threadgroup float4 t;
  ((threadgroup float*)&b[0])[1] = 1.0f;
  ((device float*)&t)[1] = 1.0f;
}
";
    assert_error(
        body,
        "((threadgroup float*)&b[0])",
        0,
        "cannot cast a `device` pointer to a `threadgroup` pointer: address spaces differ",
    );
}

#[test]
fn a_const_element_view_cannot_be_written() {
    let body = "kernel void k(device float4* b [[buffer(0)]]) {
  thread float4 v = b[0];
  ((const thread float*)&v)[1] = 1.0f;
}
";
    assert_error(
        body,
        "((const thread float*)&v)[1]",
        0,
        "cannot assign to a read-only location",
    );
}

#[cfg(feature = "runner")]
#[test]
fn element_views_of_vectors_and_arrays_run() {
    use common::{f32_bytes, f32s, gpu};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = gpu() else { return };
    let init: Vec<f32> = (0..20).map(|i| i as f32).collect();
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, f32_bytes(&init))].into_iter().collect();
    let src = format!("{}{ELEMENT_VIEWS}", common::source::PRELUDE);
    let out = run_kernel(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [1, 1, 1],
            threadgroup: [1, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut want = init.clone();
    want[1] = 40.0; // v.y
    want[4 + 2 * 4 + 3] = 20.0; // m[2][3]
    want[3] = 7.0 + 9.0 + init[4 + 4 + 1]; // pa[2] + tg.z + m[1][1]
    assert_eq!(f32s(&out[&0]), want);
}

/// Each thread writes its slot of threadgroup memory as long as the
/// threadgroup, then reads its neighbour's.
#[cfg(feature = "runner")]
const ROTATE: &str = "kernel void rotate(threadgroup float* t [[threadgroup(0)]],
                   device float* o [[buffer(0)]],
                   uint i [[thread_index_in_threadgroup]],
                   uint w [[threads_per_threadgroup]],
                   uint g [[thread_position_in_grid]]) {
  t[i] = float(g * g);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  o[g] = t[(i + 1) % w];
}
";

#[cfg(feature = "runner")]
#[test]
fn a_kernel_translated_at_dispatch_runs_with_the_length_set_there() {
    use common::{f32s, gpu};
    use msl2wgsl::runner::ComputePipeline;
    use wgpu::util::DeviceExt;
    let Some(gpu) = gpu() else { return };
    let lib = translate_body(ROTATE);
    assert!(lib.function_wgsl("rotate").is_none());
    let pipeline = ComputePipeline::new(gpu, &lib, "rotate").unwrap_or_else(|e| panic!("{e}"));
    let (n, width) = (32u32, 8u32);
    let out = gpu
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("o"),
            contents: &vec![0u8; n as usize * 4],
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });
    let mut command = pipeline.encoder();
    command.set_buffer(0, &out, 0).unwrap();
    // Without the length the kernel cannot be translated.
    let e = command
        .dispatch_threads(gpu, [n, 1, 1], [width, 1, 1])
        .unwrap_err()
        .to_string();
    assert!(e.contains("set_threadgroup_memory_length"), "{e}");
    command
        .set_threadgroup_memory_length(0, width * 4)
        .unwrap()
        .dispatch_threads(gpu, [n, 1, 1], [width, 1, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f32> = (0..n)
        .map(|g| {
            let (group, i) = (g / width, g % width);
            let neighbour = group * width + (i + 1) % width;
            (neighbour * neighbour) as f32
        })
        .collect();
    assert_eq!(f32s(&gpu.read_buffer(&out).unwrap()), want);
}

/// Plain buffer data accessed atomically through a pointer cast, as SPIR-V
/// Cross writes atomics on an SSBO member; other members stay plain.
#[cfg(feature = "runner")]
const ATOMIC_CASTS: &str = "struct Counters { uint a; uint b; int c; float f; };
kernel void k(device Counters& s [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit((device atomic_uint*)&s.a, 1u, memory_order_relaxed);
  atomic_fetch_max_explicit((device atomic_uint*)&s.b, i, memory_order_relaxed);
  if (i == 3u) {
    s.f = s.f + float(s.c);
  }
}
";

#[cfg(feature = "runner")]
#[test]
fn plain_buffer_data_cast_to_atomics_runs() {
    use common::{gpu, u32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = gpu() else { return };
    let mut init = Vec::new();
    for w in [10u32, 7, (-5i32) as u32, 1.5f32.to_bits()] {
        init.extend(w.to_le_bytes());
    }
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, init)].into_iter().collect();
    let src = format!("{}{ATOMIC_CASTS}", common::source::PRELUDE);
    let out = run_kernel(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [64, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        u32s(&out[&0]),
        [74, 63, (-5i32) as u32, (-3.5f32).to_bits()]
    );
}

/// A threadgroup array passed for a `threadgroup T*` parameter decays to
/// a pointer to its first element (C++ [conv.array]), as MLX's kernels
/// hand their scratch memory to a `run(.., tgp_memory, ..)` helper; also
/// chosen by a constant `?:` over `nullptr` and offset in the callee.
const ARRAY_ARGUMENTS: &str = "
float reduce_pairs(threadgroup float* scratch, uint l, uint n) {
  scratch[l] = float(l + 1u);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  threadgroup float* upper = scratch + n / 2u;
  return l < n / 2u ? scratch[l] + upper[l] : 0.0f;
}
kernel void k(device float* out [[buffer(0)]],
              uint i [[thread_position_in_grid]],
              uint l [[thread_index_in_threadgroup]]) {
  threadgroup float mem[8];
  constexpr int size = 8;
  out[i] = reduce_pairs(size == 0 ? nullptr : mem, l, 8u) + reduce_pairs(mem, l, 4u);
}
";

#[cfg(feature = "runner")]
#[test]
fn threadgroup_arrays_decay_to_pointer_arguments() {
    use common::f32s;
    let n = 16u32;
    let Some(out) = common::source::run_body(
        ARRAY_ARGUMENTS,
        "k",
        (n, 8),
        vec![(0, vec![0u8; n as usize * 4])],
    ) else {
        return;
    };
    // scratch[l] = l + 1 in both calls; lane l < n/2 adds scratch[l + n/2].
    let pairs = |l: u32, n: u32| {
        if l < n / 2 {
            ((l + 1) + (l + n / 2 + 1)) as f32
        } else {
            0.0
        }
    };
    let want: Vec<f32> = (0..n).map(|i| pairs(i % 8, 8) + pairs(i % 8, 4)).collect();
    assert_eq!(f32s(&out[&0]), want);
}

/// `tile + offset` of a `threadgroup` array: the array decays to a pointer
/// to its first element (C++ [conv.array]), as MLX's scan writes
/// `read_buffer + read_offset_y * BN_pad + read_offset_x`.
#[cfg(feature = "runner")]
#[test]
fn threadgroup_array_plus_offset_is_a_pointer() {
    let body = r#"
kernel void shift(device int* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup int tile[2 * 16 + 4];
  threadgroup int* mine = tile + 2 * lid + 4;
  mine[0] = int(lid) * 3;
  mine[1] = int(lid) + 100;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  threadgroup int* base = tile + 4;
  out[lid] = base[(2 * lid + 3) % 32] + *(tile + 4 + 2 * lid);
}
"#;
    let Some(out) = common::source::run_body(body, "shift", (16, 16), vec![(0, vec![0u8; 64])])
    else {
        return;
    };
    let got: Vec<i32> = out[&0]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    // tile[4 + 2l] = 3l, tile[4 + 2l + 1] = l + 100.
    let slot = |k: usize| {
        if k.is_multiple_of(2) {
            3 * (k / 2) as i32
        } else {
            (k / 2) as i32 + 100
        }
    };
    for (l, g) in got.iter().enumerate() {
        assert_eq!(*g, slot((2 * l + 3) % 32) + 3 * l as i32, "[{l}]");
    }
}

/// A `threadgroup` array passed to a function template taking
/// `threadgroup T*`: array-to-pointer is an exact match in overload
/// ranking ([conv.array]), as MLX's layer norm calls
/// `initialize_buffer(local_buffer, ..)`.
#[cfg(feature = "runner")]
#[test]
fn threadgroup_arrays_decay_for_template_pointer_parameters() {
    let body = r#"
template <int N = 1>
void clear(threadgroup float* xs, uint lane) { for (int i = 0; i < N; i++) xs[N * lane + i] = float(lane); }
template <typename T>
T first(threadgroup T* xs) { return xs[0] + xs[1]; }
kernel void decay(device float* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[32];
  clear<2>(tile, lid % 16);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = first(tile) + tile[lid];
}
"#;
    let Some(got) =
        common::source::run_body_f32s(body, "decay", (32, 32), vec![(0, vec![0u8; 128])], 0)
    else {
        return;
    };
    for (lid, g) in got.iter().enumerate() {
        // tile[2l] = tile[2l + 1] = l for l < 16.
        assert_eq!(*g, (lid / 2) as f32, "[{lid}]");
    }
}
