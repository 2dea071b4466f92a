//! GPU tests of textures and samplers in the runner, with hand-written WGSL
//! and reflections (the translator is not involved). Sampling results are
//! checked against a CPU model of WebGPU's sampling rules.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s, gpu, u32s};
use msl2wgsl::reflect::{
    Access, Argument, ArgumentKind, BufferInfo, ConstexprSampler, FunctionReflection,
    SamplerDescriptor, SamplerInfo, Stage, TextureBinding, TextureInfo, WgslBinding,
};
use msl2wgsl::runner::{
    default_sampler, run_compute_resources, Dispatch, Gpu, Outputs, Resources, RunError,
    TextureData,
};
use wgpu::TextureFormat as F;

fn at(binding: u32) -> Option<WgslBinding> {
    Some(WgslBinding { group: 0, binding })
}

fn argument(name: &str, kind: ArgumentKind, index: u32, binding: u32) -> Argument {
    Argument {
        name: name.into(),
        kind,
        index,
        access: Access::Read,
        active: true,
        binding: at(binding),
        buffer: None,
        threadgroup: None,
        texture: None,
        sampler: None,
        members: Vec::new(),
    }
}

/// `[[buffer(index)]]` at `@binding(index)`, a `float*`.
fn buffer(name: &str, index: u32, access: Access) -> Argument {
    Argument {
        access,
        buffer: Some(BufferInfo {
            alignment: 4,
            data_size: 4,
            data_type: "float".into(),
            is_pointer: true,
            struct_type: None,
            array_type: None,
            binding_type: msl2wgsl::reflect::BufferBindingType::ReadOnlyStorage,
            binding_size: None,
        }),
        ..argument(name, ArgumentKind::Buffer, index, index)
    }
}

/// `[[texture(index)]]` at `@binding(64 + index)`.
fn texture(name: &str, index: u32, access: Access, info: TextureInfo) -> Argument {
    Argument {
        access,
        texture: Some(info),
        ..argument(name, ArgumentKind::Texture, index, 64 + index)
    }
}

/// `[[sampler(index)]]` at `@binding(128 + index)`.
fn sampler(name: &str, index: u32, comparison: bool) -> Argument {
    Argument {
        sampler: Some(SamplerInfo { comparison }),
        ..argument(name, ArgumentKind::Sampler, index, 128 + index)
    }
}

fn info(view: &str, kind: TextureBinding, sample_type: &str, format: Option<&str>) -> TextureInfo {
    TextureInfo {
        texture_type: "type2D".into(),
        data_type: if sample_type == "uint" {
            "uint"
        } else {
            "float"
        }
        .into(),
        view_dimension: view.into(),
        binding_kind: kind,
        sample_type: sample_type.into(),
        multisampled: false,
        storage_format: format.map(str::to_string),
    }
}

fn sampled(view: &str, sample_type: &str) -> TextureInfo {
    info(view, TextureBinding::Sampled, sample_type, None)
}

fn storage(format: &str) -> TextureInfo {
    info("2d", TextureBinding::Storage, "float", Some(format))
}

fn kernel(size: [u32; 3], arguments: Vec<Argument>) -> FunctionReflection {
    FunctionReflection {
        name: "k".into(),
        wgsl_entry_point: "k".into(),
        stage: Stage::Kernel,
        workgroup_size: Some(size),
        arguments,
        builtins: Vec::new(),
        dispatch_binding: at(192),
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

fn run(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    groups: u32,
    resources: &Resources,
) -> Result<Outputs, RunError> {
    let threadgroup = function.workgroup_size.unwrap();
    let dispatch = Dispatch::Threadgroups {
        groups: [groups, 1, 1],
        threadgroup,
    };
    run_compute_resources(gpu, wgsl, function, &dispatch, resources)
}

fn with_buffers(buffers: &[(u32, Vec<u8>)]) -> Resources {
    Resources {
        buffers: buffers.iter().cloned().collect(),
        ..Default::default()
    }
}

/// Loads every texel of every level and layer, in `TextureData`'s order.
/// (Levels are `i32` here, as the translator emits them: wgpu's GL backend
/// cannot compile a `u32` one, TESTING.md "Backends", known defect 2.)
const LOAD_2D: &str = "
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(64) var tex: texture_2d<f32>;
@compute @workgroup_size(1)
fn k() {
    var i = 0u;
    for (var m = 0u; m < textureNumLevels(tex); m++) {
        let size = textureDimensions(tex, m);
        for (var y = 0u; y < size.y; y++) {
            for (var x = 0u; x < size.x; x++) {
                out[i] = textureLoad(tex, vec2(x, y), i32(m)).x;
                i++;
            }
        }
    }
}";

#[test]
fn load_2d_with_mips() {
    let Some(gpu) = gpu() else { return };
    // 5x3, 2x1, 1x1: odd sizes, so rows are not 256-byte aligned.
    let values: Vec<f32> = (0..15 + 2 + 1).map(|i| i as f32 * 1.5 - 3.0).collect();
    let data = TextureData::new_2d_mips(F::R32Float, 5, 3, 3, f32_bytes(&values));
    let mut resources = with_buffers(&[(0, vec![0; values.len() * 4])]);
    resources.textures.insert(0, data);
    let function = kernel(
        [1, 1, 1],
        vec![
            buffer("out", 0, Access::ReadWrite),
            texture("tex", 0, Access::Read, sampled("2d", "float")),
        ],
    );
    let out = run(gpu, LOAD_2D, &function, 1, &resources).unwrap();
    assert_eq!(f32s(&out.buffers[&0]), values);
    // Sampled textures are inputs only.
    assert!(out.textures.is_empty());
}

#[test]
fn load_2d_array_of_uints() {
    let Some(gpu) = gpu() else { return };
    let wgsl = "
        @group(0) @binding(0) var<storage, read_write> out: array<vec4<u32>>;
        @group(0) @binding(66) var tex: texture_2d_array<u32>;
        @compute @workgroup_size(1)
        fn k() {
            var i = 0u;
            for (var m = 0u; m < textureNumLevels(tex); m++) {
                let size = textureDimensions(tex, m);
                for (var l = 0u; l < textureNumLayers(tex); l++) {
                    for (var y = 0u; y < size.y; y++) {
                        for (var x = 0u; x < size.x; x++) {
                            out[i] = textureLoad(tex, vec2(x, y), l, i32(m));
                            i++;
                        }
                    }
                }
            }
        }";
    // 3x2 with 3 layers and 2 levels (level 1 is 1x1).
    let bytes: Vec<u8> = (0..(6 + 1) * 3 * 4).map(|i| (i * 7 % 251) as u8).collect();
    let data = TextureData::new_2d_array(F::Rgba8Uint, [3, 2, 3], 2, bytes.clone());
    let mut resources = with_buffers(&[(0, vec![0; bytes.len() * 4])]);
    resources.textures.insert(2, data);
    let function = kernel(
        [1, 1, 1],
        vec![
            buffer("out", 0, Access::ReadWrite),
            texture("tex", 2, Access::Read, sampled("2d-array", "uint")),
        ],
    );
    let out = run(gpu, wgsl, &function, 1, &resources).unwrap();
    let want: Vec<u32> = bytes.iter().map(|&b| u32::from(b)).collect();
    assert_eq!(u32s(&out.buffers[&0]), want);
}

#[test]
fn load_3d_and_sample_cube() {
    let Some(gpu) = gpu() else { return };
    let wgsl = "
        @group(0) @binding(0) var<storage, read_write> out: array<f32>;
        @group(0) @binding(64) var vol: texture_3d<f32>;
        @group(0) @binding(65) var cube: texture_cube<f32>;
        @group(0) @binding(128) var s: sampler;
        @compute @workgroup_size(1)
        fn k() {
            var i = 0u;
            for (var m = 0u; m < textureNumLevels(vol); m++) {
                let size = textureDimensions(vol, m);
                for (var z = 0u; z < size.z; z++) {
                    for (var y = 0u; y < size.y; y++) {
                        for (var x = 0u; x < size.x; x++) {
                            out[i] = textureLoad(vol, vec3(x, y, z), i32(m)).x;
                            i++;
                        }
                    }
                }
            }
            let dirs = array(vec3(1.0, 0.1, 0.2), vec3(-1.0, 0.2, 0.1), vec3(0.1, 1.0, 0.2),
                             vec3(0.2, -1.0, 0.1), vec3(0.1, 0.2, 1.0), vec3(0.2, 0.1, -1.0));
            for (var f = 0u; f < 6u; f++) {
                out[i + f] = textureSampleLevel(cube, s, dirs[f], 0.0).x;
            }
        }";
    // 4x2x4 and its level 1, 2x1x2.
    let values: Vec<f32> = (0..32 + 4).map(|i| i as f32).collect();
    let vol = TextureData::new_3d(F::R32Float, [4, 2, 4], 2, f32_bytes(&values));
    // One texel per face, +X -X +Y -Y +Z -Z.
    let faces = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0];
    let cube = TextureData::new_2d_array(F::R32Float, [1, 1, 6], 1, f32_bytes(&faces));
    let mut resources = with_buffers(&[(0, vec![0; (values.len() + 6) * 4])]);
    resources.textures.insert(0, vol);
    resources.textures.insert(1, cube);
    let mut vol_info = sampled("3d", "float");
    vol_info.texture_type = "type3D".into();
    let function = kernel(
        [1, 1, 1],
        vec![
            buffer("out", 0, Access::ReadWrite),
            texture("vol", 0, Access::Read, vol_info),
            texture("cube", 1, Access::Read, sampled("cube", "float")),
            // No descriptor given: the default sampler (nearest suits r32float).
            sampler("s", 0, false),
        ],
    );
    let out = run(gpu, wgsl, &function, 1, &resources).unwrap();
    let got = f32s(&out.buffers[&0]);
    assert_eq!(got[..values.len()], values[..]);
    assert_eq!(got[values.len()..], faces[..]);
}

#[test]
fn store_to_storage_textures_and_read_back() {
    let Some(gpu) = gpu() else { return };
    let wgsl = "
        @group(0) @binding(64) var a: texture_storage_2d<r32float, write>;
        @group(0) @binding(65) var b: texture_storage_2d<rgba16float, write>;
        @group(0) @binding(66) var c: texture_storage_2d<r32float, read_write>;
        @compute @workgroup_size(8, 4)
        fn k(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(a)) { return; }
            textureStore(a, g.xy, vec4(f32(g.x) + f32(g.y) * 0.5));
            textureStore(b, g.xy, vec4(f32(g.x) * 0.25, f32(g.y), -1.0, 0.5));
            textureStore(c, g.xy, textureLoad(c, g.xy) * 2.0);
        }";
    let (w, h) = (5, 3);
    let c_values: Vec<f32> = (0..w * h).map(|i| i as f32 + 0.25).collect();
    let mut resources = Resources::default();
    resources
        .textures
        .insert(0, TextureData::empty(w, h, F::R32Float));
    resources
        .textures
        .insert(1, TextureData::empty(w, h, F::Rgba16Float));
    let c = TextureData::new_2d(F::R32Float, w, h, f32_bytes(&c_values));
    resources.textures.insert(2, c);
    let function = kernel(
        [8, 4, 1],
        vec![
            texture("a", 0, Access::Write, storage("r32float")),
            texture("b", 1, Access::Write, storage("rgba16float")),
            texture("c", 2, Access::ReadWrite, storage("r32float")),
        ],
    );
    let out = run(gpu, wgsl, &function, 1, &resources).unwrap();
    let a = &out.textures[&0];
    assert_eq!(
        (a.width, a.height, a.layers, a.format),
        (w, h, 1, F::R32Float)
    );
    let want_a: Vec<f32> = (0..w * h)
        .map(|i| (i % w) as f32 + (i / w) as f32 * 0.5)
        .collect();
    assert_eq!(f32s(&a.data), want_a);
    let b: Vec<f32> = out.textures[&1]
        .data
        .chunks_exact(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    let want_b: Vec<f32> = (0..w * h)
        .flat_map(|i| [(i % w) as f32 * 0.25, (i / w) as f32, -1.0, 0.5])
        .collect();
    assert_eq!(b, want_b);
    let want_c: Vec<f32> = c_values.iter().map(|v| v * 2.0).collect();
    assert_eq!(f32s(&out.textures[&2].data), want_c);
}

/// How a coordinate outside [0, 1) finds a texel, per WebGPU (Vulkan) rules.
#[derive(Clone, Copy, Debug)]
enum Wrap {
    Edge,
    Repeat,
    Mirror,
    /// Outside: the border colour's red component.
    Border(f32),
}

impl Wrap {
    fn name(self) -> &'static str {
        match self {
            Wrap::Edge => "clamp-to-edge",
            Wrap::Repeat => "repeat",
            Wrap::Mirror => "mirror-repeat",
            Wrap::Border(_) => "clamp-to-border",
        }
    }

    /// The texel index `i` reads in a texture `n` wide, or `None` for the border.
    fn apply(self, i: i64, n: i64) -> Option<i64> {
        match self {
            Wrap::Edge => Some(i.clamp(0, n - 1)),
            Wrap::Repeat => Some(i.rem_euclid(n)),
            Wrap::Mirror => {
                let m = i.rem_euclid(2 * n);
                Some(if m < n { m } else { 2 * n - 1 - m })
            }
            Wrap::Border(_) => (0..n).contains(&i).then_some(i),
        }
    }
}

/// A square single-channel image and the CPU model of sampling it at LOD 0.
struct Image {
    size: i64,
    texels: Vec<f32>,
}

impl Image {
    fn texel(&self, x: i64, y: i64, wrap: [Wrap; 2]) -> f32 {
        match (wrap[0].apply(x, self.size), wrap[1].apply(y, self.size)) {
            (Some(x), Some(y)) => self.texels[(y * self.size + x) as usize],
            _ => match wrap {
                [Wrap::Border(b), _] | [_, Wrap::Border(b)] => b,
                _ => unreachable!("only the border mode leaves the texture"),
            },
        }
    }

    fn sample(&self, uv: [f32; 2], linear: bool, wrap: [Wrap; 2]) -> f32 {
        let n = self.size as f64;
        let [u, v] = uv.map(f64::from);
        if !linear {
            let (x, y) = ((u * n).floor() as i64, (v * n).floor() as i64);
            return self.texel(x, y, wrap);
        }
        let (x, y) = (u * n - 0.5, v * n - 0.5);
        let (x0, y0) = (x.floor() as i64, y.floor() as i64);
        let (fx, fy) = ((x - x.floor()) as f32, (y - y.floor()) as f32);
        let t = |dx, dy| self.texel(x0 + dx, y0 + dy, wrap);
        let top = t(0, 0) * (1.0 - fx) + t(1, 0) * fx;
        let bottom = t(0, 1) * (1.0 - fx) + t(1, 1) * fx;
        top * (1.0 - fy) + bottom * fy
    }
}

/// A 4x4 r16float texture, (y * 4 + x + 1) / 16: exact in f16, and
/// different along u and v.
fn sampling_image() -> (Image, TextureData) {
    let texels: Vec<f32> = (0..16).map(|i| (i + 1) as f32 / 16.0).collect();
    let bytes = texels
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
        .collect();
    let data = TextureData::new_2d(F::R16Float, 4, 4, bytes);
    (Image { size: 4, texels }, data)
}

/// Coordinates inside, on and outside the edges. For nearest filtering
/// none lands on a texel boundary (where rounding could go either way)
/// except the edges 0 and 1 themselves; for linear filtering they sit at
/// quarter texels, where the GPU's fixed-point weights are exact.
fn coordinates(linear: bool) -> Vec<f32> {
    if linear {
        [-22, -9, -2, 0, 3, 7, 10, 13, 14, 17, 25]
            .iter()
            .map(|k| *k as f32 / 16.0 + 0.125)
            .collect()
    } else {
        vec![-1.3, -0.6, -0.2, 0.0, 0.1, 0.45, 0.8, 1.0, 1.15, 1.7, 2.4]
    }
}

const SAMPLE: &str = "
@group(0) @binding(0) var<storage, read> coords: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(64) var tex: texture_2d<f32>;
@group(0) @binding(SAMPLER) var smp: sampler;
@compute @workgroup_size(64)
fn k(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x >= arrayLength(&coords) { return; }
    out[g.x] = textureSampleLevel(tex, smp, coords[g.x], 0.0).x;
}";

fn descriptor(wrap: [Wrap; 2], linear: bool, border: Option<&str>) -> SamplerDescriptor {
    let filter = if linear { "linear" } else { "nearest" };
    SamplerDescriptor {
        address_mode_u: wrap[0].name().into(),
        address_mode_v: wrap[1].name().into(),
        mag_filter: filter.into(),
        min_filter: filter.into(),
        border_color: border.map(str::to_string),
        ..default_sampler()
    }
}

/// Samples the image at every pair of coordinates with `function` (whose
/// sampler is a `[[sampler(0)]]` given `desc` or a constexpr sampler) and
/// compares with the CPU model.
fn check_sampling(
    gpu: &Gpu,
    function: &FunctionReflection,
    sampler_binding: u32,
    desc: Option<SamplerDescriptor>,
    expect: (bool, [Wrap; 2]),
) -> Result<(), RunError> {
    let (image, data) = sampling_image();
    let (linear, wrap) = expect;
    let axis = coordinates(linear);
    let uv: Vec<[f32; 2]> = axis
        .iter()
        .flat_map(|&u| axis.iter().map(move |&v| [u, v]))
        .collect();
    let flat: Vec<f32> = uv.iter().flatten().copied().collect();
    let mut resources = with_buffers(&[(0, f32_bytes(&flat)), (1, vec![0; uv.len() * 4])]);
    resources.textures.insert(0, data);
    resources.samplers.extend(desc.map(|d| (0, d)));
    let wgsl = SAMPLE.replace("SAMPLER", &sampler_binding.to_string());
    let groups = uv.len().div_ceil(64) as u32;
    let out = run(gpu, &wgsl, function, groups, &resources)?;
    for (got, uv) in f32s(&out.buffers[&1]).iter().zip(&uv) {
        let want = image.sample(*uv, linear, wrap);
        assert!(
            (got - want).abs() < 2e-3,
            "{wrap:?} linear={linear} at {uv:?}: got {got}, want {want}"
        );
    }
    Ok(())
}

fn sampling_function(samplers: Vec<Argument>) -> FunctionReflection {
    let mut arguments = vec![
        buffer("coords", 0, Access::Read),
        buffer("out", 1, Access::ReadWrite),
        texture("tex", 0, Access::Read, sampled("2d", "float")),
    ];
    arguments.extend(samplers);
    kernel([64, 1, 1], arguments)
}

#[test]
fn sample_level_in_every_address_mode() {
    let Some(gpu) = gpu() else { return };
    let function = sampling_function(vec![sampler("smp", 0, false)]);
    let modes = [
        [Wrap::Edge, Wrap::Edge],
        [Wrap::Repeat, Wrap::Repeat],
        [Wrap::Mirror, Wrap::Mirror],
        [Wrap::Repeat, Wrap::Mirror],
        [Wrap::Mirror, Wrap::Edge],
    ];
    for wrap in modes {
        for linear in [false, true] {
            let desc = descriptor(wrap, linear, None);
            check_sampling(gpu, &function, 128, Some(desc), (linear, wrap)).unwrap();
        }
    }
}

#[test]
fn sample_level_clamped_to_the_border() {
    let Some(gpu) = gpu() else { return };
    let function = sampling_function(vec![sampler("smp", 0, false)]);
    let cases = [
        ("opaque-white", 1.0, "address-mode-clamp-to-border"),
        ("transparent-black", 0.0, "address-mode-clamp-to-border"),
        // Metal's clamp_to_zero.
        ("zero", 0.0, "address-mode-clamp-to-zero"),
    ];
    for (color, value, feature) in cases {
        let wrap = [Wrap::Border(value), Wrap::Edge];
        for linear in [false, true] {
            let desc = descriptor(wrap, linear, Some(color));
            match check_sampling(gpu, &function, 128, Some(desc), (linear, wrap)) {
                Ok(()) => {}
                Err(RunError::MissingFeature { feature: f, .. }) => {
                    assert!(gpu.check_features(std::slice::from_ref(&f)).is_err());
                    assert!(f.starts_with("address-mode-clamp-to-"), "{f} for {feature}");
                    eprintln!("note: {color} border skipped: the device lacks {f}");
                }
                Err(e) => panic!("{color}: {e}"),
            }
        }
    }
}

#[test]
fn constexpr_sampler_from_the_reflection() {
    let Some(gpu) = gpu() else { return };
    let wrap = [Wrap::Repeat, Wrap::Mirror];
    let mut function = sampling_function(Vec::new());
    function.constexpr_samplers.push(ConstexprSampler {
        name: "smp".into(),
        binding: WgslBinding {
            group: 0,
            binding: 193,
        },
        descriptor: descriptor(wrap, true, None),
    });
    check_sampling(gpu, &function, 193, None, (true, wrap)).unwrap();
    // A sampler given by index cannot replace it: the function has no
    // `[[sampler(0)]]`, so the dispatch is refused rather than ignored.
    let decoy = descriptor([Wrap::Edge; 2], false, None);
    match check_sampling(gpu, &function, 193, Some(decoy), (true, wrap)) {
        Err(RunError::InvalidDispatch(m)) => assert!(m.contains("no [[sampler(0)]]"), "{m}"),
        other => panic!("want the stray sampler refused, got {other:?}"),
    }
}

/// Compares `ref` with the depth at (u, v) for each `(u, v, ref, _)`.
const COMPARE: &str = "
@group(0) @binding(0) var<storage, read> coords: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(64) var depth: texture_depth_2d;
@group(0) @binding(128) var cmp: sampler_comparison;
@compute @workgroup_size(64)
fn k(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x >= arrayLength(&coords) { return; }
    let c = coords[g.x];
    out[g.x] = textureSampleCompareLevel(depth, cmp, c.xy, c.z);
}";

/// Whether a comparison of a reference with a depth passes.
type Passes = fn(f32, f32) -> bool;

#[test]
fn compare_sampler_on_a_depth_texture() {
    let Some(gpu) = gpu() else { return };
    // (y * 4 + x) / 16 + 1/32: no texel equals a reference below.
    let depths: Vec<f32> = (0..16).map(|i| i as f32 / 16.0 + 1.0 / 32.0).collect();
    let depth = TextureData::new_2d(F::Depth32Float, 4, 4, f32_bytes(&depths));
    let mut coords = Vec::new();
    for r in [0.25f32, 0.5, 0.75] {
        for (x, y) in (0..16).map(|i| (i % 4, i / 4)) {
            coords.extend([(x as f32 + 0.5) / 4.0, (y as f32 + 0.5) / 4.0, r, 0.0]);
        }
        // Outside: clamp-to-edge reads the corner texels.
        coords.extend([-0.5, -0.5, r, 0.0, 1.5, 1.5, r, 0.0]);
    }
    let info = info("2d", TextureBinding::Depth, "depth", None);
    let function = kernel(
        [64, 1, 1],
        vec![
            buffer("coords", 0, Access::Read),
            buffer("out", 1, Access::ReadWrite),
            texture("depth", 0, Access::Read, info),
            sampler("cmp", 0, true),
        ],
    );
    let texel_of = |k: usize| {
        let c = &coords[k * 4..k * 4 + 4];
        let x = ((c[0] * 4.0).floor() as i64).clamp(0, 3);
        let y = ((c[1] * 4.0).floor() as i64).clamp(0, 3);
        (c[2], depths[(y * 4 + x) as usize])
    };
    let n = coords.len() / 4;
    // The default compare function is less-equal: ref <= texel passes.
    let cases: [(Option<&str>, Passes); 2] =
        [(None, |r, d| r <= d), (Some("greater"), |r, d| r > d)];
    for (compare, pass) in cases {
        let mut resources = with_buffers(&[(0, f32_bytes(&coords)), (1, vec![0; n * 4])]);
        resources.textures.insert(0, depth.clone());
        let desc = SamplerDescriptor {
            compare: compare.map(str::to_string),
            ..default_sampler()
        };
        resources.samplers.insert(0, desc);
        let out = run(gpu, COMPARE, &function, 1, &resources).unwrap();
        for (k, got) in f32s(&out.buffers[&1]).iter().enumerate() {
            let (r, d) = texel_of(k);
            let want = if pass(r, d) { 1.0 } else { 0.0 };
            assert_eq!(*got, want, "{compare:?}: ref {r} vs depth {d} (sample {k})");
        }
    }
}

#[test]
fn depth_array_with_mips_is_filled_exactly() {
    if common::skip(common::Limit::DepthLoad) {
        return;
    }
    let Some(gpu) = gpu() else { return };
    let wgsl = "
        @group(0) @binding(0) var<storage, read_write> out: array<f32>;
        @group(0) @binding(64) var depth: texture_depth_2d_array;
        @compute @workgroup_size(1)
        fn k() {
            var i = 0u;
            for (var m = 0u; m < textureNumLevels(depth); m++) {
                let size = textureDimensions(depth, m);
                for (var l = 0u; l < textureNumLayers(depth); l++) {
                    for (var y = 0u; y < size.y; y++) {
                        for (var x = 0u; x < size.x; x++) {
                            out[i] = textureLoad(depth, vec2(x, y), l, m);
                            i++;
                        }
                    }
                }
            }
        }";
    // 3x2, 2 layers, 2 levels; values in [0, 1] with bits a rounding would change.
    let n = (6 + 1) * 2;
    let values: Vec<f32> = (0..n)
        .map(|i| (i as f32 + 0.123_456_7) / n as f32)
        .collect();
    let data = TextureData::new_2d_array(F::Depth32Float, [3, 2, 2], 2, f32_bytes(&values));
    let mut resources = with_buffers(&[(0, vec![0; n * 4])]);
    resources.textures.insert(0, data);
    let function = kernel(
        [1, 1, 1],
        vec![
            buffer("out", 0, Access::ReadWrite),
            texture(
                "depth",
                0,
                Access::Read,
                info("2d-array", TextureBinding::Depth, "depth", None),
            ),
        ],
    );
    let out = run(gpu, wgsl, &function, 1, &resources).unwrap();
    assert_eq!(f32s(&out.buffers[&0]), values);
    // depth16unorm is written directly (WebGPU allows copies into it).
    let units: Vec<u16> = (0..n as u16).map(|i| i * 4681).collect();
    let bytes = units.iter().flat_map(|u| u.to_le_bytes()).collect();
    let data = TextureData::new_2d_array(F::Depth16Unorm, [3, 2, 2], 2, bytes);
    resources.textures.insert(0, data);
    let out = run(gpu, wgsl, &function, 1, &resources).unwrap();
    for (got, unit) in f32s(&out.buffers[&0]).iter().zip(&units) {
        let want = f32::from(*unit) / 65535.0;
        assert!((got - want).abs() < 1e-6, "{got} for {unit}");
    }
}

#[test]
fn png_round_trip_through_a_kernel() {
    let Some(gpu) = gpu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.png");
    let pixels: Vec<u8> = (0..3 * 2 * 4).map(|i| (i * 11) as u8).collect();
    TextureData::new_2d(F::Rgba8Unorm, 3, 2, pixels.clone())
        .to_png(&input)
        .unwrap();
    let loaded = TextureData::from_png(&input).unwrap();
    assert_eq!(
        (loaded.width, loaded.height, loaded.format),
        (3, 2, F::Rgba8Unorm)
    );
    assert_eq!(loaded.data, pixels);
    let wgsl = "
        @group(0) @binding(64) var src: texture_2d<f32>;
        @group(0) @binding(65) var dst: texture_storage_2d<rgba8unorm, write>;
        @compute @workgroup_size(4, 4)
        fn k(@builtin(global_invocation_id) g: vec3<u32>) {
            if any(g.xy >= textureDimensions(src)) { return; }
            let c = textureLoad(src, g.xy, 0);
            textureStore(dst, g.xy, vec4(1.0 - c.rgb, c.a));
        }";
    let mut resources = Resources::default();
    resources.textures.insert(0, loaded);
    resources
        .textures
        .insert(1, TextureData::empty(3, 2, F::Rgba8Unorm));
    let function = kernel(
        [4, 4, 1],
        vec![
            texture("src", 0, Access::Read, sampled("2d", "float")),
            texture("dst", 1, Access::Write, storage("rgba8unorm")),
        ],
    );
    let out = run(gpu, wgsl, &function, 1, &resources).unwrap();
    let output = dir.path().join("out.png");
    out.textures[&1].to_png(&output).unwrap();
    let saved = TextureData::from_png(&output).unwrap();
    let want: Vec<u8> = pixels
        .chunks(4)
        .flat_map(|p| [255 - p[0], 255 - p[1], 255 - p[2], p[3]])
        .collect();
    assert_eq!(saved.data, want);
    assert!(matches!(
        TextureData::from_png(dir.path().join("missing.png")),
        Err(RunError::Image(_))
    ));
}

#[test]
fn texture_errors_come_before_the_dispatch() {
    let Some(gpu) = gpu() else { return };
    let function = kernel(
        [1, 1, 1],
        vec![
            buffer("out", 0, Access::ReadWrite),
            texture("tex", 0, Access::Read, sampled("2d", "float")),
        ],
    );
    let base = with_buffers(&[(0, vec![0; 64])]);
    let err = run(gpu, LOAD_2D, &function, 1, &base).unwrap_err();
    assert!(
        matches!(&err, RunError::MissingTexture { name, index: 0, .. } if name == "tex"),
        "{err}"
    );
    assert!(err.to_string().contains("[[texture(0)]]"), "{err}");
    let mismatches = [
        (TextureData::empty(2, 2, F::R32Uint), "float"),
        (
            TextureData::new_2d_array(F::R32Float, [2, 2, 2], 1, vec![0; 32]),
            "layers",
        ),
        (TextureData::new_2d(F::R32Float, 2, 2, vec![0; 12]), "bytes"),
        (TextureData::empty(0, 2, F::R32Float), "zero"),
        (
            TextureData::new_3d(F::R32Float, [2, 2, 1], 1, vec![0; 16]),
            "D3",
        ),
    ];
    for (data, words) in mismatches {
        let mut resources = base.clone();
        resources.textures.insert(0, data);
        let err = run(gpu, LOAD_2D, &function, 1, &resources).unwrap_err();
        assert!(
            matches!(err, RunError::TextureMismatch { index: 0, .. }),
            "{err}"
        );
        assert!(err.to_string().contains(words), "{err}");
    }
    // A storage texture must have exactly the storage format.
    let wgsl = "
        @group(0) @binding(64) var a: texture_storage_2d<r32float, write>;
        @compute @workgroup_size(1)
        fn k() { textureStore(a, vec2(0u), vec4(1.0)); }";
    let function = kernel(
        [1, 1, 1],
        vec![texture("a", 0, Access::Write, storage("r32float"))],
    );
    let mut resources = Resources::default();
    resources
        .textures
        .insert(0, TextureData::empty(2, 2, F::Rgba8Unorm));
    let err = run(gpu, wgsl, &function, 1, &resources).unwrap_err();
    assert!(err.to_string().contains("r32float") && err.to_string().contains("rgba8unorm"));
}

#[test]
fn sampler_errors() {
    let Some(gpu) = gpu() else { return };
    let function = sampling_function(vec![sampler("smp", 0, false)]);
    let mut desc = descriptor([Wrap::Edge; 2], false, None);
    desc.address_mode_u = "clamp_to_edge".into();
    let err = check_sampling(gpu, &function, 128, Some(desc), (false, [Wrap::Edge; 2]));
    let err = err.unwrap_err();
    assert!(
        matches!(&err, RunError::InvalidSampler { name, .. } if name == "smp"),
        "{err}"
    );
    assert!(err.to_string().contains("clamp_to_edge"), "{err}");
    // The reflection calls it a comparison sampler, the WGSL does not.
    let function = sampling_function(vec![sampler("smp", 0, true)]);
    let err = check_sampling(gpu, &function, 128, None, (false, [Wrap::Edge; 2]));
    assert!(matches!(err, Err(RunError::Shader(_))), "{err:?}");
}
