//! GPU tests of the render runner with hand-written WGSL and reflections
//! (the translator is not involved). Every image is checked against one
//! computed here, to one 8-bit step.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, gpu};
use msl2wgsl::reflect::{
    Access, Argument, ArgumentKind, BufferInfo, ColorOutput, ConstexprSampler, FunctionReflection,
    Stage, TextureBinding, TextureInfo, VertexAttribute, WgslBinding,
};
use msl2wgsl::runner::{
    default_sampler, render, Gpu, RenderResources, RenderTarget, RunError, TextureData,
};
use wgpu::TextureFormat as F;

/// A vertex or fragment function's reflection with nothing bound.
fn function(name: &str, stage: Stage, arguments: Vec<Argument>) -> FunctionReflection {
    FunctionReflection {
        name: name.into(),
        wgsl_entry_point: name.into(),
        stage,
        workgroup_size: None,
        arguments,
        builtins: Vec::new(),
        dispatch_binding: None,
        uses_barriers: false,
        required_features: Vec::new(),
        required_limits: Default::default(),
        simd_groups: None,
        constexpr_samplers: Vec::new(),
        vertex_attributes: Vec::new(),
        vertex_stride: 0,
        varyings: Vec::new(),
        color_outputs: Vec::new(),
        function_constants: Vec::new(),
        stitchable: None,
        point_sprite: None,
        stage_input: None,
        draw_parameters_binding: None,
        vertex_dispatch: None,
    }
}

/// A fragment function writing `float4` to `[[color(0)]]`.
fn fragment(name: &str, arguments: Vec<Argument>) -> FunctionReflection {
    let mut f = function(name, Stage::Fragment, arguments);
    f.color_outputs.push(color(0, "float4"));
    f
}

fn color(index: u32, data_type: &str) -> ColorOutput {
    ColorOutput {
        index,
        blend_src: None,
        data_type: data_type.into(),
    }
}

fn argument(name: &str, kind: ArgumentKind, index: u32, at: (u32, u32)) -> Argument {
    Argument {
        name: name.into(),
        kind,
        index,
        access: Access::Read,
        active: true,
        binding: Some(WgslBinding {
            group: at.0,
            binding: at.1,
        }),
        buffer: None,
        threadgroup: None,
        texture: None,
        sampler: None,
        members: Vec::new(),
    }
}

/// A `constant T&` / `const device T*` buffer of `size`-byte elements.
fn buffer(name: &str, index: u32, at: (u32, u32), size: u32, is_pointer: bool) -> Argument {
    Argument {
        buffer: Some(BufferInfo {
            alignment: 4,
            data_size: size,
            data_type: "float4".into(),
            is_pointer,
            struct_type: None,
            array_type: None,
            binding_type: msl2wgsl::reflect::BufferBindingType::ReadOnlyStorage,
            binding_size: None,
        }),
        ..argument(name, ArgumentKind::Buffer, index, at)
    }
}

/// A `texture2d<float>` sampled in the shader.
fn texture(name: &str, index: u32, at: (u32, u32)) -> Argument {
    Argument {
        texture: Some(TextureInfo {
            texture_type: "type2D".into(),
            data_type: "float".into(),
            view_dimension: "2d".into(),
            binding_kind: TextureBinding::Sampled,
            sample_type: "float".into(),
            multisampled: false,
            storage_format: None,
        }),
        ..argument(name, ArgumentKind::Texture, index, at)
    }
}

/// The centre of pixel (x, y) of a `w`×`h` target in normalised device
/// coordinates (y up).
fn ndc(x: u32, y: u32, w: u32, h: u32) -> (f32, f32) {
    let px = (x as f32 + 0.5) / w as f32 * 2.0 - 1.0;
    let py = 1.0 - (y as f32 + 0.5) / h as f32 * 2.0;
    (px, py)
}

/// An 8-bit unorm channel of `v`.
fn unorm8(v: f32) -> i32 {
    (v.clamp(0.0, 1.0) * 255.0).round() as i32
}

/// Checks every pixel of an rgba8 image for which `expected` gives a
/// colour (in [0, 1]), to one 8-bit step.
fn check_rgba8(image: &TextureData, expected: impl Fn(u32, u32) -> Option<[f32; 4]>) {
    assert_eq!(image.data.len(), (image.width * image.height * 4) as usize);
    let mut checked = 0;
    for y in 0..image.height {
        for x in 0..image.width {
            let Some(want) = expected(x, y) else { continue };
            let at = ((y * image.width + x) * 4) as usize;
            let got = &image.data[at..at + 4];
            for c in 0..4 {
                let diff = (i32::from(got[c]) - unorm8(want[c])).abs();
                assert!(
                    diff <= 1,
                    "pixel ({x}, {y}): got {got:?}, want {want:?} (channel {c})"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no pixel was checked");
}

/// A triangle covering the viewport, from `vertex_index` alone.
const FULL_SCREEN: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@vertex
fn full_screen(@builtin(vertex_index) i: u32) -> Out {
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u)) * 2.0 - 1.0;
    var out: Out;
    out.position = vec4<f32>(p, 0.0, 1.0);
    // Metal's texture coordinates: v grows downwards.
    out.uv = vec2<f32>(p.x * 0.5 + 0.5, 0.5 - p.y * 0.5);
    return out;
}
";

fn full_screen() -> FunctionReflection {
    function("full_screen", Stage::Vertex, Vec::new())
}

/// The uv [`FULL_SCREEN`] gives pixel (x, y).
fn uv(x: u32, y: u32, w: u32, h: u32) -> (f32, f32) {
    ((x as f32 + 0.5) / w as f32, (y as f32 + 0.5) / h as f32)
}

#[test]
fn full_screen_triangle_in_a_solid_colour() {
    let Some(gpu) = gpu() else { return };
    let wgsl = format!(
        "{FULL_SCREEN}
        @fragment
        fn solid() -> @location(0) vec4<f32> {{ return vec4<f32>(0.25, 0.5, 0.75, 1.0); }}"
    );
    let resources = RenderResources::new(13, 7, 3);
    let images = render(
        gpu,
        &wgsl,
        &full_screen(),
        &fragment("solid", vec![]),
        &resources,
    );
    let images = images.unwrap();
    assert_eq!(images.len(), 1);
    assert_eq!((images[0].width, images[0].height), (13, 7));
    assert_eq!(images[0].format, F::Rgba8Unorm);
    check_rgba8(&images[0], |_, _| Some([0.25, 0.5, 0.75, 1.0]));
}

/// `[[stage_in]]`: a `uchar2` normalised colour, then a `float2` position,
/// tightly packed (10 bytes a vertex, which the runner realigns).
const STAGE_IN: &str = "
struct In {
    @location(1) rg: vec2<f32>,
    @location(0) position: vec2<f32>,
}
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec3<f32>,
}

@vertex
fn vertex_main(v: In) -> Out {
    var out: Out;
    out.position = vec4<f32>(v.position, 0.0, 1.0);
    out.color = vec3<f32>(v.rg, 1.0 - v.rg.x - v.rg.y);
    return out;
}

@fragment
fn fragment_main(@location(0) color: vec3<f32>) -> @location(0) vec4<f32> {
    return vec4<f32>(color, 1.0);
}
";

fn stage_in_vertex() -> FunctionReflection {
    let mut v = function("vertex_main", Stage::Vertex, Vec::new());
    let attribute = |name: &str, index, format: &str, offset| VertexAttribute {
        name: name.into(),
        index,
        data_type: if index == 0 { "float2" } else { "uchar2" }.into(),
        format: format.into(),
        offset,
    };
    v.vertex_attributes = vec![
        attribute("rg", 1, "unorm8x2", 0),
        attribute("position", 0, "float32x2", 2),
    ];
    v.vertex_stride = 10;
    v
}

/// The triangle's corners in NDC, red, green and blue.
const CORNERS: [(f32, f32); 3] = [(-0.8, -0.8), (0.8, -0.7), (0.1, 0.9)];

fn stage_in_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    for (k, (x, y)) in CORNERS.iter().enumerate() {
        bytes.extend([if k == 0 { 255 } else { 0 }, if k == 1 { 255 } else { 0 }]);
        bytes.extend(f32_bytes(&[*x, *y]));
    }
    bytes
}

/// Barycentric coordinates of `p` in [`CORNERS`].
fn barycentric((px, py): (f32, f32)) -> [f32; 3] {
    let [(ax, ay), (bx, by), (cx, cy)] = CORNERS;
    let area = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
    let l1 = ((px - ax) * (cy - ay) - (py - ay) * (cx - ax)) / area;
    let l2 = ((bx - ax) * (py - ay) - (by - ay) * (px - ax)) / area;
    [1.0 - l1 - l2, l1, l2]
}

#[test]
fn stage_in_triangle_interpolates_vertex_colours() {
    let Some(gpu) = gpu() else { return };
    let (w, h) = (32, 24);
    let mut resources = RenderResources::new(w, h, 3);
    resources.vertex_buffers.insert(0, stage_in_bytes());
    let f = fragment("fragment_main", vec![]);
    let images = render(gpu, STAGE_IN, &stage_in_vertex(), &f, &resources).unwrap();
    // Pixels near an edge are left out: rasterisation rules decide them.
    let margin = 0.03;
    check_rgba8(&images[0], |x, y| {
        let b = barycentric(ndc(x, y, w, h));
        if b.iter().all(|&l| l > margin) {
            Some([b[0], b[1], b[2], 1.0])
        } else if b.iter().any(|&l| l < -margin) {
            Some([0.0; 4])
        } else {
            None
        }
    });
}

#[test]
fn stage_in_errors_come_before_drawing() {
    let Some(gpu) = gpu() else { return };
    let f = fragment("fragment_main", vec![]);
    let mut resources = RenderResources::new(4, 4, 3);
    let missing = render(gpu, STAGE_IN, &stage_in_vertex(), &f, &resources);
    assert!(
        matches!(missing, Err(RunError::InvalidRender(_))),
        "{missing:?}"
    );
    resources.vertex_buffers.insert(0, vec![0; 29]);
    let short = render(gpu, STAGE_IN, &stage_in_vertex(), &f, &resources).unwrap_err();
    assert!(short.to_string().contains("need 30"), "{short}");
    let mut wrong = stage_in_vertex();
    wrong.vertex_attributes[1].format = "uint32x2".into();
    resources.vertex_buffers.insert(0, stage_in_bytes());
    let kind = render(gpu, STAGE_IN, &wrong, &f, &resources);
    assert!(matches!(kind, Err(RunError::Shader(_))), "{kind:?}");
    let swapped = render(gpu, STAGE_IN, &f, &stage_in_vertex(), &resources);
    assert!(
        matches!(swapped, Err(RunError::WrongStage { .. })),
        "{swapped:?}"
    );
    resources.width = 0;
    let empty = render(gpu, STAGE_IN, &stage_in_vertex(), &f, &resources);
    assert!(
        matches!(empty, Err(RunError::InvalidRender(_))),
        "{empty:?}"
    );
}

const TWO_TARGETS: &str = "
struct Colors {
    @location(0) shade: vec4<f32>,
    @location(1) where_: vec4<u32>,
}

@fragment
fn two(@builtin(position) p: vec4<f32>, @location(0) uv: vec2<f32>) -> Colors {
    var out: Colors;
    out.shade = vec4<f32>(uv, 0.5, 1.0);
    out.where_ = vec4<u32>(u32(p.x), u32(p.y), 7u, 200u);
    return out;
}
";

fn two_targets() -> FunctionReflection {
    let mut f = function("two", Stage::Fragment, Vec::new());
    f.color_outputs = vec![color(0, "float4"), color(1, "uint4")];
    f
}

#[test]
fn two_colour_attachments() {
    let Some(gpu) = gpu() else { return };
    let wgsl = format!("{FULL_SCREEN}{TWO_TARGETS}");
    let (w, h) = (9, 5);
    let mut resources = RenderResources::new(w, h, 3);
    resources.targets.push(RenderTarget {
        format: F::Rgba8Uint,
        clear: [1.0, 2.0, 3.0, 4.0],
    });
    let images = render(gpu, &wgsl, &full_screen(), &two_targets(), &resources).unwrap();
    check_rgba8(&images[0], |x, y| {
        let (u, v) = uv(x, y, w, h);
        Some([u, v, 0.5, 1.0])
    });
    assert_eq!(images[1].format, F::Rgba8Uint);
    for y in 0..h {
        for x in 0..w {
            let at = ((y * w + x) * 4) as usize;
            assert_eq!(&images[1].data[at..at + 4], &[x as u8, y as u8, 7, 200]);
        }
    }
}

#[test]
fn colour_targets_must_fit_the_outputs() {
    let Some(gpu) = gpu() else { return };
    let wgsl = format!("{FULL_SCREEN}{TWO_TARGETS}");
    let mut resources = RenderResources::new(4, 4, 3);
    let one = render(gpu, &wgsl, &full_screen(), &two_targets(), &resources).unwrap_err();
    assert!(one.to_string().contains("[[color(1)]]"), "{one}");
    resources.targets.push(RenderTarget::default());
    let kind = render(gpu, &wgsl, &full_screen(), &two_targets(), &resources).unwrap_err();
    assert!(kind.to_string().contains("unsigned integer"), "{kind}");
    resources.targets[1].format = F::Depth32Float;
    let depth = render(gpu, &wgsl, &full_screen(), &two_targets(), &resources);
    assert!(
        matches!(depth, Err(RunError::InvalidRender(_))),
        "{depth:?}"
    );
    // The reflection must list what the WGSL writes.
    resources.targets[1].format = F::Rgba8Uint;
    let mut fewer = two_targets();
    fewer.color_outputs.pop();
    let disagree = render(gpu, &wgsl, &full_screen(), &fewer, &resources);
    assert!(matches!(disagree, Err(RunError::Shader(_))), "{disagree:?}");
}

#[test]
fn a_target_without_an_output_keeps_its_clear_colour() {
    let Some(gpu) = gpu() else { return };
    let wgsl = format!(
        "{FULL_SCREEN}
        @fragment
        fn solid() -> @location(0) vec4<f32> {{ return vec4<f32>(1.0, 0.0, 0.0, 1.0); }}"
    );
    let mut resources = RenderResources::new(3, 3, 3);
    resources.targets.push(RenderTarget {
        format: F::Rgba8Unorm,
        clear: [0.0, 0.2, 0.4, 0.6],
    });
    let f = fragment("solid", vec![]);
    let images = render(gpu, &wgsl, &full_screen(), &f, &resources).unwrap();
    check_rgba8(&images[0], |_, _| Some([1.0, 0.0, 0.0, 1.0]));
    check_rgba8(&images[1], |_, _| Some([0.0, 0.2, 0.4, 0.6]));
    // A fragment function with no colour output at all (depth or side
    // effects only) leaves every target cleared.
    let wgsl = format!("{FULL_SCREEN}\n@fragment fn nothing() {{}}");
    let f = function("nothing", Stage::Fragment, Vec::new());
    let images = render(gpu, &wgsl, &full_screen(), &f, &resources).unwrap();
    check_rgba8(&images[0], |_, _| Some([0.0; 4]));
}

#[test]
fn a_depth_output_is_dropped_and_half_outputs_refused() {
    let Some(gpu) = gpu() else { return };
    let wgsl = format!(
        "{FULL_SCREEN}
        struct Deep {{ @location(0) color: vec4<f32>, @builtin(frag_depth) depth: f32 }}
        @fragment
        fn deep() -> Deep {{ return Deep(vec4<f32>(0.0, 1.0, 0.0, 1.0), 0.25); }}"
    );
    let resources = RenderResources::new(5, 3, 3);
    let f = fragment("deep", vec![]);
    let images = render(gpu, &wgsl, &full_screen(), &f, &resources).unwrap();
    check_rgba8(&images[0], |_, _| Some([0.0, 1.0, 0.0, 1.0]));
    // WebGPU colour targets take 32-bit values only.
    let wgsl = format!(
        "enable f16;
        {FULL_SCREEN}
        @fragment
        fn half_out() -> @location(0) vec4<f16> {{ return vec4<f16>(1.0h); }}"
    );
    let f = fragment("half_out", vec![]);
    let half = render(gpu, &wgsl, &full_screen(), &f, &resources);
    assert!(matches!(half, Err(RunError::Shader(_))), "{half:?}");
}

/// Vertices read from a storage buffer in group 0 by `vertex_index`, a
/// tint from a uniform buffer in group 1: both at binding 0.
const BUFFERS: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@group(0) @binding(0) var<storage, read> corners: array<vec2<f32>>;
@group(1) @binding(0) var<uniform> tint: vec4<f32>;

@vertex
fn from_buffer(@builtin(vertex_index) i: u32) -> Out {
    let p = corners[i];
    var out: Out;
    out.position = vec4<f32>(p, 0.0, 1.0);
    out.uv = vec2<f32>(p.x * 0.5 + 0.5, 0.5 - p.y * 0.5);
    return out;
}

@fragment
fn tinted(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
    return vec4<f32>(uv, 1.0, 1.0) * tint;
}
";

fn buffer_functions() -> (FunctionReflection, FunctionReflection) {
    let v = function(
        "from_buffer",
        Stage::Vertex,
        vec![buffer("corners", 0, (0, 0), 8, true)],
    );
    let f = fragment("tinted", vec![buffer("tint", 0, (1, 0), 16, false)]);
    (v, f)
}

#[test]
fn vertex_storage_buffer_and_fragment_uniform() {
    let Some(gpu) = gpu() else { return };
    let (v, f) = buffer_functions();
    let (w, h) = (16, 10);
    let mut resources = RenderResources::new(w, h, 3);
    let corners = [-1.0, -1.0, 3.0, -1.0, -1.0, 3.0];
    resources.vertex_buffers.insert(0, f32_bytes(&corners));
    let tint = [0.5, 1.0, 0.25, 0.8];
    resources.fragment_buffers.insert(0, f32_bytes(&tint));
    let images = render(gpu, BUFFERS, &v, &f, &resources).unwrap();
    check_rgba8(&images[0], |x, y| {
        let (u, v) = uv(x, y, w, h);
        Some([u * tint[0], v * tint[1], tint[2], tint[3]])
    });
}

#[test]
fn missing_and_short_stage_buffers_are_errors() {
    let Some(gpu) = gpu() else { return };
    let (v, f) = buffer_functions();
    let mut resources = RenderResources::new(4, 4, 3);
    resources.vertex_buffers.insert(0, vec![0; 24]);
    let missing = render(gpu, BUFFERS, &v, &f, &resources);
    assert!(
        matches!(missing, Err(RunError::MissingBuffer { index: 0, .. })),
        "{missing:?}"
    );
    // Fragment buffers are not vertex buffers, nor the other way round.
    resources.vertex_buffers.insert(1, vec![0; 16]);
    assert!(render(gpu, BUFFERS, &v, &f, &resources).is_err());
    resources.fragment_buffers.insert(0, vec![0; 12]);
    let short = render(gpu, BUFFERS, &v, &f, &resources);
    assert!(
        matches!(short, Err(RunError::BufferTooSmall { needed: 16, .. })),
        "{short:?}"
    );
}

/// A 4x4 rgba8unorm texture, a different colour per texel.
fn checker() -> TextureData {
    let mut bytes = Vec::new();
    for y in 0..4u8 {
        for x in 0..4u8 {
            bytes.extend([x * 80, y * 80, 255 - x * 40 - y * 20, 255 - (x ^ y) * 30]);
        }
    }
    TextureData::new_2d(F::Rgba8Unorm, 4, 4, bytes)
}

fn texel(t: &TextureData, x: u32, y: u32) -> [f32; 4] {
    let at = ((y * t.width + x) * 4) as usize;
    std::array::from_fn(|c| f32::from(t.data[at + c]) / 255.0)
}

/// A quad of two triangles from `vertex_index`, textured in the fragment
/// function through a `constexpr sampler` in group 0.
const TEXTURED_QUAD: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@group(0) @binding(193) var nearest: sampler;
@group(1) @binding(64) var image: texture_2d<f32>;

@vertex
fn quad(@builtin(vertex_index) i: u32) -> Out {
    let corners = array(vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
                        vec2(0.0, 1.0), vec2(1.0, 0.0), vec2(1.0, 1.0));
    let c = corners[i];
    var out: Out;
    out.position = vec4<f32>(c.x * 2.0 - 1.0, 1.0 - c.y * 2.0, 0.0, 1.0);
    out.uv = c;
    return out;
}

@fragment
fn textured(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
    return textureSample(image, nearest, uv);
}
";

fn constexpr_nearest(at: (u32, u32)) -> ConstexprSampler {
    ConstexprSampler {
        name: "nearest".into(),
        binding: WgslBinding {
            group: at.0,
            binding: at.1,
        },
        descriptor: default_sampler(),
    }
}

#[test]
fn textured_quad_with_a_constexpr_sampler() {
    let Some(gpu) = gpu() else { return };
    let v = function("quad", Stage::Vertex, Vec::new());
    let mut f = fragment("textured", vec![texture("image", 0, (1, 64))]);
    f.constexpr_samplers.push(constexpr_nearest((0, 193)));
    let mut resources = RenderResources::new(8, 8, 6);
    let image = checker();
    resources.textures.insert(0, image.clone());
    let images = render(gpu, TEXTURED_QUAD, &v, &f, &resources).unwrap();
    // Each texel covers 2x2 pixels, whose centres sample it exactly.
    check_rgba8(&images[0], |x, y| Some(texel(&image, x / 2, y / 2)));
    resources.textures.clear();
    let missing = render(gpu, TEXTURED_QUAD, &v, &f, &resources);
    assert!(
        matches!(missing, Err(RunError::MissingTexture { index: 0, .. })),
        "{missing:?}"
    );
}

/// Both stages sample `[[texture(0)]]` through the same `constexpr
/// sampler`: one binding, visible to both stages.
const SHARED_SAMPLER: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) @interpolate(flat) corner: vec4<f32>,
    @location(1) uv: vec2<f32>,
}

@group(0) @binding(193) var nearest: sampler;
@group(0) @binding(64) var vertex_image: texture_2d<f32>;
@group(1) @binding(64) var fragment_image: texture_2d<f32>;

@vertex
fn shared_vertex(@builtin(vertex_index) i: u32) -> Out {
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u)) * 2.0 - 1.0;
    var out: Out;
    out.position = vec4<f32>(p, 0.0, 1.0);
    out.corner = textureSampleLevel(vertex_image, nearest, vec2(0.9, 0.1), 0.0);
    out.uv = vec2<f32>(p.x * 0.5 + 0.5, 0.5 - p.y * 0.5);
    return out;
}

@fragment
fn shared_fragment(v: Out) -> @location(0) vec4<f32> {
    return (v.corner + textureSample(fragment_image, nearest, v.uv)) * 0.5;
}
";

#[test]
fn a_constexpr_sampler_shared_by_both_stages() {
    let Some(gpu) = gpu() else { return };
    let mut v = function(
        "shared_vertex",
        Stage::Vertex,
        vec![texture("vertex_image", 0, (0, 64))],
    );
    v.constexpr_samplers.push(constexpr_nearest((0, 193)));
    let mut f = fragment(
        "shared_fragment",
        vec![texture("fragment_image", 0, (1, 64))],
    );
    f.constexpr_samplers.push(constexpr_nearest((0, 193)));
    let mut resources = RenderResources::new(8, 8, 3);
    let image = checker();
    resources.textures.insert(0, image.clone());
    let images = render(gpu, SHARED_SAMPLER, &v, &f, &resources).unwrap();
    let corner = texel(&image, 3, 0);
    check_rgba8(&images[0], |x, y| {
        let t = texel(&image, x / 2, y / 2);
        Some(std::array::from_fn(|c| (corner[c] + t[c]) * 0.5))
    });
    // Two different samplers at one binding cannot both be bound.
    f.constexpr_samplers[0].descriptor.mag_filter = "linear".into();
    let clash = render(gpu, SHARED_SAMPLER, &v, &f, &resources);
    assert!(matches!(clash, Err(RunError::Shader(_))), "{clash:?}");
}

/// Instances side by side, each in a flat colour chosen by its instance.
const INSTANCED: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) @interpolate(flat) color: vec4<f32>,
}

@vertex
fn strips(@builtin(vertex_index) i: u32, @builtin(instance_index) k: u32) -> Out {
    let corners = array(vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
                        vec2(0.0, 1.0), vec2(1.0, 0.0), vec2(1.0, 1.0));
    let c = corners[i];
    var out: Out;
    out.position = vec4<f32>((c.x + f32(k)) * 0.5 - 1.0, c.y * 2.0 - 1.0, 0.0, 1.0);
    out.color = vec4<f32>(f32(k) * 0.25, 1.0 - f32(k) * 0.25, 0.5, 1.0);
    return out;
}

@fragment
fn flat_color(@location(0) @interpolate(flat) color: vec4<f32>) -> @location(0) vec4<f32> {
    return color;
}
";

#[test]
fn instances_with_flat_colours() {
    let Some(gpu) = gpu() else { return };
    let v = function("strips", Stage::Vertex, Vec::new());
    let f = fragment("flat_color", vec![]);
    let mut resources = RenderResources::new(16, 4, 6);
    resources.instance_count = 3;
    resources.targets[0].clear = [0.0, 0.0, 0.0, 1.0];
    let images = render(gpu, INSTANCED, &v, &f, &resources).unwrap();
    // Instance k covers x in [4k, 4k + 4); the last quarter stays clear.
    check_rgba8(&images[0], |x, _| {
        let k = (x / 4) as f32;
        Some(if x < 12 {
            [k * 0.25, 1.0 - k * 0.25, 0.5, 1.0]
        } else {
            [0.0, 0.0, 0.0, 1.0]
        })
    });
}

const DUAL_SOURCE: &str = "
enable dual_source_blending;

struct Blend {
    @location(0) @blend_src(0) color: vec4<f32>,
    @location(0) @blend_src(1) coverage: vec4<f32>,
}

@fragment
fn dual() -> Blend {
    return Blend(vec4<f32>(1.0, 1.0, 1.0, 1.0), vec4<f32>(0.25, 0.5, 1.0, 0.5));
}
";

#[test]
fn dual_source_output_blends_by_the_second_source() {
    if common::skip(common::Limit::DualSourceBlending) {
        return;
    }
    let Some(gpu) = gpu() else { return };
    let wgsl = format!("{DUAL_SOURCE}{FULL_SCREEN}");
    let mut f = function("dual", Stage::Fragment, Vec::new());
    f.color_outputs = vec![
        ColorOutput {
            blend_src: Some(0),
            ..color(0, "float4")
        },
        ColorOutput {
            blend_src: Some(1),
            ..color(0, "float4")
        },
    ];
    let mut resources = RenderResources::new(4, 4, 3);
    resources.targets[0].clear = [0.0, 0.0, 1.0, 1.0];
    let result = render(gpu, &wgsl, &full_screen(), &f, &resources);
    if !has_dual_source(gpu) {
        assert!(
            matches!(result, Err(RunError::MissingFeature { .. })),
            "{result:?}"
        );
        eprintln!("note: no dual-source blending on this device; checked the error only");
        return;
    }
    // src0 × src1 + dst × (1 − src1), per channel; alpha by src1's alpha.
    check_rgba8(&result.unwrap()[0], |_, _| Some([0.25, 0.5, 1.0, 1.0]));
}

fn has_dual_source(gpu: &Gpu) -> bool {
    gpu.features()
        .contains(wgpu::Features::DUAL_SOURCE_BLENDING)
}

/// A `[[flat]]` varying from a `[[stage_in]]` (the first vertex provokes
/// it, as in Metal), tinted by a `constant` buffer of the fragment.
const FLAT_MSL: &str = "#include <metal_stdlib>
using namespace metal;

struct VIn {
    float2 position [[attribute(0)]];
    float4 color [[attribute(1)]];
};

struct V2F {
    float4 position [[position]];
    float4 color [[flat]];
};

vertex V2F flat_vertex(VIn in [[stage_in]]) {
    V2F out;
    out.position = float4(in.position, 0.0, 1.0);
    out.color = in.color;
    return out;
}

fragment float4 flat_fragment(V2F in [[stage_in]], constant float4& tint [[buffer(0)]]) {
    return in.color * tint;
}
";

#[test]
fn library_functions_by_name() {
    use msl2wgsl::runner::render_library;
    use msl2wgsl::{Library, Options, Target};
    if common::skip(common::Limit::FlatFirstVertex) {
        return;
    }
    let Some(gpu) = gpu() else { return };
    let options = Options {
        target: Target::Wgpu,
        ..Default::default()
    };
    let library = Library::from_source("flat.metal", FLAT_MSL, &options).unwrap();
    let mut resources = RenderResources::new(6, 4, 3);
    let corners = [
        [-1.0, -1.0, 0.2, 0.4, 0.6, 1.0],
        [3.0, -1.0, 1.0, 0.0, 0.0, 1.0],
        [-1.0, 3.0, 0.0, 1.0, 0.0, 1.0],
    ];
    resources
        .vertex_buffers
        .insert(0, f32_bytes(&corners.concat()));
    let tint = [1.0, 0.5, 1.0, 0.5];
    resources.fragment_buffers.insert(0, f32_bytes(&tint));
    let draw = |v: &str, f: &str| render_library(gpu, &library, v, f, &resources);
    let images = draw("flat_vertex", "flat_fragment").unwrap();
    check_rgba8(&images[0], |_, _| Some([0.2, 0.2, 0.6, 0.5]));
    let unknown = draw("flat_vertex", "nope");
    assert!(
        matches!(unknown, Err(RunError::UnknownEntry(_))),
        "{unknown:?}"
    );
    let swapped = draw("flat_fragment", "flat_fragment");
    assert!(
        matches!(swapped, Err(RunError::WrongStage { .. })),
        "{swapped:?}"
    );
}
