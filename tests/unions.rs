//! `union`s: every member at offset 0, the size the largest member's
//! rounded up to the largest alignment (C++ [class.union], Metal's layout).
//! Kernels write one member and read another, in function memory (locals,
//! by-value parameters, return values, arrays and structs of unions), in
//! device buffers and in threadgroup memory; the results are compared with
//! the bytes a CPU model computes here (`f32::to_bits`, the `half` crate,
//! little-endian byte order). Members without bytes to reinterpret
//! (pointers, textures) are refused where they are declared.

mod common;

use msl2wgsl::diagnostics::Code;

fn first_code(body: &str) -> Code {
    let src = format!("{}{body}", common::source::PRELUDE);
    match msl2wgsl::Library::from_source("t.metal", &src, &msl2wgsl::Options::default()) {
        Ok(_) => panic!("expected an error"),
        Err(f) => f.diagnostics.0[0].code(),
    }
}

#[test]
fn a_pointer_member_is_refused_at_its_name() {
    let body = "union alias { device float* ptr; uint u; };\n\
                kernel void k(device uint* o [[buffer(0)]]) { alias a; a.u = 1; o[0] = a.u; }\n";
    common::source::assert_error(
        body,
        "ptr",
        0,
        "member `ptr` of union `alias` holds a pointer",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}

#[test]
fn a_texture_member_is_refused_at_its_name() {
    let body = "struct holder { texture2d<float> t; };\n\
                union view { holder h; uint u; };\n\
                kernel void k(device uint* o [[buffer(0)]]) { o[0] = 0; }\n";
    common::source::assert_error(body, "h;", 0, "member `h` of union `view` holds a texture");
    assert_eq!(first_code(body), Code::Unsupported);
}

#[test]
fn an_unknown_member_names_the_struct_not_its_anonymous_union() {
    let body = "struct tagged { int tag; union { float f; uint u; }; };\n\
                kernel void k(device uint* o [[buffer(0)]]) { tagged t; o[0] = t.w; }\n";
    common::source::assert_error(body, "w; }", 0, "no member named `w` in `tagged`");
}

#[test]
fn a_designated_union_initializer_is_refused_at_the_list() {
    let body = "union bits { float f; uint u; };\n\
                kernel void k(device uint* o [[buffer(0)]]) { bits b = {.u = 3}; o[0] = b.u; }\n";
    common::source::assert_error(
        body,
        ".u = 3",
        0,
        "a designated initializer of union `bits` is not supported yet",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}

#[test]
fn sizeof_and_alignof_follow_the_largest_member() {
    // float3: 16 bytes, 16-aligned; uchar[5] rounds up to the 2-alignment
    // of ushort; a union of chars is 1-aligned.
    let body = "union wide { float3 v; uint w[2]; half h; };\n\
                union odd { uchar b[5]; ushort s; };\n\
                union tiny { char c; uchar u; };\n\
                struct rec { uchar tag; odd o; tiny t; wide w; };\n\
                static_assert(sizeof(wide) == 16 && alignof(wide) == 16, \"wide\");\n\
                static_assert(sizeof(odd) == 6 && alignof(odd) == 2, \"odd\");\n\
                static_assert(sizeof(tiny) == 1 && alignof(tiny) == 1, \"tiny\");\n\
                static_assert(sizeof(rec) == 32, \"rec\");\n\
                kernel void k(device uint* o [[buffer(0)]]) { o[0] = sizeof(rec); }\n";
    common::source::translate_body(body);
}

#[cfg(feature = "runner")]
mod gpu {
    use super::common;
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use msl2wgsl::Options;
    use std::collections::BTreeMap;

    const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;

union bits { float f; uint u; };
typedef union { half h; ushort s; } half_bits;
using shape = union { float value; uint32_t word; };
template <typename T> union packed { T val[4 / sizeof(T)]; uint bits; };
union rbits { uint2 val; uchar4 bytes[2]; };
union parts { uint u; uchar b[4]; ushort s[2]; };
struct tagged { int tag; bits v; };

uint float_word(float x) { bits b; b.f = x; return b.u; }
bits make(uint u) { bits b; b.u = u; return b; }
float from_copy(bits b) { return b.f; }
tagged pick(float x) { tagged t = {1, {x}}; return t; }

kernel void float_to_bits(device const float* x [[buffer(0)]], device uint* out [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    out[4 * i] = float_word(x[i]);
    bits init = {x[i]};
    out[4 * i + 1] = init.u;
    shape s;
    s.value = -x[i];
    out[4 * i + 2] = s.word;
    out[4 * i + 3] = as_type<uint>(from_copy(make(float_word(x[i]) ^ 1u)));
}

kernel void bytes_of(device const uint2* v [[buffer(0)]], device uint* out [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    rbits r;
    r.val = v[i];
    for (int k = 0; k < 8; ++k) {
        out[8 * i + k] = r.bytes[k / 4][k % 4];
    }
}

kernel void sub_words(device const uint* x [[buffer(0)]], device uint* out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    parts p;
    p.u = x[i];
    p.b[i % 4] = uchar(0xA0 + i);
    out[3 * i] = p.u;
    p.s[(i / 4) % 2] = ushort(i * 1000);
    out[3 * i + 1] = p.u;
    packed<ushort> q;
    q.bits = x[i];
    q.val[1] += 1;
    out[3 * i + 2] = q.bits;
}

kernel void half_to_bits(device const float* x [[buffer(0)]], device uint* out [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    half_bits h;
    h.h = half(x[i]);
    out[2 * i] = h.s;
    h.s = ushort(h.s ^ 0x8000);
    out[2 * i + 1] = as_type<uint>(float(h.h));
}

kernel void tagged_values(device const float* x [[buffer(0)]], device uint* out [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    tagged t = pick(x[i]);
    t.tag += 1;
    tagged arr[2];
    arr[i % 2] = t;
    arr[1 - i % 2].v.u = 5u;
    out[3 * i] = arr[i % 2].v.u;
    out[3 * i + 1] = uint(arr[i % 2].tag);
    out[3 * i + 2] = arr[1 - i % 2].v.u;
}

union word_or_bytes { uint u; uchar b[4]; };
union wide { float3 v; uint w[4]; half h; };
struct rec { uchar tag; word_or_bytes x; ushort n; wide y; };

kernel void in_buffer(device uint* sizes [[buffer(0)]], device rec* r [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    if (i == 0) {
        sizes[0] = sizeof(word_or_bytes);
        sizes[1] = alignof(word_or_bytes);
        sizes[2] = sizeof(wide);
        sizes[3] = alignof(wide);
        sizes[4] = sizeof(rec);
    }
    r[i].x.b[1] = r[i].tag;
    r[i].y.w[1] = r[i].x.u + 1u;
    r[i].n = ushort(r[i].y.w[0] & 0xffffu);
    word_or_bytes c = r[i].x;
    c.b[0] = 7;
    r[i].y.w[2] = c.u;
}

constant bits two = {2.0f};
constant tagged answer = {42, {-0.5f}};

kernel void constants(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    bits copy = two;
    out[0] = copy.u;
    out[1] = two.u;
    out[2] = answer.v.u + uint(answer.tag);
}

struct variant {
    int tag;
    union {
        float f;
        uint u;
        struct { ushort lo; ushort hi; };
    };
    float tail;
};

struct sphere {
    sphere(float3 c, float r) { data = float4(c, r); }
    float radius_plus(float k) const { return radius + k; }
    union {
        float4 data;
        struct { float centre[3]; float radius; };
    };
};

kernel void anonymous_in_member_functions(device const float* x [[buffer(0)]],
                                          device float* out [[buffer(1)]],
                                          uint i [[thread_position_in_grid]]) {
    sphere s(float3(x[i], 2.0f, 3.0f), x[i] * 4.0f);
    out[2 * i] = s.radius_plus(1.0f);
    out[2 * i + 1] = s.centre[0] + s.data.y;
}

kernel void anonymous_members(device const float* x [[buffer(0)]], device uint* out [[buffer(1)]],
                              device variant* v [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    variant local = {int(i), {x[i]}, 1.5f};
    local.lo = ushort(i);
    out[4 * i] = local.u;
    out[4 * i + 1] = uint(local.tag);
    out[4 * i + 2] = as_type<uint>(local.tail);
    out[4 * i + 3] = sizeof(variant);
    v[i].f = x[i];
    v[i].hi = ushort(i + 100);
}

template <typename T> struct lanes { static constant constexpr int n = 4 / sizeof(T); };
template <typename T> union word_of { T val[lanes<T>::n]; uint bits; };
template <typename T> struct adder {
    uint operator()(word_of<T> init, T update, size_t at) thread {
        init.val[at] = init.val[at] + update;
        return init.bits;
    }
};
union bool4_or_uint { bool4 b; unsigned int i; };
template <typename T> struct holder { T x; union { T t; uint raw; }; };
void set_low(thread word_of<ushort>& w, ushort v) { w.val[0] = v; }

kernel void templates_and_references(device atomic_uint* a [[buffer(0)]],
                                     device uint* out [[buffer(1)]],
                                     uint i [[thread_position_in_grid]]) {
    word_of<half> expected;
    expected.bits = atomic_load_explicit(&a[i], memory_order_relaxed);
    adder<half> op;
    out[6 * i] = op(expected, half(1.0h), i % 2);
    bool4_or_uint b;
    b.b = bool4(true, i % 2 == 1, true, false);
    out[6 * i + 1] = b.i;
    word_of<ushort> w;
    w.bits = 0xffffffffu;
    set_low(w, ushort(i));
    out[6 * i + 2] = w.bits;
    thread word_of<ushort>* p = &w;
    p->val[1] = 9;
    out[6 * i + 3] = w.bits;
    holder<float> h;
    h.t = float(i) + 0.5f;
    out[6 * i + 4] = h.raw;
    word_of<char> c;
    c.bits = 0x80ff7f01u + i;
    out[6 * i + 5] = uint(int(c.val[1]) + int(c.val[3]) + int(c.val[0]));
}

union bits_or_bytes { float f; uint u; uchar b[4]; };
struct params { bits_or_bytes scale; uint n; };

kernel void in_constant(constant params& p [[buffer(0)]], constant bits_or_bytes* arr [[buffer(1)]],
                        device uint* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    out[i] = p.scale.u + arr[i].b[i % 4] + p.n;
}

kernel void in_threadgroup(device const float* x [[buffer(0)]], device uint* out [[buffer(1)]],
                           uint i [[thread_position_in_grid]],
                           uint l [[thread_position_in_threadgroup]]) {
    threadgroup bits shared[64];
    shared[l].f = x[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = shared[63 - l].u;
}
"#;

    fn run(entry: &str, n: u32, buffers: Vec<(u32, Vec<u8>)>) -> Option<BTreeMap<u32, Vec<u8>>> {
        let gpu = common::gpu()?;
        let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
        Some(
            run_kernel(
                gpu,
                "unions.metal",
                SOURCE,
                &Options::default(),
                entry,
                &Dispatch::Threads {
                    grid: [n, 1, 1],
                    threadgroup: [n.min(64), 1, 1],
                },
                &buffers,
            )
            .unwrap_or_else(|e| panic!("{entry}: {e}")),
        )
    }

    /// Finite inputs: bit patterns of every sign, small and large, and one
    /// whose lowest fraction bit is set.
    fn inputs() -> Vec<f32> {
        vec![
            1.0,
            -2.5,
            0.1,
            3.0e38,
            -1.0e-30,
            0.0,
            -0.0,
            f32::from_bits(0x3f80_0001),
        ]
    }

    fn u32_bytes(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn a_float_member_is_read_as_its_bits() {
        let x = inputs();
        let n = x.len() as u32;
        let Some(out) = run(
            "float_to_bits",
            n,
            vec![(0, common::f32_bytes(&x)), (1, vec![0; 16 * x.len()])],
        ) else {
            return;
        };
        let want: Vec<u32> = x
            .iter()
            .flat_map(|v| [v.to_bits(), v.to_bits(), (-v).to_bits(), v.to_bits() ^ 1])
            .collect();
        assert_eq!(common::u32s(&out[&1]), want);
    }

    #[test]
    fn vector_bytes_are_little_endian_lanes() {
        let v: Vec<u32> = vec![0x0403_0201, 0x0807_0605, 0xdead_beef, 0x0012_3456];
        let Some(out) = run("bytes_of", 2, vec![(0, u32_bytes(&v)), (1, vec![0; 64])]) else {
            return;
        };
        let want: Vec<u32> = u32_bytes(&v).iter().map(|b| u32::from(*b)).collect();
        assert_eq!(common::u32s(&out[&1]), want);
    }

    #[test]
    fn a_sub_word_member_replaces_only_its_bytes() {
        let x: Vec<u32> = (0..8u32)
            .map(|i| 0x1234_5678u32.rotate_left(4 * i))
            .collect();
        let n = x.len() as u32;
        let Some(out) = run("sub_words", n, vec![(0, u32_bytes(&x)), (1, vec![0; 96])]) else {
            return;
        };
        let mut want = Vec::new();
        for (i, &u) in x.iter().enumerate() {
            let mut b = u.to_le_bytes();
            b[i % 4] = 0xA0 + i as u8;
            want.push(u32::from_le_bytes(b));
            let half = (i / 4) % 2;
            let s = (i as u32 * 1000) as u16;
            b[2 * half..2 * half + 2].copy_from_slice(&s.to_le_bytes());
            want.push(u32::from_le_bytes(b));
            let mut q = u.to_le_bytes();
            let lane = u16::from_le_bytes([q[2], q[3]]).wrapping_add(1);
            q[2..4].copy_from_slice(&lane.to_le_bytes());
            want.push(u32::from_le_bytes(q));
        }
        assert_eq!(common::u32s(&out[&1]), want);
    }

    #[test]
    fn a_half_member_is_read_as_its_binary16_bits() {
        let x: Vec<f32> = vec![1.5, -2.25, 0.1, 1000.0, 65504.0, -0.0, 3.0e-5, 0.333];
        let n = x.len() as u32;
        let Some(out) = run(
            "half_to_bits",
            n,
            vec![(0, common::f32_bytes(&x)), (1, vec![0; 8 * x.len()])],
        ) else {
            return;
        };
        let want: Vec<u32> = x
            .iter()
            .flat_map(|&v| {
                let bits = half::f16::from_f32(v).to_bits();
                let negated = half::f16::from_bits(bits ^ 0x8000).to_f32();
                [u32::from(bits), negated.to_bits()]
            })
            .collect();
        assert_eq!(common::u32s(&out[&1]), want);
    }

    #[test]
    fn unions_in_structs_and_arrays_are_copied_whole() {
        let x = inputs();
        let n = x.len() as u32;
        let Some(out) = run(
            "tagged_values",
            n,
            vec![(0, common::f32_bytes(&x)), (1, vec![0; 12 * x.len()])],
        ) else {
            return;
        };
        let want: Vec<u32> = x.iter().flat_map(|v| [v.to_bits(), 2, 5]).collect();
        assert_eq!(common::u32s(&out[&1]), want);
    }

    #[test]
    fn a_union_in_a_device_struct_has_metal_offsets() {
        // rec: tag@0, x@4 (a 4-byte union), n@8, y@16 (16 bytes, 16-aligned);
        // 32 bytes. Padding bytes hold garbage the kernel must keep.
        const N: usize = 4;
        let mut bytes: Vec<u8> = (0..32 * N).map(|k| (k * 37 + 11) as u8).collect();
        let Some(out) = run(
            "in_buffer",
            N as u32,
            vec![(0, vec![0; 20]), (1, bytes.clone())],
        ) else {
            return;
        };
        assert_eq!(common::u32s(&out[&0]), [4, 4, 16, 16, 32]);
        for r in bytes.chunks_exact_mut(32) {
            r[5] = r[0];
            let x = u32::from_le_bytes([r[4], r[5], r[6], r[7]]);
            r[20..24].copy_from_slice(&x.wrapping_add(1).to_le_bytes());
            let n = u32::from_le_bytes([r[16], r[17], r[18], r[19]]) as u16;
            r[8..10].copy_from_slice(&n.to_le_bytes());
            let c = [7, r[5], r[6], r[7]];
            r[24..28].copy_from_slice(&c);
        }
        assert_eq!(out[&1], bytes);
    }

    #[test]
    fn program_scope_constants_hold_their_first_members_bytes() {
        let Some(out) = run("constants", 1, vec![(0, vec![0; 12])]) else {
            return;
        };
        let want = [
            2.0f32.to_bits(),
            2.0f32.to_bits(),
            (-0.5f32).to_bits().wrapping_add(42),
        ];
        assert_eq!(common::u32s(&out[&0]), want);
    }

    #[test]
    fn anonymous_members_are_reached_from_their_struct() {
        // variant: tag@0, the union@4 (f, u, lo@4, hi@6), tail@8; 12 bytes.
        let x = inputs();
        let n = x.len();
        let garbage: Vec<u8> = (0..12 * n).map(|k| (k * 29 + 3) as u8).collect();
        let Some(out) = run(
            "anonymous_members",
            n as u32,
            vec![
                (0, common::f32_bytes(&x)),
                (1, vec![0; 16 * n]),
                (2, garbage.clone()),
            ],
        ) else {
            return;
        };
        let want: Vec<u32> = (0..n)
            .flat_map(|i| {
                let u = (x[i].to_bits() & 0xffff_0000) | i as u32;
                [u, i as u32, 1.5f32.to_bits(), 12]
            })
            .collect();
        assert_eq!(common::u32s(&out[&1]), want);
        let mut bytes = garbage;
        for (i, v) in bytes.chunks_exact_mut(12).enumerate() {
            let mut u = x[i].to_bits().to_le_bytes();
            u[2..4].copy_from_slice(&(i as u16 + 100).to_le_bytes());
            v[4..8].copy_from_slice(&u);
        }
        assert_eq!(out[&2], bytes);
    }

    #[test]
    fn union_templates_by_value_and_by_reference() {
        let words: Vec<u32> = vec![0x3c00_4000, 0xc000_3800, 0x0000_7bff, 0x4248_bc00];
        let n = words.len();
        let Some(out) = run(
            "templates_and_references",
            n as u32,
            vec![(0, u32_bytes(&words)), (1, vec![0; 24 * n])],
        ) else {
            return;
        };
        let mut want = Vec::new();
        for (i, &w) in words.iter().enumerate() {
            let shift = 16 * (i % 2);
            let lane = half::f16::from_bits((w >> shift) as u16);
            let sum = half::f16::from_f32(lane.to_f32() + 1.0).to_bits();
            want.push(w & !(0xffff << shift) | u32::from(sum) << shift);
            want.push(u32::from_le_bytes([1, (i % 2) as u8, 1, 0]));
            want.push(0xffff_0000 | i as u32);
            want.push(0x0009_0000 | i as u32);
            want.push((i as f32 + 0.5).to_bits());
            let c = (0x80ff_7f01u32 + i as u32)
                .to_le_bytes()
                .map(|b| i32::from(b as i8));
            want.push((c[1] + c[3] + c[0]) as u32);
        }
        assert_eq!(common::u32s(&out[&1]), want);
    }

    #[test]
    fn a_union_in_a_constant_buffer_is_read_as_bytes() {
        let arr: Vec<u32> = vec![0x0403_0201, 0x0807_0605, 0x0c0b_0a09, 0x100f_0e0d];
        let mut p = 2.0f32.to_le_bytes().to_vec();
        p.extend(7u32.to_le_bytes());
        let Some(out) = run(
            "in_constant",
            4,
            vec![(0, p), (1, u32_bytes(&arr)), (2, vec![0; 16])],
        ) else {
            return;
        };
        let want: Vec<u32> = (0..4)
            .map(|i| 2.0f32.to_bits() + u32::from(arr[i].to_le_bytes()[i % 4]) + 7)
            .collect();
        assert_eq!(common::u32s(&out[&2]), want);
    }

    #[test]
    fn member_functions_name_anonymous_members_directly() {
        let x = vec![0.5f32, -1.0, 3.25, 100.0];
        let n = x.len();
        let Some(out) = run(
            "anonymous_in_member_functions",
            n as u32,
            vec![(0, common::f32_bytes(&x)), (1, vec![0; 8 * n])],
        ) else {
            return;
        };
        let want: Vec<f32> = x.iter().flat_map(|v| [v * 4.0 + 1.0, v + 2.0]).collect();
        assert_eq!(common::f32s(&out[&1]), want);
    }

    #[test]
    fn a_union_in_threadgroup_memory_is_shared_as_bytes() {
        let x: Vec<f32> = (0..64).map(|k| k as f32 * 0.75 - 20.0).collect();
        let Some(out) = run(
            "in_threadgroup",
            64,
            vec![(0, common::f32_bytes(&x)), (1, vec![0; 256])],
        ) else {
            return;
        };
        let want: Vec<u32> = (0..64).map(|l| x[63 - l].to_bits()).collect();
        assert_eq!(common::u32s(&out[&1]), want);
    }
}
