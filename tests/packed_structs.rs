//! `__attribute__((packed))` structs whose packed layout differs from the
//! natural one (Apple's OpenGL migration sample declares its quad vertices
//! so: a `float4` and a `packed_float2` in 24 bytes rather than 32). Their
//! buffers are read and written through word views; run on the GPU and
//! compared with the bytes a CPU lays out.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use half::f16;
use msl2wgsl::Options;

const PACKED: &str = "#include <metal_stdlib>
using namespace metal;
// a@0 b@8 h@24 n@28: 32 bytes (48 unpacked: b@16 h@32 n@36).
struct __attribute__((packed)) Particle {
    float2 a;
    float4 b;
    half2 h;
    uint n;
};
// position@0 uv@16: 24 bytes (32 unpacked).
typedef struct __attribute__((__packed__)) {
    float4 position;
    packed_float2 uv;
} Corner;
static_assert(sizeof(Particle) == 32 && alignof(Particle) == 1, \"Particle\");
static_assert(sizeof(Corner) == 24, \"Corner\");
kernel void step(const device Particle* in [[buffer(0)]], device Particle* out [[buffer(1)]],
                 constant Particle& bias [[buffer(2)]], device Corner* corners [[buffer(3)]],
                 device float* o [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    Particle p = in[i];
    p.b.y += bias.b.w;
    p.n += bias.n;
    p.h = half2(p.h.y, p.h.x);
    out[i] = p;
    out[i].a = p.a * 2.0f;
    Corner c = corners[i];
    corners[i].uv = c.position.xy + c.uv;
    corners[i].position.w = float(sizeof(Particle) + 100 * sizeof(Corner));
    o[i] = float(p.h.x) + bias.a.x;
}
";

/// One `Particle` as Metal lays it out packed.
fn particle(a: [f32; 2], b: [f32; 4], h: [f32; 2], n: u32) -> Vec<u8> {
    let mut e = Vec::with_capacity(32);
    a.iter().chain(&b).for_each(|v| e.extend(v.to_le_bytes()));
    h.iter()
        .for_each(|v| e.extend(f16::from_f32(*v).to_le_bytes()));
    e.extend(n.to_le_bytes());
    assert_eq!(e.len(), 32);
    e
}

fn corner(position: [f32; 4], uv: [f32; 2]) -> Vec<u8> {
    position
        .iter()
        .chain(&uv)
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

#[test]
#[cfg(feature = "runner")]
fn packed_structs_in_buffers_keep_their_packed_layout() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    let n = 70usize;
    let input = |i: usize| {
        let f = i as f32;
        (
            [f, -f],
            [f + 0.5, 2.0 * f, 3.0, -4.0 * f],
            [0.25 * (i % 8) as f32, 1.5],
            7 * i as u32,
        )
    };
    let bias = ([10.0, 0.0], [0.0, 0.0, 0.0, 100.0], [0.0, 0.0], 1000u32);
    let particles: Vec<u8> = (0..n)
        .flat_map(|i| {
            let (a, b, h, k) = input(i);
            particle(a, b, h, k)
        })
        .collect();
    let corners: Vec<u8> = (0..n)
        .flat_map(|i| corner([i as f32, 1.0, 2.0, 3.0], [0.5, -(i as f32)]))
        .collect();
    let buffers = [
        (0, particles),
        (1, vec![0xAB; 32 * n]),
        (2, particle(bias.0, bias.1, bias.2, bias.3)),
        (3, corners),
        (4, vec![0; 4 * n]),
    ]
    .into();
    let dispatch = Dispatch::Threads {
        grid: [n as u32, 1, 1],
        threadgroup: [32, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "packed.metal",
        PACKED,
        &Options::default(),
        "step",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = common::f32s(&out[&4]);
    for i in 0..n {
        let (a, mut b, h, k) = input(i);
        b[1] += bias.1[3];
        let want = particle([2.0 * a[0], 2.0 * a[1]], b, [h[1], h[0]], k + bias.3);
        assert_eq!(&out[&1][32 * i..32 * i + 32], &want[..], "[{i}] particle");
        let f = i as f32;
        let want = corner([f, 1.0, 2.0, 2432.0], [f + 0.5, 1.0 - f]);
        assert_eq!(&out[&3][24 * i..24 * i + 24], &want[..], "[{i}] corner");
        assert_eq!(o[i], h[1] + bias.0[0], "[{i}] o");
    }
}
