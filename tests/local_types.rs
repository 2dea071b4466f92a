//! Structs, classes and unions declared in a function body (C++
//! [class.local]): named (`struct S {..};`), typedef'd anonymous
//! (`typedef struct {..} T;`), with a tag, unnamed with objects
//! (`struct {..} v;`), with a constructor and member functions, in
//! function templates sized by constants that depend on the template's
//! arguments, and hiding an outer type of the same name for the rest of
//! their block. Each kernel runs on the GPU against a CPU reference; a
//! local type used outside its block is a located "unknown type name",
//! a static data member (which C++ forbids there) a located error.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, first_code, translate_body};

/// A per-thread register block, as quantized matmuls keep one: each
/// thread copies a block of packed words from the buffer through a cast
/// of the device pointer to the local struct (Metal's layout: `uint w[3]`
/// then `float scale`, 16 bytes), and reads it from registers.
const REGISTER_BLOCK: &str = r#"
kernel void blocks(const device uint* packed [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint gid [[thread_position_in_grid]]) {
  struct block_q {
    uint w[3];
    float scale;
  };
  thread block_q regs = *((const device block_q*)packed + gid);
  float total = 0;
  for (int i = 0; i < 3; i++) {
    for (int b = 0; b < 4; b++) {
      total += float((regs.w[i] >> (8 * b)) & 0xffu);
    }
  }
  out[gid] = total * regs.scale + float(sizeof(block_q));
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_local_struct_as_a_register_block_on_gpu() {
    let n = 64u32;
    let mut words = Vec::new();
    let mut want = Vec::new();
    for t in 0..n {
        let w: Vec<u32> = (0..3)
            .map(|i| t.wrapping_mul(2654435761u32).rotate_left(i * 7) ^ i)
            .collect();
        let scale = 0.25f32 * (t % 5 + 1) as f32;
        let bytes: u32 = w
            .iter()
            .map(|x| x.to_le_bytes().iter().map(|&b| b as u32).sum::<u32>())
            .sum();
        words.extend(&w);
        words.push(scale.to_bits());
        want.push(bytes as f32 * scale + 16.0);
    }
    let Some(got) = common::source::run_body_f32s(
        REGISTER_BLOCK,
        "blocks",
        (n, 32),
        vec![
            (0, common::ml::u32_bytes(&words)),
            (1, vec![0; n as usize * 4]),
        ],
        1,
    ) else {
        return;
    };
    assert_eq!(got, want);
}

/// A function template whose local struct is sized by `constexpr` locals
/// computed from its template arguments (`tn = group_size / pack`), in the
/// shape of MLX's `qvm`: two instances, each with its own struct.
const TEMPLATE_SIZED: &str = r#"
template <int bits>
constexpr int pack_factor() { return 32 / bits; }

template <typename T, int group_size, int bits>
T group_sum(const device uint* w, T scale) {
  constexpr int pack = pack_factor<bits>();
  constexpr int tn = group_size / pack;
  using W_T = uint;
  typedef struct {
    W_T wi[tn];
  } vec_w;
  thread vec_w w_local = *((const device vec_w*)w);
  T total = 0;
  for (int i = 0; i < tn; i++) {
    for (int k = 0; k < pack; k++) {
      total += T((w_local.wi[i] >> (bits * k)) & ((1u << bits) - 1u));
    }
  }
  return total * scale + T(sizeof(vec_w));
}

kernel void sums(const device uint* w [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
  out[2 * gid] = group_sum<float, 32, 4>(w + gid * 8, 0.5f);
  out[2 * gid + 1] = group_sum<float, 16, 8>(w + gid * 8 + 4, 2.0f);
}
"#;

/// The sum of the `bits`-wide fields of `words`.
fn fields(words: &[u32], bits: u32) -> f32 {
    let mask = (1u64 << bits) - 1;
    words
        .iter()
        .map(|&w| {
            (0..32 / bits)
                .map(|k| ((w as u64 >> (bits * k)) & mask) as f32)
                .sum::<f32>()
        })
        .sum()
}

#[test]
#[cfg(feature = "runner")]
fn a_local_struct_sized_by_template_constants_on_gpu() {
    let n = 32u32;
    let w: Vec<u32> = (0..n * 8)
        .map(|i| i.wrapping_mul(2246822519).rotate_left(i % 31))
        .collect();
    let mut want = Vec::new();
    for t in 0..n as usize {
        // <float, 32, 4>: 8 nibbles a word, 4 words (16 bytes).
        want.push(fields(&w[t * 8..t * 8 + 4], 4) * 0.5 + 16.0);
        // <float, 16, 8>: 4 bytes a word, 4 words (16 bytes).
        want.push(fields(&w[t * 8 + 4..t * 8 + 8], 8) * 2.0 + 16.0);
    }
    let Some(got) = common::source::run_body_f32s(
        TEMPLATE_SIZED,
        "sums",
        (n, 32),
        vec![(0, common::ml::u32_bytes(&w)), (1, vec![0; n as usize * 8])],
        1,
    ) else {
        return;
    };
    assert_eq!(got, want);
}

#[test]
fn each_instance_declares_its_own_struct() {
    let wgsl = translate_body(TEMPLATE_SIZED).wgsl().to_string();
    // Both instances' blocks hold 4 words, and still are two types.
    assert_eq!(wgsl.matches("wi: array<u32, 4>").count(), 2, "{wgsl}");
    assert_eq!(wgsl.matches("struct group_sum_").count(), 2, "{wgsl}");
}

/// A local struct hides the program-scope struct of the same name to the
/// end of its block, and an inner block's hides the outer local one;
/// after each block the outer type is back. A local alias is hidden the
/// same way.
const SHADOWING: &str = r#"
struct Pair { int a; int b; };

kernel void shadow(const device float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint gid [[thread_position_in_grid]]) {
  float x = in[gid];
  Pair outer = {3, 4};
  float r = 0;
  {
    struct Pair { float lo; float mid; float hi; };
    Pair p = {x, x * 2.0f, x * 3.0f};
    {
      struct Pair { float only; };
      Pair q = {p.hi + 1.0f};
      r += q.only * float(sizeof(Pair));
    }
    r += (p.lo + p.mid + p.hi) * float(sizeof(Pair));
  }
  using T = float;
  {
    using T = int;
    T k = T(x) / 2;
    r += float(k);
  }
  T y = x / 4.0f;
  Pair back = {outer.a + 1, outer.b};
  out[gid] = r + y + float(back.a * back.b) + float(sizeof(Pair));
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_local_struct_hides_an_outer_type_on_gpu() {
    let n = 64u32;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 + 1.0).collect();
    let want: Vec<f32> = x
        .iter()
        .map(|&x| {
            let mut r = (x * 3.0 + 1.0) * 4.0;
            r += (x + x * 2.0 + x * 3.0) * 12.0;
            r += ((x as i32) / 2) as f32;
            r + x / 4.0 + 16.0 + 8.0
        })
        .collect();
    let Some(got) = common::source::run_body_f32s(
        SHADOWING,
        "shadow",
        (n, 32),
        vec![(0, common::f32_bytes(&x)), (1, vec![0; n as usize * 4])],
        1,
    ) else {
        return;
    };
    assert_eq!(got, want);
}

/// `typedef struct {..} T;` (anonymous), `typedef struct Tag {..} T;` (both
/// names), `struct {..} v = {..};` (an unnamed struct's object) and a
/// union, in a helper function and a kernel.
const TYPEDEFS: &str = r#"
float clamp_all(float x, float lo, float hi) {
  typedef struct {
    float lo;
    float hi;
  } range_t;
  typedef struct bounds_tag { range_t r; int steps; } bounds_t;
  bounds_t b = {{lo, hi}, 2};
  struct bounds_tag c = b;
  c.steps += 1;
  return clamp(x, c.r.lo, c.r.hi) * float(c.steps);
}

kernel void typedefs(const device float* in [[buffer(0)]],
                     device float* out [[buffer(1)]],
                     uint gid [[thread_position_in_grid]]) {
  struct { float a; int b; } pair = {in[gid], int(gid)}, other;
  other = pair;
  other.b *= 2;
  union { float f; uint u; } bits;
  bits.f = other.a;
  out[gid] = clamp_all(pair.a, 1.0f, 10.0f) + float(other.b) + float(bits.u >> 31);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn typedef_anonymous_and_unnamed_local_structs_on_gpu() {
    let n = 64u32;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.375 - 3.0).collect();
    let want: Vec<f32> = x
        .iter()
        .enumerate()
        .map(|(i, &x)| x.clamp(1.0, 10.0) * 3.0 + (2 * i) as f32 + (x.to_bits() >> 31) as f32)
        .collect();
    let Some(got) = common::source::run_body_f32s(
        TYPEDEFS,
        "typedefs",
        (n, 32),
        vec![(0, common::f32_bytes(&x)), (1, vec![0; n as usize * 4])],
        1,
    ) else {
        return;
    };
    assert_eq!(got, want);
}

#[test]
fn a_local_struct_is_unknown_after_its_block() {
    let body = r#"
kernel void k(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  {
    struct Frag { float v; };
    Frag f = {1.0f};
    out[gid] = f.v;
  }
  Frag g;
  out[gid] = g.v;
}
"#;
    assert_error(body, "Frag g", 0, "unknown type name `Frag`");
}

#[test]
fn a_local_struct_is_unknown_in_another_function() {
    let body = r#"
float helper() {
  Frag f = {2.0f};
  return f.v;
}
kernel void k(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  struct Frag { float v; };
  out[gid] = helper();
}
"#;
    assert_error(body, "Frag f", 0, "unknown type name `Frag`");
}

/// A local struct with a constructor and member functions, const and
/// not, in a function template whose constant sizes it: a running
/// accumulator, as reductions keep one per thread.
const MEMBERS: &str = r#"
template <typename T, int N>
T windowed(const device T* in, uint base) {
  constexpr int half_n = N / 2;
  struct Window {
    T vals[half_n];
    int count;
    Window(T first) : count(1) {
      for (int i = 0; i < half_n; i++) vals[i] = first;
    }
    void push(T v) {
      vals[count % half_n] = v;
      count++;
    }
    T total() const {
      T t = 0;
      for (int i = 0; i < half_n; i++) t += vals[i];
      return t * T(count);
    }
  };
  Window w(in[base]);
  for (int i = 1; i < N; i++) w.push(in[base + i]);
  return w.total();
}

kernel void windows(const device float* in [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
  out[2 * gid] = windowed<float, 4>(in, gid * 8);
  out[2 * gid + 1] = windowed<float, 8>(in, gid * 8);
}
"#;

/// What `windowed<float, n>` computes over `x`.
fn windowed(x: &[f32], n: usize) -> f32 {
    let h = n / 2;
    let mut vals = vec![x[0]; h];
    let mut count = 1;
    for &v in &x[1..n] {
        vals[count % h] = v;
        count += 1;
    }
    vals.iter().sum::<f32>() * count as f32
}

#[test]
#[cfg(feature = "runner")]
fn a_local_struct_with_member_functions_on_gpu() {
    let n = 32u32;
    let x: Vec<f32> = (0..n * 8).map(|i| ((i * 3) % 11) as f32 - 4.0).collect();
    let want: Vec<f32> = (0..n as usize)
        .flat_map(|t| [windowed(&x[t * 8..], 4), windowed(&x[t * 8..], 8)])
        .collect();
    let Some(got) = common::source::run_body_f32s(
        MEMBERS,
        "windows",
        (n, 32),
        vec![(0, common::f32_bytes(&x)), (1, vec![0; n as usize * 8])],
        1,
    ) else {
        return;
    };
    assert_eq!(got, want);
}

#[test]
fn a_static_data_member_of_a_local_struct_is_located() {
    let body = r#"
kernel void k(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  struct Acc {
    float total;
    static constexpr constant float scale = 2.0f;
  };
  Acc a = {1.0f};
  out[gid] = a.total;
}
"#;
    assert_error(
        body,
        "static constexpr",
        0,
        "a struct declared in a function (`Acc`) cannot have static data members",
    );
    assert_eq!(first_code(body), msl2wgsl::diagnostics::Code::InvalidType);
}

/// An alias names what its type meant where it was written, even where a
/// later alias of the same block hides a name in it (C++ [basic.scope.hiding]):
/// `A` stays the program-scope `B` (`float`) after `using B = int;`, in the
/// block and in blocks nested in it.
const ALIAS_OF_A_LATER_HIDDEN_NAME: &str = r#"
typedef float B;

kernel void aliases(const device float* in [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
  using A = B;
  using B = int;
  A a = in[gid];
  B b = B(in[gid]);
  {
    A inner = a * 0.5f;
    out[2 * gid] = inner;
  }
  out[2 * gid + 1] = a + float(b);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn an_alias_keeps_a_name_a_later_alias_hides_on_gpu() {
    let n = 64u32;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.75 + 0.25).collect();
    let want: Vec<f32> = x
        .iter()
        .flat_map(|&x| [x * 0.5, x + (x as i32) as f32])
        .collect();
    let Some(got) = common::source::run_body_f32s(
        ALIAS_OF_A_LATER_HIDDEN_NAME,
        "aliases",
        (n, 32),
        vec![(0, common::f32_bytes(&x)), (1, vec![0; n as usize * 8])],
        1,
    ) else {
        return;
    };
    assert_eq!(got, want);
}
