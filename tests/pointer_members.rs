//! Structs with pointer, reference, texture and sampler members (issue #18):
//! Tint's `tint_module_vars_struct` shape, built in a kernel and passed by
//! value to helpers (src/lower/metal/pointer_members.rs); GPU runs compared
//! with CPU references, and located errors for what WGSL cannot express.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use common::source::{assert_error, translate_body, PRELUDE};

/// Tint's shape: device, const device, constant, threadgroup (array and
/// struct member), thread and atomic pointers in one struct, passed down
/// two levels of helpers, read and written through.
const MODULE_VARS: &str = r#"
struct Params { float scale; uint n; };
struct Shared { float a; float b; };
struct tint_module_vars_struct {
  device float* out;
  const device float* in;
  const constant Params* params;
  threadgroup float* tg;
  threadgroup float* shared_b;
  thread int* count;
  device atomic_uint* hits;
  device float& last;
};

float scaled(tint_module_vars_struct tint_module_vars, uint i) {
  return tint_module_vars.in[i] * (*tint_module_vars.params).scale;
}

void bump(tint_module_vars_struct tint_module_vars) {
  (*tint_module_vars.count) = ((*tint_module_vars.count) + 1);
  atomic_fetch_add_explicit(tint_module_vars.hits, 1u, memory_order_relaxed);
}

void stage(uint lid, tint_module_vars_struct tint_module_vars, uint gid) {
  tint_module_vars.tg[lid] = scaled(tint_module_vars, gid);
  if ((lid == 0u)) {
    (*tint_module_vars.shared_b) = 100.0f;
  }
  bump(tint_module_vars);
}

void finish(uint lid, uint gid, tint_module_vars_struct m) {
  tint_module_vars_struct const copy = m;
  float const other = copy.tg[((lid + 1u) % 64u)];
  device float* const o = (copy.out + gid);
  (*o) = ((other + float((*copy.count))) + (*copy.shared_b));
  bump(copy);
  if ((gid == ((*m.params).n - 1u))) {
    m.last = float((*m.count));
  }
}

kernel void k(device float* out [[buffer(0)]], const device float* in [[buffer(1)]],
              const constant Params* params [[buffer(2)]], device atomic_uint* hits [[buffer(3)]],
              device float* tail [[buffer(4)]],
              uint gid [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float tg[64];
  threadgroup Shared sh;
  thread int count = 0;
  tint_module_vars_struct const tint_module_vars = tint_module_vars_struct{.out=out, .in=in, .params=params, .tg=tg, .shared_b=(&sh.b), .count=(&count), .hits=hits, .last=(*tail)};
  stage(lid, tint_module_vars, gid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  finish(lid, gid, tint_module_vars);
}
"#;

#[test]
fn module_vars_struct_translates() {
    let lib = translate_body(MODULE_VARS);
    let wgsl = lib.wgsl();
    // No struct of pointers in WGSL: its members are arguments.
    assert!(!wgsl.contains("tint_module_vars_struct"), "{wgsl}");
    assert!(wgsl.contains("fn finish("), "{wgsl}");
}

#[cfg(feature = "runner")]
#[test]
fn module_vars_struct_runs() {
    use common::{f32_bytes, f32s, gpu, u32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = gpu() else { return };
    let n = 128usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
    let scale = 1.5f32;
    let mut params = f32_bytes(&[scale]);
    params.extend((n as u32).to_le_bytes());
    let buffers: BTreeMap<u32, Vec<u8>> = [
        (0, vec![0u8; n * 4]),
        (1, f32_bytes(&input)),
        (2, params),
        (3, vec![0u8; 4]),
        (4, vec![0u8; 4]),
    ]
    .into_iter()
    .collect();
    let src = format!("{PRELUDE}{MODULE_VARS}");
    let out = run_kernel(
        gpu,
        "module_vars.metal",
        &src,
        &msl2wgsl::Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [64, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // CPU reference: each thread stages in[gid]*scale, reads its
    // neighbour's in its threadgroup, adds its own count (1) and 100.
    let want: Vec<f32> = (0..n)
        .map(|gid| {
            let group = gid / 64 * 64;
            let neighbour = group + (gid % 64 + 1) % 64;
            input[neighbour] * scale + 1.0 + 100.0
        })
        .collect();
    assert_eq!(f32s(&out[&0]), want);
    assert_eq!(u32s(&out[&3]), vec![2 * n as u32], "two bumps per thread");
    assert_eq!(
        f32s(&out[&4]),
        vec![2.0],
        "count after both bumps, written through a reference member"
    );
}

/// Textures and samplers as members, and a nested struct of places.
const TEXTURE_VARS: &str = r#"
struct Inner { device float4* out; };
struct tint_module_vars_struct {
  texture2d<float, access::sample> t;
  sampler s;
  Inner inner;
  uint bias;
};

void go(tint_module_vars_struct v, uint i) {
  v.inner.out[i] = v.t.sample(v.s, float2(0.5f)) + float4(float(v.bias));
}

kernel void k(texture2d<float, access::sample> t [[texture(0)]], sampler s [[sampler(0)]],
              device float4* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  tint_module_vars_struct const tint_module_vars = tint_module_vars_struct{.t=t, .s=s, .inner=Inner{.out=out}, .bias=2u};
  go(tint_module_vars, gid);
}
"#;

#[test]
fn texture_members_translate() {
    let lib = translate_body(TEXTURE_VARS);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("textureSample"), "{wgsl}");
    assert!(!wgsl.contains("tint_module_vars_struct"), "{wgsl}");
}

/// `S s;` leaves its pointer members to later assignments
/// (`metal/pointer_objects.rs`); one read before any is refused.
#[test]
fn pointer_member_read_before_assigned() {
    assert_error(
        "struct S { device float* p; };\nkernel void k(device float* a [[buffer(0)]]) {\n  S s;\n  (*s.p) = 1.0f;\n}\n",
        "p) =",
        0,
        "pointer member `p` is read before anything is assigned to it",
    );
}

#[test]
fn pointer_member_struct_in_a_buffer() {
    assert_error(
        "struct S { device float* p; };\nkernel void k(device S* a [[buffer(0)]]) {\n  (*a[1].p) = 1.0f;\n}\n",
        "a[1]",
        0,
        "a buffer of argument buffers `S` indexed past the first: WGSL and WebGPU have no binding arrays",
    );
}

#[test]
fn pointer_member_chosen_at_run_time() {
    assert_error(
        "struct S { device float* p; };\nkernel void k(device float* a [[buffer(0)]], device float* b [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n  S x = S{.p=a};\n  S y = S{.p=b};\n  S s = (i > 3u) ? x : y;\n  (*s.p) = 1.0f;\n}\n",
        "x : y",
        0,
        "`S` holds pointers, references, textures or samplers, and is not a WGSL value",
    );
}

#[test]
fn pointer_member_struct_reassigned_in_its_block() {
    let lib = translate_body(
        "struct S { device float* p; };\nkernel void k(device float* a [[buffer(0)]], device float* b [[buffer(1)]]) {\n  S s = S{.p=a};\n  (*s.p) = 1.0f;\n  s = S{.p=b};\n  (*s.p) = 2.0f;\n}\n",
    );
    let wgsl = lib.wgsl();
    assert!(
        wgsl.contains("a[0u] = 1f") || wgsl.contains("a[0"),
        "{wgsl}"
    );
    assert!(wgsl.contains("b[0"), "{wgsl}");
}

#[test]
fn pointer_member_struct_assigned_in_a_branch() {
    assert_error(
        "struct S { device float* p; };\nkernel void k(device float* a [[buffer(0)]], device float* b [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n  S s = S{.p=a};\n  if (i > 3u) {\n    s = S{.p=b};\n  }\n  (*s.p) = 1.0f;\n}\n",
        "s = S{.p=b}",
        0,
        "`s` of type `S` is assigned in a nested block",
    );
}

#[test]
fn pointer_member_of_unknown_target() {
    assert_error(
        "struct S { device float* p; };\nkernel void k(device float* a [[buffer(0)]]) {\n  S s = S{.p=a[0]};\n}\n",
        "a[0]}",
        0,
        "cannot initialize a member of type",
    );
}

/// A function returning a struct of places is lowered in place
/// (`metal/pointer_objects.rs`): no WGSL function returns it.
#[test]
fn pointer_member_struct_returned() {
    let lib = translate_body(
        "struct S { device float* p; };\nS make(device float* a) { return S{.p=a}; }\nkernel void k(device float* a [[buffer(0)]]) {\n  S s = make(a);\n  (*s.p) = 1.0f;\n}\n",
    );
    let wgsl = lib.wgsl();
    assert!(!wgsl.contains("fn make"), "{wgsl}");
    assert!(wgsl.contains("a[0u] = 1f"), "{wgsl}");
}

/// The code of the first diagnostic of a failing source.
fn first_code(body: &str) -> msl2wgsl::diagnostics::Code {
    match msl2wgsl::Library::from_source(
        "t.metal",
        &format!("{PRELUDE}{body}"),
        &msl2wgsl::Options::default(),
    ) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.diagnostics.0[0].code,
    }
}

#[test]
fn pointer_member_errors_have_their_code() {
    use msl2wgsl::diagnostics::Code;
    for body in [
        "struct S { device float& r; };\nkernel void k(device float* a [[buffer(0)]]) {\n  S s;\n}\n",
        "struct S { device float* p; };\nS make(device float* a, bool c) { if (c) { return S{.p=a}; } return S{.p=a + 1}; }\nkernel void k(device float* a [[buffer(0)]]) {\n  S s = make(a, true);\n}\n",
        "struct S { device float* p; };\nkernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  S s = S{.p=a};\n  if (i > 3u) { s = S{.p=a}; }\n}\n",
    ] {
        assert_eq!(first_code(body), Code::PointerMember, "{body}");
    }
}

/// Pointer arithmetic on members, a member pointer copied into a local,
/// `&` of what a member points to, and a `thread` array member.
const ARITHMETIC: &str = r#"
struct V {
  device float* out;
  const device float* in;
};

void shift(V v, uint gid) {
  device float* const o = (v.out + 1);
  const device float* const i = &(*(v.in + gid));
  o[gid] = (*i) + v.in[(gid + 1u) % 8u] + *(v.in + 0);
}

kernel void k(device float* out [[buffer(0)]], const device float* in [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  V const v = V{out, in};
  V w = v;
  shift(w, gid);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn pointer_arithmetic_on_members_runs() {
    use common::{f32_bytes, f32s, gpu};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = gpu() else { return };
    let input: Vec<f32> = (0..8).map(|i| (i * i) as f32).collect();
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; 9 * 4]), (1, f32_bytes(&input))]
        .into_iter()
        .collect();
    let out = run_kernel(
        gpu,
        "arith.metal",
        &format!("{PRELUDE}{ARITHMETIC}"),
        &msl2wgsl::Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [8, 1, 1],
            threadgroup: [8, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut want = vec![0.0f32; 9];
    for g in 0..8 {
        want[g + 1] = input[g] + input[(g + 1) % 8] + input[0];
    }
    assert_eq!(f32s(&out[&0]), want);
}

/// Tint's `tint_array` (an `operator[]` per address space forwarding to
/// `elements[i]`) behind module-vars pointers: indexed, assigned through,
/// and its elements' addresses taken.
const TINT_ARRAY: &str = r#"
template<typename T, size_t N>
struct tint_array {
  const constant T& operator[](size_t i) const constant { return elements[i]; }
  device T& operator[](size_t i) device { return elements[i]; }
  const device T& operator[](size_t i) const device { return elements[i]; }
  thread T& operator[](size_t i) thread { return elements[i]; }
  const thread T& operator[](size_t i) const thread { return elements[i]; }
  threadgroup T& operator[](size_t i) threadgroup { return elements[i]; }
  const threadgroup T& operator[](size_t i) const threadgroup { return elements[i]; }
  T elements[N];
};

struct tint_module_vars_struct {
  device tint_array<float, 4>* out;
  const device tint_array<float, 4>* in;
  threadgroup tint_array<float, 4>* tg;
  thread tint_array<int, 2>* priv;
};

void work(uint lid, tint_module_vars_struct tint_module_vars) {
  (*tint_module_vars.tg)[lid] = ((*tint_module_vars.in)[lid] * 2.0f);
  (*tint_module_vars.priv)[1] = int(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  device float* const v = (&(*tint_module_vars.out)[min(lid, 3u)]);
  (*v) = ((*tint_module_vars.tg)[((lid + 1u) % 4u)] + float((*tint_module_vars.priv)[1]));
}

kernel void k(device tint_array<float, 4>* out [[buffer(0)]], const device tint_array<float, 4>* in [[buffer(1)]],
              uint lid [[thread_position_in_threadgroup]]) {
  threadgroup tint_array<float, 4> tg;
  thread tint_array<int, 2> priv = {};
  tint_module_vars_struct const tint_module_vars = tint_module_vars_struct{.out=out, .in=in, .tg=(&tg), .priv=(&priv)};
  work(lid, tint_module_vars);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn tint_array_behind_module_vars_runs() {
    use common::{f32_bytes, f32s, gpu};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = gpu() else { return };
    let input = [1.0f32, -2.0, 3.5, 10.0];
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; 16]), (1, f32_bytes(&input))]
        .into_iter()
        .collect();
    let out = run_kernel(
        gpu,
        "tint_array.metal",
        &format!("{PRELUDE}{TINT_ARRAY}"),
        &msl2wgsl::Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [4, 1, 1],
            threadgroup: [4, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f32> = (0..4)
        .map(|l| input[(l + 1) % 4] * 2.0 + l as f32)
        .collect();
    assert_eq!(f32s(&out[&0]), want);
}

/// Pointer members to structs defined after them (`struct T;` ahead, as
/// SPIR-V Cross declares every struct a pointer names), and a struct
/// holding such a struct by value: each is declared once what it names is.
const LATER_STRUCTS: &str = r#"
struct Sample;
struct Weights;
struct Cursor { const device Sample* at; const constant Weights* w; uint n; };
struct Walk { Cursor c; float start; };
struct Sample { float v; float w; };
struct Weights { float a; float b; };

float step(Walk k, uint j) { return k.start + k.c.at[j].v * k.c.w->a + k.c.at[j].w * k.c.w->b; }

kernel void k(const device Sample* samples [[buffer(0)]], const constant Weights* w [[buffer(1)]],
              device float* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  Walk k = Walk{Cursor{samples + i, w, 2u}, 0.5f};
  out[i] = step(k, 0) + step(k, 1) * float(k.c.n);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn pointer_members_to_structs_defined_later_run() {
    use common::f32_bytes;
    use common::source::run_body_f32s;
    let n = 16usize;
    let samples: Vec<[f32; 2]> = (0..=n)
        .map(|i| [i as f32 * 0.25 - 1.0, 3.0 - i as f32 * 0.5])
        .collect();
    let (a, b) = (1.5f32, -0.75f32);
    let Some(got) = run_body_f32s(
        LATER_STRUCTS,
        "k",
        (n as u32, 8),
        vec![
            (0, f32_bytes(&samples.concat())),
            (1, f32_bytes(&[a, b])),
            (2, vec![0; n * 4]),
        ],
        2,
    ) else {
        return;
    };
    let step = |j: usize| 0.5 + samples[j][0] * a + samples[j][1] * b;
    let want: Vec<f32> = (0..n).map(|i| step(i) + step(i + 1) * 2.0).collect();
    assert_eq!(got, want);
}
