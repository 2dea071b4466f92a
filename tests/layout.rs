//! Metal's memory layout on the GPU: buffers filled by the test exactly as a
//! Metal host would (padding bytes hold garbage the kernel must never read),
//! and sub-word elements written by neighbouring threads at once.
#![cfg(feature = "runner")]

mod common;

use common::{f32s, gpu, u32s};
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
    Some(
        run_kernel(
            gpu,
            name,
            &fixture(name),
            &Options::default(),
            entry,
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}")),
    )
}

/// One `Probe` (see fixtures/layout_probe.metal) as plain values.
#[derive(Clone, Debug)]
struct Probe {
    a: [f32; 3],
    b: f32,
    c: [f32; 3],
    d: i8,
    m: [[f32; 3]; 3],
    h: [f32; 2],
    flag: bool,
    s: [i16; 3],
    tag: u8,
    count: u16,
}

const SIZE: usize = 112;

/// Metal's bytes for `p`: the offsets of the fixture's comment, garbage elsewhere.
fn probe_bytes(p: &Probe) -> Vec<u8> {
    let mut b = vec![0xA5u8; SIZE];
    let mut put = |at: usize, bytes: &[u8]| b[at..at + bytes.len()].copy_from_slice(bytes);
    for k in 0..3 {
        put(4 * k, &p.a[k].to_le_bytes());
        put(20 + 4 * k, &p.c[k].to_le_bytes());
        for r in 0..3 {
            // float3x3: three 16-byte columns from offset 48.
            put(48 + 16 * k + 4 * r, &p.m[k][r].to_le_bytes());
        }
        put(102 + 2 * k, &p.s[k].to_le_bytes());
    }
    put(16, &p.b.to_le_bytes());
    put(32, &[p.d as u8]);
    put(96, &half::f16::from_f32(p.h[0]).to_le_bytes());
    put(98, &half::f16::from_f32(p.h[1]).to_le_bytes());
    put(100, &[p.flag as u8]);
    put(108, &[p.tag]);
    put(110, &p.count.to_le_bytes());
    b
}

/// The bytes of `probe_bytes` that are data, not padding.
fn data_bytes() -> Vec<std::ops::Range<usize>> {
    vec![
        0..12,
        16..33,
        48..60,
        64..76,
        80..92,
        96..101,
        102..109,
        110..112,
    ]
}

fn probe(i: usize) -> Probe {
    let f = i as f32;
    Probe {
        a: [f, -f, 0.5 * f],
        b: 100.0 + f,
        c: [1.0 + f, 2.0, -3.0 - f],
        d: (i as i32 * 5 - 60) as i8,
        m: [[f, 1.0, 2.0], [3.0, 4.0 + f, 5.0 - f], [6.0 * f, 7.0, 8.0]],
        h: [0.25 * f, -1.5],
        flag: i % 2 == 1,
        s: [i as i16 * 300 - 5000, -7, 31000 - i as i16],
        tag: (i * 11) as u8,
        count: (i * 1000 + 60000) as u16,
    }
}

#[test]
fn struct_layout_probe_reads_and_writes_metal_bytes() {
    let n = 24;
    let probes: Vec<Probe> = (0..n).map(probe).collect();
    let input: Vec<u8> = probes.iter().flat_map(probe_bytes).collect();
    let Some(out) = run(
        "layout_probe.metal",
        "probe",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [8, 1, 1],
        },
        vec![(0, input), (1, vec![0; n * 64]), (2, vec![0x5A; n * SIZE])],
    ) else {
        return;
    };
    let o = f32s(&out[&1]);
    for (i, p) in probes.iter().enumerate() {
        let want = [
            p.a[0] + p.a[1] * 2.0 + p.a[2] * 4.0,
            p.b,
            p.c[0] + p.c[1] * 2.0 + p.c[2] * 4.0,
            p.d as f32,
            p.m[1][2],
            p.m[2][0] + p.m[0][1],
            p.h[0] + p.h[1] * 2.0,
            if p.flag { 1.0 } else { -1.0 },
            (p.s[0] as i32 + p.s[1] as i32 * 2 + p.s[2] as i32 * 4) as f32,
            p.tag as f32,
            p.count as f32,
            p.m[0][0] + p.c[1],
            p.s[2] as f32,
        ];
        // Every value is exactly representable and every operation exact.
        assert_eq!(&o[i * 16..i * 16 + 13], &want, "probe {i}");
        let mut changed = p.clone();
        changed.d = changed.d.wrapping_neg();
        changed.s[1] += 1;
        changed.c[1] = 5.0;
        changed.h[0] = 2.5;
        changed.tag = changed.tag.wrapping_add(1);
        changed.flag = !changed.flag;
        let want = probe_bytes(&changed);
        let got = &out[&2][i * SIZE..(i + 1) * SIZE];
        for r in data_bytes() {
            assert_eq!(&got[r.clone()], &want[r.clone()], "copy {i}, bytes {r:?}");
        }
    }
}

#[test]
fn neighbouring_threads_write_sub_word_elements() {
    let n = 1001usize; // not a multiple of 4 or of the threadgroup size
    let packed: Vec<u8> = (0..(n + 3) * 4).map(|k| (k * 13 % 256) as u8).collect();
    let Some(out) = run(
        "subword_buffers.metal",
        "subword",
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [64, 1, 1],
        },
        vec![
            (0, vec![0xEE; n + 3]),
            (1, vec![0xEE; n + 3]),
            (2, vec![0xEE; 2 * n + 2]),
            (3, vec![0xEE; n + 3]),
            (4, vec![0xEE; 2 * n + 2]),
            (5, packed.clone()),
            (6, vec![0; 4 * n]),
        ],
    ) else {
        return;
    };
    for i in 0..n {
        assert_eq!(out[&0][i], (i * 7 + 3) as u8, "uchar {i}");
        assert_eq!(out[&1][i] as i8, (i as i32 - 100) as i8, "char {i}");
        assert_eq!(
            u16::from_le_bytes([out[&2][2 * i], out[&2][2 * i + 1]]),
            (i * 1000 + 12345) as u16,
            "ushort {i}"
        );
        assert_eq!(out[&3][i], ((i % 3) == 0) as u8, "bool {i}");
        let h = half::f16::from_le_bytes([out[&4][2 * i], out[&4][2 * i + 1]]);
        assert_eq!(h.to_f32(), i as f32 * 0.5, "half {i}");
        let want: i32 = packed[4 * i..4 * i + 4].iter().map(|b| *b as i32).sum();
        assert_eq!(u32s(&out[&6])[i] as i32, want, "uchar4 {i}");
    }
    // Past the grid nothing changed, even within a word shared with written bytes.
    for (buffer, from) in [(0u32, n), (1, n), (2, 2 * n), (3, n), (4, 2 * n)] {
        assert!(
            out[&buffer][from..].iter().all(|b| *b == 0xEE),
            "buffer {buffer} past the grid"
        );
    }
}

/// Whole aligned words of sub-word lanes (`uchar4`, `half2`, `short2`) are
/// stored with one word store, not a clear-and-set atomic pair per lane,
/// and still land byte for byte.
#[test]
fn aligned_sub_word_vectors_store_whole_words() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        kernel void swizzle(device const uchar4* in [[buffer(0)]], device uchar4* out [[buffer(1)]],\n\
                            device short2* halves [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n\
            uchar4 v = in[i];\n\
            out[i] = v.wzyx;\n\
            halves[i] = short2(short(v.x) - 128, short(v.y) * 3);\n\
        }\n";
    let library =
        msl2wgsl::Library::from_source("swizzle.metal", src, &Options::default()).unwrap();
    let wgsl = library.wgsl();
    assert!(
        !wgsl.contains("atomicOr") && !wgsl.contains("atomicAnd"),
        "{wgsl}"
    );
    let Some(gpu) = gpu() else { return };
    let n = 67u32;
    let input: Vec<u8> = (0..n * 4).map(|k| (k * 37 + 11) as u8).collect();
    let buffers: BTreeMap<u32, Vec<u8>> = [
        (0, input.clone()),
        (1, vec![0xaa; (n * 4) as usize]),
        (2, vec![0x55; (n * 4) as usize]),
    ]
    .into();
    let dispatch = Dispatch::Threads {
        grid: [n, 1, 1],
        threadgroup: [32, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "swizzle.metal",
        src,
        &Options::default(),
        "swizzle",
        &dispatch,
        &buffers,
    )
    .unwrap();
    for i in 0..n as usize {
        let v = &input[i * 4..i * 4 + 4];
        assert_eq!(
            out[&1][i * 4..i * 4 + 4],
            [v[3], v[2], v[1], v[0]],
            "uchar4 {i}"
        );
        let h = &out[&2][i * 4..i * 4 + 4];
        let (lo, hi) = (
            i16::from_le_bytes([h[0], h[1]]),
            i16::from_le_bytes([h[2], h[3]]),
        );
        assert_eq!(
            (lo, hi),
            (i16::from(v[0]) - 128, i16::from(v[1]) * 3),
            "short2 {i}"
        );
    }
}
