//! Still more forms of machine-learning kernel libraries (MLX's kernels,
//! issue #17): a function calling itself in tail position (an index walker
//! that carries its overflow into another step of itself, Euclid's `gcd`);
//! `*` of two SIMD-group matrices. The kernels run on the GPU against a CPU
//! reference; what stays refused is located.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, translate_body};

// ---- tail recursion ----------------------------------------------------

/// A walker over a strided row that steps `n` elements, wrapping at the
/// row's end: the overflow is carried by a call of `advance` to itself as
/// the last thing it does (plain, and through `this->`, in a class
/// template); a free function returning a call of itself (`gcd`), one that
/// calls itself and then `return;`s, and a function template doing the
/// same with a `constant` pointer passed on unchanged.
const TAIL_CALLS: &str = r#"
template <typename IdxT>
struct RowWalker {
  int pos = 0;
  IdxT at = 0;
  int wraps = 0;

  void advance(int n, constant const int* len, constant const int* stride) thread {
    pos += n;
    at += IdxT(n) * IdxT(stride[0]);
    if (pos >= len[0]) {
      int over = pos - len[0];
      pos = 0;
      at = 0;
      wraps += 1;
      if (over > 0) {
        advance(over, len, stride);
      }
    }
  }

  void advance_twice(int n, constant const int* len, constant const int* stride) thread {
    if (n <= 0) {
      return;
    }
    advance(1, len, stride);
    this->advance_twice(n - 1, len, stride);
  }
};

uint gcd(uint a, uint b) {
  if (b == 0) {
    return a;
  }
  return gcd(b, a % b);
}

void count_down(thread int& total, int k) {
  total += k;
  if (k > 0) {
    count_down(total, k - 1);
    return;
  }
}

template <typename T>
T sum_digits(T x, T acc, constant const int* base) {
  if (x == 0) {
    return acc;
  } else {
    return sum_digits(x / T(base[0]), acc + x % T(base[0]), base);
  }
}

kernel void walk(constant const int* len [[buffer(0)]],
                 constant const int* stride [[buffer(1)]],
                 device int* out [[buffer(2)]],
                 uint tid [[thread_position_in_grid]]) {
  RowWalker<long> w;
  w.advance(int(tid) * 3, len, stride);
  out[tid * 8 + 0] = w.pos;
  out[tid * 8 + 1] = int(w.at);
  out[tid * 8 + 2] = w.wraps;
  RowWalker<int> v;
  v.advance_twice(int(tid), len, stride);
  out[tid * 8 + 3] = v.pos;
  out[tid * 8 + 4] = v.wraps;
  out[tid * 8 + 5] = int(gcd(tid * 12u + 18u, 30u + tid));
  int total = 0;
  count_down(total, int(tid));
  out[tid * 8 + 6] = total;
  out[tid * 8 + 7] = int(sum_digits(uint(tid * 977u + 5u), 0u, len));
}
"#;

/// The CPU twin of `RowWalker::advance`: (pos, at, wraps).
fn advance(state: (i64, i64, i64), n: i64, len: i64, stride: i64) -> (i64, i64, i64) {
    let (mut pos, mut at, mut wraps) = state;
    pos += n;
    at += n * stride;
    if pos >= len {
        let over = pos - len;
        pos = 0;
        at = 0;
        wraps += 1;
        if over > 0 {
            return advance((pos, at, wraps), over, len, stride);
        }
    }
    (pos, at, wraps)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn sum_digits(x: u32, base: u32) -> u32 {
    if x == 0 {
        0
    } else {
        x % base + sum_digits(x / base, base)
    }
}

#[cfg(feature = "runner")]
#[test]
fn tail_calls_run_as_loops_on_gpu() {
    let (len, stride) = (5i32, 2i32);
    let n = 16u32;
    let Some(out) = common::source::run_body(
        TAIL_CALLS,
        "walk",
        (n, 16),
        vec![
            (0, len.to_le_bytes().to_vec()),
            (1, stride.to_le_bytes().to_vec()),
            (2, vec![0u8; 8 * 4 * n as usize]),
        ],
    ) else {
        return;
    };
    let got: Vec<i32> = out[&2]
        .chunks(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    for tid in 0..n as i64 {
        let (pos, at, wraps) = advance((0, 0, 0), tid * 3, len as i64, stride as i64);
        let mut twice = (0, 0, 0);
        for _ in 0..tid {
            twice = advance(twice, 1, len as i64, stride as i64);
        }
        let t = tid as u32;
        let want = [
            pos,
            at,
            wraps,
            twice.0,
            twice.2,
            gcd(t * 12 + 18, 30 + t) as i64,
            tid * (tid + 1) / 2,
            sum_digits(t * 977 + 5, len as u32) as i64,
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(
                got[tid as usize * 8 + k] as i64,
                *w,
                "thread {tid}, value {k}"
            );
        }
    }
}

/// The WGSL has no recursion: the tail calls became loops.
#[test]
fn tail_calls_become_loops() {
    let lib = translate_body(TAIL_CALLS);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("loop {"), "{wgsl}");
    assert!(!wgsl.contains("gcd(b"), "{wgsl}");
}

/// A call of a function to itself whose result is used (`1 + f(n - 1)`) is
/// not a tail call: it stays refused, at the call.
#[test]
fn recursion_outside_tail_position_is_refused() {
    let src = r#"
int depth(int n) {
  if (n == 0) {
    return 0;
  }
  return 1 + depth(n - 1);
}
kernel void k(device int* out [[buffer(0)]]) { out[0] = depth(3); }
"#;
    assert_error(
        src,
        "depth(n - 1)",
        0,
        "recursive function calls are not allowed in Metal",
    );
}

/// A tail call that moves a pointer argument (`p + 1`) cannot reassign the
/// WGSL argument that carries it: refused, at the call.
#[test]
fn tail_call_moving_a_pointer_is_refused() {
    let src = r#"
int last(device const int* p, int n) {
  if (n == 1) {
    return p[0];
  }
  return last(p + 1, n - 1);
}
kernel void k(device const int* in [[buffer(0)]], device int* out [[buffer(1)]]) {
  out[0] = last(in, 4);
}
"#;
    assert_error(
        src,
        "last(p + 1, n - 1)",
        0,
        "recursive function calls are not allowed in Metal",
    );
}
