//! Vertex functions and the draw that runs them: `vertex void` functions
//! (rasterization disabled, capturing vertices into a buffer) run as
//! compute dispatches, and `[[base_vertex]]`/`[[base_instance]]` read from
//! the draw. Every expected value is computed here, from the draw's
//! numbers, as Metal defines them: `[[vertex_id]]` counts from the draw's
//! `vertexStart`, which is also `[[base_vertex]]`; `[[instance_id]]` from
//! its `baseInstance`, which is `[[base_instance]]`.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, gpu, u32s};
use msl2wgsl::reflect::Stage;
use msl2wgsl::runner::{
    render_library, run_vertex_dispatch, RenderResources, Resources, TextureData, VertexDraw,
};
use msl2wgsl::stage_in::StageInputDescriptor;
use msl2wgsl::{Library, Options, Target};

fn library(source: &str, options: &Options) -> Library {
    Library::from_source("vertex_draws.metal", source, options)
        .unwrap_or_else(|f| panic!("{}", f.render()))
}

/// A transform-feedback pass: each vertex of each instance is moved by its
/// instance's matrix and written where the host reads it back.
const CAPTURE: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct VertexIn {
    float3 position [[attribute(0)]];
    float2 uv [[attribute(1)]];
};

struct Captured {
    float4 position;
    float2 uv;
    uint vertex_index;
    uint instance_index;
};

struct Instances {
    float4x4 model[4];
};

vertex void capture_vertices(VertexIn in [[stage_in]],
                             constant Instances& instances [[buffer(1)]],
                             device Captured* out [[buffer(2)]],
                             constant uint& vertices_per_instance [[buffer(3)]],
                             uint vid [[vertex_id]],
                             uint iid [[instance_id]],
                             uint first_vertex [[base_vertex]],
                             uint first_instance [[base_instance]])
{
    uint slot = (iid - first_instance) * vertices_per_instance + (vid - first_vertex);
    out[slot].position = instances.model[iid] * float4(in.position, 1.0);
    out[slot].uv = in.uv * float(iid + 1);
    out[slot].vertex_index = vid;
    out[slot].instance_index = iid;
}
"#;

/// `Captured` in Metal's layout: a float4, a float2, two uints, 32 bytes.
const CAPTURED_SIZE: usize = 32;

/// Instance `i`'s matrix, column-major: a scale by `i + 1` and a
/// translation by `(i, -i, 2i)`; every product below is exact in f32.
fn model(i: usize) -> [[f32; 4]; 4] {
    let s = (i + 1) as f32;
    let t = i as f32;
    [
        [s, 0.0, 0.0, 0.0],
        [0.0, s, 0.0, 0.0],
        [0.0, 0.0, s, 0.0],
        [t, -t, 2.0 * t, 1.0],
    ]
}

/// Vertex `v`'s position and uv (small halves: exact in every product).
fn vertex(v: usize) -> ([f32; 3], [f32; 2]) {
    let v = v as f32;
    ([v, 0.5 * v, -v], [0.25 * v, 1.0 - 0.5 * v])
}

/// `m × (p, 1)` for a column-major `m`.
fn transform(m: &[[f32; 4]; 4], p: [f32; 3]) -> [f32; 4] {
    let p = [p[0], p[1], p[2], 1.0];
    std::array::from_fn(|r| (0..4).map(|c| m[c][r] * p[c]).sum())
}

/// The vertex buffer: `count` vertices, packed as the default descriptor
/// reads them (a float3 then a float2, 20 bytes each).
fn vertices(count: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for v in 0..count {
        let (p, uv) = vertex(v);
        out.extend(f32_bytes(&p));
        out.extend(f32_bytes(&uv));
    }
    out
}

fn capture_resources(draw: &VertexDraw, slots: usize) -> Resources {
    let mut resources = Resources::default();
    let total = (draw.vertex_start + draw.vertex_count) as usize;
    resources.buffers.insert(0, vertices(total));
    let models: Vec<f32> = (0..4).flat_map(|i| model(i).concat()).collect();
    resources.buffers.insert(1, f32_bytes(&models));
    // Untouched slots keep this pattern.
    resources
        .buffers
        .insert(2, vec![0xAB; slots * CAPTURED_SIZE]);
    resources
        .buffers
        .insert(3, draw.vertex_count.to_le_bytes().to_vec());
    resources
}

/// Checks every slot the draw writes, and that the slots past it are
/// untouched (threads past the vertex count do nothing).
fn check_capture(out: &[u8], draw: &VertexDraw, slots: usize) {
    let written = (draw.vertex_count * draw.instance_count) as usize;
    for k in 0..draw.instance_count as usize {
        let iid = draw.base_instance as usize + k;
        for j in 0..draw.vertex_count as usize {
            let vid = draw.vertex_start as usize + j;
            let slot = k * draw.vertex_count as usize + j;
            let bytes = &out[slot * CAPTURED_SIZE..(slot + 1) * CAPTURED_SIZE];
            let floats = common::f32s(&bytes[0..24]);
            let (p, uv) = vertex(vid);
            let want_position = transform(&model(iid), p);
            let scale = (iid + 1) as f32;
            assert_eq!(
                floats[0..4],
                want_position,
                "position of vertex {vid}, instance {iid}"
            );
            assert_eq!(
                floats[4..6],
                [uv[0] * scale, uv[1] * scale],
                "uv of vertex {vid}, instance {iid}"
            );
            assert_eq!(
                u32s(&bytes[24..32]),
                [vid as u32, iid as u32],
                "ids in slot {slot}"
            );
        }
    }
    assert!(
        out[written * CAPTURED_SIZE..slots * CAPTURED_SIZE]
            .iter()
            .all(|&b| b == 0xAB),
        "a slot past the draw's {written} was written"
    );
}

#[test]
fn a_vertex_function_without_position_is_a_compute_dispatch_in_reflection() {
    let lib = library(CAPTURE, &Options::default());
    let f = lib.function("capture_vertices").unwrap();
    assert_eq!(f.stage, Stage::Vertex);
    let dispatch = f.vertex_dispatch.as_ref().expect("run as a dispatch");
    assert_eq!(Some(dispatch.threadgroup_size), f.workgroup_size);
    assert!(f.draw_parameters_binding.is_some());
    let input = f.stage_input.as_ref().expect("stage_in reflected");
    // Buffers 1 to 3 are arguments: the attributes are in buffer 0.
    assert_eq!(input.layouts.len(), 1);
    assert_eq!(
        (input.layouts[0].buffer_index, input.layouts[0].stride),
        (0, 20)
    );
    assert!(lib.wgsl().contains("@compute"), "{}", lib.wgsl());
    // The JSON names (docs/REFLECTION.md).
    let json = serde_json::to_value(f).unwrap();
    assert_eq!(
        json["vertexDispatch"]["grid"],
        serde_json::json!(["vertexCount", "instanceCount", "1"])
    );
    assert_eq!(
        json["drawParametersBinding"],
        serde_json::json!({"group": 0, "binding": 254})
    );
}

#[test]
fn captured_vertices_of_several_instances_from_a_nonzero_first_vertex() {
    let Some(gpu) = gpu() else { return };
    let lib = library(CAPTURE, &Options::default());
    let f = lib.function("capture_vertices").unwrap();
    // Ragged against the 64-thread threadgroups; instances from 1.
    let draw = VertexDraw {
        vertex_start: 3,
        vertex_count: 5,
        base_instance: 1,
        instance_count: 3,
    };
    let slots = 20;
    let resources = capture_resources(&draw, slots);
    let out = run_vertex_dispatch(gpu, lib.wgsl(), f, &draw, &resources).unwrap();
    check_capture(&out.buffers[&2], &draw, slots);
}

#[test]
fn a_vertex_dispatch_larger_than_one_threadgroup() {
    let Some(gpu) = gpu() else { return };
    let lib = library(CAPTURE, &Options::default());
    let f = lib.function("capture_vertices").unwrap();
    let draw = VertexDraw {
        vertex_start: 70,
        vertex_count: 130,
        base_instance: 0,
        instance_count: 2,
    };
    let slots = 300;
    let resources = capture_resources(&draw, slots);
    let out = run_vertex_dispatch(gpu, lib.wgsl(), f, &draw, &resources).unwrap();
    check_capture(&out.buffers[&2], &draw, slots);
}

/// A vertex descriptor with a per-instance buffer stepping every second
/// instance: instance `i` of a draw from base instance `b` reads colour
/// `b + (i - b) / 2` (Vulkan's rule for instance divisors, which MoltenVK
/// gives Metal as `stepRate`).
const PER_INSTANCE: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct VertexIn {
    float2 position [[attribute(0)]];
    float4 colour [[attribute(1)]];
};

vertex void write_colours(VertexIn in [[stage_in]],
                          device float4* out [[buffer(0)]],
                          uint vid [[vertex_id]],
                          uint iid [[instance_id]])
{
    out[iid * 4 + vid] = in.colour + float4(in.position, 0.0, 0.0);
}
"#;

#[test]
fn per_vertex_and_per_instance_attributes_from_a_vertex_descriptor() {
    let Some(gpu) = gpu() else { return };
    let descriptor = StageInputDescriptor::from_json(
        r#"{"attributes": {"0": {"format": "float2", "offset": 0, "bufferIndex": 1},
                          "1": {"format": "float4", "offset": 0, "bufferIndex": 2}},
            "layouts": {"1": {"stride": 8, "stepFunction": "perVertex"},
                        "2": {"stride": 16, "stepFunction": "perInstance", "stepRate": 2}}}"#,
    )
    .unwrap();
    let options = Options {
        target: Target::Wgpu,
        stage_in: Some(descriptor),
        ..Options::default()
    };
    let lib = library(PER_INSTANCE, &options);
    let f = lib.function("write_colours").unwrap();
    let draw = VertexDraw {
        vertex_start: 1,
        vertex_count: 3,
        base_instance: 2,
        instance_count: 3,
    };
    let positions: Vec<f32> = (0..4).flat_map(|v| [v as f32, 10.0 * v as f32]).collect();
    let colours: Vec<f32> = (0..4)
        .flat_map(|i| [100.0 * i as f32, 1.0, 2.0, 3.0])
        .collect();
    let slots = 24;
    let mut resources = Resources::default();
    resources
        .buffers
        .insert(0, f32_bytes(&vec![-1.0; slots * 4]));
    resources.buffers.insert(1, f32_bytes(&positions));
    resources.buffers.insert(2, f32_bytes(&colours));
    let out = run_vertex_dispatch(gpu, lib.wgsl(), f, &draw, &resources).unwrap();
    let got = common::f32s(&out.buffers[&0]);
    let (base, instances) = (draw.base_instance as usize, draw.instance_count as usize);
    for slot in 0..slots {
        let (iid, vid) = (slot / 4, slot % 4);
        let drawn = (base..base + instances).contains(&iid) && (1..4).contains(&vid);
        let colour = base + (iid.max(base) - base) / 2;
        let want = match drawn {
            true => [
                100.0 * colour as f32 + vid as f32,
                1.0 + 10.0 * vid as f32,
                2.0,
                3.0,
            ],
            false => [-1.0; 4],
        };
        assert_eq!(
            got[slot * 4..slot * 4 + 4],
            want,
            "instance {iid}, vertex {vid}"
        );
    }
}

/// Each instance draws a rectangle over its half of the target from six
/// vertices it picks by `[[vertex_id]] - [[base_vertex]]`, coloured with
/// the draw's numbers.
const BASES: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct Out {
    float4 position [[position]];
    float4 colour [[flat]];
};

constant float2 corners[6] = {
    float2(0, 0), float2(1, 0), float2(0, 1),
    float2(1, 0), float2(1, 1), float2(0, 1),
};

vertex Out halves(uint vid [[vertex_id]], uint iid [[instance_id]],
                  uint base_vertex [[base_vertex]], uint base_instance [[base_instance]])
{
    float2 c = corners[vid - base_vertex];
    float left = -1.0 + float(iid - base_instance);
    Out out;
    out.position = float4(left + c.x, -1.0 + 2.0 * c.y, 0.0, 1.0);
    out.colour = float4(float(base_vertex), float(base_instance), float(iid), 255.0) / 255.0;
    return out;
}

fragment float4 colour(Out in [[stage_in]]) { return in.colour; }
"#;

fn pixel(img: &TextureData, x: u32, y: u32) -> [u8; 4] {
    let k = ((y * img.width + x) * 4) as usize;
    img.data[k..k + 4].try_into().unwrap()
}

#[test]
fn a_drawn_vertex_function_reads_the_base_vertex_and_base_instance() {
    let Some(gpu) = gpu() else { return };
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let lib = library(BASES, &options);
    let mut r = RenderResources::new(8, 8, 6);
    r.vertex_start = 5;
    r.base_instance = 2;
    r.instance_count = 2;
    let img = &render_library(gpu, &lib, "halves", "colour", &r).unwrap()[0];
    for y in 0..8 {
        for x in 0..8 {
            // Instance 2 covers the left half, instance 3 the right.
            let iid = 2 + x / 4;
            assert_eq!(pixel(img, x, y), [5, 2, iid as u8, 255], "pixel ({x}, {y})");
        }
    }
}

#[test]
fn a_vertex_dispatch_is_refused_by_the_render_pipeline() {
    let Some(gpu) = gpu() else { return };
    let source = format!("{CAPTURE}\nfragment float4 f() {{ return float4(1); }}\n");
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let lib = library(&source, &options);
    let r = RenderResources::new(4, 4, 3);
    let err = render_library(gpu, &lib, "capture_vertices", "f", &r).unwrap_err();
    assert!(err.to_string().contains("rasterization disabled"), "{err}");
}

/// A drawn function's `[[stage_in]]` is fetched at `[[vertex_id]]`, which
/// counts from the draw's first vertex.
const FROM_FIRST_VERTEX: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct In {
    float2 position [[attribute(0)]];
    float4 colour [[attribute(1)]];
};

struct Out {
    float4 position [[position]];
    float4 colour [[flat]];
};

vertex Out from_buffer(In in [[stage_in]]) {
    Out out;
    out.position = float4(in.position, 0.0, 1.0);
    out.colour = in.colour;
    return out;
}

fragment float4 colour(Out in [[stage_in]]) { return in.colour; }
"#;

#[test]
fn a_drawn_vertex_function_reads_its_vertices_from_the_first_vertex() {
    let Some(gpu) = gpu() else { return };
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let lib = library(FROM_FIRST_VERTEX, &options);
    // Vertices 0 and 1 are a degenerate red triangle's; 2 to 4 cover the
    // target in green.
    let corners = [
        [0.0, 0.0],
        [0.0, 0.0],
        [-1.0, -1.0],
        [3.0, -1.0],
        [-1.0, 3.0],
    ];
    let mut bytes = Vec::new();
    for (v, p) in corners.iter().enumerate() {
        let colour = match v {
            0 | 1 => [1.0, 0.0, 0.0, 1.0],
            _ => [0.0, 1.0, 0.0, 1.0],
        };
        bytes.extend(f32_bytes(p));
        bytes.extend(f32_bytes(&colour));
    }
    let mut r = RenderResources::new(4, 4, 3);
    r.vertex_start = 2;
    r.vertex_buffers.insert(0, bytes.clone());
    let img = &render_library(gpu, &lib, "from_buffer", "colour", &r).unwrap()[0];
    for y in 0..4 {
        for x in 0..4 {
            assert_eq!(pixel(img, x, y), [0, 255, 0, 255], "pixel ({x}, {y})");
        }
    }
    // The buffer must hold every vertex up to the last drawn.
    r.vertex_buffers.insert(0, bytes[..4 * 24].to_vec());
    let err = render_library(gpu, &lib, "from_buffer", "colour", &r).unwrap_err();
    assert!(err.to_string().contains("5 vertices"), "{err}");
}
