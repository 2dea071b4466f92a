//! Bit-fields (`uint a : 4;`) in Metal's layout (clang's, Itanium C++ ABI):
//! read and written in thread memory, buffers and threadgroup memory, checked
//! on the GPU against a CPU model of that layout (`sema/bit_fields.rs`,
//! `lower/metal/bit_fields.rs`).

// Without the runner the GPU test is left out, and with it the CPU model.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use msl2wgsl::{Library, Options};

const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct Flags {
    uint kind : 4;      // bits 0..4
    int delta : 12;     // bits 4..16, signed
    uint : 0;           // the next field starts at bit 32
    uchar tag;          // byte 4
    bool on : 1;        // bit 40
    ushort wide : 9;    // would straddle 16 bits at bit 41: bits 48..57
};                      // 8 bytes

struct Mixed {
    uchar c;            // byte 0
    uint a : 4;         // bits 8..12: in the word `c` starts
    int b : 20;         // bits 12..32
    float f;            // byte 4
};                      // 8 bytes

struct Small {          // 4 bytes, aligned to 4 by its `uint` fields
    uint kind : 4;      // bits 0..4
    int delta : 12;     // bits 4..16
    uchar tag;          // byte 2
    bool on : 1;        // bit 24
};

struct Counter {
    uint lo : 3;
    int hi : 5;
    Counter(uint v) : lo(v), hi(-int(v)) {}
    void bump() { lo++; hi -= 1; }
    int sum() const { return int(lo) * 100 + hi; }
};

kernel void bits(device Flags* f [[buffer(0)]],
                 device Mixed* m [[buffer(1)]],
                 device int* o [[buffer(2)]],
                 device int* counters [[buffer(3)]],
                 device Small* small [[buffer(4)]],
                 uint i [[thread_position_in_grid]],
                 uint l [[thread_index_in_threadgroup]]) {
    Flags t = f[i];
    o[8u * i] = int(t.kind);
    o[8u * i + 1u] = t.delta;
    o[8u * i + 2u] = int(t.tag);
    o[8u * i + 3u] = int(t.on);
    o[8u * i + 4u] = int(t.wide);
    o[8u * i + 5u] = m[i].b;
    o[8u * i + 6u] = int(m[i].a) + int(m[i].c) * 16;
    o[8u * i + 7u] = int(sizeof(Flags)) * 100 + int(sizeof(Mixed)) + int(t.kind = 21u) * 1000;
    t.delta -= 3;
    t.kind = i;
    f[i] = t;
    f[i].on = !f[i].on;
    f[i].wide += 5;
    m[i].b = -m[i].b;
    m[i].a++;
    threadgroup Mixed shared[64];
    shared[l].c = uchar(l);
    shared[l].a = l;
    shared[l].b = -int(l);
    shared[l].f = 0.5f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    Mixed s = shared[63u - l];
    m[i].f = float(s.b) + float(s.a) * 0.25f + float(s.c) * 1000.0f;
    Counter k(i);
    k.bump();
    counters[i] = k.sum() + int(sizeof(Small)) * 10000 + int(alignof(Small)) * 100000;
    small[i].delta = small[i].delta * 2 + int(small[i].on);
    small[i].tag += 1;
    small[i].on = !small[i].on;
}
"#;

/// `Flags` as plain fields.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Flags {
    kind: u32,
    delta: i32,
    tag: u8,
    on: bool,
    wide: u32,
}

/// `Mixed` as plain fields.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mixed {
    c: u8,
    a: u32,
    b: i32,
    f: f32,
}

/// `Small` as plain fields.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Small {
    kind: u32,
    delta: i32,
    tag: u8,
    on: bool,
}

fn pack_small(x: Small) -> [u8; 4] {
    let half = (x.kind & 0xF) | ((x.delta as u32 & 0xFFF) << 4);
    let [a, b] = (half as u16).to_le_bytes();
    [a, b, x.tag, x.on as u8]
}

fn unpack_small(b: &[u8]) -> Small {
    let half = u32::from(u16::from_le_bytes([b[0], b[1]]));
    Small {
        kind: half & 0xF,
        delta: signed(half >> 4, 12),
        tag: b[2],
        on: b[3] & 1 != 0,
    }
}

/// `v`'s low `bits` bits, sign-extended.
fn signed(v: u32, bits: u32) -> i32 {
    ((v << (32 - bits)) as i32) >> (32 - bits)
}

fn pack_flags(x: Flags) -> [u8; 8] {
    let word = (x.kind & 0xF) | ((x.delta as u32 & 0xFFF) << 4);
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&word.to_le_bytes());
    b[4] = x.tag;
    b[5] = x.on as u8;
    b[6..8].copy_from_slice(&((x.wide & 0x1FF) as u16).to_le_bytes());
    b
}

fn unpack_flags(b: &[u8]) -> Flags {
    let word = u32::from_le_bytes(b[..4].try_into().unwrap());
    Flags {
        kind: word & 0xF,
        delta: signed(word >> 4, 12),
        tag: b[4],
        on: b[5] & 1 != 0,
        wide: u32::from(u16::from_le_bytes([b[6], b[7]])) & 0x1FF,
    }
}

fn pack_mixed(x: Mixed) -> [u8; 8] {
    let word = u32::from(x.c) | ((x.a & 0xF) << 8) | ((x.b as u32 & 0xF_FFFF) << 12);
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&word.to_le_bytes());
    b[4..].copy_from_slice(&x.f.to_le_bytes());
    b
}

fn unpack_mixed(b: &[u8]) -> Mixed {
    let word = u32::from_le_bytes(b[..4].try_into().unwrap());
    Mixed {
        c: word as u8,
        a: (word >> 8) & 0xF,
        b: signed(word >> 12, 20),
        f: f32::from_le_bytes(b[4..8].try_into().unwrap()),
    }
}

fn inputs(n: usize) -> (Vec<Flags>, Vec<Mixed>) {
    let flags = (0..n as u32)
        .map(|i| Flags {
            kind: i % 16,
            delta: (i * 37 % 4096) as i32 - 2048,
            tag: (i * 7 % 256) as u8,
            on: i % 2 == 1,
            wide: i * 13 % 512,
        })
        .collect();
    let mixed = (0..n as u32)
        .map(|i| Mixed {
            c: (i * 5 % 256) as u8,
            a: i * 3 % 16,
            b: (i * 12345 % (1 << 20)) as i32 - (1 << 19),
            f: 0.0,
        })
        .collect();
    (flags, mixed)
}

#[test]
fn bit_fields_translate_to_hidden_words() {
    let lib = Library::from_source("bits.metal", SOURCE, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(lib.wgsl().contains("extractBits"), "{}", lib.wgsl());
    assert!(lib.wgsl().contains("insertBits"), "{}", lib.wgsl());
}

#[test]
#[cfg(feature = "runner")]
fn bit_fields_match_metal_layout_on_the_gpu() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    let n = 128usize;
    let (flags, mixed) = inputs(n);
    let small: Vec<Small> = flags
        .iter()
        .map(|f| Small {
            kind: f.kind,
            delta: f.delta / 4,
            tag: f.tag,
            on: f.on,
        })
        .collect();
    let buffers = [
        (0, flags.iter().flat_map(|x| pack_flags(*x)).collect()),
        (1, mixed.iter().flat_map(|x| pack_mixed(*x)).collect()),
        (2, vec![0u8; n * 32]),
        (3, vec![0u8; n * 4]),
        (4, small.iter().flat_map(|x| pack_small(*x)).collect()),
    ]
    .into();
    let dispatch = Dispatch::Threads {
        grid: [n as u32, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "bits.metal",
        SOURCE,
        &Options::default(),
        "bits",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o: Vec<i32> = common::u32s(&out[&2]).iter().map(|&v| v as i32).collect();
    for i in 0..n {
        let (x, y) = (flags[i], mixed[i]);
        let want = [
            x.kind as i32,
            x.delta,
            i32::from(x.tag),
            x.on as i32,
            x.wide as i32,
            y.b,
            y.a as i32 + i32::from(y.c) * 16,
            // `t.kind = 21u` is 21 cut to 4 bits.
            8 * 100 + 8 + 5 * 1000,
        ];
        assert_eq!(&o[8 * i..8 * i + 8], &want, "[{i}] reads");
        let f = unpack_flags(&out[&0][8 * i..8 * i + 8]);
        let want = Flags {
            kind: i as u32 & 0xF,
            delta: signed((x.delta - 3) as u32, 12),
            tag: x.tag,
            on: !x.on,
            wide: (x.wide + 5) & 0x1FF,
        };
        assert_eq!(f, want, "[{i}] flags written");
        let m = unpack_mixed(&out[&1][8 * i..8 * i + 8]);
        let other = 63 - (i % 64) as u32;
        let want = Mixed {
            c: y.c,
            a: (y.a + 1) & 0xF,
            b: signed(y.b.wrapping_neg() as u32, 20),
            f: -(other as f32) + (other & 0xF) as f32 * 0.25 + other as f32 * 1000.0,
        };
        assert_eq!(m, want, "[{i}] mixed written");
        // `Counter(i)` cuts `i` to 3 bits and `-i` to 5, then bumps both.
        let lo = (i as u32 + 1) & 7;
        let hi = signed((-(i as i32)) as u32 & 31, 5) - 1;
        let hi = signed(hi as u32 & 31, 5);
        let got = common::u32s(&out[&3])[i] as i32;
        assert_eq!(
            got,
            lo as i32 * 100 + hi + 4 * 10000 + 4 * 100000,
            "[{i}] counter"
        );
        let s = small[i];
        let got = unpack_small(&out[&4][4 * i..4 * i + 4]);
        let want = Small {
            kind: s.kind,
            delta: signed((s.delta * 2 + s.on as i32) as u32, 12),
            tag: s.tag.wrapping_add(1),
            on: !s.on,
        };
        assert_eq!(got, want, "[{i}] small");
    }
}
