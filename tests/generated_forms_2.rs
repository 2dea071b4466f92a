//! More forms of machine-generated MSL (SPIRV-Cross's and Tint's output;
//! issue #18): untyped buffer arguments (`device void*`) read and written
//! through casts to the types they hold, as SPIRV-Cross writes aliased
//! descriptors, and `constant auto&` bound to a view of a buffer at a byte
//! offset, as it writes dynamic buffer offsets. Each runs on the GPU against
//! a CPU reference.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

#[cfg(feature = "runner")]
use common::source::run_body as run;

/// SPIRV-Cross's aliased-descriptor shape: one `device void*` buffer read
/// and written as two struct types, and a `const device void*` one read
/// as a third, through a byte offset too.
const UNTYPED_BUFFERS: &str = r#"
struct Header { uint4 head; float vals[8]; };
struct Words { uint a; uint b; uint c; uint d; };
struct Quads { float4 q[2]; float4 tail; };
kernel void untyped(device void* mem [[buffer(0)]],
                    const device void* src [[buffer(1)]],
                    device float* out [[buffer(2)]],
                    uint i [[thread_position_in_grid]]) {
    device auto& h = *(device Header*)mem;
    const device auto& q = *(const device Quads*)src;
    const device auto& t = *(const device float4*)((const device char*)src + 32);
    out[i] = h.vals[i] * float(h.head.y) + q.q[i / 4][i % 4] + t[i % 4];
    if (i == 0) {
        device Words& w = *(device Words*)mem;
        w.c = w.a + 90u;
    }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn untyped_buffers_are_read_and_written_through_casts() {
    let n = 8u32;
    let mut mem = Vec::new();
    for w in [9u32, 3, 0, 7] {
        mem.extend(w.to_le_bytes());
    }
    let vals: Vec<f32> = (0..8).map(|k| k as f32 * 1.5 - 2.0).collect();
    mem.extend(common::f32_bytes(&vals));
    let src: Vec<f32> = (0..12).map(|k| 100.0 + k as f32 * 0.25).collect();
    let Some(out) = run(
        UNTYPED_BUFFERS,
        "untyped",
        (n, 8),
        vec![
            (0, mem),
            (1, common::f32_bytes(&src)),
            (2, vec![0; 4 * n as usize]),
        ],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n as usize)
        .map(|i| vals[i] * 3.0 + src[i] + src[8 + i % 4])
        .collect();
    assert_eq!(common::f32s(&out[&2]), want);
    // Thread 0 wrote `Words::c` (bytes 8..12), and nothing else changed.
    let words = common::u32s(&out[&0]);
    assert_eq!(&words[..4], &[9, 3, 99, 7]);
    assert_eq!(common::f32s(&out[&0])[4..], vals[..]);
}

/// SPIRV-Cross's dynamic-offset shape: a `constant auto&` bound to the
/// struct at a byte offset read from another buffer.
const CONSTANT_VIEW: &str = r#"
struct Params { float scale; float bias; };
kernel void dynamic_offset(constant Params* blocks [[buffer(0)]],
                           constant uint* offsets [[buffer(1)]],
                           device float* out [[buffer(2)]],
                           uint i [[thread_position_in_grid]]) {
    constant auto& p = *(constant Params*)((constant char*)blocks + offsets[1]);
    out[i] = float(i) * p.scale + p.bias;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn constant_references_bind_views_at_byte_offsets() {
    let n = 16u32;
    let blocks = [1.0f32, 0.0, 2.5, -4.0, 0.5, 8.0];
    let offsets = [0u32, 8, 16];
    let Some(out) = run(
        CONSTANT_VIEW,
        "dynamic_offset",
        (n, 16),
        vec![
            (0, common::f32_bytes(&blocks)),
            (1, offsets.iter().flat_map(|o| o.to_le_bytes()).collect()),
            (2, vec![0; 4 * n as usize]),
        ],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n).map(|i| i as f32 * 2.5 - 4.0).collect();
    assert_eq!(common::f32s(&out[&2]), want);
}

/// SPIRV-Cross's swizzle wrappers' shape: a variadic template taking
/// `sampler s` called with a sampler the caller compares with already
/// (which makes it a comparison sampler before the call is matched).
#[cfg(feature = "runner")]
const COMPARE_WRAPPER: &str = r#"
template<typename Tex, typename... Tp>
using CompareReturn = decltype(declval<Tex>().sample_compare(declval<sampler>(), declval<Tp>()...));
template<typename Tex, typename... Ts>
inline CompareReturn<Tex, Ts...> compare_swizzled(const thread Tex& t, sampler s, uint sw, Ts... params) {
    if (sw == 1u) {
        return CompareReturn<Tex, Ts...>(1);
    }
    return t.sample_compare(s, params...);
}
kernel void compare_wrapper(depth2d<float> d [[texture(0)]],
                            sampler shadow [[sampler(0)]],
                            constant uint* swizzles [[buffer(1)]],
                            device float2* out [[buffer(0)]],
                            uint i [[thread_position_in_grid]]) {
    float2 uv = float2(float(i % 4) + 0.5, float(i / 4) + 0.5) / 4.0;
    float direct = d.sample_compare(shadow, uv, 0.5);
    out[i] = float2(direct, compare_swizzled(d, shadow, swizzles[i % 2], uv, 0.5));
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_compared_sampler_passes_to_a_sampler_parameter() {
    use msl2wgsl::reflect::SamplerDescriptor;
    use msl2wgsl::runner::{
        default_sampler, run_kernel_resources, Dispatch, Resources, TextureData,
    };
    let Some(gpu) = common::gpu() else {
        return;
    };
    let depth: Vec<f32> = (0..16).map(|k| k as f32 / 16.0).collect();
    let shadow = SamplerDescriptor {
        compare: Some("less".into()),
        ..default_sampler()
    };
    let resources = Resources {
        buffers: [
            (0, vec![0u8; 16 * 8]),
            (1, [0u32, 1].iter().flat_map(|w| w.to_le_bytes()).collect()),
        ]
        .into_iter()
        .collect(),
        textures: [(
            0,
            TextureData::new_2d(
                wgpu::TextureFormat::Depth32Float,
                4,
                4,
                depth.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
        )]
        .into_iter()
        .collect(),
        samplers: [(0, shadow)].into_iter().collect(),
        ..Default::default()
    };
    let src = format!("{}{COMPARE_WRAPPER}", common::source::PRELUDE);
    let dispatch = Dispatch::Threads {
        grid: [16, 1, 1],
        threadgroup: [16, 1, 1],
    };
    let out = run_kernel_resources(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "compare_wrapper",
        &dispatch,
        &resources,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out.buffers[&0]);
    for (i, d) in depth.iter().enumerate() {
        // `less`: the reference 0.5 passes where it is below the stored depth.
        let compared = if 0.5 < *d { 1.0 } else { 0.0 };
        let swizzled = if i % 2 == 1 { 1.0 } else { compared };
        assert_eq!(&got[2 * i..2 * i + 2], &[compared, swizzled], "texel {i}");
    }
}

/// SPIRV-Cross's arrays of buffers: the buffer arguments gathered in a
/// local array of pointers, passed to a helper as a reference to that
/// array (`device SSBO* (&ssbos)[2]`).
const POINTER_ARRAY_REFERENCE: &str = r#"
struct Block { float v[4]; };
static inline float pick(device Block* (&blocks)[2], const device float* (&scales)[2], uint i) {
    return blocks[1]->v[i % 4] * scales[0][i] - blocks[0]->v[3 - i % 4] * scales[1][0];
}
kernel void pointer_arrays(device Block* b0 [[buffer(0)]], device Block* b1 [[buffer(1)]],
                           const device float* s0 [[buffer(2)]], const device float* s1 [[buffer(3)]],
                           device float* out [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    device Block* blocks[] = { b0, b1 };
    const device float* scales[] = { s0, s1 };
    out[i] = pick(blocks, scales, i);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn references_to_arrays_of_buffer_pointers_reach_each_buffer() {
    let n = 8u32;
    let b0 = [1.0f32, 2.0, 3.0, 4.0];
    let b1 = [10.0f32, 20.0, 30.0, 40.0];
    let s0: Vec<f32> = (0..n).map(|k| 0.5 + k as f32).collect();
    let s1 = [3.0f32];
    let Some(out) = run(
        POINTER_ARRAY_REFERENCE,
        "pointer_arrays",
        (n, 8),
        vec![
            (0, common::f32_bytes(&b0)),
            (1, common::f32_bytes(&b1)),
            (2, common::f32_bytes(&s0)),
            (3, common::f32_bytes(&s1)),
            (4, vec![0; 4 * n as usize]),
        ],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n as usize)
        .map(|i| b1[i % 4] * s0[i] - b0[3 - i % 4] * s1[0])
        .collect();
    assert_eq!(common::f32s(&out[&4]), want);
}

/// SPIRV-Cross's std140 padding helpers: a member `alignas(16)` (which
/// raises its struct's alignment and size, moving nothing), an alias
/// template naming an array of them, and a write through a reference cast
/// of one element (`(device float2&)b.m[0] = ..`).
const PADDED_MEMBERS: &str = r#"
template <typename T>
struct Padded { alignas(16) T data; };
template <typename T, int n>
using PaddedArray = Padded<T>[n];
struct Block {
    PaddedArray<float2, 2> m;
    PaddedArray<float3, 2> rows[2];
    Padded<float> s[3];
};
kernel void padded(constant Block& u [[buffer(0)]], device Block& b [[buffer(1)]],
                   device float* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    out[i] = u.m[i % 2].data.x + u.m[1].data.y * u.rows[1][i % 2].data.z + u.s[i % 3].data;
    if (i == 0) {
        (device float2&)b.m[0] = float2(7.0, 8.0);
        ((device float*)&b.rows[1][1].data)[2] = 9.0;
    }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn aligned_members_pad_as_in_metal() {
    // Metal's layout: 16-byte elements; `m` at 0, `rows` at 32, `s` at 96,
    // 144 bytes in all; element k's float j is float 4 * k + j.
    let words: Vec<f32> = (0..36).map(|k| k as f32 * 0.5).collect();
    let n = 6u32;
    let Some(out) = run(
        PADDED_MEMBERS,
        "padded",
        (n, 6),
        vec![
            (0, common::f32_bytes(&words)),
            (1, vec![0; 144]),
            (2, vec![0; 4 * n as usize]),
        ],
    ) else {
        return;
    };
    let at = |element: usize, j: usize| words[4 * element + j];
    let want: Vec<f32> = (0..n as usize)
        .map(|i| at(i % 2, 0) + at(1, 1) * at(2 + 2 + i % 2, 2) + at(6 + i % 3, 0))
        .collect();
    assert_eq!(common::f32s(&out[&2]), want);
    let mut written = vec![0.0f32; 36];
    written[0] = 7.0;
    written[1] = 8.0;
    written[4 * 5 + 2] = 9.0;
    assert_eq!(common::f32s(&out[&1]), written);
}

/// SPIRV-Cross's `spvStorageMatrix` shape: a matrix held as an array of
/// columns in `threadgroup` memory, with constructors and conversion
/// operators per address space, defaulted members (`= default`), and a
/// user `operator=` beside the implicit copy assignment. The `constant`
/// constructor scales its columns, so that choosing it for a temporary
/// (which binds the `thread` one in Metal) would show.
const STORED_MATRIX: &str = r#"
template<typename T, int Cols, int Rows = Cols>
struct StoredMatrix {
    vec<T, Rows> columns[Cols];
    StoredMatrix() thread = default;
    StoredMatrix(const thread matrix<T, Cols, Rows>& m) thread {
        for (int c = 0; c < Cols; ++c) columns[c] = m[c];
    }
    StoredMatrix(const constant matrix<T, Cols, Rows>& m) thread {
        for (int c = 0; c < Cols; ++c) columns[c] = m[c] * T(100);
    }
    StoredMatrix(const thread StoredMatrix& m) thread = default;
    thread StoredMatrix& operator=(const thread StoredMatrix& m) thread = default;
    void operator=(T diagonal) thread {
        for (int c = 0; c < Cols; ++c) { columns[c] = vec<T, Rows>(0); columns[c][c % Rows] = diagonal; }
    }
    operator matrix<T, Cols, Rows>() const thread {
        matrix<T, Cols, Rows> m;
        for (int c = 0; c < Cols; ++c) m[c] = columns[c];
        return m;
    }
    operator matrix<T, Cols, Rows>() const threadgroup {
        matrix<T, Cols, Rows> m;
        for (int c = 0; c < Cols; ++c) m[c] = columns[c];
        return m;
    }
};
typedef StoredMatrix<float, 3, 2> Stored3x2;
struct Shared { float4 a; Stored3x2 b; };
kernel void stored(device float* out [[buffer(0)]],
                   uint i [[thread_position_in_grid]],
                   uint lid [[thread_index_in_threadgroup]]) {
    threadgroup Shared s;
    if (lid == 0) {
        s.a = float4(1.0, 2.0, 3.0, 4.0);
        s.b = Stored3x2(float3x2(float2(1.0, -7.0), float2(1.0, 2.0), float2(8.0, 7.0)));
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float3x2 m = float3x2(s.b);
    Stored3x2 d;
    d = float(i);
    Stored3x2 e = d;
    float3x2 n = float3x2(e);
    out[i] = m[i % 3][i % 2] + s.a[i % 4] + n[i % 3][i % 3 % 2];
}
"#;

#[test]
#[cfg(feature = "runner")]
fn storage_matrices_convert_and_assign_per_address_space() {
    let n = 12u32;
    let Some(out) = run(
        STORED_MATRIX,
        "stored",
        (n, 12),
        vec![(0, vec![0; 4 * n as usize])],
    ) else {
        return;
    };
    let m = [[1.0f32, -7.0], [1.0, 2.0], [8.0, 7.0]];
    let a = [1.0f32, 2.0, 3.0, 4.0];
    // `d = float(i)`: column c holds i in row c % 2; `n[c][c % 2]` reads it.
    let want: Vec<f32> = (0..n as usize)
        .map(|i| m[i % 3][i % 2] + a[i % 4] + i as f32)
        .collect();
    assert_eq!(common::f32s(&out[&0]), want);
}

/// SPIRV-Cross's pointers to arrays: `device uchar (*row)[16]` taking the
/// address of an array member, written through `(*row)[k]` (sixteen
/// threads writing the bytes of four words), and read through a `const`
/// one.
const POINTER_TO_ARRAY: &str = r#"
struct Bytes { uchar head[16]; float quad[4]; uint tail; };
static inline void put(device uchar (*row)[16], uint k) { (*row)[k] = uchar(k * 3u + 1u); }
static inline float ends(const device float (*q)[4]) { return (*q)[0] + (*q)[3]; }
kernel void pointer_to_array(device Bytes& b [[buffer(0)]], device float* out [[buffer(1)]],
                             uint i [[thread_position_in_grid]]) {
    put(&b.head, i);
    out[i] = ends(&b.quad) * float(i);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn pointers_to_arrays_reach_the_array() {
    let n = 16u32;
    let mut bytes = vec![0u8; 16];
    bytes.extend(common::f32_bytes(&[1.5, 2.0, 3.0, 4.25]));
    bytes.extend(77u32.to_le_bytes());
    let Some(out) = run(
        POINTER_TO_ARRAY,
        "pointer_to_array",
        (n, 16),
        vec![(0, bytes.clone()), (1, vec![0; 4 * n as usize])],
    ) else {
        return;
    };
    let mut want = bytes;
    for (k, byte) in want[..16].iter_mut().enumerate() {
        *byte = (k * 3 + 1) as u8;
    }
    assert_eq!(out[&0], want);
    let sums: Vec<f32> = (0..n).map(|i| (1.5 + 4.25) * i as f32).collect();
    assert_eq!(common::f32s(&out[&1]), sums);
}

/// A reference cast to a longer or another vector type views the bytes
/// there, as the pointer cast `*(device T*)&x` does (C++
/// [expr.reinterpret.cast]/11): `(device float4&)v[0]` of a `float2`
/// buffer writes `v[0]` and `v[1]`, `(device int2&)w[1]` of a `float4`
/// one writes the bits of `w[1].xy`.
const REFERENCE_VIEWS: &str = r#"
kernel void reference_views(device float2* v [[buffer(0)]], device float4* w [[buffer(1)]],
                            uint i [[thread_position_in_grid]]) {
    if (i != 0) { return; }
    (device float4&)v[0] = float4(1.0, 2.0, 3.0, 4.0);
    (device int2&)w[1] = int2(-1, 7);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn reference_casts_view_the_bytes_as_pointer_casts_do() {
    let v: Vec<f32> = (0..6).map(|k| k as f32 * 10.0).collect();
    let w: Vec<f32> = (0..8).map(|k| k as f32 + 0.5).collect();
    let Some(out) = run(
        REFERENCE_VIEWS,
        "reference_views",
        (1, 1),
        vec![(0, common::f32_bytes(&v)), (1, common::f32_bytes(&w))],
    ) else {
        return;
    };
    assert_eq!(common::f32s(&out[&0]), [1.0, 2.0, 3.0, 4.0, 40.0, 50.0]);
    let mut want = common::f32_bytes(&w);
    want[16..20].copy_from_slice(&(-1i32).to_le_bytes());
    want[20..24].copy_from_slice(&7i32.to_le_bytes());
    assert_eq!(out[&1], want);
}

/// SPIRV-Cross's reinterpreted pointer members: `reinterpret_cast<U* const
/// space&>(p)` names the pointer `p` holds, read as a `U*`.
const POINTER_REFERENCE_CASTS: &str = r#"
kernel void pointer_reference_casts(device float* buf [[buffer(0)]], device float4* out [[buffer(1)]],
                                    uint i [[thread_position_in_grid]]) {
    device float* p = buf + 4;
    float4 v = reinterpret_cast<device float4* const thread&>(p)[i];
    out[i] = v + *reinterpret_cast<device float4* const thread&>(p);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn reference_casts_of_pointers_read_them_as_other_pointers() {
    let n = 3u32;
    let buf: Vec<f32> = (0..16).map(|k| k as f32 * 1.25).collect();
    let Some(out) = run(
        POINTER_REFERENCE_CASTS,
        "pointer_reference_casts",
        (n, 3),
        vec![(0, common::f32_bytes(&buf)), (1, vec![0; 16 * n as usize])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n as usize)
        .flat_map(|i| (0..4).map(move |j| (i, j)))
        .map(|(i, j)| buf[4 + 4 * i + j] + buf[4 + j])
        .collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

/// A cast to a reference to an array (`reinterpret_cast<thread float
/// (&)[4]>(a)`, the abstract declarator SPIRV-Cross writes) names the
/// array itself: writes through it reach it.
const ARRAY_REFERENCE_CAST: &str = r#"
kernel void array_reference_cast(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float a[4] = {1.0, 2.0, 3.0, float(i)};
    thread auto& r = reinterpret_cast<thread float (&)[4]>(a);
    r[1] = 5.0;
    out[i] = a[1] + r[3];
}
"#;

#[test]
#[cfg(feature = "runner")]
fn casts_to_array_references_name_the_array() {
    let n = 4u32;
    let Some(out) = run(
        ARRAY_REFERENCE_CAST,
        "array_reference_cast",
        (n, 4),
        vec![(0, vec![0; 4 * n as usize])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n).map(|i| 5.0 + i as f32).collect();
    assert_eq!(common::f32s(&out[&0]), want);
}
