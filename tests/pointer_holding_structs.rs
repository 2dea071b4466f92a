//! Local objects of structs that hold pointers (issue #17), built by
//! constructors and advanced by member functions, as MLX's GEMM block
//! loaders and FFT read/write helpers are (src/lower/metal/pointer_objects.rs):
//! GPU runs compared with CPU references, and located errors where a
//! pointer member's target is not known at translation time.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use common::source::{assert_error, first_code, translate_body};

/// A templated tile loader in the shape of MLX's `BlockLoader`: a device
/// source and a threadgroup destination pointer set by the constructor
/// from its arguments plus offsets, `next()` advancing the source,
/// `load_unsafe()` / `load_safe()` (with an early `return`) copying into
/// threadgroup memory; then a small tiled matmul using two of them, one
/// built with parentheses and one copy-initialised from a constructor call.
const TILED_MATMUL: &str = r#"
template <typename T, short BROWS, short BCOLS, short dst_ld, short reduction_dim, short tgp_size,
          short n_reads = (BCOLS * BROWS) / tgp_size, short TCOLS = BCOLS / n_reads,
          short TROWS = tgp_size / TCOLS>
struct TileLoader {
  static constant constexpr short n_rows = (BROWS + TROWS - 1) / TROWS;
  const int src_ld;
  const int tile_stride;
  const short thread_idx;
  const short bi;
  const short bj;
  threadgroup T* dst;
  const device T* src;
  int steps = 0;

  TileLoader(const device T* src_, const int src_ld_, threadgroup T* dst_, ushort lid) thread
      : src_ld(src_ld_),
        tile_stride(reduction_dim ? BCOLS : BROWS * src_ld),
        thread_idx(lid),
        bi(thread_idx / TCOLS),
        bj(n_reads * (thread_idx % TCOLS)),
        dst(dst_ + bi * dst_ld + bj),
        src(src_ + bi * src_ld + bj) {}

  void load_unsafe() const thread {
    for (short i = 0; i < BROWS; i += TROWS) {
      for (short j = 0; j < n_reads; j++) {
        dst[i * dst_ld + j] = src[i * src_ld + j];
      }
    }
  }

  void load_safe(short2 src_tile_dim) const thread {
    src_tile_dim = src_tile_dim - short2(bj, bi);
    if (src_tile_dim.x <= 0 || src_tile_dim.y <= 0) {
      for (short i = 0; i < BROWS; i += TROWS) {
        for (short j = 0; j < n_reads; j++) {
          dst[i * dst_ld + j] = T(0);
        }
      }
      return;
    }
    bool tmp_idx[n_reads];
    T tmp_val[n_reads];
    for (short i = 0; i < BROWS; i += TROWS) {
      for (short j = 0; j < n_reads; j++) {
        tmp_idx[j] = (i < src_tile_dim.y) && (j < src_tile_dim.x);
      }
      for (short j = 0; j < n_reads; j++) {
        tmp_val[j] = src[(tmp_idx[j] ? i * src_ld + j : 0)];
      }
      for (short j = 0; j < n_reads; j++) {
        tmp_val[j] = tmp_idx[j] ? tmp_val[j] : T(0);
      }
      for (short j = 0; j < n_reads; j++) {
        dst[i * dst_ld + j] = tmp_val[j];
      }
    }
  }

  void next() thread {
    src += tile_stride;
    steps++;
  }
};

constant constexpr int BM = 8;
constant constexpr int BN = 8;
constant constexpr int BK = 16;

struct Dims { int M; int N; int K; };

kernel void matmul(const device float* A [[buffer(0)]],
                   const device float* B [[buffer(1)]],
                   device float* C [[buffer(2)]],
                   constant Dims& d [[buffer(3)]],
                   device int* steps [[buffer(4)]],
                   uint gid [[thread_position_in_grid]],
                   ushort lid [[thread_index_in_threadgroup]]) {
  threadgroup float As[BM * BK];
  threadgroup float Bs[BK * BN];
  const int tiles_n = (d.N + BN - 1) / BN;
  const int group = int(gid / 64);
  const int tm = group / tiles_n;
  const int tn = group % tiles_n;
  TileLoader<float, BM, BK, BK, 1, 64> la(A + tm * BM * d.K, d.K, As, lid);
  auto lb = TileLoader<float, BK, BN, BN, 0, 64>(B + tn * BN, d.N, Bs, lid);
  const int row = lid / BN;
  const int col = lid % BN;
  const short rows_left = short(min(BM, d.M - tm * BM));
  const short cols_left = short(min(BN, d.N - tn * BN));
  float acc = 0.0f;
  for (int k0 = 0; k0 < d.K; k0 += BK) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const short k_left = short(min(BK, d.K - k0));
    if (rows_left == BM && k_left == BK) {
      la.load_unsafe();
    } else {
      la.load_safe(short2(k_left, rows_left));
    }
    if (cols_left == BN && k_left == BK) {
      lb.load_unsafe();
    } else {
      lb.load_safe(short2(cols_left, k_left));
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int k = 0; k < BK; k++) {
      acc += As[row * BK + k] * Bs[k * BN + col];
    }
    la.next();
    lb.next();
  }
  if (row < rows_left && col < cols_left) {
    C[(tm * BM + row) * d.N + tn * BN + col] = acc;
  }
  if (lid == 0) {
    steps[group] = la.steps * 100 + lb.steps;
  }
}
"#;

#[test]
fn tile_loader_translates_without_struct_values() {
    let lib = translate_body(TILED_MATMUL);
    let wgsl = lib.wgsl();
    // The loader is no WGSL struct: its members are variables, its
    // pointers element indices.
    assert!(!wgsl.contains("struct TileLoader"), "{wgsl}");
    // `next()` moves the caller's source index through a pointer.
    assert!(wgsl.contains("ptr<function, u32>"), "{wgsl}");
}

/// Row-major `M×K` by `K×N`, accumulated in `k` order as the kernel does.
fn matmul_reference(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for kk in 0..k {
                acc += a[i * k + kk] * b[kk * n + j];
            }
            c[i * n + j] = acc;
        }
    }
    c
}

#[cfg(feature = "runner")]
#[test]
fn tile_loader_matmul_runs() {
    use common::f32_bytes;
    use common::source::run_body;
    let (m, n, k) = (19usize, 21usize, 37usize);
    // Multiples of 1/4 with small magnitudes: every product and partial
    // sum is exact in f32, so any order of the zero padding agrees.
    let a: Vec<f32> = (0..m * k)
        .map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.25)
        .collect();
    let b: Vec<f32> = (0..k * n)
        .map(|i| ((i * 5 % 13) as f32 - 6.0) * 0.25)
        .collect();
    let tiles = m.div_ceil(8) * n.div_ceil(8);
    let dims: Vec<u8> = [m as i32, n as i32, k as i32]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let Some(out) = run_body(
        TILED_MATMUL,
        "matmul",
        (tiles as u32 * 64, 64),
        vec![
            (0, f32_bytes(&a)),
            (1, f32_bytes(&b)),
            (2, vec![0u8; m * n * 4]),
            (3, dims),
            (4, vec![0u8; tiles * 4]),
        ],
    ) else {
        return;
    };
    assert_eq!(common::f32s(&out[&2]), matmul_reference(&a, &b, m, n, k));
    // Each loader's own counter, moved by `next()` through the object.
    let steps = k.div_ceil(16) as u32;
    assert_eq!(common::u32s(&out[&4]), vec![steps * 100 + steps; tiles]);
}

/// A read/write helper in the shape of MLX's FFT `ReadWriter`: input,
/// threadgroup and output pointers and plain members set by a constructor
/// (whose body assigns a member too) with default member initializers,
/// overloaded const members, non-const members that move the pointers
/// (`in += n`, `out = out + n`) and count, one calling others; built with
/// braces and with parentheses, and copied (the copy moves alone).
const ROW_IO: &str = r#"
template <typename in_T, typename out_T>
struct RowIO {
  const device in_T* in;
  threadgroup float2* buf;
  device out_T* out;
  int n;
  uint lane;
  int threads;
  bool inv;
  int rows_done = 0;
  int strided_idx = 0;

  RowIO(const device in_T* in_, threadgroup float2* buf_, device out_T* out_,
        const short n_, const uint lane_, const uint threads_, const bool inv_) thread
      : in(in_), buf(buf_), out(out_), n(n_), lane(lane_), inv(inv_) {
    threads = int(threads_);
    if (threads > n) {
      threads = n;
    }
  }

  float2 post_in(float2 e) const thread { return inv ? float2(e.x, -e.y) : e; }
  float2 post_in(float e) const thread { return float2(e, 0.0f); }

  void load() const thread {
    for (int j = int(lane); j < n; j += threads) {
      buf[j] = post_in(in[j]);
    }
  }

  void write() const thread {
    for (int j = int(lane); j < n; j += threads) {
      out[j] = buf[n - 1 - j];
    }
  }

  void compute_strided(int stride) thread {
    strided_idx = int(lane) * stride;
  }

  void next_row() thread {
    in += n;
    out = out + n;
    ++rows_done;
  }

  void write_and_advance() thread {
    write();
    next_row();
  }
};

kernel void rows(const device float2* x [[buffer(0)]],
                 const device float* y [[buffer(1)]],
                 device float2* out [[buffer(2)]],
                 device int* info [[buffer(3)]],
                 uint lid [[thread_position_in_threadgroup]],
                 uint group [[threadgroup_position_in_grid]]) {
  threadgroup float2 buf[16];
  const short n = 16;
  // Each threadgroup does rows 2*group and 2*group + 1 of `x`, conjugated.
  RowIO<float2, float2> rw{x + 2 * group * n, buf, out + 2 * group * n, n, lid, 8u, true};
  for (int r = 0; r < 2; r++) {
    rw.load();
    threadgroup_barrier(mem_flags::mem_threadgroup);
    rw.write_and_advance();
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  // A copy is an object of its own: moving it leaves `rw` where it is.
  RowIO<float2, float2> back = rw;
  back.in -= 2 * n;
  back.next_row();
  // Real input `y`, row `group`, after the complex rows (not conjugated).
  RowIO<float, float2> real(y + group * n, buf, out + (8 + group) * n, n, lid, 8u, false);
  real.compute_strided(3);
  real.load();
  threadgroup_barrier(mem_flags::mem_threadgroup);
  real.write();
  if (lid == 1) {
    info[group * 4 + 0] = rw.rows_done;
    info[group * 4 + 1] = back.rows_done;
    info[group * 4 + 2] = real.strided_idx;
    info[group * 4 + 3] = int(back.in - x) - int(rw.in - x);
  }
}
"#;

#[cfg(feature = "runner")]
#[test]
fn read_writer_runs() {
    use common::source::run_body;
    let (groups, n) = (4usize, 16usize);
    let x: Vec<[f32; 2]> = (0..2 * groups * n)
        .map(|i| [i as f32 * 0.5 - 7.0, 3.0 - i as f32 * 0.25])
        .collect();
    let y: Vec<f32> = (0..groups * n).map(|i| 100.0 + i as f32).collect();
    let x_bytes: Vec<u8> = x.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    let Some(out) = run_body(
        ROW_IO,
        "rows",
        (groups as u32 * 8, 8),
        vec![
            (0, x_bytes),
            (1, common::f32_bytes(&y)),
            (2, vec![0u8; (8 + groups) * n * 8]),
            (3, vec![0u8; groups * 16]),
        ],
    ) else {
        return;
    };
    // Complex rows come out reversed and conjugated, real rows reversed
    // with a zero imaginary part.
    let mut want = vec![0f32; (8 + groups) * n * 2];
    for r in 0..2 * groups {
        for j in 0..n {
            let [re, im] = x[r * n + n - 1 - j];
            want[(r * n + j) * 2] = re;
            want[(r * n + j) * 2 + 1] = -im;
        }
    }
    for g in 0..groups {
        for j in 0..n {
            want[((8 + g) * n + j) * 2] = y[g * n + n - 1 - j];
        }
    }
    assert_eq!(common::f32s(&out[&2]), want);
    let info: Vec<i32> = common::u32s(&out[&3]).iter().map(|&v| v as i32).collect();
    // rows done by the object and by its copy, a member set by a
    // non-const member, and the copy's input 16 elements behind.
    assert_eq!(info, [2, 3, 3, -16].repeat(groups));
}

/// A pointer member made to point into another buffer on one path: its
/// buffer is fixed at translation time, so the assignment is refused,
/// naming the member and both buffers.
#[test]
fn pointer_member_root_differs_per_path() {
    assert_error(
        "struct Cursor {\n  const device float* p;\n  Cursor(const device float* p_) thread : p(p_) {}\n};\n\
         kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],\n\
         device float* o [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n\
         Cursor c(a);\n  if (i > 3u) { c.p = b + i; }\n  o[i] = *c.p;\n}\n",
        "c.p = b",
        0,
        "member `p` points into buffer `a`; it cannot be made to point into buffer `b`",
    );
}

/// The same through a member function: `this` arrives with the member's
/// buffer fixed, so the helper cannot point it elsewhere.
#[test]
fn pointer_member_retargeted_in_a_member_function() {
    assert_error(
        "struct Cursor {\n  const device float* p;\n  Cursor(const device float* p_) thread : p(p_) {}\n\
         void jump(const device float* q) thread { p = q; }\n};\n\
         kernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],\n\
         device float* o [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n\
         Cursor c(a);\n  c.jump(b);\n  o[i] = *c.p;\n}\n",
        "p = q",
        0,
        "member `p` points into buffer `a`; it cannot be made to point into buffer `b`",
    );
}

/// A constructor that returns early: it is lowered in place, where a
/// `return` would leave the caller.
#[test]
fn constructor_returning_early_is_refused() {
    assert_error(
        "struct Cursor {\n  const device float* p;\n  int n;\n\
         Cursor(const device float* p_, int n_) thread : p(p_) {\n    if (n_ < 0) { n = 0; return; }\n    n = n_;\n  }\n};\n\
         kernel void k(const device float* a [[buffer(0)]], device float* o [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n\
         Cursor c(a, int(i));\n  o[i] = c.p[c.n];\n}\n",
        "return;",
        0,
        "a `return` before the end of a constructor of a struct holding pointers is not supported",
    );
}

/// A reference member cannot be bound after the object is declared.
#[test]
fn reference_member_in_a_constructed_object_is_refused() {
    let body = "struct R {\n  device float& r;\n  R(device float& x) thread : r(x) {}\n};\n\
                kernel void k(device float* o [[buffer(0)]]) {\n  R x(o[0]);\n  x.r = 1.0f;\n}\n";
    assert_eq!(first_code(body), msl2wgsl::diagnostics::Code::PointerMember);
    assert_error(
        body,
        "R(device",
        0,
        "a local `R` cannot be built member by member: member `r` of type `device float&` would have to be known when the object is declared",
    );
}

/// A function returning a struct of pointers (not only a constructor) is
/// lowered in place too; an object assigned a whole object is stored
/// member by member, and `S s;` takes its pointers from later assignments.
const FACTORY: &str = r#"
struct Span2 {
  device float* lo;
  device float* hi;
  int n;
};
Span2 halves(device float* base, int n) {
  Span2 s;
  s.lo = base;
  s.hi = base + n / 2;
  s.n = n / 2;
  return s;
}
kernel void k(device float* data [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Span2 s = halves(data, 8);
  Span2 t = halves(data + 8, 8);
  if (i == 0u) {
    s = t;
  }
  s.lo[0] += 1.0f;
  s.hi[1] += 10.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn factory_and_object_assignment_run() {
    use common::source::run_body_f32s;
    let data: Vec<f32> = (0..16).map(|i| i as f32).collect();
    // One thread: `s` becomes `t`, so the second half moves.
    let Some(got) = run_body_f32s(FACTORY, "k", (1, 1), vec![(0, common::f32_bytes(&data))], 0)
    else {
        return;
    };
    let mut want = data.clone();
    want[8] += 1.0;
    want[13] += 10.0;
    assert_eq!(got, want);
}

/// A loader holding an array of pointers into one buffer, in the shape
/// of MLX's convolution input loaders: each element set in a constructor
/// loop, read as `src[i][j]` by a const member, and all moved by a
/// non-const `next()` that returns early; a pointer to a whole `constant`
/// struct as a member too.
const ROWS_LOADER: &str = r#"
struct Params { int n; int width; int jump; };

template <typename T, short n_rows, short vec>
struct RowsLoader {
  threadgroup T* dst;
  const constant Params* params;
  const device T* src[n_rows];
  int read_row[n_rows];
  short steps;

  RowsLoader(const device T* src_, threadgroup T* dst_, const constant Params* params_, uint lid) thread
      : dst(dst_ + lid * n_rows * vec), params(params_), steps(0) {
    for (short i = 0; i < n_rows; ++i) {
      int row = int(lid) * n_rows + i;
      read_row[i] = row;
      src[i] = src_ + row * params->width;
    }
  }

  void load_unsafe() const thread {
    for (short i = 0; i < n_rows; ++i) {
      if (read_row[i] < params->n) {
        for (short j = 0; j < vec; ++j) {
          dst[i * vec + j] = src[i][j];
        }
      } else {
        for (short j = 0; j < vec; ++j) {
          dst[i * vec + j] = T(0);
        }
      }
    }
  }

  void next() thread {
    if (++steps < 2) {
      for (short i = 0; i < n_rows; i++) {
        src[i] += params->jump;
      }
      return;
    }
    for (short i = 0; i < n_rows; i++) {
      src[i] += 2 * params->jump;
    }
  }
};

kernel void k(const device float* in [[buffer(0)]],
              device float* out [[buffer(1)]],
              constant Params& p [[buffer(2)]],
              uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[8 * 2 * 4];
  RowsLoader<float, 2, 4> l(in, tile, &p, lid);
  for (int s = 0; s < 3; s++) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    l.load_unsafe();
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int j = 0; j < 8; j++) {
      out[s * 64 + lid * 8 + j] = tile[lid * 8 + j];
    }
    l.next();
  }
}
"#;

#[cfg(feature = "runner")]
#[test]
fn pointer_array_loader_runs() {
    use common::source::run_body_f32s;
    let (n, width, jump) = (13usize, 20usize, 5usize);
    let input: Vec<f32> = (0..16 * width).map(|i| i as f32 * 0.5).collect();
    let params: Vec<u8> = [n as i32, width as i32, jump as i32]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let Some(got) = run_body_f32s(
        ROWS_LOADER,
        "k",
        (8, 8),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0u8; 3 * 64 * 4]),
            (2, params),
        ],
        1,
    ) else {
        return;
    };
    let mut want = vec![0f32; 3 * 64];
    for (s, offset) in [0, jump, 3 * jump].into_iter().enumerate() {
        for lid in 0..8 {
            for i in 0..2 {
                let row = lid * 2 + i;
                for j in 0..4 {
                    if row < n {
                        want[s * 64 + lid * 8 + i * 4 + j] = input[row * width + offset + j];
                    }
                }
            }
        }
    }
    assert_eq!(got, want);
}

/// An object passed by `thread` reference to free functions, a plain one
/// and a template deducing the struct (as MLX's `gemm_loop(.., thread
/// loader_a_t& loader_a, ..)`): the callee moves the caller's pointers.
const BY_REFERENCE: &str = r#"
struct Cursor {
  const device float* src;
  Cursor(const device float* s) thread : src(s) {}
  void next() thread { src += 1; }
};
template <typename C>
void advance_n(thread C& c, int n) {
  for (int i = 0; i < n; i++) {
    c.next();
  }
}
void advance(thread Cursor& c) { c.next(); }
kernel void k(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  Cursor c(in + i);
  advance(c);
  advance_n(c, 2);
  out[i] = *c.src;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn object_passed_by_reference_runs() {
    use common::source::run_body_f32s;
    let input: Vec<f32> = (0..40).map(|i| i as f32 * 1.5).collect();
    let Some(got) = run_body_f32s(
        BY_REFERENCE,
        "k",
        (32, 32),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; 32 * 4])],
        1,
    ) else {
        return;
    };
    assert_eq!(got, input[3..35].to_vec());
}
