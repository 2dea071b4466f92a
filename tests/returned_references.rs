//! Functions returning references and pointers (issues #17, #18): member
//! and free functions, templates included, whose calls are lowered in
//! place so that their result can be read, written, indexed and passed by
//! reference; what cannot be expressed so is refused where it is written.
//! The kernels run on the GPU against a CPU reference.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, first_code};
use msl2wgsl::diagnostics::Code;

/// A register tile in the shape of a GEMM library's: fragments of two
/// elements in an array member, reached through `frag_at(i, j)` (a
/// non-const and a const overload, both `constexpr`), whose result is
/// passed as an out parameter to a static member template of the
/// fragment type, indexed and assigned through, bound to `thread auto&`,
/// and read through a const reference to the tile.
const TILE: &str = r#"
template <typename T>
struct Frag {
  typedef vec<T, 2> frag_type;
  template <typename SrcPtr>
  static void load(thread frag_type& dst, SrcPtr src, int stride) {
    for (short k = 0; k < 2; k++) {
      dst[k] = static_cast<T>(src[k * stride]);
    }
  }
  static void store(const thread frag_type& src, device T* dst, int stride) {
    dst[0] = src[0];
    dst[stride] = src.y;
  }
};

template <typename T, int R, int C, typename F = Frag<T>>
struct Tile {
  typedef typename F::frag_type frag_type;
  static constant constexpr const int kNum = R * C;
  frag_type frags[kNum] = {frag_type(0)};

  constexpr thread frag_type& frag_at(const short i, const short j) thread {
    return frags[i * C + j];
  }
  constexpr const thread frag_type& frag_at(const short i, const short j) const thread {
    return frags[i * C + j];
  }
  void load(const device T* src, int ld) thread {
    for (short i = 0; i < R; ++i) {
      for (short j = 0; j < C; ++j) {
        F::load(frag_at(i, j), src + i * ld + 2 * j, 1);
      }
    }
  }
  void store(device T* dst, int ld) const thread {
    for (short i = 0; i < R; ++i) {
      for (short j = 0; j < C; ++j) {
        F::store(frag_at(i, j), dst + i * ld + 2 * j, 1);
      }
    }
  }
};

template <typename T, int R, int C, typename F>
void scaled_add(thread Tile<T, R, C, F>& d, const thread Tile<T, R, C, F>& a, T s) {
  for (short i = 0; i < R; ++i) {
    for (short j = 0; j < C; ++j) {
      thread auto& acc = d.frag_at(i, j);
      acc += a.frag_at(i, j) * s;
    }
  }
}

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              device float* probe [[buffer(2)]], uint id [[thread_position_in_grid]]) {
  Tile<float, 2, 2> t;
  t.load(in + id * 8, 4);
  Tile<float, 2, 2> u;
  u.load(in + id * 8, 4);
  t.frag_at(1, 0)[1] = 7.0f;
  t.frag_at(0, 1) *= 2.0f;
  t.frag_at(1, 1).x += 0.5f;
  scaled_add(t, u, 3.0f);
  const thread Tile<float, 2, 2>& ct = t;
  probe[id] = ct.frag_at(1, 1)[0] + ct.frag_at(0, 0).y;
  t.store(out + id * 8, 4);
}
"#;

/// The tile kernel on the CPU: `(out, probe)` for thread `id`.
fn tile_reference(input: &[f32], id: usize) -> ([f32; 8], f32) {
    // Fragment (i, j) holds elements (i * 4 + 2 * j, +1) of the thread's 8.
    let src = &input[id * 8..id * 8 + 8];
    let mut t = [[0.0f32; 2]; 4];
    for i in 0..2 {
        for j in 0..2 {
            t[i * 2 + j] = [src[i * 4 + 2 * j], src[i * 4 + 2 * j + 1]];
        }
    }
    let u = t;
    t[2][1] = 7.0;
    t[1] = [t[1][0] * 2.0, t[1][1] * 2.0];
    t[3][0] += 0.5;
    for f in 0..4 {
        for e in 0..2 {
            t[f][e] += u[f][e] * 3.0;
        }
    }
    let probe = t[3][0] + t[0][1];
    let mut out = [0.0f32; 8];
    for i in 0..2 {
        for j in 0..2 {
            out[i * 4 + 2 * j] = t[i * 2 + j][0];
            out[i * 4 + 2 * j + 1] = t[i * 2 + j][1];
        }
    }
    (out, probe)
}

#[cfg(feature = "runner")]
#[test]
fn tile_fragments_by_reference_on_gpu() {
    let threads = 4usize;
    let input: Vec<f32> = (0..threads * 8).map(|i| i as f32 * 0.25 - 3.0).collect();
    let Some(out) = common::source::run_body(
        TILE,
        "k",
        (threads as u32, threads as u32),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0u8; threads * 8 * 4]),
            (2, vec![0u8; threads * 4]),
        ],
    ) else {
        return;
    };
    let (got, probes) = (common::f32s(&out[&1]), common::f32s(&out[&2]));
    for id in 0..threads {
        let (want, probe) = tile_reference(&input, id);
        assert_eq!(&got[id * 8..id * 8 + 8], &want, "out of thread {id}");
        assert_eq!(probes[id], probe, "probe of thread {id}");
    }
}

/// Free functions returning references: a template returning an element
/// of a device buffer (assigned, compound-assigned, passed to a reference
/// parameter, read), one returning a component of a reference parameter
/// chosen at run time, and one returning a member of a struct in a
/// buffer. Each argument is evaluated once.
const FREE_REFERENCES: &str = r#"
struct Acc { float sum; uint count; };

template <typename T>
device T& cell(device T* base, uint row, uint col, uint ld) {
  const uint at = row * ld + col;
  return base[at];
}

thread float& lane(thread float4& v, int i) { return v[i & 3]; }

device uint& count_of(device Acc* accs, uint i) { return accs[i].count; }

void accumulate(device float& dst, float v) { dst += v; }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              device Acc* accs [[buffer(2)]], uint id [[thread_position_in_grid]]) {
  uint calls = 0;
  cell(out, id, 0, 4) = in[id];
  cell(out, id, 1, 4) = 1.0f;
  cell(out, id, 1, 4) += in[id] * 2.0f;
  accumulate(cell(out, id, 2, 4), in[id] + 5.0f);
  float4 v = float4(1.0f, 2.0f, 3.0f, 4.0f);
  lane(v, int(id)) = in[id];
  lane(v, int(id) + 1) *= 10.0f;
  cell(out, id, 3, 4) = v.x + v.y + v.z + v.w + cell(out, id, 0, 4);
  count_of(accs, id) += 2u;
  count_of(accs, id + calls++) += 1u;
  accs[id].sum = float(calls);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn free_functions_returning_references_on_gpu() {
    let threads = 4usize;
    let input = [1.5f32, -2.0, 4.25, 0.5];
    let accs: Vec<u32> = (0..threads).flat_map(|i| [0u32, 10 * i as u32]).collect();
    let acc_bytes: Vec<u8> = accs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let Some(out) = common::source::run_body(
        FREE_REFERENCES,
        "k",
        (threads as u32, threads as u32),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0u8; threads * 16]),
            (2, acc_bytes),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    let acc = common::u32s(&out[&2]);
    for (id, &x) in input.iter().enumerate() {
        let mut v = [1.0f32, 2.0, 3.0, 4.0];
        v[id & 3] = x;
        v[(id + 1) & 3] *= 10.0;
        let want = [x, 1.0 + x * 2.0, x + 5.0, v.iter().sum::<f32>() + x];
        assert_eq!(&got[id * 4..id * 4 + 4], &want, "out of thread {id}");
        // `calls++` ran once: the argument is evaluated once.
        assert_eq!(f32::from_bits(acc[2 * id]), 1.0, "sum of thread {id}");
        assert_eq!(acc[2 * id + 1], 10 * id as u32 + 3, "count of thread {id}");
    }
}

/// Functions returning pointers: into a read-only buffer (a row), into a
/// writable one (`&out[i]`), into threadgroup memory, and a template
/// choosing between two pointers of one buffer at run time (`c ? p + 1 :
/// p + 3`); the results are indexed, dereferenced, offset and kept in
/// pointer variables.
const POINTERS: &str = r#"
const device float* row_of(const device float* base, uint r, uint ld) { return base + r * ld; }

device float* slot_of(device float* out, uint i) { return &out[i * 3]; }

threadgroup float* shared_slot(threadgroup float* s, uint lid) { return s + lid; }

template <typename P>
P either(P p, bool first) { return first ? p + 1 : p + 3; }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint id [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float scratch[8];
  const device float* r = row_of(in, id, 4);
  float s = r[0] + r[1] + r[2] + r[3];
  *shared_slot(scratch, lid) = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  device float* o = slot_of(out, id);
  o[0] = s;
  o[1] = *either(row_of(in, id, 4), id % 2 == 0);
  *(slot_of(out, id) + 2) = shared_slot(scratch, 0)[(lid + 1) % 4];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn functions_returning_pointers_on_gpu() {
    let threads = 4usize;
    let input: Vec<f32> = (0..threads * 4)
        .map(|i| (i * i) as f32 * 0.5 - 1.0)
        .collect();
    let Some(got) = common::source::run_body_f32s(
        POINTERS,
        "k",
        (threads as u32, threads as u32),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; threads * 12])],
        1,
    ) else {
        return;
    };
    let sum = |id: usize| input[id * 4..id * 4 + 4].iter().sum::<f32>();
    for id in 0..threads {
        let chosen = input[id * 4 + if id % 2 == 0 { 1 } else { 3 }];
        let want = [sum(id), chosen, sum((id + 1) % 4)];
        assert_eq!(&got[id * 3..id * 3 + 3], &want, "out of thread {id}");
    }
}

/// Member functions returning pointers and references: a register block
/// whose `elems()` (a non-const and a const overload) decays its array
/// member to a `thread` pointer, written and read through it, and a view
/// of a buffer (a struct holding a pointer) whose `row(i)` returns a
/// pointer into the buffer and `at(i, j)` a reference to an element.
const MEMBER_POINTERS: &str = r#"
struct Regs {
  float r[8];
  thread float* elems() thread { return r; }
  const thread float* elems() const thread { return r; }
};
struct View {
  device float* p;
  int ld;
  device float* row(int i) const { return p + i * ld; }
  device float& at(int i, int j) const { return p[i * ld + j]; }
};
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  Regs g;
  for (int i = 0; i < 8; i++) {
    g.elems()[i] = in[id * 8 + i] * 2.0f;
  }
  *(g.elems() + 7) += 1.0f;
  const thread Regs& cg = g;
  View v = {out + id * 8, 4};
  for (int j = 0; j < 4; j++) {
    v.row(0)[j] = cg.elems()[j];
    v.at(1, j) = cg.elems()[4 + j] + v.row(0)[j];
  }
  v.at(1, 3) *= 10.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn member_functions_returning_pointers_on_gpu() {
    let threads = 4usize;
    let input: Vec<f32> = (0..threads * 8).map(|i| i as f32 - 5.5).collect();
    let Some(got) = common::source::run_body_f32s(
        MEMBER_POINTERS,
        "k",
        (threads as u32, threads as u32),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; threads * 32])],
        1,
    ) else {
        return;
    };
    for id in 0..threads {
        let mut g: Vec<f32> = input[id * 8..id * 8 + 8].iter().map(|x| x * 2.0).collect();
        g[7] += 1.0;
        let mut want = [0.0f32; 8];
        for j in 0..4 {
            want[j] = g[j];
            want[4 + j] = g[4 + j] + want[j];
        }
        want[7] *= 10.0;
        assert_eq!(&got[id * 8..id * 8 + 8], &want, "out of thread {id}");
    }
}

/// Member function templates returning references, a non-static one into
/// the object and a static one into a buffer, both indexing with their
/// struct's static constant.
const MEMBER_TEMPLATES: &str = r#"
struct Grid {
  static constant constexpr const int kCols = 3;
  float v[6];
  template <typename I>
  thread float& cell(I r, I c) thread { return v[r * kCols + c]; }
  template <typename I>
  static device float& at(device float* p, I r, I c) { return p[r * kCols + c]; }
};
kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
  Grid g = {{0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f}};
  g.cell(1, 2) = 9.0f + float(id);
  g.cell(0u, 1u) *= 4.0f;
  Grid::at(out, int(id), 1) = g.v[5] + g.cell(0u, 1u);
  Grid::at(out, id, 2u) = float(id);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn member_templates_returning_references_on_gpu() {
    let Some(got) = common::source::run_body_f32s(
        MEMBER_TEMPLATES,
        "k",
        (4, 4),
        vec![(0, vec![0u8; 4 * 12])],
        0,
    ) else {
        return;
    };
    for id in 0..4 {
        let want = [0.0, 9.0 + id as f32 + 4.0, id as f32];
        assert_eq!(&got[id * 3..id * 3 + 3], &want, "row of thread {id}");
    }
}

/// Calls returning references in conditions, short-circuit operands,
/// `?:` operands and loop conditions: each lowered where it is evaluated.
const IN_CONTROL_FLOW: &str = r#"
struct Pairs {
  float2 f[4];
  thread float2& at(int i) thread { return f[i & 3]; }
};
device float& cell(device float* p, uint i) { return p[i]; }
kernel void k(device float* out [[buffer(0)]], device float* aux [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  Pairs t;
  for (int i = 0; i < 4; i++) {
    t.at(i) = float2(i, i + 1);
  }
  bool c = id > 1 && t.at(int(id)).x > 2.5f;
  float v = c ? t.at(1).y * 10.0f : t.at(2).x;
  float w = id > 2 ? cell(aux, id + 1) : 1.0f;
  if (id < 2 || cell(out, id) > 2.5f) {
    cell(out, id) += v;
  }
  while (cell(out, id) < 100.0f) {
    cell(out, id) *= 2.0f;
    t.at(0) += 1.0f;
  }
  out[id] += w + t.at(0).x;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn references_returned_in_control_flow_on_gpu() {
    let out0 = [1.0f32, 2.0, 3.0, 4.0];
    let aux = [5.0f32, 6.0, 7.0, 8.0, 9.0];
    let Some(got) = common::source::run_body_f32s(
        IN_CONTROL_FLOW,
        "k",
        (4, 4),
        vec![(0, common::f32_bytes(&out0)), (1, common::f32_bytes(&aux))],
        0,
    ) else {
        return;
    };
    for id in 0..4usize {
        let f: Vec<[f32; 2]> = (0..4).map(|i| [i as f32, i as f32 + 1.0]).collect();
        let c = id > 1 && f[id & 3][0] > 2.5;
        let v = if c { f[1][1] * 10.0 } else { f[2][0] };
        let w = if id > 2 { aux[id + 1] } else { 1.0 };
        let mut o = out0[id];
        if id < 2 || o > 2.5 {
            o += v;
        }
        let mut f0 = f[0][0];
        while o < 100.0 {
            o *= 2.0;
            f0 += 1.0;
        }
        assert_eq!(got[id], o + w + f0, "thread {id}");
    }
}

/// An `operator[]` of several statements returning a reference into its
/// object (formerly a value, which could not be assigned): `r[i] = v`
/// writes the object, on a `thread` object and through a reference.
const INDEX_OPERATOR: &str = r#"
struct Ring {
  float d[4];
  thread float& operator[](uint i) thread { uint j = i & 3u; return d[j]; }
};
void bump(thread Ring& r, uint i) { r[i] += 0.5f; }
kernel void k(device float* o [[buffer(0)]], uint id [[thread_position_in_grid]]) {
  Ring r = {{1.0f, 2.0f, 3.0f, 4.0f}};
  r[id + 1u] = 10.0f * float(id);
  bump(r, id + 6u);
  o[id] = r.d[0] + 10.0f * r.d[1] + 100.0f * r.d[2] + 1000.0f * r.d[3];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn index_operator_of_several_statements_is_a_place_on_gpu() {
    let Some(got) =
        common::source::run_body_f32s(INDEX_OPERATOR, "k", (4, 4), vec![(0, vec![0u8; 16])], 0)
    else {
        return;
    };
    for (id, &g) in got.iter().enumerate() {
        let mut d = [1.0f32, 2.0, 3.0, 4.0];
        d[(id + 1) & 3] = 10.0 * id as f32;
        d[(id + 6) & 3] += 0.5;
        assert_eq!(
            g,
            d[0] + 10.0 * d[1] + 100.0 * d[2] + 1000.0 * d[3],
            "thread {id}"
        );
    }
}

/// A reference chosen between two objects at run time has no place known
/// at translation time: refused at the returned expression.
#[test]
fn a_reference_chosen_between_objects_is_located() {
    let body = r#"
thread float& larger(thread float& a, thread float& b) { return a > b ? a : b; }
kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
  float x = out[id], y = 2.0f;
  larger(x, y) = 0.0f;
  out[id] = x + y;
}
"#;
    assert_error(
        body,
        "a > b ? a : b",
        0,
        "`larger` returns a reference (`thread float&`), but this expression is not one object known at translation time",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}

/// A `return` before the end of a function returning a reference:
/// located there.
#[test]
fn an_early_return_of_a_reference_is_located() {
    let body = r#"
device float& first_positive(device float* p, uint n) {
  for (uint i = 0; i < n; i++) {
    if (p[i] > 0.0f) { return p[i]; }
  }
  return p[0];
}
kernel void k(device float* out [[buffer(0)]]) {
  first_positive(out, 4u) = 0.0f;
}
"#;
    assert_error(
        body,
        "return p[i];",
        0,
        "a `return` before the end of `first_positive`, which returns a reference (`device float&`), is not supported",
    );
}

/// A pointer chosen between two buffers at run time: refused at the `?:`.
#[test]
fn a_pointer_chosen_between_buffers_is_located() {
    let body = r#"
device float* pick(device float* a, device float* b, bool c) { return c ? a : b; }
kernel void k(device float* x [[buffer(0)]], device float* y [[buffer(1)]], uint id [[thread_position_in_grid]]) {
  *pick(x, y, id > 2) = 1.0f;
}
"#;
    assert_error(
        body,
        "c ? a : b",
        0,
        "a run-time choice between pointers into different objects is not supported",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}
