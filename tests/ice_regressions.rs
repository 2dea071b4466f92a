//! Regressions for internal compiler errors (issue #16): every construct
//! here once made msl2wgsl emit IR that naga rejected (E0900) or panic.
//! Each now translates (checked on the GPU against a CPU reference where it
//! computes something) or fails with a located diagnostic of its own code.

mod common;

use common::source::{assert_error, translate_body, PRELUDE};
use msl2wgsl::diagnostics::Code;
use msl2wgsl::{Library, Options};

/// The code of the first diagnostic of `body`, which must fail.
fn first_code(body: &str) -> Code {
    match Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.diagnostics.0[0].code,
    }
}

/// `refract(Tn, Tn, T)`: the ratio stays a scalar (it was splatted to the
/// vector type, which naga rejects).
#[test]
fn refract_takes_a_scalar_ratio() {
    let lib = translate_body(
        "float3 bend(float3 i, float3 n, float eta) { return refract(i, n, eta); }\n\
         kernel void k(device float4* out [[buffer(0)]], constant half& h [[buffer(1)]]) {\n\
             out[0] = float4(bend(float3(0, 0, -1), float3(0, 1, 0), 1.5), 0);\n\
             out[1] = float4(refract(float2(1, 0), float2(0, 1), 0.5), 0, 0);\n\
             out[2] = float4(float3(refract(half3(1, 0, 0), half3(0, 1, 0), h)), 0);\n\
             out[3] = refract(float4(1, 0, 0, 0), float4(0, 1, 0, 0), 2);\n\
         }\n",
    );
    assert!(lib.wgsl().contains("refract("), "{}", lib.wgsl());
}

/// The geometric functions that return a vector have no scalar forms: a
/// scalar argument is a located overload error, not an ICE.
#[test]
fn vector_geometric_functions_reject_scalars() {
    for (call, name) in [
        ("refract(x, x, x)", "refract"),
        ("reflect(x, x)", "reflect"),
        ("normalize(x)", "normalize"),
        ("faceforward(x, x, x)", "faceforward"),
    ] {
        let body = format!(
            "kernel void k(device float* out [[buffer(0)]]) {{\n    float x = out[0];\n    out[1] = {call};\n}}\n"
        );
        assert_error(&body, call, 0, &format!("`{name}` takes vectors, not scalars"));
        assert_eq!(first_code(&body), Code::NoMatchingOverload);
    }
}

/// A depth texture sampled where Metal uses level 0 (a kernel, a helper):
/// the level is an integer (naga's writer spelt it `0.0`, which WGSL
/// rejects for depth textures, so the re-parse of the output failed).
#[test]
fn depth_sample_at_level_zero_reparses() {
    let lib = translate_body(
        "float fetch(depth2d<float> d, sampler s, float2 uv) { return d.sample(s, uv); }\n\
         fragment float4 f(depth2d<float> d [[texture(0)]], sampler s [[sampler(0)]]) {\n\
             return float4(fetch(d, s, float2(0.5)));\n\
         }\n\
         kernel void k(depth2d<float> d [[texture(0)]], sampler s [[sampler(0)]],\n\
                       device float* out [[buffer(0)]]) {\n\
             out[0] = d.sample(s, float2(0.5));\n\
         }\n",
    );
    assert!(!lib.wgsl().contains(", 0.0)"), "{}", lib.wgsl());
}

/// `[[primitive_id]]` needs wgpu's `primitive-index` feature, which the
/// validator did not allow.
#[test]
fn primitive_id_translates_with_its_feature() {
    let lib = translate_body(
        "fragment float4 f(uint p [[primitive_id]]) { return float4(float(p)); }\n",
    );
    assert!(lib.wgsl().contains("enable primitive_index;"), "{}", lib.wgsl());
    let f = lib.function("f").unwrap();
    let json = serde_json::to_string(f).unwrap();
    assert!(json.contains("primitive-index"), "{json}");
}

/// A struct holding a texture or sampler has no WGSL equivalent as a value:
/// a located error at the member (it was a naga type error).
#[test]
fn struct_with_a_texture_member_is_located() {
    let body = "struct Res {\n    texture2d<float> tex;\n    sampler smp;\n};\n\
                float4 look(Res r) { return r.tex.sample(r.smp, float2(0)); }\n\
                fragment float4 f(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]]) {\n\
                    Res r = Res{t, s};\n    return look(r);\n}\n";
    assert_error(body, "tex;", 0, "struct `Res` holds a texture or sampler (member `tex`)");
    assert_eq!(first_code(body), Code::Unsupported);
    // A write-only texture member (it was a panic: storage textures only
    // get a format when bound).
    let body = "struct W { texture2d<float, access::write> out; };\n\
                kernel void k(texture2d<float, access::write> t [[texture(0)]]) {\n\
                    W w = W{t};\n    w.out.write(float4(1), uint2(0));\n}\n";
    assert_error(body, "out;", 0, "struct `W` holds a texture or sampler");
    assert_eq!(first_code(body), Code::Unsupported);
    // An unused one is no error.
    translate_body(
        "struct Res { texture2d<float> tex; };\n\
         kernel void k(device float* out [[buffer(0)]]) { out[0] = 1; }\n",
    );
}

/// A writable texture passed to a helper: naga stores to a texture only
/// through its global, so the helper is specialised for the bound texture
/// (it was "Image store parameters are invalid: Not a global variable").
#[test]
fn writable_texture_passed_to_helpers_translates() {
    let lib = translate_body(
        "void put(texture2d<float, access::write> dst, uint2 p, float4 c) { dst.write(c, p); }\n\
         void shade(texture2d<float, access::read> src, texture2d<float, access::write> dst, uint2 p) {\n\
             put(dst, p, src.read(p).bgra);\n\
         }\n\
         kernel void k(texture2d<float, access::read> src [[texture(0)]],\n\
                       texture2d<float, access::write> dst [[texture(1)]],\n\
                       uint2 gid [[thread_position_in_grid]]) {\n\
             shade(src, dst, gid);\n\
         }\n",
    );
    assert!(lib.wgsl().contains("textureStore("), "{}", lib.wgsl());
}

#[cfg(feature = "runner")]
mod gpu {
    use super::common::{f32_bytes, f32s, gpu};
    use super::common::source::PRELUDE;
    use msl2wgsl::runner::{
        default_sampler, render_library, run_kernel_resources, Dispatch, RenderResources,
        Resources, RunError, TextureData,
    };
    use msl2wgsl::{Library, Options, Target};
    use wgpu::TextureFormat as F;

    fn kernel(
        src: &str,
        entry: &str,
        options: &Options,
        grid: [u32; 3],
        resources: &Resources,
    ) -> Option<msl2wgsl::runner::Outputs> {
        let gpu = gpu()?;
        let src = format!("{PRELUDE}{src}");
        let dispatch = Dispatch::Threads {
            grid,
            threadgroup: [grid[0].min(8), grid[1].min(8), 1],
        };
        Some(
            run_kernel_resources(gpu, "t.metal", &src, options, entry, &dispatch, resources)
                .unwrap_or_else(|e| panic!("`{entry}`: {e}")),
        )
    }

    fn refract(i: [f32; 3], n: [f32; 3], eta: f32) -> [f32; 3] {
        let d = i[0] * n[0] + i[1] * n[1] + i[2] * n[2];
        let k = 1.0 - eta * eta * (1.0 - d * d);
        if k < 0.0 {
            return [0.0; 3];
        }
        let s = eta * d + k.sqrt();
        [0, 1, 2].map(|c| eta * i[c] - s * n[c])
    }

    fn normalize(v: [f32; 3]) -> [f32; 3] {
        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        v.map(|x| x / l)
    }

    /// `refract` with a scalar ratio from a buffer and a literal one, in a
    /// helper and inline, against the formula of MSL §6.7; the inputs cover
    /// total internal reflection.
    #[test]
    fn refract_matches_the_formula() {
        let src = "float3 bend(float3 i, float3 n, float eta) { return refract(i, n, eta); }\n\
                   kernel void k(device const float4* in [[buffer(0)]], device float4* out [[buffer(1)]],\n\
                                 uint i [[thread_position_in_grid]]) {\n\
                       float3 v = normalize(in[i].xyz);\n\
                       out[2 * i] = float4(bend(v, float3(0, 0, 1), in[i].w), 1);\n\
                       out[2 * i + 1] = float4(refract(v.xy, float2(0, 1), 0.5), 0, 1);\n\
                   }\n";
        let inputs: Vec<[f32; 4]> = (0..16)
            .map(|k| {
                let a = k as f32 * 0.37;
                [a.sin(), a.cos() * 0.5, -1.0 + 0.1 * k as f32, 0.6 + 0.1 * k as f32]
            })
            .collect();
        let flat: Vec<f32> = inputs.iter().flatten().copied().collect();
        let resources = Resources {
            buffers: [(0, f32_bytes(&flat)), (1, vec![0; 16 * 2 * 16])]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "k", &Options::default(), [16, 1, 1], &resources) else {
            return;
        };
        let got = f32s(&out.buffers[&1]);
        for (k, x) in inputs.iter().enumerate() {
            let v = normalize([x[0], x[1], x[2]]);
            let a = refract(v, [0.0, 0.0, 1.0], x[3]);
            // The 2-component call is the 3-component formula with z = 0.
            let b = refract([v[0], v[1], 0.0], [0.0, 1.0, 0.0], 0.5);
            let want = [a[0], a[1], a[2], 1.0, b[0], b[1], 0.0, 1.0];
            for c in 0..8 {
                let g = got[8 * k + c];
                assert!(
                    (g - want[c]).abs() <= 1e-5,
                    "input {k} component {c}: got {g}, want {}",
                    want[c]
                );
            }
        }
    }

    /// A texture written by a helper that another helper calls, from two
    /// kernels with their textures at other indices: each helper is
    /// specialised for the texture it writes.
    #[test]
    fn textures_written_from_helpers() {
        let src = "void put(texture2d<float, access::write> dst, uint2 p, float4 c) { dst.write(c, p); }\n\
                   void shade(texture2d<float, access::read> src, texture2d<float, access::write> dst, uint2 p) {\n\
                       put(dst, p, src.read(p).bgra);\n\
                   }\n\
                   kernel void swap(texture2d<float, access::read> src [[texture(0)]],\n\
                                    texture2d<float, access::write> dst [[texture(1)]],\n\
                                    uint2 gid [[thread_position_in_grid]]) {\n\
                       shade(src, dst, gid);\n\
                   }\n\
                   kernel void fill(texture2d<float, access::write> a [[texture(2)]],\n\
                                    texture2d<float, access::write> b [[texture(0)]],\n\
                                    uint2 gid [[thread_position_in_grid]]) {\n\
                       put(a, gid, float4(float(gid.x) / 255.0, float(gid.y) / 255.0, 0, 1));\n\
                       put(b, gid, float4(0, 0, 1, 1));\n\
                   }\n";
        let (w, h) = (6u32, 5u32);
        let input: Vec<u8> = (0..w * h * 4).map(|k| (k * 7 % 251) as u8).collect();
        let resources = Resources {
            textures: [
                (0, TextureData::new_2d(F::Rgba8Unorm, w, h, input.clone())),
                (1, TextureData::empty(w, h, F::Rgba8Unorm)),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "swap", &Options::default(), [w, h, 1], &resources) else {
            return;
        };
        let got = &out.textures[&1].data;
        for (k, px) in input.chunks_exact(4).enumerate() {
            let want = [px[2], px[1], px[0], px[3]];
            assert_eq!(&got[4 * k..4 * k + 4], &want, "texel {k}");
        }
        let resources = Resources {
            textures: [
                (0, TextureData::empty(w, h, F::Rgba8Unorm)),
                (2, TextureData::empty(w, h, F::Rgba8Unorm)),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "fill", &Options::default(), [w, h, 1], &resources) else {
            return;
        };
        for y in 0..h {
            for x in 0..w {
                let k = (4 * (y * w + x)) as usize;
                assert_eq!(&out.textures[&2].data[k..k + 4], &[x as u8, y as u8, 0, 255]);
                assert_eq!(&out.textures[&0].data[k..k + 4], &[0, 0, 255, 255]);
            }
        }
    }

    /// A `read_write` texture read and written by a helper.
    #[test]
    fn read_write_texture_in_a_helper() {
        let src = "void halve(texture2d<float, access::read_write> t, uint2 p) {\n\
                       t.write(t.read(p) * 0.5, p);\n\
                   }\n\
                   kernel void k(texture2d<float, access::read_write> t [[texture(0)]],\n\
                                 uint2 gid [[thread_position_in_grid]]) {\n\
                       halve(t, gid);\n\
                   }\n";
        let values: Vec<f32> = (0..16).map(|k| k as f32 * 1.25 - 3.0).collect();
        let options = Options {
            texture_formats: vec![(0, "r32float".into())],
            ..Options::default()
        };
        let resources = Resources {
            textures: [(0, TextureData::new_2d(F::R32Float, 4, 4, f32_bytes(&values)))]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "k", &options, [4, 4, 1], &resources) else {
            return;
        };
        let got = f32s(&out.textures[&0].data);
        for (k, v) in values.iter().enumerate() {
            assert_eq!(got[k], v * 0.5, "texel {k}");
        }
    }

    /// A depth texture sampled at level 0 in a kernel and in a helper.
    #[test]
    fn depth_texture_sampled_in_a_kernel_and_a_helper() {
        let src = "float fetch(depth2d<float> d, sampler s, float2 uv) { return d.sample(s, uv); }\n\
                   kernel void k(depth2d<float> d [[texture(0)]], sampler s [[sampler(0)]],\n\
                                 device float* out [[buffer(0)]], uint2 gid [[thread_position_in_grid]]) {\n\
                       float2 uv = (float2(gid) + 0.5) / 4.0;\n\
                       out[gid.y * 4 + gid.x] = d.sample(s, uv);\n\
                       out[16 + gid.y * 4 + gid.x] = fetch(d, s, uv);\n\
                   }\n";
        let depth: Vec<f32> = (0..16).map(|k| k as f32 / 16.0).collect();
        let resources = Resources {
            buffers: [(0, vec![0; 32 * 4])].into_iter().collect(),
            textures: [(0, TextureData::new_2d(F::Depth32Float, 4, 4, f32_bytes(&depth)))]
                .into_iter()
                .collect(),
            samplers: [(0, default_sampler())].into_iter().collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "k", &Options::default(), [4, 4, 1], &resources) else {
            return;
        };
        let got = f32s(&out.buffers[&0]);
        for (k, d) in depth.iter().enumerate() {
            assert_eq!(got[k], *d, "kernel, texel {k}");
            assert_eq!(got[16 + k], *d, "helper, texel {k}");
        }
    }

    /// `[[primitive_id]]`: two triangles of a full-screen quad, coloured by
    /// their index (skipped where the adapter lacks `primitive-index`).
    #[test]
    fn primitive_id_colours_each_triangle() {
        let Some(gpu) = gpu() else { return };
        let src = format!(
            "{PRELUDE}constant float2 quad[6] = {{ float2(-1, -1), float2(1, -1), float2(-1, 1),\n\
                                                 float2(1, -1), float2(1, 1), float2(-1, 1) }};\n\
             struct V {{ float4 p [[position]]; }};\n\
             vertex V vs(uint v [[vertex_id]]) {{ return V{{float4(quad[v], 0, 1)}}; }}\n\
             fragment float4 fs(uint prim [[primitive_id]]) {{\n\
                 return prim == 0 ? float4(1, 0, 0, 1) : float4(0, 1, 0, 1);\n\
             }}\n"
        );
        let options = Options {
            target: Target::Wgpu,
            ..Options::default()
        };
        let lib = Library::from_source("t.metal", &src, &options)
            .unwrap_or_else(|f| panic!("{}", f.render()));
        let r = RenderResources::new(16, 16, 6);
        let img = match render_library(gpu, &lib, "vs", "fs", &r) {
            Ok(images) => images.into_iter().next().unwrap(),
            Err(RunError::MissingFeature { feature, adapter }) => {
                eprintln!("note: skipping: {adapter} lacks {feature}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        for y in 0..16u32 {
            for x in 0..16u32 {
                let (px, py) = (x as f32 + 0.5 - 8.0, 8.0 - (y as f32 + 0.5));
                if (px + py).abs() < 1.5 {
                    continue;
                }
                let want: [u8; 4] = if px + py < 0.0 {
                    [255, 0, 0, 255]
                } else {
                    [0, 255, 0, 255]
                };
                let k = ((y * 16 + x) * 4) as usize;
                assert_eq!(&img.data[k..k + 4], &want, "pixel ({x}, {y})");
            }
        }
    }
}
