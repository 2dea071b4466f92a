//! Overload resolution as Metal's clang does it ([over.match.best]): which
//! candidate a call picks when pointers differ in address space or
//! `const`, when references differ in `const`, and where clang too finds
//! the call ambiguous.

mod common;

use common::source::assert_error;

/// Each `o[n]` records which overload a call picked.
const PICKS: &str = "struct S { float x; };
int by_ref(thread int& x) { return 1; }
int by_ref(const thread int& x) { return 2; }
int by_space(device float* p) { return 3; }
int by_space(thread float* p) { return 4; }
int by_space(threadgroup float* p) { return 5; }
int by_const(thread float* p) { return 6; }
int by_const(const thread float* p) { return 7; }
int to_const(const thread float* p) { return 8; }
template <typename T> int tmpl(T x) { return 9; }
template <typename T> int tmpl(thread T* x) { return 10; }
int promo(int x) { return 11; }
int promo(float x) { return 12; }
int splat(thread float2& uv, float2 d) { return 100 + int(uv.x + d.x + d.y); }
int splat(thread float3& uv, float3 d) { return 200; }
int exact(float x) { return 13; }
int exact(float2 x) { return 14; }
kernel void k(device S& s [[buffer(1)]], device int* o [[buffer(0)]]) {
  threadgroup float tg;
  int v = 0;
  const int cv = 0;
  float f = 0.0f;
  const float cf = 0.0f;
  o[0] = by_ref(v);
  o[1] = by_ref(cv);
  o[2] = by_space(&s.x);
  o[3] = by_space(&f);
  o[4] = by_space(&tg);
  o[5] = by_const(&f);
  o[6] = by_const(&cf);
  o[7] = to_const(&f);
  o[8] = tmpl(f);
  o[9] = tmpl(&f);
  o[10] = promo(short(1));
  o[11] = promo(1.0f);
  float2 uv = float2(1.0f, 0.0f);
  o[12] = splat(uv, 2.0f);
  o[13] = exact(1.0f);
}
";

#[test]
fn the_picks_translate() {
    common::source::translate_body(PICKS);
}

#[cfg(feature = "runner")]
#[test]
fn each_call_picks_the_overload_clang_picks() {
    use common::{gpu, u32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = gpu() else { return };
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; 14 * 4]), (1, vec![0u8; 4])]
        .into_iter()
        .collect();
    let src = format!("{}{PICKS}", common::source::PRELUDE);
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
    // A scalar converts to a vector (a splat) as any conversion ranks.
    assert_eq!(
        u32s(&out[&0]),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 105, 13]
    );
}

#[test]
fn a_scalar_for_vectors_of_two_sizes_stays_ambiguous() {
    let body = "int f(float2 x) { return 1; }
int f(float3 x) { return 2; }
kernel void k(device int* o [[buffer(0)]]) { o[0] = f(1.0f); }
";
    assert_error(body, "f(1.0f)", 0, "call to `f` is ambiguous");
}

#[test]
fn by_value_and_by_const_reference_stay_ambiguous() {
    let body = "int f(float x) { return 1; }
int f(const thread float& x) { return 2; }
kernel void k(device int* o [[buffer(0)]]) { float v = 0; o[0] = f(v); }
";
    let text = assert_error(body, "f(v)", 0, "call to `f` is ambiguous");
    assert!(text.contains("candidate: `int f(float)`"), "{text}");
}

#[test]
fn a_by_value_template_and_a_reference_template_stay_ambiguous() {
    // [temp.deduct.partial]: `T` and `T&` order alike, so neither is more
    // specialised.
    let body = "template <typename T> int f(T x) { return 1; }
template <typename T> int f(thread T& x) { return 2; }
kernel void k(device int* o [[buffer(0)]]) { int v = 0; o[0] = f(v); }
";
    assert_error(body, "f(v)", 0, "call to `f` is ambiguous");
}

#[test]
fn const_is_never_dropped_and_spaces_never_mix() {
    let body = "int f(thread float* p) { return 1; }
int f(thread int* p) { return 2; }
kernel void k(device int* o [[buffer(0)]]) { const float v = 0; o[0] = f(&v); }
";
    assert_error(
        body,
        "f(&v)",
        0,
        "no matching function for call to `f(thread const float*)`",
    );
    let body = "int f(thread float* p) { return 1; }
int f(threadgroup int* p) { return 2; }
kernel void k(device float* b [[buffer(1)]], device int* o [[buffer(0)]]) { o[0] = f(&b[0]); }
";
    assert_error(body, "f(&b[0])", 0, "no matching function for call to `f(");
}

#[test]
fn a_non_const_reference_does_not_bind_a_temporary() {
    let body = "int f(thread int& x) { return 1; }
int f(thread float& x) { return 2; }
kernel void k(device int* o [[buffer(0)]]) { int v = 0; o[0] = f(v + 1); }
";
    assert_error(
        body,
        "f(v + 1)",
        0,
        "no matching function for call to `f(int)`",
    );
}
