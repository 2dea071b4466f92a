//! Still more forms of machine-generated MSL (SPIRV-Cross's and Tint's
//! output; issue #18): pointers to array elements subtracted, compared
//! and walked on (SPIR-V's `OpPtrDiff`, `OpPtrEqual`, `OpPtrAccessChain`),
//! and `numeric_limits` of a vector type. Each runs on the GPU against a CPU reference.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

#[cfg(feature = "runner")]
use common::source::run_body as run;

/// SPIRV-Cross's `OpPtrDiff` shape: pointers to rows of a trailing array
/// of arrays, and to elements of one row (a row picked per threadgroup),
/// subtracted; and one pointer compared with another into the same row.
const POINTER_DIFFERENCES: &str = r#"
struct Rows { int m[1][4]; };
struct Diffs { int d[1][6]; };
kernel void diffs(device Rows& rows [[buffer(0)]], device Diffs& out [[buffer(1)]],
                  uint3 lid [[thread_position_in_threadgroup]],
                  uint3 wg [[threadgroup_position_in_grid]]) {
    int r = int3(wg).x;
    int k = int3(lid).x;
    out.d[r][k] = &rows.m[r][k] - &rows.m[r][(k + 1) % 4];
    if (k == 0) {
        out.d[r][4] = &rows.m[r] - &rows.m[0];
        out.d[r][5] = (&rows.m[r][2] == &rows.m[r][k + 2]) ? 7 : 9;
    }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn pointers_to_array_elements_subtract_and_compare() {
    let groups = 3u32;
    let Some(out) = run(
        POINTER_DIFFERENCES,
        "diffs",
        (groups * 4, 4),
        vec![
            (0, vec![0; 16 * groups as usize]),
            (1, vec![0; 24 * groups as usize]),
        ],
    ) else {
        return;
    };
    let mut want = Vec::new();
    for r in 0..groups as i32 {
        for k in 0..4 {
            want.push(k - (k + 1) % 4);
        }
        want.extend([r, 7]);
    }
    let got: Vec<i32> = common::u32s(&out[&1]).iter().map(|&w| w as i32).collect();
    assert_eq!(got, want);
}

/// SPIRV-Cross's `OpPtrAccessChain` shape: two pointers into a trailing
/// array, taken as `&a[0]` and `&a[0 + n]`, walked towards each other one
/// element at a time through `&p[1]` and `&p[-1]`, their difference
/// stored at each step.
const POINTER_WALK: &str = r#"
struct Data { int n; int vals[1]; };
struct Out { int2 d[1]; };
kernel void walk(device Data& data [[buffer(0)]], device Out& out [[buffer(1)]]) {
    int n = data.n;
    device int* lo = &data.vals[0];
    device int* hi = &data.vals[0 + n];
    for (int i = 0; i < n; i++) {
        device int* a = lo;
        device int* b = hi;
        lo = &a[1];
        hi = &b[-1];
        out.d[i] = int2(a - b, *b - *a);
    }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn pointers_into_a_trailing_array_walk_with_element_addresses() {
    let n = 6i32;
    let vals: Vec<i32> = (0..=n).map(|k| k * k + 3).collect();
    let mut data = n.to_le_bytes().to_vec();
    for v in &vals {
        data.extend(v.to_le_bytes());
    }
    let Some(out) = run(
        POINTER_WALK,
        "walk",
        (1, 1),
        vec![(0, data), (1, vec![0; 8 * n as usize])],
    ) else {
        return;
    };
    let mut want = Vec::new();
    for i in 0..n {
        let (a, b) = (i, n - i);
        want.extend([a - b, vals[b as usize] - vals[a as usize]]);
    }
    let got: Vec<i32> = common::u32s(&out[&1]).iter().map(|&w| w as i32).collect();
    assert_eq!(got, want);
}

/// SPIRV-Cross's clustered subgroup `min`/`max` shape: the identity an
/// inactive lane gives is `numeric_limits<T>::max()` (or `min()`) of the
/// operand's type, a vector too. `<metal_limits>` specializes
/// `numeric_limits` for the scalar types only, so a vector gets C++'s
/// primary template ([numeric.limits]): every function returns `T()` (the
/// zero vector) and every constant is 0 or `false`.
const VECTOR_LIMITS: &str = r#"
template<typename T>
struct Identity
{
    static T lowest_of(T) { return numeric_limits<T>::max(); }
    static T highest_of(T) { return numeric_limits<T>::lowest(); }
};
kernel void limits(device float4* f [[buffer(0)]], device int4* n [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    float4 v = f[i];
    f[i] = Identity<float4>::lowest_of(v) + v * 2.0;
    int4 k = n[i];
    n[i] = Identity<int4>::highest_of(k) + k
         + int4(numeric_limits<int4>::is_specialized ? 100 : 0,
                numeric_limits<uint2>::digits,
                int(numeric_limits<float>::is_specialized),
                numeric_limits<int>::max() - 2147483600);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn numeric_limits_of_a_vector_is_the_primary_template() {
    let n = 4u32;
    let f: Vec<f32> = (0..4 * n).map(|k| k as f32 * 0.5 - 3.0).collect();
    let ints: Vec<u32> = (0..4 * n).map(|k| k * 3 + 1).collect();
    let Some(out) = run(
        VECTOR_LIMITS,
        "limits",
        (n, n),
        vec![
            (0, common::f32_bytes(&f)),
            (1, ints.iter().flat_map(|w| w.to_le_bytes()).collect()),
        ],
    ) else {
        return;
    };
    let want_f: Vec<f32> = f.iter().map(|v| v * 2.0).collect();
    assert_eq!(common::f32s(&out[&0]), want_f);
    let want_n: Vec<u32> = ints
        .iter()
        .enumerate()
        .map(|(k, v)| v + [0, 0, 1, 47][k % 4])
        .collect();
    assert_eq!(common::u32s(&out[&1]), want_n);
}

/// SPIRV-Cross's `OpSMulExtended`/`OpUMulExtended` of 64-bit operands: the
/// low half `l * r` and the high half `mulhi(l, r)` of the 128-bit
/// product, through a `[[clang::optnone]]` helper template.
const MULHI_64: &str = r#"
template<typename T, typename U, typename V>
[[clang::optnone]] T spvMulExtended(V l, V r)
{
    return T{U(l * r), U(mulhi(l, r))};
}
struct Pair { ulong lo; ulong hi; };
kernel void mul_extended(device const long* a [[buffer(0)]], device const long* b [[buffer(1)]],
                         device Pair* s [[buffer(2)]], device Pair* u [[buffer(3)]],
                         device long* m [[buffer(4)]],
                         uint i [[thread_position_in_grid]]) {
    s[i] = spvMulExtended<Pair, ulong>(a[i], b[i]);
    u[i] = spvMulExtended<Pair, ulong>(ulong(a[i]), ulong(b[i]));
    long2 v = long2(a[i], b[i]);
    m[i] = madhi(v, v.yx, long2(3, -5)).x;
}
"#;

/// 64-bit operands spanning the signs and magnitudes, for `MULHI_64`.
fn mulhi_operands() -> (Vec<i64>, Vec<i64>) {
    let a = vec![
        3,
        -7,
        i64::MAX,
        i64::MIN,
        0x1234_5678_9abc_def0,
        -0x0fed_cba9_8765_4321,
        -1,
        1 << 40,
    ];
    let b = vec![
        5,
        9,
        i64::MAX,
        -3,
        -0x0123_4567_89ab_cdef,
        0x7654_3210_fedc_ba98,
        -1,
        (1 << 30) + 17,
    ];
    (a, b)
}

/// `mulhi` and `madhi` of `long` and `ulong` on wgpu's exact 64-bit
/// integers, against `i128`/`u128` products; skipped where the adapter
/// lacks `SHADER_INT64`.
#[test]
#[cfg(feature = "runner")]
fn mulhi_of_64_bit_integers_is_the_high_half_of_the_128_bit_product() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use msl2wgsl::{Options, Target};
    let Some(gpu) = common::gpu() else {
        return;
    };
    if !gpu
        .features()
        .contains(msl2wgsl::wgpu::Features::SHADER_INT64)
    {
        common::skip::missing_feature(gpu, "shader-int64");
        return;
    }
    let (a, b) = mulhi_operands();
    let n = a.len();
    let bytes = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let buffers = [
        (0, bytes(&a)),
        (1, bytes(&b)),
        (2, vec![0; 16 * n]),
        (3, vec![0; 16 * n]),
        (4, vec![0; 8 * n]),
    ]
    .into_iter()
    .collect();
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let src = format!("{}{MULHI_64}", common::source::PRELUDE);
    let dispatch = Dispatch::Threads {
        grid: [n as u32, 1, 1],
        threadgroup: [n as u32, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "t.metal",
        &src,
        &options,
        "mul_extended",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let words = |k: u32| -> Vec<u64> {
        out[&k]
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let (mut signed, mut unsigned, mut mad) = (Vec::new(), Vec::new(), Vec::new());
    for (&x, &y) in a.iter().zip(&b) {
        let p = i128::from(x) * i128::from(y);
        signed.extend([p as u64, (p >> 64) as u64]);
        let q = u128::from(x as u64) * u128::from(y as u64);
        unsigned.extend([q as u64, (q >> 64) as u64]);
        mad.push(((p >> 64) as i64).wrapping_add(3) as u64);
    }
    assert_eq!(words(2), signed, "long");
    assert_eq!(words(3), unsigned, "ulong");
    assert_eq!(words(4), mad, "madhi");
}

/// With `--target webgpu` a 64-bit value is computed in its low 32 bits
/// and stands for that word's sign or zero extension: the high half of
/// the product of two such values is the product's sign (`long`) or 0
/// (`ulong`), exact while the operands fit in 32 bits.
#[test]
#[cfg(feature = "runner")]
fn mulhi_of_64_bit_integers_on_webgpu_is_exact_for_32_bit_values() {
    let a: Vec<i64> = vec![3, -7, 2_000_000_000, -2_000_000_000, 0, 65_537, -1, 1 << 30];
    let b: Vec<i64> = vec![
        5,
        9,
        2_000_000_000,
        1_999_999_999,
        -4,
        -65_539,
        -1,
        -(1 << 30),
    ];
    use msl2wgsl::runner::{run_compute, Dispatch};
    use msl2wgsl::{Library, Options, Target};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let n = a.len();
    let bytes = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let buffers = [
        (0, bytes(&a)),
        (1, bytes(&b)),
        (2, vec![0; 16 * n]),
        (3, vec![0; 16 * n]),
        (4, vec![0; 8 * n]),
    ]
    .into_iter()
    .collect();
    // The runner's own translation is for wgpu: translate for WebGPU here.
    let options = Options {
        target: Target::WebGpu,
        threadgroup_size: Some([n as u32, 1, 1]),
        ..Options::default()
    };
    let src = format!("{}{MULHI_64}", common::source::PRELUDE);
    let library = Library::from_source("t.metal", &src, &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let function = library.function("mul_extended").unwrap().clone();
    let dispatch = Dispatch::Threads {
        grid: [n as u32, 1, 1],
        threadgroup: [n as u32, 1, 1],
    };
    let out = run_compute(gpu, library.wgsl(), &function, &dispatch, &buffers)
        .unwrap_or_else(|e| panic!("{e}\n{}", library.wgsl()));
    let words = |k: u32| -> Vec<u64> {
        out[&k]
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    // The signed high half is checked through `madhi`, whose `long`
    // result fits in 32 bits (stored as `ulong`, -1 would not).
    let mut unsigned_high = Vec::new();
    let mut mad = Vec::new();
    for (&x, &y) in a.iter().zip(&b) {
        let p = i128::from(x) * i128::from(y);
        let q = u128::from(x as u32) * u128::from(y as u32);
        unsigned_high.push((q >> 64) as u64);
        mad.push(((p >> 64) as i64 + 3) as u64);
    }
    let high = |w: Vec<u64>| w.into_iter().skip(1).step_by(2).collect::<Vec<u64>>();
    assert_eq!(high(words(3)), unsigned_high, "ulong");
    assert_eq!(words(4), mad, "madhi");
}

/// SPIRV-Cross's pointer-to-pointer shape: a program-scope pointer whose
/// own address space is written after its `*` (`T* constant p`) is a
/// pointer constant, refused where it is declared (not mistaken for a
/// constant of the pointee type); a pointer to a `thread` pointer is a
/// pointer to a pointer, not a pointer stored in a buffer.
#[test]
fn program_scope_pointer_constants_are_located() {
    use common::source::{assert_error, first_code};
    use msl2wgsl::diagnostics::Code;
    let constant = "const device float* thread * constant pp = {};\n\
                    kernel void k(device float* o [[buffer(0)]]) { o[0] = pp == nullptr ? 1.0 : 2.0; }\n";
    assert_error(
        constant,
        "const device",
        0,
        "program-scope pointer constants (`device T* constant p`) are not supported yet",
    );
    assert_eq!(first_code(constant), Code::Unsupported);
    let local = "kernel void k(device float* o [[buffer(0)]]) {\n\
                 device float* p = o;\n\
                 device float* thread * pp = &p;\n\
                 o[1] = **pp; }\n";
    assert_error(
        local,
        "device float* thread",
        0,
        "pointers to pointers are not supported",
    );
    assert_eq!(first_code(local), Code::Unsupported);
}

/// SPIRV-Cross's `OpCooperativeMatrixLengthKHR` shape: the number of a
/// cooperative matrix's elements each thread holds, measured as
/// `sizeof(simdgroup_float8x8::storage_type) / sizeof(float)`: the two
/// `thread_elements()` of an 8x8 matrix over a 32-thread SIMD group.
const MATRIX_LENGTH: &str = r#"
struct SSBO { uint data[1]; };
kernel void length(device SSBO& ssbo [[buffer(0)]]) {
    ssbo.data[0u] = uint(sizeof(simdgroup_float8x8::storage_type) / sizeof(float));
    ssbo.data[1u] = uint(sizeof(metal::simdgroup_half8x8::storage_type) / sizeof(half));
    simdgroup_float8x8 m = make_filled_simdgroup_matrix<float, 8, 8>(1.5f);
    simdgroup_float8x8::storage_type mine = m.thread_elements();
    ssbo.data[2u] = uint(mine.x + mine.y);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn simdgroup_matrix_storage_type_is_a_thread_s_two_elements() {
    let Some(out) = run(MATRIX_LENGTH, "length", (1, 1), vec![(0, vec![0; 12])]) else {
        return;
    };
    assert_eq!(common::u32s(&out[&0]), vec![2, 2, 3]);
}

/// Delegating constructors (C++11 [class.base.init]/6), as SPIRV-Cross's
/// `spvDescriptorArray` writes its `const device void*` one: the object is
/// built by the constructor delegated to, then the delegating one's body
/// runs; through a struct holding a pointer too.
const DELEGATING_CONSTRUCTORS: &str = r#"
struct Scaled {
    float v;
    int n;
    Scaled(float x, int k) : v(x * 2.0f), n(k) {}
    Scaled(int k) : Scaled(float(k) + 0.5f, k + 1) { n += 10; }
};
struct View {
    View(const device float* ptr_) : ptr(ptr_) {}
    View(const device void* raw) : View(static_cast<const device float*>(raw)) {}
    float operator [] (uint i) const { return ptr[i] * 3.0f; }
    const device float* ptr;
};
kernel void delegate(const device void* raw [[buffer(0)]], device float* out [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    Scaled s(int(i));
    View w {raw};
    out[i] = s.v + float(s.n) + w[i];
}
"#;

#[test]
#[cfg(feature = "runner")]
fn delegating_constructors_build_with_the_other_constructor() {
    let n = 8u32;
    let src: Vec<f32> = (0..n).map(|k| k as f32 * 0.25 - 1.0).collect();
    let Some(out) = run(
        DELEGATING_CONSTRUCTORS,
        "delegate",
        (n, n),
        vec![(0, common::f32_bytes(&src)), (1, vec![0; 4 * n as usize])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n as usize)
        .map(|i| (i as f32 + 0.5) * 2.0 + (i + 11) as f32 + src[i] * 3.0)
        .collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

/// SPIRV-Cross's rich-descriptor shape: an untyped buffer cast to a
/// pointer to descriptors that hold buffer pointers (GPU addresses read
/// from memory), refused at the cast as having no WebGPU equivalent.
#[test]
fn a_buffer_cast_to_descriptors_holding_pointers_is_refused() {
    use common::source::{assert_error, first_code};
    use msl2wgsl::diagnostics::Code;
    let body = "struct Desc { device float* value; int length; int padding; };\n\
                kernel void k(const device void* heap [[buffer(0)]], device float* o [[buffer(1)]]) {\n\
                const device Desc* d = static_cast<const device Desc*>(heap);\n\
                o[0] = float(d[1].length); }\n";
    assert_error(
        body,
        "static_cast",
        0,
        "a pointer stored in buffer memory (a buffer's GPU address) has no WebGPU equivalent",
    );
    assert_eq!(first_code(body), Code::NoWebGpuEquivalent);
}
