//! `&p` of a pointer variable passed to a helper that takes a pointer to
//! a pointer (an array of pointers parameter, `const device T* ps[N]`,
//! as MLX's row reductions take their row pointers): the helper reads
//! through `ps[0]` and moves it, and the move is the caller's. Run on the
//! GPU against a CPU reference; what stays refused is located. With it,
//! `&total` of one value for a one-element array parameter
//! (`thread float totals[1]`).
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::assert_error;

/// A looped row reduction: each pass points `row` at a strided row,
/// `sum_rows` sums `count` elements through `&row` and moves it past
/// them; the kernel then reads where `row` ended up, and moves it again
/// through `*p` in another helper.
const ROWS: &str = r#"
template <typename T, int N>
void sum_rows(thread float totals[N], const device T* inputs[N], int count) {
  for (int j = 0; j < N; j++) {
    totals[j] = 0;
    for (int i = 0; i < count; i++) {
      totals[j] += float(inputs[j][i]);
    }
    inputs[j] += count;
  }
}

void skip_ahead(const device float* p[1], int k) {
  *p += k;
}

kernel void rows(const device float* in [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
  const device float* row;
  float total = 0;
  float parts[3];
  for (int r = 0; r < 3; r++) {
    row = in + gid * 16 + r * 5;
    float part;
    sum_rows<float, 1>(&part, &row, 4);
    parts[r] = part * float(r + 1);
    total += row[0] * 100.0;
  }
  sum_rows<float, 1>(&parts[1], &row, 2);
  skip_ahead(&row, 2);
  out[gid] = total + parts[0] + parts[1] + parts[2] + row[0] * 1000.0;
}
"#;

/// What `rows` computes for thread `gid` of input `x`.
fn rows_reference(x: &[f32], gid: usize) -> f32 {
    let mut total = 0.0f32;
    let mut parts = [0.0f32; 3];
    let mut at = 0;
    for (r, part) in parts.iter_mut().enumerate() {
        at = gid * 16 + r * 5;
        let sum: f32 = x[at..at + 4].iter().sum();
        *part = sum * (r + 1) as f32;
        at += 4;
        total += x[at] * 100.0;
    }
    parts[1] = x[at..at + 2].iter().sum();
    at += 2 + 2;
    total + parts[0] + parts[1] + parts[2] + x[at] * 1000.0
}

#[test]
#[cfg(feature = "runner")]
fn a_pointer_variable_moved_through_its_address_on_gpu() {
    let n = 32u32;
    // Small integers: every sum is exact in f32.
    let x: Vec<f32> = (0..n * 16 + 19).map(|i| ((i * 7) % 13) as f32).collect();
    let Some(got) = common::source::run_body_f32s(
        ROWS,
        "rows",
        (n, 32),
        vec![(0, common::f32_bytes(&x)), (1, vec![0u8; 4 * n as usize])],
        1,
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n as usize).map(|g| rows_reference(&x, g)).collect();
    assert_eq!(got, want);
}

/// A local array of pointers set element by element, each a stride past
/// the last, passed to the same helper (MLX's strided row reductions).
const STRIDED: &str = r#"
template <typename T, int N>
void sum_rows(thread float totals[N], const device T* inputs[N], int count) {
  for (int j = 0; j < N; j++) {
    totals[j] = 0;
    for (int i = 0; i < count; i++) {
      totals[j] += float(inputs[j][i]);
    }
    inputs[j] += count;
  }
}

template <typename T, int N>
void sum_strided_rows(thread float totals[N], const device T* in, int stride, int count) {
  const device T* inputs[N];
  inputs[0] = in;
  for (int i = 1; i < N; i++) {
    inputs[i] = inputs[i - 1] + stride;
  }
  sum_rows<T, N>(totals, inputs, count);
  totals[0] += inputs[N - 1][0];
}

kernel void strided(const device float* in [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
  float totals[3];
  sum_strided_rows<float, 3>(totals, in + gid * 4, 40, 4);
  out[gid] = totals[0] + 10.0 * totals[1] + 100.0 * totals[2];
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_local_array_of_pointers_set_element_by_element_on_gpu() {
    let n = 8u32;
    let x: Vec<f32> = (0..200).map(|i| ((i * 5) % 11) as f32).collect();
    let Some(got) = common::source::run_body_f32s(
        STRIDED,
        "strided",
        (n, 8),
        vec![(0, common::f32_bytes(&x)), (1, vec![0u8; 4 * n as usize])],
        1,
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n as usize)
        .map(|g| {
            let row = |j: usize| g * 4 + j * 40;
            let mut t: Vec<f32> = (0..3).map(|j| x[row(j)..row(j) + 4].iter().sum()).collect();
            // The helper moved each pointer past its row.
            t[0] += x[row(2) + 4];
            t[0] + 10.0 * t[1] + 100.0 * t[2]
        })
        .collect();
    assert_eq!(got, want);
}

/// The helper cannot make the caller's pointer point into another buffer:
/// the pointer's root is fixed at translation time.
#[test]
fn pointing_the_callers_pointer_into_another_buffer_is_refused() {
    let body = r#"
void repoint(const device float* p[1], const device float* other) {
  p[0] = other;
}
kernel void k(const device float* a [[buffer(0)]],
              const device float* b [[buffer(1)]],
              device float* out [[buffer(2)]]) {
  const device float* row = a;
  repoint(&row, b);
  out[0] = row[0];
}
"#;
    assert_error(body, "p[0] = other", 0, "member `p` points into");
}

/// `&p` for a pointer to pointers of another type is a located error.
#[test]
fn the_address_of_a_pointer_of_another_type_is_located() {
    let body = r#"
float first(const device int* p[1]) {
  return float(p[0][0]);
}
kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]]) {
  const device float* row = a;
  out[0] = first(&row);
}
"#;
    assert_error(
        body,
        "&row",
        0,
        "cannot pass `&row`, a `thread device const float**`, for a parameter of type `device const int*[1]`",
    );
}
