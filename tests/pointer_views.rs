//! Memory viewed through a pointer to another type (`metal/pointer_views.rs`):
//! `device`, `constant` and `threadgroup` memory whose pointers a kernel casts
//! is held as words, so that the cast reads and writes Metal's bytes. Each
//! shape runs on the GPU against a CPU reference: Tint's byte views
//! (`reinterpret_cast<threadgroup char*>(p) + offset`, then a cast to the
//! element type) of word arrays reached through a struct of pointers,
//! MLX's `vec<T, 4>` views of a `T*` buffer, and SPIRV-Cross's atomic views
//! of plain `uint`s and `half` views of `uchar` arrays.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{first_code, translate_body};
use msl2wgsl::diagnostics::Code;

#[cfg(feature = "runner")]
use common::source::run_body as run;

/// The binary16 bits of `x` (exactly representable in `half`).
fn half_bits(x: f32) -> u16 {
    let h = half::f16::from_f32(x);
    assert_eq!(h.to_f32(), x, "{x} is not a half");
    h.to_bits()
}

/// Tint's shape: threadgroup words and a device word array, reached through
/// a struct of pointers in a helper, viewed as bytes and then as `half`
/// (two threads write the two halves of one word) and as `float` (at byte
/// offsets).
const BYTE_VIEWS: &str = r#"
template<typename T, size_t N>
struct words_array {
  threadgroup T& operator[](size_t i) threadgroup { return elements[i]; }
  const threadgroup T& operator[](size_t i) const threadgroup { return elements[i]; }
  device T& operator[](size_t i) device { return elements[i]; }
  T elements[N];
};
struct Shared { words_array<uint, 32> words; words_array<float, 4> other; };
struct Vars {
  threadgroup words_array<uint, 32>* words;
  device words_array<uint, 64>* floats;
};
void write_halves(Vars v, uint t) {
  threadgroup half* h = reinterpret_cast<threadgroup half*>(
      reinterpret_cast<threadgroup char*>(v.words) + 0u);
  h[t] = half(t) * 0.5h;
}
void write_float(Vars v, uint t) {
  device float* f = reinterpret_cast<device float*>(
      reinterpret_cast<device char*>(v.floats) + (t * 4u));
  *f = float(t) + 0.25f;
}
kernel void byte_views(device words_array<uint, 64>* floats [[buffer(0)]],
                       device uint* words_out [[buffer(1)]],
                       threadgroup Shared* s [[threadgroup(0)]],
                       uint t [[thread_index_in_threadgroup]]) {
  Vars v = Vars{.words = &(*s).words, .floats = floats};
  write_halves(v, t);
  write_float(v, t);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (t < 32u) {
    words_out[t] = (*s).words[t];
  }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn byte_views_of_word_arrays_write_metals_bytes() {
    let Some(out) = run(
        BYTE_VIEWS,
        "byte_views",
        (64, 64),
        vec![(0, vec![0; 256]), (1, vec![0; 128])],
    ) else {
        return;
    };
    let want_floats: Vec<f32> = (0..64).map(|t| t as f32 + 0.25).collect();
    assert_eq!(common::f32s(&out[&0]), want_floats);
    // Half `t` is bytes 2t, 2t + 1: the low half of word t / 2 for even t.
    let want_words: Vec<u32> = (0..32)
        .map(|w| {
            let lo = half_bits((2 * w) as f32 * 0.5);
            let hi = half_bits((2 * w + 1) as f32 * 0.5);
            u32::from(lo) | u32::from(hi) << 16
        })
        .collect();
    assert_eq!(common::u32s(&out[&1]), want_words);
}

/// MLX's shape: a `T*` buffer read four elements at a time through a
/// `vec<T, 4>*` view (16-byte aligned for `float`, as Metal requires).
const VECTOR_VIEWS: &str = r#"
template <typename T>
[[kernel]] void dot4(const device T* a [[buffer(0)]], const device T* b [[buffer(1)]],
                     device float* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  int idx = int(i) * 8;
  float4 c = 0.0f;
  for (int j = 0; j < 8; j += 4) {
    c += float4(*reinterpret_cast<const device metal::vec<T, 4>*>(a + idx + j)) *
         float4(*reinterpret_cast<const device metal::vec<T, 4>*>(b + idx + j));
  }
  out[i] = c[0] + c[1] + c[2] + c[3];
}
template [[host_name("dot4_float")]] [[kernel]] void dot4<float>(
    const device float*, const device float*, device float*, uint);
template [[host_name("dot4_half")]] [[kernel]] void dot4<half>(
    const device half*, const device half*, device float*, uint);
"#;

#[test]
#[cfg(feature = "runner")]
fn vector_views_of_scalar_buffers_read_consecutive_elements() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let n = 16usize;
    let a: Vec<f32> = (0..8 * n).map(|k| (k % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..8 * n).map(|k| (k % 5) as f32 * 0.5).collect();
    let want: Vec<f32> = (0..n)
        .map(|i| (0..8).map(|j| a[8 * i + j] * b[8 * i + j]).sum())
        .collect();
    let halves =
        |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| half_bits(*x).to_le_bytes()).collect() };
    let src = format!("{}{VECTOR_VIEWS}", common::source::PRELUDE);
    for (entry, a_bytes, b_bytes) in [
        ("dot4_float", common::f32_bytes(&a), common::f32_bytes(&b)),
        ("dot4_half", halves(&a), halves(&b)),
    ] {
        let buffers = [(0, a_bytes), (1, b_bytes), (2, vec![0; 4 * n])];
        let out = run_kernel(
            gpu,
            "t.metal",
            &src,
            &msl2wgsl::Options::default(),
            entry,
            &Dispatch::Threads {
                grid: [n as u32, 1, 1],
                threadgroup: [16, 1, 1],
            },
            &buffers.into_iter().collect(),
        )
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
        // Small integers and halves: every product and sum is exact.
        assert_eq!(common::f32s(&out[&2]), want, "{entry}");
    }
}

/// SPIRV-Cross's atomic views: a `threadgroup uint` of the kernel and a
/// `uint` member of a device struct, each passed by reference to a helper
/// that casts its address to an `atomic_uint*`.
const ATOMIC_VIEWS: &str = r#"
struct Counter { float x; uint y; };
void bump(threadgroup uint& c, uint by) {
  atomic_fetch_add_explicit((threadgroup atomic_uint*)&c, by, memory_order_relaxed);
}
void tally(device Counter& c, uint by) {
  atomic_fetch_add_explicit((device atomic_uint*)&c.y, by, memory_order_relaxed);
}
kernel void atomic_views(device Counter& counter [[buffer(0)]], device uint* sums [[buffer(1)]],
                         device float* doubled [[buffer(2)]],
                         uint t [[thread_index_in_threadgroup]],
                         uint g [[threadgroup_position_in_grid]],
                         uint i [[thread_position_in_grid]]) {
  threadgroup uint total;
  if (t == 0u) {
    total = 0u;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  bump(total, t + 1u);
  tally(counter, i);
  doubled[i] = float(i) * 2.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (t == 0u) {
    sums[g] = total;
  }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn atomic_views_of_plain_uints_are_atomic() {
    let (groups, size) = (4u32, 32u32);
    let n = groups * size;
    let mut counter = common::f32_bytes(&[1.5]);
    counter.extend(7u32.to_le_bytes());
    let Some(out) = run(
        ATOMIC_VIEWS,
        "atomic_views",
        (n, size),
        vec![
            (0, counter),
            (1, vec![0; 4 * groups as usize]),
            (2, vec![0; 4 * n as usize]),
        ],
    ) else {
        return;
    };
    let got = &out[&0];
    assert_eq!(common::f32s(&got[..4]), [1.5], "the float beside is kept");
    assert_eq!(common::u32s(&got[4..]), [7 + (0..n).sum::<u32>()]);
    assert_eq!(
        common::u32s(&out[&1]),
        vec![(1..=size).sum::<u32>(); groups as usize]
    );
    let doubled: Vec<f32> = (0..n).map(|i| i as f32 * 2.0).collect();
    assert_eq!(common::f32s(&out[&2]), doubled);
}

/// SPIRV-Cross's `atomic.comp` shape: `int` members cast to
/// `device atomic_int*` in a buffer of words: every signed operation on
/// the bits of an unsigned word, min and max compared as signed.
const SIGNED_ATOMIC_VIEWS: &str = r#"
struct Totals { uint u; int sum; int lo; int hi; int swapped; int cas; };
kernel void signed_views(device Totals& t [[buffer(0)]], device const int* v [[buffer(1)]],
                         device int* seen [[buffer(2)]],
                         uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit((device atomic_uint*)&t.u, 1u, memory_order_relaxed);
  atomic_fetch_add_explicit((device atomic_int*)&t.sum, v[i], memory_order_relaxed);
  atomic_fetch_sub_explicit((device atomic_int*)&t.sum, 1, memory_order_relaxed);
  atomic_fetch_min_explicit((device atomic_int*)&t.lo, v[i], memory_order_relaxed);
  atomic_fetch_max_explicit((device atomic_int*)&t.hi, v[i], memory_order_relaxed);
  if (i == 5u) {
    seen[0] = atomic_exchange_explicit((device atomic_int*)&t.swapped, -9, memory_order_relaxed);
    int expected = -4;
    bool ok = atomic_compare_exchange_weak_explicit((device atomic_int*)&t.cas, &expected, -5,
                                                    memory_order_relaxed, memory_order_relaxed);
    seen[1] = ok ? 1 : 0;
    seen[2] = atomic_load_explicit((device atomic_int*)&t.cas, memory_order_relaxed);
    atomic_store_explicit((device atomic_int*)&t.swapped, atomic_load_explicit((device atomic_int*)&t.swapped, memory_order_relaxed) - 1, memory_order_relaxed);
  }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn signed_atomic_views_compare_as_signed() {
    let n = 64u32;
    // Negative and positive values: an unsigned minimum would pick a
    // positive one and an unsigned maximum a negative one.
    let v: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 101 - 50).collect();
    let totals: Vec<i32> = vec![0, 3, 0, 0, -7, -4];
    let Some(out) = run(
        SIGNED_ATOMIC_VIEWS,
        "signed_views",
        (n, 32),
        vec![
            (0, bytemuck::cast_slice(&totals).to_vec()),
            (1, bytemuck::cast_slice(&v).to_vec()),
            (2, vec![0; 12]),
        ],
    ) else {
        return;
    };
    let got: Vec<i32> = bytemuck::pod_collect_to_vec(&out[&0]);
    let sum = 3 + v.iter().sum::<i32>() - n as i32;
    let lo = (*v.iter().min().unwrap()).min(0);
    let hi = (*v.iter().max().unwrap()).max(0);
    assert_eq!(got, [n as i32, sum, lo, hi, -10, -5]);
    let seen: Vec<i32> = bytemuck::pod_collect_to_vec(&out[&2]);
    assert_eq!(seen, [-7, 1, -5]);
}

/// Tint's `366314931` shape: a struct of a `packed_uint3` and an
/// `atomic_uint` in a buffer, so a buffer of words (the packed vector)
/// whose words must be atomic for the member that is.
const PACKED_BESIDE_ATOMIC: &str = r#"
struct S { packed_uint3 v; atomic_uint u; };
kernel void count(device S* s [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(&s->u, i + 1u, memory_order_relaxed);
  if (i == 3u) {
    s->v = packed_uint3(uint3(7u, 8u, 9u));
  }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_packed_vector_beside_an_atomic_member() {
    let n = 64u32;
    let start: Vec<u32> = vec![1, 2, 3, 100];
    let Some(out) = run(
        PACKED_BESIDE_ATOMIC,
        "count",
        (n, 32),
        vec![(0, bytemuck::cast_slice(&start).to_vec())],
    ) else {
        return;
    };
    let got: Vec<u32> = bytemuck::pod_collect_to_vec(&out[&0]);
    assert_eq!(got, [7, 8, 9, 100 + (1..=n).sum::<u32>()]);
}

#[test]
fn only_the_viewed_memory_is_held_as_words() {
    let lib = translate_body(ATOMIC_VIEWS);
    let wgsl = lib.wgsl();
    // The buffer a cast views and the threadgroup variable are atomic words;
    // the other buffers keep their types.
    assert!(wgsl.contains("array<atomic<u32>>"), "{wgsl}");
    assert!(wgsl.contains("array<atomic<u32>, 1>"), "{wgsl}");
    assert!(wgsl.contains("array<f32>"), "{wgsl}");
}

/// SPIRV-Cross's cooperative-matrix shape: a `threadgroup` array of `uchar`
/// in a wrapper struct viewed as `half`s, neighbouring threads writing the
/// two halves of one word.
const HALF_VIEWS: &str = r#"
template<typename T, size_t Num>
struct wrapped {
  T elements[Num];
  threadgroup T& operator [] (size_t pos) threadgroup { return elements[pos]; }
};
kernel void half_views(device uint* out [[buffer(0)]], uint t [[thread_index_in_threadgroup]]) {
  threadgroup wrapped<uchar, 128> bytes;
  threadgroup half* h = reinterpret_cast<threadgroup half*>(&bytes[0u]);
  h[t] = half(t) + 0.5h;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[t] = uint(bytes[2u * t]) | (uint(bytes[2u * t + 1u]) << 8);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn half_views_of_byte_arrays_write_both_bytes() {
    let Some(out) = run(HALF_VIEWS, "half_views", (64, 64), vec![(0, vec![0; 256])]) else {
        return;
    };
    let want: Vec<u32> = (0..64)
        .map(|t| u32::from(half_bits(t as f32 + 0.5)))
        .collect();
    assert_eq!(common::u32s(&out[&0]), want);
}

#[test]
fn thread_memory_is_not_viewed_as_another_type() {
    let body = "kernel void k(device float* o [[buffer(0)]]) {\n\
                uint w[2] = {1u, 2u};\n\
                thread float* f = reinterpret_cast<thread float*>(&w[0]);\n\
                o[0] = f[1]; }\n";
    assert_eq!(first_code(body), Code::InvalidConversion);
}
