//! GPU tests of translated kernels: each fixture is translated, run through
//! wgpu with Metal's dispatch semantics, and compared with a CPU reference
//! computed here.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s, gpu, u32s};
use msl2wgsl::runner::{run_kernel, Dispatch};
use msl2wgsl::Options;
use std::collections::BTreeMap;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(
    name: &str,
    entry: &str,
    dispatch: Dispatch,
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<BTreeMap<u32, Vec<u8>>> {
    let gpu = gpu()?;
    let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
    match run_kernel(
        gpu,
        name,
        &fixture(name),
        &Options::default(),
        entry,
        &dispatch,
        &buffers,
    ) {
        Ok(out) => Some(out),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// Deterministic test data (xorshift32), in [-1, 1).
fn data(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.max(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

/// `|a - b| <= tol * max(1, |b|)`, element by element.
fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

#[test]
fn add_arrays_matches_cpu() {
    let n = 4096;
    let (a, b) = (data(n, 1), data(n, 2));
    let Some(out) = run(
        "add_arrays.metal",
        "add_arrays",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [64, 1, 1],
        },
        vec![(0, f32_bytes(&a)), (1, f32_bytes(&b)), (2, vec![0; n * 4])],
    ) else {
        return;
    };
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    // WGSL's `+` on f32 is correctly rounded, as on the CPU: exact.
    assert_eq!(f32s(&out[&2]), want);
}

#[test]
fn ragged_grid_runs_exactly_the_grid() {
    const SENTINEL: u32 = 0xDEAD_BEEF;
    let Some(out) = run(
        "ragged_grid.metal",
        "ragged",
        Dispatch::Threads {
            grid: [1000, 1, 1],
            threadgroup: [64, 1, 1],
        },
        vec![(0, [0xEF, 0xBE, 0xAD, 0xDE].repeat(1024))],
    ) else {
        return;
    };
    let got = u32s(&out[&0]);
    for (i, v) in got.iter().enumerate() {
        if i < 1000 {
            // The high bits flag a wrong index or grid size seen by the thread.
            assert_eq!(*v, 2 * i as u32 + 1, "thread {i}");
        } else {
            assert_eq!(
                *v, SENTINEL,
                "byte past the grid was written at element {i}"
            );
        }
    }
}

#[test]
fn threads_per_threadgroup_is_clipped_at_the_grid_edge() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        kernel void k(device uint* out [[buffer(0)]], uint gid [[thread_position_in_grid]], uint n [[threads_per_threadgroup]], uint g [[threadgroups_per_grid]]) { out[gid] = n * 1000u + g; }";
    let Some(gpu) = gpu() else { return };
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; 100 * 4])].into_iter().collect();
    let out = run_kernel(
        gpu,
        "edge.metal",
        src,
        &Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [100, 1, 1],
            threadgroup: [64, 1, 1],
        },
        &buffers,
    )
    .unwrap();
    let got = u32s(&out[&0]);
    for (i, v) in got.iter().enumerate() {
        // Metal (MSL §5.2.3.6): the edge threadgroup reports its real size, 36.
        let size = if i < 64 { 64 } else { 36 };
        assert_eq!(*v, size * 1000 + 2, "thread {i}");
    }
}

#[test]
fn filter_reads_constant_buffer_and_program_scope_table() {
    let n = 300usize;
    let input = data(n, 7);
    let weights = [0.1f32, 0.2, 0.4, 0.2, 0.1];
    let window = [0.5f32, 1.0, 2.0, 1.0, 0.5];
    let Some(out) = run(
        "filter.metal",
        "filter5",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [32, 1, 1],
        },
        vec![
            (0, f32_bytes(&input)),
            (1, f32_bytes(&weights)),
            (2, vec![0; n * 4]),
            (3, (n as u32).to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n as i32)
        .map(|i| {
            let mut acc = 0.0f32;
            for k in -2..=2i32 {
                let j = (i + k).clamp(0, n as i32 - 1) as usize;
                acc += input[j] * (weights[(k + 2) as usize] * window[(k + 2) as usize]);
            }
            acc
        })
        .collect();
    // Each step is a correctly rounded multiply and add; a driver may fuse
    // them into fma (Metal's fast math does too), which changes the last bit.
    assert_close(&f32s(&out[&2]), &want, 4.0 * f32::EPSILON, "filter");
}

#[test]
fn constant_struct_argument_in_metal_layout() {
    let n = 100usize;
    let input = data(n, 3);
    // Params in Metal's layout: scale@0, offset@16 (float3), count@32, bias@36, clampTo@40; size 48.
    // The padding bytes hold garbage the kernel must never read.
    let mut params = vec![0xA5u8; 48];
    params[0..4].copy_from_slice(&2.5f32.to_le_bytes());
    for (k, v) in [1.0f32, -2.0, 0.5].iter().enumerate() {
        params[16 + 4 * k..20 + 4 * k].copy_from_slice(&v.to_le_bytes());
    }
    params[32..36].copy_from_slice(&90u32.to_le_bytes());
    params[36..40].copy_from_slice(&0.25f32.to_le_bytes());
    params[40..44].copy_from_slice(&(-1i32).to_le_bytes());
    params[44..48].copy_from_slice(&1i32.to_le_bytes());
    let Some(out) = run(
        "params.metal",
        "apply_params",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [64, 1, 1],
        },
        vec![(0, params), (1, f32_bytes(&input)), (2, vec![0xFF; n * 32])],
    ) else {
        return;
    };
    let bytes = &out[&2];
    for i in 0..n {
        let rec = f32s(&bytes[i * 32..i * 32 + 32]);
        if i >= 90 {
            assert!(
                bytes[i * 32..i * 32 + 32].iter().all(|b| *b == 0xFF),
                "element {i} past count was written"
            );
            continue;
        }
        let x = input[i] * 2.5 + 0.25;
        let v = [x, -2.0 * x, 0.5 * x];
        let sum = v[0] + v[1] + v[2];
        let z = (x as i32).clamp(-1, 1) as f32;
        assert_close(
            &[rec[0], rec[1], rec[2], rec[4]],
            &[v[0], v[1], z, sum],
            4.0 * f32::EPSILON,
            &format!("out[{i}]"),
        );
    }
}

fn control_flow_reference(n: i32) -> i32 {
    if n == 7 {
        return -7;
    }
    let mut acc = 0i32;
    for i in 0..10 {
        if i == n % 5 {
            continue;
        }
        if i > 7 {
            break;
        }
        acc += i;
    }
    let mut w = 0;
    while w < n % 4 {
        w += 1;
        acc = acc.wrapping_mul(2);
    }
    for _ in 0..3 {
        acc -= 1;
    }
    match n % 6 {
        0 => acc += 110,
        1 => acc += 10,
        2 | 3 => acc = -acc,
        _ => acc ^= 0x55,
    }
    acc + if n > 20 { n & 3 } else { -(n % 3) }
}

#[test]
fn control_flow_matches_cpu() {
    let n = 64;
    let Some(out) = run(
        "control_flow.metal",
        "control_flow",
        Dispatch::Threadgroups {
            groups: [2, 1, 1],
            threadgroup: [32, 1, 1],
        },
        vec![(0, vec![0; n * 4])],
    ) else {
        return;
    };
    let want: Vec<i32> = (0..n as i32).map(control_flow_reference).collect();
    let got: Vec<i32> = u32s(&out[&0]).into_iter().map(|v| v as i32).collect();
    assert_eq!(got, want);
}

#[test]
fn helper_functions_by_value_reference_and_pointer() {
    let n = 128usize;
    let input = data(n + 2, 11);
    let Some(out) = run(
        "helpers.metal",
        "helpers",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [64, 1, 1],
        },
        vec![(0, f32_bytes(&input)), (1, vec![0; n * 8])],
    ) else {
        return;
    };
    let got = f32s(&out[&1]);
    let mut want = Vec::new();
    for i in 0..n {
        let total = input[i] * input[i] + (input[i] + input[i + 1] + input[i + 2]);
        want.push(total);
        want.push(-1.0 + input[i]);
    }
    assert_close(&got, &want, 4.0 * f32::EPSILON, "helpers");
}

#[test]
fn two_dimensional_grid_with_uint2_positions() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        kernel void k(device uint* out [[buffer(0)]], constant uint& width [[buffer(1)]], uint2 p [[thread_position_in_grid]], uint2 grid [[threads_per_grid]]) { out[p.y * width + p.x] = (p.x << 16) | p.y; if (grid.x != 37u || grid.y != 19u) out[p.y * width + p.x] = 0xFFFFFFFFu; }";
    let Some(gpu) = gpu() else { return };
    let (w, h) = (40usize, 20usize);
    let buffers: BTreeMap<u32, Vec<u8>> = [
        (0, vec![0u8; w * h * 4]),
        (1, (w as u32).to_le_bytes().to_vec()),
    ]
    .into_iter()
    .collect();
    let out = run_kernel(
        gpu,
        "grid2d.metal",
        src,
        &Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [37, 19, 1],
            threadgroup: [8, 8, 1],
        },
        &buffers,
    )
    .unwrap();
    let got = u32s(&out[&0]);
    for y in 0..h {
        for x in 0..w {
            let want = if x < 37 && y < 19 {
                ((x as u32) << 16) | y as u32
            } else {
                0
            };
            assert_eq!(got[y * w + x], want, "({x}, {y})");
        }
    }
}

#[test]
fn integer_and_conversion_semantics() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        kernel void k(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
          int a = int(i) - 8; uint u = i;\n\
          int q = a / 3; int r = a % 3; int s = a >> 1; int t = a << 2;\n\
          float f = a * 0.5f; int back = (int)f; uint mixed = u + a;\n\
          bool b = a; int fromBool = b + true;\n\
          out[i * 8 + 0] = q; out[i * 8 + 1] = r; out[i * 8 + 2] = s; out[i * 8 + 3] = t;\n\
          out[i * 8 + 4] = back; out[i * 8 + 5] = int(mixed); out[i * 8 + 6] = fromBool; out[i * 8 + 7] = -int(u) + ~a;\n\
        }";
    let Some(gpu) = gpu() else { return };
    let n = 16usize;
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; n * 32])].into_iter().collect();
    let out = run_kernel(
        gpu,
        "ints.metal",
        src,
        &Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &buffers,
    )
    .unwrap();
    let got: Vec<i32> = u32s(&out[&0]).into_iter().map(|v| v as i32).collect();
    for i in 0..n as i32 {
        let a = i - 8;
        let f = a as f32 * 0.5;
        // C++ truncating division and remainder; arithmetic shift right.
        let want = [
            a / 3,
            a % 3,
            a >> 1,
            a << 2,
            f as i32,
            (i as u32).wrapping_add(a as u32) as i32,
            (a != 0) as i32 + 1,
            -i + !a,
        ];
        assert_eq!(
            &got[i as usize * 8..i as usize * 8 + 8],
            &want,
            "thread {i}"
        );
    }
}

#[test]
fn narrow_integers_wrap_like_metal() {
    let n = 64usize;
    let Some(out) = run(
        "narrow_ints.metal",
        "narrow",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [32, 1, 1],
        },
        vec![(0, vec![0; n * 48])],
    ) else {
        return;
    };
    let got: Vec<i32> = u32s(&out[&0]).into_iter().map(|v| v as i32).collect();
    for i in 0..n as u32 {
        let a = (i * 37 + 200) as u8;
        let b = (i as i32 * 29 - 100) as i8;
        let s = (i as i32 * 3000 - 40000) as i16;
        let u = (i * 1000 + 65000) as u16;
        let w = [
            a.wrapping_add(10),
            255u8.wrapping_add(10),
            138,
            (i as u8).wrapping_add(10),
        ];
        let packed = w[0] as i32 | (w[1] as i32) << 8 | (w[2] as i32) << 16 | (w[3] as i32) << 24;
        let c = a.wrapping_add(100).wrapping_add(1);
        let want = [
            a as i32,
            b as i32,
            s as i32,
            u as i32,
            a as i32 + b as i32,
            packed,
            b.wrapping_neg() as i32,
            -128,
            (u << 1) as i32,
            (0x8001u16 << 1) as i32,
            c as i32,
            (i % 32) as i32,
        ];
        let at = i as usize * 12;
        assert_eq!(&got[at..at + 12], &want, "thread {i}");
    }
}

#[test]
fn vector_math_swizzles_half_and_as_type() {
    let n = 32usize;
    // Quarter steps in [-4, 4): every result below is exact in f32 and f16.
    let input: Vec<f32> = (0..n * 4)
        .map(|k| ((k * 7 % 32) as f32 - 16.0) * 0.25)
        .collect();
    let Some(out) = run(
        "vectors.metal",
        "vectors",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [16, 1, 1],
        },
        vec![
            (0, f32_bytes(&input)),
            (1, vec![0; n * 64]),
            (2, vec![0; n * 8]),
            (3, vec![0; n * 16]),
        ],
    ) else {
        return;
    };
    let o = f32s(&out[&1]);
    let bits = u32s(&out[&3]);
    for i in 0..n {
        let v = &input[i * 4..i * 4 + 4];
        let mut w = [
            v[3] * 2.0 + 1.0,
            v[2] * 2.0 + 1.0,
            v[1] * 2.0 + 1.0,
            v[0] * 2.0 + 1.0,
        ];
        w[0] = v[2];
        w[1] = v[3];
        w[2] += 10.0;
        w[0] += 20.0;
        let c = [v[1], -v[0], 0.0];
        let gt: Vec<bool> = v.iter().map(|x| *x > 0.0).collect();
        let want = [
            w[0],
            w[1],
            w[2],
            w[3],
            c[0],
            c[1],
            c[2],
            v.iter().map(|x| x * x).sum(),
            v[0] * v[2],
            v[1] * v[3],
            gt.iter().all(|b| *b) as u8 as f32,
            gt.iter().any(|b| *b) as u8 as f32,
            v[0].abs(),
            v[1].abs(),
            v[2].abs(),
            v[3].abs(),
        ];
        assert_eq!(&o[i * 16..i * 16 + 16], &want, "thread {i}");
        for k in 0..4 {
            let h = half::f16::from_le_bytes([out[&2][i * 8 + 2 * k], out[&2][i * 8 + 2 * k + 1]]);
            assert_eq!(h.to_f32(), v[k] * 2.0 + 0.5, "half lane {k} of thread {i}");
        }
        let hp = half::f16::from_f32(v[0]).to_bits() as u32
            | (half::f16::from_f32(v[1]).to_bits() as u32) << 16;
        assert_eq!(bits[i * 4], hp, "as_type<uint>(half2) {i}");
        assert_eq!(bits[i * 4 + 1], v[0].to_bits(), "as_type<uint>(float) {i}");
        assert_eq!(
            bits[i * 4 + 2],
            (v[0].to_bits() & 0xFFFF) ^ (v[0].to_bits() >> 16),
            "ushort2 {i}"
        );
        let word = 0x1122_3344u32 + i as u32;
        let s2y = ((i as i32 - 5) >> 16) as i16; // as_type<short2>(int).y, sign-extended
        assert_eq!(
            bits[i * 4 + 3],
            ((word & 0xFF) + (word >> 24) * 256).wrapping_add(s2y as i32 as u32),
            "uchar4/short2 {i}"
        );
    }
}

#[test]
fn long_and_ulong_with_native_64_bit_integers() {
    let Some(gpu) = gpu() else { return };
    if !gpu.features().contains(wgpu::Features::SHADER_INT64) {
        common::skip::missing_feature(gpu, "shader-int64");
        return;
    }
    let n = 64usize;
    let out = run(
        "long_ints.metal",
        "k",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [32, 1, 1],
        },
        vec![(0, vec![0; n * 8]), (1, vec![0; n * 8])],
    )
    .expect("a GPU");
    for i in 0..n {
        let a = i64::from_le_bytes(out[&0][i * 8..i * 8 + 8].try_into().unwrap());
        let b = u64::from_le_bytes(out[&1][i * 8..i * 8 + 8].try_into().unwrap());
        let x = i as i64 * 3_000_000_000 - 5;
        assert_eq!(a, (x >> 3) + 1, "long {i}");
        let y = u64::MAX - i as u64;
        assert_eq!(b, (y / 7).wrapping_add(y << 40), "ulong {i}");
    }
}

/// Constant left shifts drop the bits shifted out, as in C++; WGSL makes
/// such a constant shift a shader-creation error (Tint refuses it), so the
/// emitted WGSL must hold the folded value instead of `c << s`.
#[test]
fn constant_left_shifts_drop_high_bits() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        constant uint kAll = 0xFFFFFFFFu;\n\
        kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
          out[0] = 0xFFFFFFFFu << 4; out[1] = 2147483648u << 31; out[2] = kAll << 8;\n\
          out[3] = uint(-1 << 31); out[4] = uint(0x40000000 << 2); out[5] = 3u << 33;\n\
        }";
    let library = msl2wgsl::Library::from_source("shifts.metal", src, &Options::default()).unwrap();
    assert!(
        !library.wgsl().contains("<< "),
        "a constant shift reached the WGSL:\n{}",
        library.wgsl()
    );
    let Some(gpu) = gpu() else { return };
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; 24])].into_iter().collect();
    let dispatch = Dispatch::Threads {
        grid: [1, 1, 1],
        threadgroup: [1, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "shifts.metal",
        src,
        &Options::default(),
        "k",
        &dispatch,
        &buffers,
    )
    .unwrap();
    // Metal masks the amount to the low 5 bits: 33 shifts by 1.
    let want = [
        0xFFFF_FFFFu32 << 4,
        0x8000_0000u32.wrapping_shl(31),
        0xFFFF_FFFFu32 << 8,
        (-1i32).wrapping_shl(31) as u32,
        0x4000_0000i32.wrapping_shl(2) as u32,
        3u32 << 1,
    ];
    assert_eq!(u32s(&out[&0]), want);
}

/// Atomics read through a `const device` pointer: WGSL has atomics only in
/// `read_write` storage, so the buffer is bound read-write (Tint refuses
/// `var<storage>` atomics) and the load still reads the host's value.
#[test]
fn atomics_behind_a_const_pointer_are_read_write_storage() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(const device atomic_uint* c [[buffer(0)]], device uint* o [[buffer(1)]]) {\n  o[0] = atomic_load_explicit(c, memory_order_relaxed) + 1u;\n}\n";
    let lib = msl2wgsl::Library::from_source("t.metal", src, &msl2wgsl::Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(
        lib.wgsl()
            .contains("var<storage, read_write> c: array<atomic<u32>>"),
        "{}",
        lib.wgsl()
    );
    let Some(gpu) = common::gpu() else { return };
    let buffers: std::collections::BTreeMap<u32, Vec<u8>> =
        [(0, 41u32.to_le_bytes().to_vec()), (1, vec![0u8; 4])]
            .into_iter()
            .collect();
    let out = msl2wgsl::runner::run_kernel(
        gpu,
        "t.metal",
        src,
        &msl2wgsl::Options::default(),
        "k",
        &msl2wgsl::runner::Dispatch::Threads {
            grid: [1, 1, 1],
            threadgroup: [1, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(common::u32s(&out[&1]), [42]);
}
