//! References to pointers as parameters (`const device T*& x`, `device
//! float* thread & p`) that the function moves, as MLX's
//! `adjust_matrix_offsets` moves a kernel's input and output pointers to a
//! batch's matrices: the caller's pointer variable (a kernel's buffer
//! argument too) is passed as its element index, which the callee moves,
//! through overloads, function templates and a reference passed on to
//! another. Run on the GPU against a CPU reference; pointing the caller's
//! pointer into another buffer is refused, located.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::assert_error;

const BATCHED: &str = r#"
#include <metal_stdlib>
using namespace metal;

template <typename T>
void step(const device T*& p, int n) { p += n; }

// Passes its own reference on, to the template and explicitly.
template <typename T>
void step_twice(const device T*& p, int n) {
  step(p, n);
  step<T>(p, n);
}

template <typename T>
void adjust(const device T*& x, device T*& y, const constant int* strides, uint3 tid) {
  x += tid.z * strides[0];
  y += tid.z * strides[1];
}

// An overload of another arity: only the batch's row is gathered.
template <typename T>
void adjust(const device T*& x, const device uint* idx, device T*& y,
            const constant int* strides, uint3 tid) {
  x += idx[tid.z] * strides[0];
  y += tid.z * strides[1];
}

void skip(device float* thread & p, int n) {
  p = p + n;
}

template <typename T, bool gathered>
[[kernel]] void batched(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                        const constant int* strides [[buffer(2)]],
                        const device uint* idx [[buffer(3)]],
                        uint3 tid [[threadgroup_position_in_grid]],
                        uint3 lid [[thread_position_in_threadgroup]]) {
  if (gathered) {
    adjust(x, idx, y, strides, tid);
  } else {
    adjust(x, y, strides, tid);
  }
  T acc = 0;
  for (int i = 0; i < 3; i++) {
    acc += x[lid.x] * T(i + 1);
    step_twice(x, 1);
  }
  device T* out = y;
  skip(out, 4);
  out[lid.x] = acc;
  y[lid.x] = x[lid.x];
}

template [[host_name("plain")]] [[kernel]] void batched<float, false>(
    const device float*, device float*, const constant int*, const device uint*, uint3, uint3);
template [[host_name("gather")]] [[kernel]] void batched<float, true>(
    const device float*, device float*, const constant int*, const device uint*, uint3, uint3);
"#;

/// Threads per batch, batches, and the strides of `x` and `y`.
const LANES: usize = 4;
const BATCHES: usize = 5;
const X_STRIDE: usize = 16;
const Y_STRIDE: usize = 8;

/// What `batched` leaves in `y`.
fn reference(x: &[f32], idx: &[u32], gathered: bool) -> Vec<f32> {
    let mut y = vec![0.0f32; BATCHES * Y_STRIDE];
    for z in 0..BATCHES {
        let row = if gathered { idx[z] as usize } else { z };
        for l in 0..LANES {
            let mut at = row * X_STRIDE + l;
            let mut acc = 0.0;
            for i in 0..3 {
                acc += x[at] * (i + 1) as f32;
                at += 2;
            }
            y[z * Y_STRIDE + 4 + l] = acc;
            y[z * Y_STRIDE + l] = x[at];
        }
    }
    y
}

#[cfg(feature = "runner")]
fn run(entry: &str, x: &[f32], idx: &[u32]) -> Option<Vec<f32>> {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let gpu = common::gpu()?;
    let strides = common::ml::i32_bytes(&[X_STRIDE as i32, Y_STRIDE as i32]);
    let buffers = [
        (0, common::f32_bytes(x)),
        (1, vec![0; BATCHES * Y_STRIDE * 4]),
        (2, strides),
        (3, common::ml::u32_bytes(idx)),
    ];
    let dispatch = Dispatch::Threadgroups {
        groups: [1, 1, BATCHES as u32],
        threadgroup: [LANES as u32, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "batched.metal",
        BATCHED,
        &msl2wgsl::Options::default(),
        entry,
        &dispatch,
        &buffers.into_iter().collect(),
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    Some(common::f32s(&out[&1]))
}

#[test]
#[cfg(feature = "runner")]
fn pointers_moved_through_references_on_gpu() {
    let x: Vec<f32> = (0..BATCHES * X_STRIDE + X_STRIDE)
        .map(|i| ((i * 5) % 17) as f32 - 8.0)
        .collect();
    let idx: Vec<u32> = vec![3, 0, 4, 4, 1];
    for (entry, gathered) in [("plain", false), ("gather", true)] {
        let Some(got) = run(entry, &x, &idx) else {
            return;
        };
        assert_eq!(got, reference(&x, &idx, gathered), "{entry}");
    }
}

#[test]
fn pointing_a_callers_pointer_into_another_buffer_is_located() {
    let body = "void advance(device float* thread & p, device float* q) { p = q; }\n\
                kernel void k(device float* a [[buffer(0)]], device float* b [[buffer(1)]]) {\n\
                \x20   device float* p = a;\n\
                \x20   advance(p, b);\n\
                \x20   p[0] = 1.0;\n\
                }\n";
    assert_error(
        body,
        "p = q",
        0,
        "member `p` points into buffer `a`; it cannot be made to point into buffer `b`",
    );
}

#[test]
fn a_reference_to_a_pointer_binds_only_a_pointer_variable() {
    let body = "void advance(const device float*& p) { p += 1; }\n\
                kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
                \x20   advance(a + i);\n\
                \x20   a[0] = 1.0;\n\
                }\n";
    assert_error(
        body,
        "a + i",
        0,
        "a reference to a pointer (`thread device const float*&`) is supported only bound to a pointer variable or pointer member",
    );
}
