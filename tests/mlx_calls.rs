//! Two C++ forms that machine-learning kernel libraries use everywhere:
//! function objects (a struct whose `operator()`, a template or not, is
//! called on a temporary, `Op()(a, b)` and `Op{}(a, b)`, or on a variable,
//! `Op op; op(a, b)`), and pointer parameters that the function moves
//! (`in += gid * n`, `p = p + n`, `p++`, `p = q` into the same buffer),
//! which become a fixed buffer plus an element index held in a variable.
//! The kernels run on the GPU against references computed here; moving a
//! pointer into another buffer is a located error.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, first_code, translate_body};
use msl2wgsl::diagnostics::Code;

/// Function objects: `Add` with an `operator()` template, `Diff` with a
/// plain one that reads a static member, `Maximum<U>` with a static
/// `init`; a kernel template calls `Op()(..)` and is instantiated for two
/// ops, another calls `Op{}(..)`, a third folds with `Op op; op(..)`
/// starting from `Op::init`.
const FUNCTION_OBJECTS: &str = r#"
struct Add {
  template <typename T>
  T operator()(T x, T y) thread {
    return x + y;
  }
};
struct Diff {
  static constexpr constant float scale = 0.5f;
  float operator()(float x, float y) {
    return abs(x - y) * scale;
  }
};
template <typename U>
struct Maximum {
  static constexpr constant U init = U(-1000);
  U operator()(U x, U y) thread {
    return max(x, y);
  }
};
template <typename T, typename Op>
[[kernel]] void binary_vv(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device T* c [[buffer(2)]],
    uint index [[thread_position_in_grid]]) {
  c[index] = Op()(a[index], b[index]);
}
template [[host_name("vv_add")]] [[kernel]] void binary_vv<float, Add>(
    device const float*, device const float*, device float*, uint);
template [[host_name("vv_diff")]] [[kernel]] void binary_vv<float, Diff>(
    device const float*, device const float*, device float*, uint);
template <typename Op>
[[kernel]] void braced(
    device const float* a [[buffer(0)]],
    device const float* b [[buffer(1)]],
    device float* c [[buffer(2)]],
    uint i [[thread_position_in_grid]]) {
  c[i] = Op{}(a[i], b[i]) + Add{}(a[i], 1.0f);
}
template [[host_name("braced_diff")]] [[kernel]] void braced<Diff>(
    device const float*, device const float*, device float*, uint);
template <typename Op, typename U>
[[kernel]] void folded(
    device const U* a [[buffer(0)]],
    device U* out [[buffer(2)]],
    constant uint& n [[buffer(3)]],
    uint i [[thread_position_in_grid]]) {
  Op op;
  U total = Op::init;
  for (uint k = 0; k < n; k++) {
    total = op(total, a[i * n + k]);
  }
  out[i] = total;
}
template [[host_name("fold_max")]] [[kernel]] void folded<Maximum<float>, float>(
    device const float*, device float*, constant uint&, uint);
"#;

/// `n` inputs in [-8, 8) from a fixed sequence seeded by `seed`.
fn inputs(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 8) as f32 / (1u32 << 24) as f32 * 16.0 - 8.0
        })
        .collect()
}

#[test]
fn function_object_kernels_translate() {
    let lib = translate_body(FUNCTION_OBJECTS);
    assert_eq!(
        lib.function_names(),
        vec!["vv_add", "vv_diff", "braced_diff", "fold_max"]
    );
}

/// A temporary of a type without `operator()`, called, is refused where
/// it is written.
#[test]
fn calling_a_temporary_without_call_operator_is_located() {
    let body = "struct Plain { float v; };\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = Plain{}(1.0f); }\n";
    let text = assert_error(body, "Plain{}(", 0, "called object is not a function");
    assert!(text.contains("operator()"), "{text}");
    assert_eq!(first_code(body), Code::WrongKind);
}

/// A CPU reference of a binary op.
type Reference<'a> = dyn Fn(f32, f32) -> f32 + 'a;

#[cfg(feature = "runner")]
#[test]
fn function_objects_match_cpu_reference() {
    use common::{f32_bytes, f32s};
    let n = 64usize;
    let (a, b) = (inputs(n, 1), inputs(n, 2));
    let buffers = || vec![(0, f32_bytes(&a)), (1, f32_bytes(&b)), (2, vec![0; n * 4])];
    let run = |entry: &str| {
        common::source::run_body(FUNCTION_OBJECTS, entry, (n as u32, 32), buffers())
            .map(|out| f32s(&out[&2]))
    };
    fn diff(x: f32, y: f32) -> f32 {
        (x - y).abs() * 0.5
    }
    let cases: [(&str, &Reference<'_>); 3] = [
        ("vv_add", &|x, y| x + y),
        ("vv_diff", &diff),
        ("braced_diff", &|x, y| diff(x, y) + (x + 1.0)),
    ];
    for (entry, reference) in cases {
        let Some(got) = run(entry) else {
            return;
        };
        for i in 0..n {
            // One rounding per operation, as on the CPU.
            let want = reference(a[i], b[i]);
            assert!(
                (got[i] - want).abs() <= 1e-6 * want.abs().max(1.0),
                "{entry}[{i}]: {} vs {want}",
                got[i]
            );
        }
    }
}

#[cfg(feature = "runner")]
#[test]
fn folding_with_a_function_object_variable_matches_cpu_reference() {
    use common::{f32_bytes, f32s};
    let (rows, n) = (16usize, 5usize);
    let a = inputs(rows * n, 3);
    let buffers = vec![
        (0, f32_bytes(&a)),
        (2, vec![0; rows * 4]),
        (3, (n as u32).to_le_bytes().to_vec()),
    ];
    let Some(out) =
        common::source::run_body(FUNCTION_OBJECTS, "fold_max", (rows as u32, 16), buffers)
    else {
        return;
    };
    let want: Vec<f32> = a
        .chunks(n)
        .map(|row| row.iter().fold(-1000.0f32, |m, x| m.max(*x)))
        .collect();
    assert_eq!(f32s(&out[&2]), want);
}

/// MLX's row-wise shape: a kernel advances its `in` and `out` buffer
/// arguments to its row (`in += gid * row_len`), then loops over the row
/// twice (a sum, then each element over the sum).
const ROWS: &str = r#"
template <typename T>
[[kernel]] void normalize_rows(
    const device T* in [[buffer(0)]],
    device T* out [[buffer(1)]],
    constant uint& row_len [[buffer(2)]],
    uint gid [[thread_position_in_grid]]) {
  in += gid * row_len;
  out = out + gid * row_len;
  T total = 0;
  for (uint k = 0; k < row_len; k++) {
    total += in[k];
  }
  for (uint k = 0; k < row_len; k++) {
    out[k] = in[k] / total;
  }
}
template [[host_name("normalize_rows_float")]] [[kernel]] void normalize_rows<float>(
    const device float*, device float*, constant uint&, uint);
"#;

#[cfg(feature = "runner")]
#[test]
fn rows_reached_by_advancing_buffer_arguments_match_cpu_reference() {
    use common::{f32_bytes, f32s};
    let (rows, len) = (24usize, 7usize);
    let input: Vec<f32> = inputs(rows * len, 4)
        .iter()
        .map(|x| x.abs() + 0.5)
        .collect();
    let buffers = vec![
        (0, f32_bytes(&input)),
        (1, vec![0; rows * len * 4]),
        (2, (len as u32).to_le_bytes().to_vec()),
    ];
    let Some(out) =
        common::source::run_body(ROWS, "normalize_rows_float", (rows as u32, 8), buffers)
    else {
        return;
    };
    let got = f32s(&out[&1]);
    for (r, row) in input.chunks(len).enumerate() {
        let total = row.iter().fold(0.0f32, |s, x| s + x);
        for (k, x) in row.iter().enumerate() {
            let want = x / total;
            let g = got[r * len + k];
            assert!((g - want).abs() <= 1e-6, "[{r}][{k}]: {g} vs {want}");
        }
    }
}

/// Pointer increments in loops: a helper copies a column of a row-major
/// matrix with `*dst++ = *src; src += stride;`; a kernel walks its own
/// argument with `p = p + n`, `p++`, `--p`, `p -= n` and `p = q` (a local
/// pointer into the same buffer).
const WALKS: &str = r#"
void copy_column(const device float* src, device float* dst, uint n, uint stride) {
  for (uint k = 0; k < n; k++) {
    *dst++ = *src;
    src += stride;
  }
}
kernel void transpose(
    const device float* src [[buffer(0)]],
    device float* dst [[buffer(1)]],
    constant uint& rows [[buffer(2)]],
    constant uint& cols [[buffer(3)]],
    uint col [[thread_position_in_grid]]) {
  copy_column(src + col, dst + col * rows, rows, cols);
}
kernel void walk(
    device const int* a [[buffer(0)]],
    device int* out [[buffer(1)]],
    uint i [[thread_position_in_grid]]) {
  device const int* next = a + 3 * i + 2;
  a = a + 3 * i;
  int s = *a;
  a++;
  s += *a * 10;
  --a;
  a -= -2;
  s += a[0] * 100;
  a = next;
  s += *(a - 1) * 1000;
  out[i] = s;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn pointer_increments_in_loops_match_cpu_reference() {
    use common::{f32_bytes, f32s};
    let (rows, cols) = (9usize, 13usize);
    let m = inputs(rows * cols, 5);
    let buffers = vec![
        (0, f32_bytes(&m)),
        (1, vec![0; rows * cols * 4]),
        (2, (rows as u32).to_le_bytes().to_vec()),
        (3, (cols as u32).to_le_bytes().to_vec()),
    ];
    let Some(out) = common::source::run_body(WALKS, "transpose", (cols as u32, 4), buffers) else {
        return;
    };
    let got = f32s(&out[&1]);
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(got[c * rows + r], m[r * cols + c], "[{r}][{c}]");
        }
    }
}

#[cfg(feature = "runner")]
#[test]
fn pointer_argument_walk_matches_cpu_reference() {
    let n = 16usize;
    let a: Vec<i32> = (0..3 * n as i32).map(|k| k * 7 % 10).collect();
    let bytes: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
    let buffers = vec![(0, bytes), (1, vec![0; n * 4])];
    let Some(out) = common::source::run_body(WALKS, "walk", (n as u32, 16), buffers) else {
        return;
    };
    let got: Vec<i32> = common::u32s(&out[&1]).iter().map(|w| *w as i32).collect();
    let want: Vec<i32> = (0..n)
        .map(|i| a[3 * i] + a[3 * i + 1] * 10 + a[3 * i + 2] * 100 + a[3 * i + 1] * 1000)
        .collect();
    assert_eq!(got, want);
}

/// A threadgroup pointer argument, reassigned: each thread stores its
/// value, then moves the pointer to its group of four (`t += ..`) and sums
/// it; a helper walks a threadgroup pointer with `p++`.
const THREADGROUP: &str = r#"
float sum_of(threadgroup const float* p, uint n) {
  float s = 0.0f;
  for (uint k = 0; k < n; k++) {
    s += *p;
    p++;
  }
  return s;
}
kernel void quads(
    device const float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    threadgroup float* t [[threadgroup(0)]],
    uint i [[thread_position_in_grid]],
    uint l [[thread_index_in_threadgroup]]) {
  t[l] = in[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  t += (l / 4) * 4;
  out[i] = t[0] + t[1] + t[2] + t[3] + 10.0f * sum_of(t, 2);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn reassigned_threadgroup_pointer_matches_cpu_reference() {
    use common::{f32_bytes, f32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let (n, group) = (64usize, 16u32);
    let input: Vec<f32> = (0..n).map(|k| (k % 11) as f32).collect();
    let options = msl2wgsl::Options {
        threadgroup_memory: vec![(0, group * 4)],
        ..msl2wgsl::Options::default()
    };
    let src = format!("{}{THREADGROUP}", common::source::PRELUDE);
    let out = run_kernel(
        gpu,
        "t.metal",
        &src,
        &options,
        "quads",
        &Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [group, 1, 1],
        },
        &[(0, f32_bytes(&input)), (1, vec![0; n * 4])]
            .into_iter()
            .collect(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let q = i / 4 * 4;
            let quad = &input[q..q + 4];
            quad.iter().sum::<f32>() + 10.0 * (quad[0] + quad[1])
        })
        .collect();
    assert_eq!(f32s(&out[&1]), want);
}

/// Moving a pointer argument into another buffer is refused at the
/// assignment: the buffer a pointer reaches is fixed at translation time.
#[test]
fn pointing_an_argument_into_another_buffer_is_located() {
    let body = "kernel void k(device float* a [[buffer(0)]], device float* b [[buffer(1)]],\n\
                              uint i [[thread_position_in_grid]]) {\n\
                  a += i;\n\
                  if (i > 4) { a = b; }\n\
                  a[0] = 1.0f;\n\
                }\n";
    let text = assert_error(
        body,
        "a = b",
        0,
        "`a` points into buffer `a`; it cannot be made to point into buffer `b`",
    );
    assert!(text.contains("element index"), "{text}");
    assert_eq!(first_code(body), Code::Unsupported);
}

/// The same for a helper's pointer parameter, which is specialised per
/// buffer: the other parameter points into another one.
#[test]
fn pointing_a_parameter_into_another_buffer_is_located() {
    let body =
        "void pick(device float* p, device float* q, bool c) { if (c) { p = q; } *p = 2.0f; }\n\
                kernel void k(device float* a [[buffer(0)]], device float* b [[buffer(1)]],\n\
                              uint i [[thread_position_in_grid]]) {\n\
                  pick(a + i, b, i > 4);\n\
                }\n";
    let text = assert_error(
        body,
        "p = q",
        0,
        "`p` points into buffer `a`; it cannot be made to point into buffer `b`",
    );
    assert!(text.contains("element index"), "{text}");
    assert_eq!(first_code(body), Code::Unsupported);
}
