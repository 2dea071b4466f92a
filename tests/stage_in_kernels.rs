//! Kernels' `[[stage_in]]` (lower/entry/kernel_stage_in.rs,
//! lower/metal/attribute_formats.rs): per-thread attributes that Metal
//! fetches from the buffers a stage-input descriptor names, converted from
//! their formats, at the element the step function picks from the thread
//! position plus the stage-in region's origin; and `[[grid_origin]]`/
//! `[[grid_size]]`, the region itself.
//!
//! Every GPU test fills the buffers as a Metal host would (bytes at the
//! descriptor's offsets and strides), runs the kernel on the GPU, and
//! compares with the values computed here from Metal's conversion rules.

#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use common::source::PRELUDE;
use msl2wgsl::stage_in::{
    AttributeDescriptor, AttributeFormat, BufferLayoutDescriptor, IndexType, StageInRegion,
    StageInputDescriptor, StepFunction,
};
use msl2wgsl::{Library, Options};
use std::collections::BTreeMap;

fn format(name: &str) -> AttributeFormat {
    AttributeFormat::from_name(name).unwrap_or_else(|| panic!("no format `{name}`"))
}

fn attribute(name: &str, buffer_index: u32, offset: u32) -> AttributeDescriptor {
    AttributeDescriptor {
        format: format(name),
        offset,
        buffer_index,
    }
}

fn layout(stride: u32, step_function: StepFunction, step_rate: u32) -> BufferLayoutDescriptor {
    BufferLayoutDescriptor {
        stride,
        step_function,
        step_rate,
    }
}

fn options(descriptor: Option<StageInputDescriptor>) -> Options {
    Options {
        stage_in: descriptor,
        ..Options::default()
    }
}

/// `values` as little-endian `f32` bytes.
fn f32_bytes(values: &[f32]) -> Vec<u8> {
    common::f32_bytes(values)
}

/// Units in the last place between `a` and `b` (as `f32`).
fn ulps(a: f32, b: f32) -> u32 {
    if a == b {
        return 0;
    }
    let (a, b) = (a.to_bits() as i64, b.to_bits() as i64);
    (a - b).unsigned_abs() as u32
}

/// Runs `entry` of `body` (after the prelude) with `descriptor`, over a
/// `grid` in threadgroups of `group`, with `buffers` and `region`; the
/// buffers after the run, or `None` without a GPU.
#[cfg(feature = "runner")]
fn run(
    body: &str,
    entry: &str,
    descriptor: Option<StageInputDescriptor>,
    (grid, group): ([u32; 3], [u32; 3]),
    buffers: Vec<(u32, Vec<u8>)>,
    region: Option<StageInRegion>,
) -> Option<BTreeMap<u32, Vec<u8>>> {
    use msl2wgsl::runner::{run_kernel_resources, Dispatch, Resources};
    let gpu = common::gpu()?;
    let src = format!("{PRELUDE}{body}");
    let dispatch = Dispatch::Threads {
        grid,
        threadgroup: group,
    };
    let resources = Resources {
        buffers: buffers.into_iter().collect(),
        stage_in_region: region,
        ..Resources::default()
    };
    let out = run_kernel_resources(
        gpu,
        "t.metal",
        &src,
        &options(descriptor),
        entry,
        &dispatch,
        &resources,
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    Some(out.buffers)
}

/// The shape SPIRV-Cross gives a vertex shader run as a kernel before
/// tessellation: `[[stage_in]]` attributes, `[[grid_size]]`, outputs
/// written per thread. Without a descriptor the attributes are tightly
/// packed (a `float4` then a `float3`: 28-byte records) in the first
/// buffer index the `[[buffer(n)]]` arguments leave free (1 here).
const TRANSFORM: &str = r#"
struct Uniforms { float4x4 mvp; };
struct VertexIn {
    float4 position [[attribute(0)]];
    float3 normal [[attribute(1)]];
};
struct VertexOut { float4 position; float3 normal; };
kernel void transform(VertexIn in [[stage_in]],
                      constant Uniforms& u [[buffer(0)]],
                      uint3 gid [[thread_position_in_grid]],
                      uint3 size [[grid_size]],
                      device VertexOut* out [[buffer(2)]]) {
    if (any(gid >= size)) return;
    device VertexOut& o = out[gid.y * size.x + gid.x];
    o.position = u.mvp * in.position;
    o.normal = in.normal * 2.0;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn default_layout_packs_the_members_in_the_first_free_buffer() {
    let n = 37u32;
    let mvp: Vec<f32> = (0..16).map(|i| (i as f32) * 0.25 - 1.5).collect();
    let mut records = Vec::new();
    for t in 0..n {
        let t = t as f32;
        records.extend([t, t * 0.5 - 3.0, 1.0 - t, 1.0]);
        records.extend([t * 0.125, -t, 7.0]);
    }
    let Some(out) = run(
        TRANSFORM,
        "transform",
        None,
        ([n, 1, 1], [8, 1, 1]),
        vec![
            (0, f32_bytes(&mvp)),
            (1, f32_bytes(&records)),
            (2, vec![0u8; n as usize * 32]),
        ],
        None,
    ) else {
        return;
    };
    let got = common::f32s(&out[&2]);
    for t in 0..n as usize {
        let p = &records[t * 7..t * 7 + 4];
        // Columns of a float4x4 are consecutive in Metal's layout.
        for row in 0..4 {
            let want: f32 = (0..4).map(|c| mvp[c * 4 + row] * p[c]).sum();
            let g = got[t * 8 + row];
            assert!(
                (g - want).abs() <= 1e-4 * want.abs().max(1.0),
                "thread {t} row {row}: {g} vs {want}"
            );
        }
        for c in 0..3 {
            assert_eq!(
                got[t * 8 + 4 + c],
                records[t * 7 + 4 + c] * 2.0,
                "thread {t} normal {c}"
            );
        }
    }
}

/// One member of every family of formats, at offsets that are not all
/// word-aligned, in a 48-byte record, each written out as floats.
const FORMATS: &str = r#"
struct In {
    float a [[attribute(0)]];
    float2 b [[attribute(1)]];
    half2 h [[attribute(2)]];
    float4 unorm8 [[attribute(3)]];
    uint2 u16 [[attribute(4)]];
    int i [[attribute(5)]];
    float4 bgra [[attribute(6)]];
    float4 packed [[attribute(7)]];
    float2 snorm16 [[attribute(8)]];
    float4 widened [[attribute(9)]];
    int4 chars [[attribute(10)]];
    float3 f3 [[attribute(11)]];
};
kernel void formats(In in [[stage_in]], uint gid [[thread_position_in_grid]],
                    device float* out [[buffer(0)]]) {
    device float* o = out + gid * 32;
    o[0] = in.a;
    o[1] = in.b.x; o[2] = in.b.y;
    o[3] = float(in.h.x); o[4] = float(in.h.y);
    for (int k = 0; k < 4; k++) o[5 + k] = in.unorm8[k];
    o[9] = float(in.u16.x); o[10] = float(in.u16.y);
    o[11] = float(in.i);
    for (int k = 0; k < 4; k++) o[12 + k] = in.bgra[k];
    for (int k = 0; k < 4; k++) o[16 + k] = in.packed[k];
    o[20] = in.snorm16.x; o[21] = in.snorm16.y;
    for (int k = 0; k < 4; k++) o[22 + k] = in.widened[k];
    for (int k = 0; k < 4; k++) o[26 + k] = float(in.chars[k]);
    o[30] = in.f3.x + in.f3.y + in.f3.z;
    o[31] = 0.0;
}
"#;

/// The record layout of [`FORMATS`], in buffer 3 (stride 64): attribute,
/// format, offset.
const FORMAT_LAYOUT: [(u32, &str, u32); 12] = [
    (0, "float", 0),
    (1, "float2", 4),
    (2, "half2", 12),
    (3, "uchar4Normalized", 16),
    (4, "ushort2", 22), // straddles no word: two halves of words 5 and 6
    (5, "int", 28),
    (6, "uchar4Normalized_bgra", 32),
    (7, "uint1010102Normalized", 36),
    (8, "short2Normalized", 40),
    (9, "float2", 44), // into a float4: (x, y, 0, 1)
    (10, "char3", 52), // into an int4: (x, y, z, 1)
    (11, "half3", 55), // 6 bytes from an odd offset: components straddle words
];

#[cfg(feature = "runner")]
#[test]
fn formats_convert_as_metal_fetches_them() {
    let mut descriptor = StageInputDescriptor::default();
    for (n, name, offset) in FORMAT_LAYOUT {
        descriptor.attributes.insert(n, attribute(name, 3, offset));
    }
    descriptor
        .layouts
        .insert(3, layout(64, StepFunction::ThreadPositionInGridX, 1));
    let n = 29usize;
    let mut bytes = vec![0u8; n * 64];
    let mut want = vec![0f32; n * 32];
    for t in 0..n {
        let r = &mut bytes[t * 64..t * 64 + 64];
        let w = &mut want[t * 32..t * 32 + 32];
        let tf = t as f32;
        let a = tf * 1.5 - 7.25;
        r[0..4].copy_from_slice(&a.to_le_bytes());
        w[0] = a;
        for (k, v) in [tf + 0.5, -tf * 3.0].into_iter().enumerate() {
            r[4 + 4 * k..8 + 4 * k].copy_from_slice(&v.to_le_bytes());
            w[1 + k] = v;
        }
        for (k, v) in [tf * 0.125 - 1.0, 1000.0 + tf].into_iter().enumerate() {
            let h = half::f16::from_f32(v);
            r[12 + 2 * k..14 + 2 * k].copy_from_slice(&h.to_le_bytes());
            w[3 + k] = h.to_f32();
        }
        let u8s = [(t * 9) as u8, 255, 0, (t * 37 % 256) as u8];
        r[16..20].copy_from_slice(&u8s);
        for k in 0..4 {
            w[5 + k] = f32::from(u8s[k]) / 255.0;
        }
        let u16s = [(t * 2311) as u16, 65535 - t as u16];
        for k in 0..2 {
            r[22 + 2 * k..24 + 2 * k].copy_from_slice(&u16s[k].to_le_bytes());
            w[9 + k] = f32::from(u16s[k]);
        }
        let i = -(t as i32) * 100_003;
        r[28..32].copy_from_slice(&i.to_le_bytes());
        w[11] = i as f32;
        let bgra = [10u8, (t * 7) as u8, 250, 128];
        r[32..36].copy_from_slice(&bgra);
        for (k, byte) in [bgra[2], bgra[1], bgra[0], bgra[3]].into_iter().enumerate() {
            w[12 + k] = f32::from(byte) / 255.0;
        }
        let fields = [(t * 31) as u32 % 1024, 1023, 0, t as u32 % 4];
        let word = fields[0] | fields[1] << 10 | fields[2] << 20 | fields[3] << 30;
        r[36..40].copy_from_slice(&word.to_le_bytes());
        for k in 0..3 {
            w[16 + k] = fields[k] as f32 / 1023.0;
        }
        w[19] = fields[3] as f32 / 3.0;
        let s16 = [-32768i16, (t as i16) * 1000 - 9000];
        for k in 0..2 {
            r[40 + 2 * k..42 + 2 * k].copy_from_slice(&s16[k].to_le_bytes());
            w[20 + k] = (f32::from(s16[k]) / 32767.0).max(-1.0);
        }
        for (k, v) in [tf, -0.5].into_iter().enumerate() {
            r[44 + 4 * k..48 + 4 * k].copy_from_slice(&v.to_le_bytes());
        }
        w[22..26].copy_from_slice(&[tf, -0.5, 0.0, 1.0]);
        let chars = [-128i8, t as i8, 127];
        for k in 0..3 {
            r[52 + k] = chars[k] as u8;
            w[26 + k] = f32::from(chars[k]);
        }
        w[29] = 1.0;
        let h3: Vec<half::f16> = [tf, 0.25, -2.0]
            .iter()
            .map(|&v| half::f16::from_f32(v))
            .collect();
        for k in 0..3 {
            r[55 + 2 * k..57 + 2 * k].copy_from_slice(&h3[k].to_le_bytes());
        }
        w[30] = h3.iter().map(|h| h.to_f32()).sum();
    }
    let Some(out) = run(
        FORMATS,
        "formats",
        Some(descriptor),
        ([n as u32, 1, 1], [8, 1, 1]),
        vec![(0, vec![0u8; n * 128]), (3, bytes)],
        None,
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        // Normalized formats divide by 2^n - 1: WGSL's `x / y` and its
        // unpack functions are within 2.5 ULP (WGSL §15.5.1); the rest
        // are exact.
        let normalized = matches!(i % 32, 5..=8 | 12..=21);
        let tolerance = if normalized { 3 } else { 0 };
        assert!(
            ulps(g, w) <= tolerance,
            "thread {} value {}: got {g}, want {w}",
            i / 32,
            i % 32
        );
    }
}

/// Three buffers with three step functions over a 2-D grid: `a` per
/// thread column (x, two threads per element), `b` per row (y), `c` one
/// element for all.
const STEPS: &str = r#"
struct In {
    float a [[attribute(0)]];
    int2 b [[attribute(1)]];
    float4 c [[attribute(2)]];
};
kernel void steps(In in [[stage_in]], uint2 gid [[thread_position_in_grid]],
                  uint2 grid [[threads_per_grid]], device float4* out [[buffer(0)]]) {
    out[gid.y * grid.x + gid.x] = float4(in.a, float(in.b.x), float(in.b.y), in.c.w);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn step_functions_pick_elements_by_x_by_y_or_none() {
    let mut d = StageInputDescriptor::default();
    d.attributes.insert(0, attribute("float", 1, 4));
    d.attributes.insert(1, attribute("short2", 2, 0));
    d.attributes.insert(2, attribute("float4", 3, 0));
    d.layouts
        .insert(1, layout(8, StepFunction::ThreadPositionInGridX, 2));
    d.layouts
        .insert(2, layout(4, StepFunction::ThreadPositionInGridY, 1));
    d.layouts.insert(3, layout(0, StepFunction::Constant, 0));
    let (w, h) = (13usize, 5usize);
    let a: Vec<f32> = (0..w).flat_map(|e| [-1.0, e as f32 * 10.0 + 0.5]).collect();
    let b: Vec<u8> = (0..h)
        .flat_map(|e| {
            let pair = [e as i16 - 2, -(e as i16) * 300];
            pair.into_iter().flat_map(i16::to_le_bytes)
        })
        .collect();
    let c = f32_bytes(&[0.0, 0.0, 0.0, 42.0]);
    let Some(out) = run(
        STEPS,
        "steps",
        Some(d),
        ([w as u32, h as u32, 1], [4, 4, 1]),
        vec![
            (0, vec![0u8; w * h * 16]),
            (1, f32_bytes(&a)),
            (2, b),
            (3, c),
        ],
        None,
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for y in 0..h {
        for x in 0..w {
            let want = [
                a[(x / 2) * 2 + 1],
                (y as f32) - 2.0,
                -(y as f32) * 300.0,
                42.0,
            ];
            let at = (y * w + x) * 4;
            assert_eq!(&got[at..at + 4], &want, "thread ({x}, {y})");
        }
    }
}

/// `[[grid_origin]]` and `[[grid_size]]` give the region the host set, and
/// the origin moves the element each thread reads.
const REGION: &str = r#"
struct In { uint row [[attribute(0)]]; uint col [[attribute(1)]]; };
kernel void region(In in [[stage_in]], uint2 gid [[thread_position_in_grid]],
                   uint2 origin [[grid_origin]], uint3 size [[grid_size]],
                   device uint* out [[buffer(0)]]) {
    if (gid.x >= size.x || gid.y >= size.y) return;
    device uint* o = out + (gid.y * size.x + gid.x) * 6;
    o[0] = in.col; o[1] = in.row;
    o[2] = origin.x; o[3] = origin.y; o[4] = size.x; o[5] = size.z;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn the_region_origin_moves_the_elements_and_gives_grid_origin_and_size() {
    let mut d = StageInputDescriptor::default();
    d.attributes.insert(0, attribute("uint", 4, 0));
    d.attributes.insert(1, attribute("ushort", 5, 2));
    d.layouts
        .insert(4, layout(4, StepFunction::ThreadPositionInGridY, 1));
    d.layouts
        .insert(5, layout(4, StepFunction::ThreadPositionInGridX, 1));
    let region = StageInRegion {
        origin: [3, 2, 0],
        size: [6, 3, 1],
    };
    let rows: Vec<u8> = (0..8u32).flat_map(|r| (r * 1000).to_le_bytes()).collect();
    let cols: Vec<u8> = (0..12u16)
        .flat_map(|c| [0u16, c + 7].into_iter().flat_map(u16::to_le_bytes))
        .collect();
    let Some(out) = run(
        REGION,
        "region",
        Some(d),
        ([8, 4, 1], [4, 2, 1]),
        vec![(0, vec![0u8; 6 * 3 * 24]), (4, rows), (5, cols)],
        Some(region),
    ) else {
        return;
    };
    let got = common::u32s(&out[&0]);
    for y in 0..3u32 {
        for x in 0..6u32 {
            let at = ((y * 6 + x) * 6) as usize;
            let want = [x + 3 + 7, (y + 2) * 1000, 3, 2, 6, 1];
            assert_eq!(&got[at..at + 6], &want, "thread ({x}, {y})");
        }
    }
}

/// `[[grid_origin]]`/`[[grid_size]]` without a `[[stage_in]]` (SPIRV-Cross
/// writes them so for a vertex shader without inputs), and the runner's
/// default region: origin 0, the grid's size.
#[cfg(feature = "runner")]
#[test]
fn without_a_region_the_grid_is_the_region() {
    let body = r#"
kernel void k(uint3 origin [[grid_origin]], uint3 size [[grid_size]],
              uint gid [[thread_position_in_grid]], device uint* out [[buffer(0)]]) {
    out[gid * 4] = origin.x; out[gid * 4 + 1] = size.x;
    out[gid * 4 + 2] = size.y; out[gid * 4 + 3] = size.z;
}
"#;
    let Some(out) = run(
        body,
        "k",
        None,
        ([10, 1, 1], [4, 1, 1]),
        vec![(0, vec![0u8; 160])],
        None,
    ) else {
        return;
    };
    for (t, v) in common::u32s(&out[&0]).chunks(4).enumerate() {
        assert_eq!(v, [0, 10, 1, 1], "thread {t}");
    }
}

/// The indexed step functions: the element is the index buffer's entry
/// at the thread's position (16- and 32-bit indices).
const INDEXED: &str = r#"
struct In { float v [[attribute(0)]]; };
kernel void gather(In in [[stage_in]], uint gid [[thread_position_in_grid]],
                   device float* out [[buffer(0)]]) {
    out[gid] = in.v;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn indexed_step_functions_look_the_element_up() {
    let values: Vec<f32> = (0..16).map(|i| i as f32 * 1.25 + 0.5).collect();
    let indices: Vec<u32> = vec![5, 0, 15, 3, 3, 9, 12, 1, 7, 2, 14];
    for index_type in [IndexType::UInt16, IndexType::UInt32] {
        let mut d = StageInputDescriptor::default();
        d.attributes.insert(0, attribute("float", 1, 0));
        d.layouts
            .insert(1, layout(4, StepFunction::ThreadPositionInGridXIndexed, 1));
        d.index_type = index_type;
        d.index_buffer_index = 2;
        let index_bytes: Vec<u8> = match index_type {
            IndexType::UInt16 => indices
                .iter()
                .flat_map(|&i| (i as u16).to_le_bytes())
                .collect(),
            IndexType::UInt32 => indices.iter().flat_map(|&i| i.to_le_bytes()).collect(),
        };
        let n = indices.len();
        let Some(out) = run(
            INDEXED,
            "gather",
            Some(d),
            ([n as u32, 1, 1], [4, 1, 1]),
            vec![
                (0, vec![0u8; n * 4]),
                (1, f32_bytes(&values)),
                (2, index_bytes),
            ],
            None,
        ) else {
            return;
        };
        let got = common::f32s(&out[&0]);
        let want: Vec<f32> = indices.iter().map(|&i| values[i as usize]).collect();
        assert_eq!(got, want, "{index_type:?}");
    }
}

/// The packed float formats: `floatRG11B10` (unsigned 6+5 and 5+5-bit
/// floats) and `floatRGB9E5` (a shared exponent).
#[cfg(feature = "runner")]
#[test]
fn packed_float_formats_decode() {
    let body = r#"
struct In { float3 small [[attribute(0)]]; float3 shared_exp [[attribute(1)]]; };
kernel void k(In in [[stage_in]], uint gid [[thread_position_in_grid]], device float* out [[buffer(0)]]) {
    for (int c = 0; c < 3; c++) { out[gid * 6 + c] = in.small[c]; out[gid * 6 + 3 + c] = in.shared_exp[c]; }
}
"#;
    let mut d = StageInputDescriptor::default();
    d.attributes.insert(0, attribute("floatRG11B10", 1, 0));
    d.attributes.insert(1, attribute("floatRGB9E5", 1, 4));
    d.layouts
        .insert(1, layout(8, StepFunction::ThreadPositionInGridX, 1));
    // Unsigned small floats: exponent bias 15, like binary16.
    let small = |e: u32, m: u32, mantissa_bits: u32| -> f32 {
        match e {
            0 => m as f32 * 2f32.powi(-14 - mantissa_bits as i32),
            31 if m == 0 => f32::INFINITY,
            _ => (1.0 + m as f32 / (1u32 << mantissa_bits) as f32) * 2f32.powi(e as i32 - 15),
        }
    };
    let n = 24u32;
    let mut bytes = Vec::new();
    let mut want = Vec::new();
    for t in 0..n {
        let (e, m) = ((t * 5 + 1) % 31, (t * 13) % 64);
        let (e2, m2) = ((t * 3) % 31, (t * 7) % 32);
        let rg = m | e << 6;
        let g = ((m + 9) % 64) | ((e + 4) % 31) << 6;
        let b = m2 | e2 << 5;
        bytes.extend((rg | g << 11 | b << 22).to_le_bytes());
        want.extend([
            small(e, m, 6),
            small((e + 4) % 31, (m + 9) % 64, 6),
            small(e2, m2, 5),
        ]);
        let (r9, g9, b9, e9) = (t * 21 % 512, 511 - t, t, (t + 3) % 32);
        bytes.extend((r9 | g9 << 9 | b9 << 18 | e9 << 27).to_le_bytes());
        let scale = 2f32.powi(e9 as i32 - 24);
        want.extend([r9 as f32 * scale, g9 as f32 * scale, b9 as f32 * scale]);
    }
    let Some(out) = run(
        body,
        "k",
        Some(d),
        ([n, 1, 1], [8, 1, 1]),
        vec![(0, vec![0u8; n as usize * 24]), (1, bytes)],
        None,
    ) else {
        return;
    };
    assert_eq!(common::f32s(&out[&0]), want);
}

/// The signed packed format, signed bytes, 16-bit normalized components,
/// and a normalized byte into a `half` member (rounded to half).
const NORMALIZED: &str = r#"
struct In {
    float4 s10 [[attribute(0)]];
    float2 c2 [[attribute(1)]];
    float4 us4 [[attribute(2)]];
    half u1 [[attribute(3)]];
};
kernel void normalized(In in [[stage_in]], uint gid [[thread_position_in_grid]],
                       device float* out [[buffer(0)]]) {
    device float* o = out + gid * 11;
    for (int k = 0; k < 4; k++) { o[k] = in.s10[k]; o[6 + k] = in.us4[k]; }
    o[4] = in.c2.x; o[5] = in.c2.y;
    o[10] = float(in.u1);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn signed_and_sixteen_bit_normalized_formats_convert() {
    let mut d = StageInputDescriptor::default();
    d.attributes
        .insert(0, attribute("int1010102Normalized", 2, 0));
    d.attributes.insert(1, attribute("char2Normalized", 2, 4));
    d.attributes.insert(2, attribute("ushort4Normalized", 2, 6));
    d.attributes.insert(3, attribute("ucharNormalized", 2, 14));
    d.layouts
        .insert(2, layout(16, StepFunction::ThreadPositionInGridX, 1));
    let n = 20usize;
    let mut bytes = vec![0u8; n * 16];
    let mut want = vec![0f32; n * 11];
    let snorm = |c: i32, bits: u32| (c as f32 / ((1 << (bits - 1)) - 1) as f32).max(-1.0);
    for t in 0..n {
        let r = &mut bytes[t * 16..t * 16 + 16];
        let w = &mut want[t * 11..t * 11 + 11];
        let fields = [
            -512 + t as i32 * 37,
            511 - t as i32,
            -(t as i32),
            t as i32 % 4 - 2,
        ];
        let word = (fields[0] as u32 & 1023)
            | (fields[1] as u32 & 1023) << 10
            | (fields[2] as u32 & 1023) << 20
            | (fields[3] as u32 & 3) << 30;
        r[0..4].copy_from_slice(&word.to_le_bytes());
        for k in 0..3 {
            w[k] = snorm(fields[k], 10);
        }
        w[3] = snorm(fields[3], 2);
        let chars = [-128i8, (t as i8) * 6 - 60];
        for k in 0..2 {
            r[4 + k] = chars[k] as u8;
            w[4 + k] = snorm(i32::from(chars[k]), 8);
        }
        for k in 0..4 {
            let c = (t * 3251 + k * 16411) as u16;
            r[6 + 2 * k..8 + 2 * k].copy_from_slice(&c.to_le_bytes());
            w[6 + k] = f32::from(c) / 65535.0;
        }
        r[14] = (t * 13) as u8;
        w[10] = half::f16::from_f32(f32::from(r[14]) / 255.0).to_f32();
    }
    let Some(out) = run(
        NORMALIZED,
        "normalized",
        Some(d),
        ([n as u32, 1, 1], [8, 1, 1]),
        vec![(0, vec![0u8; n * 44]), (2, bytes)],
        None,
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        // Within WGSL's 2.5 ULP of the division (WGSL §15.5.1); the half
        // member is that value rounded to half, so one half ULP.
        let ok = match i % 11 {
            10 => (g - w).abs() <= w.abs().max(f32::MIN_POSITIVE) * 2f32.powi(-10),
            _ => ulps(g, w) <= 3,
        };
        assert!(ok, "thread {} value {}: got {g}, want {w}", i / 11, i % 11);
    }
}

// ---- reflection and diagnostics ------------------------------------------------

#[test]
fn reflection_names_the_attributes_buffers_and_region() {
    let lib = Library::from_source("t.metal", &format!("{PRELUDE}{TRANSFORM}"), &options(None))
        .unwrap_or_else(|e| panic!("{e}"));
    let f = lib.function("transform").unwrap();
    let s = f.stage_input.as_ref().expect("stage input reflection");
    let attrs: Vec<_> = s
        .attributes
        .iter()
        .map(|a| {
            (
                a.name.as_str(),
                a.attribute_index,
                a.format.as_str(),
                a.buffer_index,
                a.offset,
            )
        })
        .collect();
    assert_eq!(
        attrs,
        [
            ("position", 0, "float4", 1, 0),
            ("normal", 1, "float3", 1, 16)
        ]
    );
    assert_eq!(s.layouts.len(), 1);
    assert_eq!((s.layouts[0].buffer_index, s.layouts[0].stride), (1, 28));
    assert_eq!(s.layouts[0].step_function, "threadPositionInGridX");
    assert_eq!(
        s.region_binding.map(|b| b.binding),
        Some(msl2wgsl::stage_in::STAGE_IN_REGION_BINDING)
    );
    // The stage-input buffer is bound as a buffer argument at its index.
    let arg = f.arguments.iter().find(|a| a.index == 1).expect("buffer 1");
    assert_eq!(arg.binding.map(|b| b.binding), Some(1));
    let json = serde_json::to_string(f).unwrap();
    assert!(json.contains(r#""stageInput":{"attributes":[{"name":"position","attributeIndex":0,"attributeType":"float4","format":"float4","bufferIndex":1,"offset":0}"#), "{json}");
}

/// The first diagnostic of `body` translated with `descriptor`, which must
/// point at the `nth` `at` with `message`.
fn assert_option_error(
    body: &str,
    descriptor: Option<StageInputDescriptor>,
    at: &str,
    nth: usize,
    message: &str,
) {
    let offset = body
        .match_indices(at)
        .nth(nth)
        .expect("`at` in the source")
        .0;
    let before = &body[..offset];
    let line = before.matches('\n').count() + 3;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let src = format!("{PRELUDE}{body}");
    let failure = match Library::from_source("t.metal", &src, &options(descriptor)) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f,
    };
    let text = failure.render();
    // `message [Ecode]`: the code is the diagnostic's, not in the text.
    let (message, code) = message.rsplit_once(" [").expect("a code");
    let code = code.trim_end_matches(']');
    assert_eq!(failure.diagnostics.0[0].code().as_str(), code, "{text}");
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(
        text.lines().next().unwrap_or_default().starts_with(&want),
        "want `{want}`\n got:\n{text}"
    );
}

const TWO: &str = r#"
struct In { float4 p [[attribute(0)]]; int n [[attribute(1)]]; };
kernel void k(In in [[stage_in]], uint gid [[thread_position_in_grid]],
              device float4* out [[buffer(0)]]) {
    out[gid] = in.p * float(in.n);
}
"#;

fn two(format_of_n: &str, stride: u32) -> StageInputDescriptor {
    let mut d = StageInputDescriptor::default();
    d.attributes.insert(0, attribute("float4", 1, 0));
    d.attributes.insert(1, attribute(format_of_n, 1, 16));
    d.layouts
        .insert(1, layout(stride, StepFunction::ThreadPositionInGridX, 1));
    d
}

#[test]
fn an_attribute_the_descriptor_lacks_is_located() {
    let mut d = two("int", 20);
    d.attributes.remove(&1);
    assert_option_error(
        TWO,
        Some(d),
        "n [[",
        0,
        "the stage-input descriptor has no attribute 1 for `[[stage_in]]` member `n` [E0406]",
    );
}

#[test]
fn a_format_that_cannot_fill_the_member_is_located() {
    assert_option_error(
        TWO,
        Some(two("float", 20)),
        "int n",
        0,
        "attribute 1 is read in format `float`, which cannot fill `int` member `n` [E0406]",
    );
    let mut d = two("int", 20);
    d.attributes.insert(0, attribute("uint4", 1, 0));
    assert_option_error(
        TWO,
        Some(d),
        "float4 p",
        0,
        "attribute 0 is read in format `uint4`, which cannot fill `float4` member `p` [E0406]",
    );
}

#[test]
fn a_stride_metal_refuses_is_located() {
    assert_option_error(TWO, Some(two("int", 22)), "p [[", 0, "buffer 1 of the stage-input descriptor has stride 22; Metal requires a non-zero multiple of 4 [E0406]");
}

#[test]
fn an_attribute_past_the_stride_is_located() {
    assert_option_error(
        TWO,
        Some(two("int2", 20)),
        "n [[",
        0,
        "attribute 1 (`int2` at offset 16) ends at byte 24, past the stride 20 of buffer 1 [E0406]",
    );
}

#[test]
fn a_buffer_the_kernel_binds_is_located() {
    let mut d = two("int", 20);
    for a in d.attributes.values_mut() {
        a.buffer_index = 0;
    }
    d.layouts = [(0, layout(20, StepFunction::ThreadPositionInGridX, 1))].into();
    assert_option_error(TWO, Some(d), "p [[", 0, "attribute 0 is read from buffer 0, which is also the `[[buffer(0)]]` argument `out` [E0406]");
}

#[test]
fn a_missing_layout_is_located() {
    let mut d = two("int", 20);
    d.layouts.clear();
    assert_option_error(TWO, Some(d), "p [[", 0, "the stage-input descriptor has no layout for buffer 1, which attribute 0 is read from [E0406]");
}

#[test]
fn the_index_buffer_must_be_its_own() {
    let mut d = two("int", 20);
    d.layouts
        .insert(1, layout(20, StepFunction::ThreadPositionInGridXIndexed, 1));
    d.index_buffer_index = 1;
    assert_option_error(
        TWO,
        Some(d),
        "In in",
        0,
        "the stage-input index buffer 1 is also `a stage-input buffer` [E0406]",
    );
}

#[test]
fn members_need_an_attribute_and_a_readable_type() {
    let body = r#"
struct In { float4 p [[attribute(0)]]; float q; };
kernel void k(In in [[stage_in]], device float* out [[buffer(0)]]) { out[0] = in.q; }
"#;
    assert_option_error(
        body,
        None,
        "q;",
        0,
        "kernel `[[stage_in]]` member `q` needs `[[attribute(n)]]` [E0320]",
    );
    let body = r#"
struct In { float4 p [[attribute(0)]]; float2x2 m [[attribute(1)]]; };
kernel void k(In in [[stage_in]], device float* out [[buffer(0)]]) { out[0] = in.m[0][0]; }
"#;
    assert_option_error(
        body,
        None,
        "float2x2",
        0,
        "`[[stage_in]]` member `m` must be a scalar or vector, not `float2x2` [E0320]",
    );
    let body = r#"
struct In { bool b [[attribute(0)]]; };
kernel void k(In in [[stage_in]], device float* out [[buffer(0)]]) { out[0] = in.b; }
"#;
    assert_option_error(body, None, "bool b", 0, "no attribute format reads `bool` as it is, so `[[stage_in]]` member `b` needs a stage-input descriptor [E0406]");
}

#[test]
fn a_stage_in_must_be_one_struct() {
    let body = r#"
kernel void k(float4 p [[stage_in]], device float4* out [[buffer(0)]]) { out[0] = p; }
"#;
    assert_option_error(body, None, "float4 p", 0, "a kernel's `[[stage_in]]` argument `p` must be a struct of `[[attribute(n)]]` members [E0320]");
    let body = r#"
struct In { float4 p [[attribute(0)]]; };
kernel void k(In a [[stage_in]], In b [[stage_in]], device float4* out [[buffer(0)]]) { out[0] = a.p + b.p; }
"#;
    assert_option_error(
        body,
        None,
        "stage_in",
        1,
        "a function can have only one `[[stage_in]]` argument [E0320]",
    );
}

/// The Metal-style pipeline API: the stage-input buffers set with
/// `set_buffer` at their indices, the region with `set_stage_in_region`
/// (`setStageInRegion:`), as a Metal host encodes them.
#[cfg(feature = "runner")]
#[test]
fn a_compute_command_takes_the_stage_in_buffers_and_region() {
    use msl2wgsl::runner::ComputePipeline;
    use wgpu::util::DeviceExt;
    let Some(gpu) = common::gpu() else {
        return;
    };
    let mut d = StageInputDescriptor::default();
    d.attributes.insert(0, attribute("uint", 4, 0));
    d.attributes.insert(1, attribute("ushort", 5, 2));
    d.layouts
        .insert(4, layout(4, StepFunction::ThreadPositionInGridY, 1));
    d.layouts
        .insert(5, layout(4, StepFunction::ThreadPositionInGridX, 1));
    let lib = Library::from_source("t.metal", &format!("{PRELUDE}{REGION}"), &options(Some(d)))
        .unwrap_or_else(|e| panic!("{e}"));
    let pipeline = ComputePipeline::new(gpu, &lib, "region").unwrap_or_else(|e| panic!("{e}"));
    let storage = |bytes: &[u8]| {
        gpu.device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
    };
    let rows: Vec<u8> = (0..8u32).flat_map(|r| (r * 1000).to_le_bytes()).collect();
    let cols: Vec<u8> = (0..12u32)
        .flat_map(|c| ((c + 7) << 16).to_le_bytes())
        .collect();
    let (out, rows, cols) = (
        storage(&[0u8; 4 * 6 * 4 * 6]),
        storage(&rows),
        storage(&cols),
    );
    let region = StageInRegion {
        origin: [1, 3, 0],
        size: [4, 4, 1],
    };
    let mut command = pipeline.encoder();
    command.set_buffer(0, &out, 0).unwrap();
    command.set_buffer(4, &rows, 0).unwrap();
    command.set_buffer(5, &cols, 0).unwrap();
    command.set_stage_in_region(region);
    command
        .dispatch_threads(gpu, [4, 4, 1], [4, 2, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let got = common::u32s(&gpu.read_buffer(&out).unwrap());
    for y in 0..4u32 {
        for x in 0..4u32 {
            let at = ((y * 4 + x) * 6) as usize;
            let want = [x + 1 + 7, (y + 3) * 1000, 1, 3, 4, 1];
            assert_eq!(&got[at..at + 6], &want, "thread ({x}, {y})");
        }
    }
}
