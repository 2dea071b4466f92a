//! Calls where user overloads of a Metal library function's name compete
//! with the library (MLX adds `metal::min(bfloat16_t, bfloat16_t)` and the
//! like for `bfloat`): the library's exact match wins over a user
//! overload that converts an argument (`min(i, n - 1)` of `int`s stays an
//! `int`), the user's exact match over the library. And a struct with
//! several conversion functions (MLX's fp8 scales: `operator bfloat16_t()`
//! beside `operator float()`) converts to `half` through the closest.
//! Run on the GPU against CPU references.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

const MIN_OVERLOADS: &str = r#"
namespace metal {
// A user overload for `bfloat`, computed in `float`, that also marks its
// result (a library `min` would not), so the test sees which one ran.
METAL_FUNC bfloat min(bfloat x, bfloat y) {
  return static_cast<bfloat>(metal::fmin(static_cast<float>(x), static_cast<float>(y)) + 1.0f);
}
}

kernel void mins(const device int* a [[buffer(0)]],
                 const device float* x [[buffer(1)]],
                 const constant int& n [[buffer(2)]],
                 device float* out [[buffer(3)]],
                 uint gid [[thread_position_in_grid]]) {
  // Row offsets as MLX clamps them: `int`s, exact past bfloat's 8 bits.
  int row = min(a[gid] * 1003, n - 1);
  const device float* p = x + min(int(gid), n - 1);
  out[3 * gid] = float(row);
  out[3 * gid + 1] = p[0];
  // `bfloat` operands: the user's overload.
  out[3 * gid + 2] = float(min(bfloat(x[gid]), bfloat(2.0f)));
}
"#;

/// `bfloat(v)` as Metal rounds it: to nearest, ties to even.
fn bfloat(v: f32) -> f32 {
    let bits = v.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000;
    f32::from_bits(rounded)
}

#[test]
#[cfg(feature = "runner")]
fn the_library_wins_over_a_converting_user_overload_on_gpu() {
    let n_threads = 32u32;
    let n = 100_000i32;
    let a: Vec<i32> = (0..n_threads as i32).map(|i| i * 7 + 1).collect();
    let x: Vec<f32> = (0..n_threads).map(|i| i as f32 * 0.375 - 1.0).collect();
    let Some(got) = common::source::run_body_f32s(
        MIN_OVERLOADS,
        "mins",
        (n_threads, 32),
        vec![
            (0, common::ml::i32_bytes(&a)),
            (1, common::f32_bytes(&x)),
            (2, common::ml::i32_bytes(&[n])),
            (3, vec![0; n_threads as usize * 12]),
        ],
        3,
    ) else {
        return;
    };
    for (i, (&ai, &xi)) in a.iter().zip(&x).enumerate() {
        let row = (ai * 1003).min(n - 1) as f32;
        let user = bfloat(bfloat(bfloat(xi).min(2.0)) + 1.0);
        assert_eq!(got[3 * i..3 * i + 3], [row, xi, user], "thread {i}");
    }
}

const SCALES: &str = r#"
// An e8m0 scale (a power of two) with two conversion functions.
struct scale8 {
  operator bfloat() thread {
    ushort out = (bits == 0 ? 0x40 : (static_cast<ushort>(bits) << 7));
    return as_type<bfloat>(out);
  }
  operator float() thread {
    uint out = (bits == 0 ? 0x400000 : (static_cast<uint>(bits) << 23));
    return as_type<float>(out);
  }
  uchar bits;
};

template <typename T>
T dequantize_scale(uchar s) {
  return T(*(thread scale8*)(&s));
}

kernel void scales(const device uchar* s [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint gid [[thread_position_in_grid]]) {
  out[2 * gid] = float(dequantize_scale<half>(s[gid]));
  out[2 * gid + 1] = dequantize_scale<float>(s[gid]);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_struct_converts_to_half_through_its_closest_conversion_on_gpu() {
    // 2^-24 ..= 2^15: every one a `half` holds exactly.
    let s: Vec<u8> = (103u8..=142).collect();
    let n = s.len() as u32;
    let Some(got) = common::source::run_body_f32s(
        SCALES,
        "scales",
        (n, 8),
        vec![(0, s.clone()), (1, vec![0; n as usize * 8])],
        1,
    ) else {
        return;
    };
    for (i, &b) in s.iter().enumerate() {
        let v = 2f32.powi(b as i32 - 127);
        assert_eq!(got[2 * i..2 * i + 2], [v, v], "bits {b}");
    }
}
