//! GPU tests of textures and samplers against CPU references: Apple's
//! grayscale kernel, a Sobel filter, sampling in every address mode, reads
//! with mip levels and array slices, gather, depth comparison, and writes to
//! storage textures of several formats.
#![cfg(feature = "runner")]

mod common;

use common::{f32s, gpu};
use msl2wgsl::reflect::SamplerDescriptor;
use msl2wgsl::runner::{run_kernel_resources, Dispatch, Outputs, Resources, RunError, TextureData};
use msl2wgsl::{Library, Options};
use wgpu::TextureFormat as F;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/textures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(
    name: &str,
    entry: &str,
    options: &Options,
    dispatch: Dispatch,
    resources: &Resources,
) -> Option<Outputs> {
    let gpu = gpu()?;
    match run_kernel_resources(
        gpu,
        name,
        &fixture(name),
        options,
        entry,
        &dispatch,
        resources,
    ) {
        Ok(out) => Some(out),
        Err(RunError::MissingFeature { feature, .. }) if feature.contains("clamp") => {
            common::skip::missing_feature(gpu, &feature);
            None
        }
        Err(e) => panic!("{name} `{entry}`: {e}"),
    }
}

/// An 8-bit RGBA test image.
fn image(w: u32, h: u32) -> Vec<u8> {
    (0..w * h)
        .flat_map(|k| {
            let (x, y) = (k % w, k / w);
            [
                (x * 37 + y * 11) as u8,
                (y * 53 + x * 7) as u8,
                (x * y * 13 + 40) as u8,
                255,
            ]
        })
        .collect()
}

fn quantize(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

#[test]
fn grayscale_kernel_with_half_textures() {
    let (w, h) = (8u32, 6u32);
    let input = image(w, h);
    let weights = [0.2126f32, 0.7152, 0.0722];
    // LumaWeights { half3 weights; }: 8 bytes (the fourth half is padding).
    let mut luma = vec![0xCDu8; 8];
    for (k, v) in weights.iter().enumerate() {
        luma[2 * k..2 * k + 2].copy_from_slice(&half::f16::from_f32(*v).to_le_bytes());
    }
    let resources = Resources {
        buffers: [(0, luma)].into_iter().collect(),
        textures: [
            (0, TextureData::new_2d(F::Rgba8Unorm, w, h, input.clone())),
            (1, TextureData::empty(w, h, F::Rgba8Unorm)),
        ]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    // A grid larger than the image: the kernel's own bounds check must hold.
    let Some(out) = run(
        "grayscale.metal",
        "grayscale",
        &Options::default(),
        Dispatch::Threads {
            grid: [w + 3, h + 2, 1],
            threadgroup: [8, 8, 1],
        },
        &resources,
    ) else {
        return;
    };
    let got = &out.textures[&1].data;
    for k in 0..(w * h) as usize {
        let rgb: Vec<f32> = (0..3)
            .map(|c| half::f16::from_f32(input[4 * k + c] as f32 / 255.0).to_f32())
            .collect();
        let gray: f32 = rgb
            .iter()
            .zip(weights)
            .map(|(c, w)| c * half::f16::from_f32(w).to_f32())
            .sum();
        // half arithmetic (2^-11 relative) then unorm8 rounding: one step of 1/255 at most.
        let want = quantize(gray);
        for c in 0..3 {
            assert!(
                got[4 * k + c].abs_diff(want) <= 1,
                "texel {k} channel {c}: got {}, want {want}",
                got[4 * k + c]
            );
        }
        assert_eq!(got[4 * k + 3], 255);
    }
}

#[test]
fn sobel_filter() {
    let (w, h) = (8u32, 8u32);
    let input = image(w, h);
    let resources = Resources {
        buffers: Default::default(),
        textures: [
            (0, TextureData::new_2d(F::Rgba8Unorm, w, h, input.clone())),
            (1, TextureData::empty(w, h, F::Rgba8Unorm)),
        ]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "sobel.metal",
        "sobel",
        &Options::default(),
        Dispatch::Threads {
            grid: [w, h, 1],
            threadgroup: [8, 8, 1],
        },
        &resources,
    ) else {
        return;
    };
    let lum = |x: i32, y: i32| {
        let (x, y) = (
            x.clamp(0, w as i32 - 1) as u32,
            y.clamp(0, h as i32 - 1) as u32,
        );
        let k = (4 * (y * w + x)) as usize;
        [0.299f32, 0.587, 0.114]
            .iter()
            .enumerate()
            .map(|(c, f)| input[k + c] as f32 / 255.0 * f)
            .sum::<f32>()
    };
    let got = &out.textures[&1].data;
    for y in 0..h as i32 {
        for x in 0..w as i32 {
            let gx = (lum(x + 1, y - 1) + 2.0 * lum(x + 1, y) + lum(x + 1, y + 1))
                - (lum(x - 1, y - 1) + 2.0 * lum(x - 1, y) + lum(x - 1, y + 1));
            let gy = (lum(x - 1, y + 1) + 2.0 * lum(x, y + 1) + lum(x + 1, y + 1))
                - (lum(x - 1, y - 1) + 2.0 * lum(x, y - 1) + lum(x + 1, y - 1));
            let want = quantize((gx * gx + gy * gy).sqrt());
            let k = (4 * (y as u32 * w + x as u32)) as usize;
            // f32 arithmetic, sqrt within 2.5 ULP, then unorm8 rounding: one step at most.
            assert!(
                got[k].abs_diff(want) <= 1,
                "({x}, {y}): got {}, want {want}",
                got[k]
            );
        }
    }
}

/// The test texture of the sampling tests: 4×4 rgba8unorm.
fn sampling_texture() -> (Vec<u8>, TextureData) {
    let data = image(4, 4);
    (data.clone(), TextureData::new_2d(F::Rgba8Unorm, 4, 4, data))
}

/// A texel coordinate through a WebGPU address mode; `None` is the border.
fn address(i: i32, n: i32, mode: &str) -> Option<i32> {
    match mode {
        "clamp-to-edge" => Some(i.clamp(0, n - 1)),
        "repeat" => Some(i.rem_euclid(n)),
        "mirror-repeat" => {
            let m = i.rem_euclid(2 * n);
            Some(if m >= n { 2 * n - 1 - m } else { m })
        }
        _ => (0..n).contains(&i).then_some(i),
    }
}

/// WebGPU's sampling of `data` (4×4 rgba8unorm) at LOD 0.
fn sample(data: &[u8], u: f32, v: f32, mode: &str, linear: bool) -> [f32; 4] {
    let texel = |x: i32, y: i32| -> [f32; 4] {
        match (address(x, 4, mode), address(y, 4, mode)) {
            (Some(x), Some(y)) => {
                std::array::from_fn(|c| data[(4 * (y * 4 + x)) as usize + c] as f32 / 255.0)
            }
            _ => [0.0; 4], // clamp_to_zero: transparent black
        }
    };
    if !linear {
        return texel((u * 4.0).floor() as i32, (v * 4.0).floor() as i32);
    }
    let (x, y) = (u * 4.0 - 0.5, v * 4.0 - 0.5);
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (x0, y0) = (x0 as i32, y0 as i32);
    let (a, b, c, d) = (
        texel(x0, y0),
        texel(x0 + 1, y0),
        texel(x0, y0 + 1),
        texel(x0 + 1, y0 + 1),
    );
    std::array::from_fn(|k| {
        (a[k] * (1.0 - fx) + b[k] * fx) * (1.0 - fy) + (c[k] * (1.0 - fx) + d[k] * fx) * fy
    })
}

/// Texel centres, texel boundaries, the edges and outside them: every
/// bilinear weight is 0, ½ or 1, exact with any sub-texel precision.
fn sample_points() -> Vec<[f32; 2]> {
    let s = [0.125f32, 0.25, 0.0, 1.0, -0.25, 1.25, 0.625];
    s.iter()
        .flat_map(|u| s.iter().map(move |v| [*u, *v]))
        .collect()
}

fn coords_bytes(points: &[[f32; 2]]) -> Vec<u8> {
    points
        .iter()
        .flatten()
        .flat_map(|f| f.to_le_bytes())
        .collect()
}

/// Filtering of unorm8 texels happens in 8-bit fixed point on common
/// hardware, so a filtered value may be off by one 1/255 step.
const FILTER_TOLERANCE: f32 = 1.0 / 255.0 + 1e-6;

#[test]
fn sampling_in_every_address_mode() {
    if common::skip(common::Limit::TextureWithSeveralSamplers) {
        return;
    }
    let (data, tex) = sampling_texture();
    let points = sample_points();
    let n = points.len();
    let resources = Resources {
        buffers: [(0, coords_bytes(&points)), (1, vec![0; n * 6 * 16])]
            .into_iter()
            .collect(),
        textures: [(0, tex)].into_iter().collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "sampling.metal",
        "sample_all",
        &Options::default(),
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &resources,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    let modes = [
        ("clamp-to-edge", false),
        ("clamp-to-edge", true),
        ("repeat", true),
        ("mirror-repeat", true),
        ("repeat", false),
    ];
    for (i, [u, v]) in points.iter().enumerate() {
        for (k, (mode, linear)) in modes.iter().enumerate() {
            let want = sample(&data, *u, *v, mode, *linear);
            let at = (i * 6 + k) * 4;
            for c in 0..4 {
                assert!(
                    (got[at + c] - want[c]).abs() <= FILTER_TOLERANCE,
                    "({u}, {v}) {mode} linear={linear} channel {c}: got {}, want {}",
                    got[at + c],
                    want[c]
                );
            }
        }
    }
}

#[test]
fn sampling_with_clamp_to_zero() {
    let (data, tex) = sampling_texture();
    let points = sample_points();
    let n = points.len();
    let resources = Resources {
        buffers: [(0, coords_bytes(&points)), (1, vec![0; n * 16])]
            .into_iter()
            .collect(),
        textures: [(0, tex)].into_iter().collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "sampling.metal",
        "sample_zero",
        &Options::default(),
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &resources,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    for (i, [u, v]) in points.iter().enumerate() {
        let want = sample(&data, *u, *v, "clamp-to-zero", true);
        for c in 0..4 {
            assert!(
                (got[i * 4 + c] - want[c]).abs() <= FILTER_TOLERANCE,
                "({u}, {v}) channel {c}: got {}, want {}",
                got[i * 4 + c],
                want[c]
            );
        }
    }
}

#[test]
fn constexpr_sampler_shared_by_two_functions() {
    let lib = Library::from_source(
        "sampling.metal",
        &fixture("sampling.metal"),
        &Options::default(),
    )
    .unwrap();
    let all = lib.function("sample_all").unwrap();
    let one = lib.function("sample_one").unwrap();
    let edge = |f: &msl2wgsl::reflect::FunctionReflection| {
        f.constexpr_samplers
            .iter()
            .find(|s| s.name == "linear_edge")
            .cloned()
            .unwrap()
    };
    assert_eq!(
        edge(all).binding,
        edge(one).binding,
        "one binding for the shared sampler"
    );
    let d: &SamplerDescriptor = &edge(one).descriptor;
    assert_eq!(
        (
            d.address_mode_u.as_str(),
            d.mag_filter.as_str(),
            d.min_filter.as_str()
        ),
        ("clamp-to-edge", "linear", "linear")
    );
    assert_eq!(
        one.constexpr_samplers.len(),
        1,
        "only the samplers a function uses"
    );
    let zero = lib.function("sample_zero").unwrap().constexpr_samplers[0]
        .descriptor
        .clone();
    assert_eq!(
        (zero.address_mode_u.as_str(), zero.border_color.as_deref()),
        ("clamp-to-border", Some("zero"))
    );
    // And it runs through the runner with no user work.
    let (data, tex) = sampling_texture();
    let points = sample_points();
    let resources = Resources {
        buffers: [(0, coords_bytes(&points)), (1, vec![0; points.len() * 16])]
            .into_iter()
            .collect(),
        textures: [(0, tex)].into_iter().collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "sampling.metal",
        "sample_one",
        &Options::default(),
        Dispatch::Threads {
            grid: [points.len() as u32, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &resources,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    for (i, [u, v]) in points.iter().enumerate() {
        let want = sample(&data, *u, *v, "clamp-to-edge", true);
        for c in 0..4 {
            assert!(
                (got[i * 4 + c] - want[c]).abs() <= FILTER_TOLERANCE,
                "({u}, {v})"
            );
        }
    }
}

fn f32_texels(values: impl Iterator<Item = f32>) -> Vec<u8> {
    values.flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn read_with_mip_level_and_array_slice() {
    // 2 layers, 2 levels of rgba32float; each texel encodes (level, layer, x, y).
    let mut data = Vec::new();
    for (level, size) in [(0u32, 4u32), (1, 2)] {
        for layer in 0..2 {
            for y in 0..size {
                for x in 0..size {
                    data.extend(f32_texels(
                        [level as f32, layer as f32, x as f32, y as f32].into_iter(),
                    ));
                }
            }
        }
    }
    let resources = Resources {
        buffers: [(0, vec![0; 4 * 16])].into_iter().collect(),
        textures: [(
            0,
            TextureData::new_2d_array(F::Rgba32Float, [4, 4, 2], 2, data),
        )]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "reads.metal",
        "read_levels",
        &Options::default(),
        Dispatch::Threads {
            grid: [2, 2, 1],
            threadgroup: [2, 2, 1],
        },
        &resources,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&0]);
    for y in 0..2 {
        for x in 0..2 {
            // level 1, layer 1, plus (array size 2, 2 levels, level-1 width 2, 0)
            let want = [1.0 + 2.0, 1.0 + 2.0, x as f32 + 2.0, y as f32];
            assert_eq!(
                &got[(y * 2 + x) * 4..(y * 2 + x) * 4 + 4],
                &want,
                "({x}, {y})"
            );
        }
    }
}

#[test]
fn gather_red_components() {
    let red: Vec<f32> = (0..16).map(|k| k as f32).collect();
    let data = f32_texels(red.iter().copied());
    let resources = Resources {
        buffers: [(0, vec![0; 9 * 16])].into_iter().collect(),
        textures: [(0, TextureData::new_2d(F::R32Float, 4, 4, data))]
            .into_iter()
            .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "reads.metal",
        "gather_red",
        &Options::default(),
        Dispatch::Threads {
            grid: [9, 1, 1],
            threadgroup: [9, 1, 1],
        },
        &resources,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&0]);
    for i in 0..9usize {
        let (x0, y0) = (i % 3, i / 3);
        let t = |x: usize, y: usize| red[y * 4 + x];
        // (u_min, v_max), (u_max, v_max), (u_max, v_min), (u_min, v_min): MSL §6.12 = WGSL textureGather.
        let want = [t(x0, y0 + 1), t(x0 + 1, y0 + 1), t(x0 + 1, y0), t(x0, y0)];
        assert_eq!(&got[i * 4..i * 4 + 4], &want, "gather {i}");
    }
}

#[test]
fn sample_compare_on_a_depth_texture() {
    let depth: Vec<f32> = (0..16).map(|k| k as f32 / 16.0).collect();
    let sampler = SamplerDescriptor {
        address_mode_u: "clamp-to-edge".into(),
        address_mode_v: "clamp-to-edge".into(),
        address_mode_w: "clamp-to-edge".into(),
        mag_filter: "nearest".into(),
        min_filter: "nearest".into(),
        mipmap_filter: "nearest".into(),
        lod_min_clamp: 0.0,
        lod_max_clamp: 0.0,
        compare: Some("less".into()),
        anisotropy_clamp: 1,
        border_color: None,
    };
    let resources = Resources {
        buffers: [(0, vec![0; 16 * 4])].into_iter().collect(),
        textures: [(
            0,
            TextureData::new_2d(F::Depth32Float, 4, 4, f32_texels(depth.iter().copied())),
        )]
        .into_iter()
        .collect(),
        samplers: [(0, sampler)].into_iter().collect(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "reads.metal",
        "compare_depth",
        &Options::default(),
        Dispatch::Threads {
            grid: [16, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &resources,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&0]);
    for (i, d) in depth.iter().enumerate() {
        // `less`: the reference 0.5 passes where it is below the stored depth.
        assert_eq!(
            got[i],
            if 0.5 < *d { 1.0 } else { 0.0 },
            "texel {i} (depth {d})"
        );
    }
}

#[test]
fn writes_to_r32float_and_rgba16float() {
    let options = Options {
        texture_formats: vec![(0, "r32float".into()), (1, "rgba16float".into())],
        ..Options::default()
    };
    let resources = Resources {
        buffers: Default::default(),
        textures: [
            (0, TextureData::empty(4, 3, F::R32Float)),
            (1, TextureData::empty(4, 3, F::Rgba16Float)),
        ]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "reads.metal",
        "write_formats",
        &options,
        Dispatch::Threads {
            grid: [4, 3, 1],
            threadgroup: [4, 3, 1],
        },
        &resources,
    ) else {
        return;
    };
    let r = f32s(&out.textures[&0].data);
    let h: Vec<f32> = out.textures[&1]
        .data
        .chunks_exact(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    for y in 0..3 {
        for x in 0..4 {
            let v = x as f32 * 0.25 + y as f32 * 8.0;
            let k = y * 4 + x;
            assert_eq!(r[k], v, "r32float ({x}, {y})");
            assert_eq!(
                &h[k * 4..k * 4 + 4],
                &[v, -v, 0.5, 1.0],
                "rgba16float ({x}, {y})"
            );
        }
    }
}

/// `get_width(0)`/`read(coord, 0)` on storage textures: level 0 written out
/// is the level-less WGSL query and load; the bounds check keeps the 5×4 grid
/// inside the 4×3 texture.
#[test]
fn storage_textures_accept_an_explicit_level_zero() {
    let options = Options {
        texture_formats: vec![(0, "r32float".into()), (1, "r32float".into())],
        ..Options::default()
    };
    let input: Vec<f32> = (0..12).map(|k| k as f32 * 0.5).collect();
    let resources = Resources {
        buffers: Default::default(),
        textures: [
            (0, TextureData::empty(4, 3, F::R32Float)),
            (
                1,
                TextureData::new_2d(F::R32Float, 4, 3, f32_texels(input.iter().copied())),
            ),
        ]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let Some(out) = run(
        "reads.metal",
        "storage_level_zero",
        &options,
        Dispatch::Threads {
            grid: [5, 4, 1],
            threadgroup: [5, 4, 1],
        },
        &resources,
    ) else {
        return;
    };
    let got = f32s(&out.textures[&0].data);
    let want: Vec<f32> = input.iter().map(|v| v * 2.0 + 43.0).collect();
    assert_eq!(got, want);
}

#[test]
fn texture_reflection() {
    let opts = Options {
        texture_formats: vec![(0, "r32float".into())],
        ..Options::default()
    };
    let lib = Library::from_source("reads.metal", &fixture("reads.metal"), &opts).unwrap();
    let w = lib.function("write_formats").unwrap();
    let t = w.arguments[0].texture.as_ref().unwrap();
    assert_eq!(
        (
            t.texture_type.as_str(),
            t.data_type.as_str(),
            t.storage_format.as_deref()
        ),
        ("type2D", "float", Some("r32float"))
    );
    let t = w.arguments[1].texture.as_ref().unwrap();
    assert_eq!(
        (t.data_type.as_str(), t.storage_format.as_deref()),
        ("half", Some("rgba8unorm")),
        "the documented default"
    );
    let d = lib.function("compare_depth").unwrap();
    assert_eq!(
        d.arguments[0].texture.as_ref().unwrap().sample_type,
        "depth"
    );
    assert!(
        d.arguments[1].sampler.as_ref().unwrap().comparison,
        "used with sample_compare"
    );
    let g = lib.function("grayscale");
    assert!(g.is_none());
    let lib = Library::from_source(
        "grayscale.metal",
        &fixture("grayscale.metal"),
        &Options::default(),
    )
    .unwrap();
    let args = &lib.function("grayscale").unwrap().arguments;
    let unused = args.iter().find(|a| a.name == "unused").unwrap();
    assert!(
        !unused.active,
        "the unused threadgroup argument needs no size"
    );
}
