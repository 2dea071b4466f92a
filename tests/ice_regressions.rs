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
        assert_error(
            &body,
            call,
            0,
            &format!("`{name}` takes vectors, not scalars"),
        );
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
    let lib =
        translate_body("fragment float4 f(uint p [[primitive_id]]) { return float4(float(p)); }\n");
    assert!(
        lib.wgsl().contains("enable primitive_index;"),
        "{}",
        lib.wgsl()
    );
    let f = lib.function("f").unwrap();
    let json = serde_json::to_string(f).unwrap();
    assert!(json.contains("primitive-index"), "{json}");
}

/// Structs holding textures and samplers, built in the stage function and
/// passed to a helper (Tint's `tint_module_vars_struct`), a write-only
/// texture among them: they were naga type errors (and a panic: storage
/// textures only get a format when bound); they translate now.
#[test]
fn structs_of_textures_and_samplers_translate() {
    translate_body(
        "struct Res {\n    texture2d<float> tex;\n    sampler smp;\n};\n\
         float4 look(Res r) { return r.tex.sample(r.smp, float2(0)); }\n\
         fragment float4 f(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]]) {\n\
             Res const r = Res{.tex = t, .smp = s};\n    return look(r);\n}\n",
    );
    translate_body(
        "struct W { texture2d<float, access::write> out; };\n\
         kernel void k(texture2d<float, access::write> t [[texture(0)]]) {\n\
             W w = W{t};\n    w.out.write(float4(1), uint2(0));\n}\n",
    );
}

/// An array of textures in a function (a WGSL array cannot hold one): a
/// located error, not a naga type error.
#[test]
fn local_array_of_textures_is_located() {
    let body =
        "kernel void k(texture2d<float> t [[texture(0)]], device float* o [[buffer(0)]]) {\n\
                    texture2d<float> a[2] = {t, t};\n    o[0] = a[1].get_width();\n}\n";
    assert_error(
        body,
        "a[2]",
        0,
        "`texture2d<float>[2]`: arrays of textures or samplers are not supported yet",
    );
    assert_eq!(first_code(body), Code::Unsupported);
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

/// A derivative of a `half` value: WGSL takes derivatives of `f32` only
/// (naga rejected the IR).
#[test]
fn half_derivatives_are_taken_in_f32() {
    let lib = translate_body(
        "fragment half4 f(float4 p [[position]]) {\n\
             half2 h = half2(p.xy);\n\
             return half4(dfdx(h), fwidth(h.x), dfdy(h.y));\n\
         }\n",
    );
    assert!(
        lib.wgsl().contains("dpdx(") && lib.wgsl().contains("fwidth("),
        "{}",
        lib.wgsl()
    );
}

/// An `f16` made only by a conversion (a `half` member of a buffer read
/// as `float`): the module must still enable `f16`, in the whole module and
/// in each function's own (the writer decides from the types alone).
#[test]
fn f16_made_by_a_conversion_is_enabled() {
    let lib = translate_body(
        "struct P { half h; ushort pad; uint n; };\n\
         kernel void k(device float* out [[buffer(0)]], constant P* p [[buffer(1)]]) {\n\
             out[0] = float((*p).h);\n\
         }\n",
    );
    for wgsl in [lib.wgsl().to_string(), lib.function_wgsl("k").unwrap()] {
        if wgsl.contains("f16") {
            assert!(wgsl.contains("enable f16;"), "{wgsl}");
        }
    }
}

/// Constant operations WGSL would reject when the shader is created
/// (non-finite floats, integer overflow and division by zero) translate:
/// they are computed at run time (checked on the GPU below).
#[test]
fn constant_operations_wgsl_rejects_translate() {
    let lib = translate_body(
        "constant float inf = 1.0 / 0.0;\n\
         constant float2 mixed = float2(1.0, 0.0 / 0.0);\n\
         kernel void k(device float* f [[buffer(0)]], device int* i [[buffer(1)]]) {\n\
             f[0] = 0.0 / 0.0;\n\
             f[1] = -1.0 / 0.0;\n\
             f[2] = half(1e10);\n\
             f[3] = (float4(1.0) / 0.0).y;\n\
             f[4] = inf;\n\
             f[5] = mixed.y;\n\
             i[0] = 2147483647 + 1;\n\
             i[1] = 5 / 0;\n\
             i[2] = 7 % 0;\n\
             i[3] = 6 / 2;\n\
             f[6] = sqrt(-1.0) + log(0.0) + exp(1000.0) + asin(float2(2, 0.5)).x;\n\
         }\n",
    );
    // A constant operation WGSL accepts stays one.
    assert!(lib.wgsl().contains("(6i / 2i)"), "{}", lib.wgsl());
}

/// `metal_math`'s `half` constants and the `half` limits, in functions and
/// in program-scope constant expressions (which did not know the `float`
/// ones either).
#[test]
fn half_math_constants_and_limits() {
    translate_body(
        "constant float two_pi = 2 * M_PI_F;\n\
         constant half root = M_SQRT2_H;\n\
         kernel void k(device half* o [[buffer(0)]], device float* f [[buffer(1)]]) {\n\
             o[0] = M_PI_H; o[1] = M_E_H; o[2] = HALF_MAX; o[3] = MAXHALF; o[4] = HALF_MIN;\n\
             o[5] = HALF_EPSILON; o[6] = root; f[0] = two_pi;\n\
             float a[int(M_E_F)]; a[1] = 1; f[1] = a[1];\n\
         }\n",
    );
}

/// Arrays sized by their initializer list, at program and function scope;
/// an array with neither is a located error.
#[test]
fn arrays_sized_by_their_initializers() {
    let lib = translate_body(
        "constant float w[] = {1, 2, 3};\n\
         constant float2 m[][2] = {{float2(1), float2(2)}, {float2(3), float2(4)}, {float2(5), float2(6)}};\n\
         kernel void k(device float* o [[buffer(0)]]) {\n\
             float l[] = {4, 5};\n\
             o[0] = w[2] + l[1] + m[2][1].x + sizeof(w) / sizeof(w[0]) + sizeof(m) / sizeof(m[0]);\n\
         }\n",
    );
    assert!(lib.wgsl().contains("array<f32, 3>"), "{}", lib.wgsl());
    let body = "kernel void k(device float* o [[buffer(0)]]) {\n    float l[];\n    o[0] = 1;\n}\n";
    assert_error(
        body,
        "l[]",
        0,
        "array `l` needs a size, or an initializer list to count it",
    );
    let body =
        "constant float w[];\nkernel void k(device float* o [[buffer(0)]]) { o[0] = w[0]; }\n";
    assert_error(body, "w[]", 0, "array `w` needs a size");
    // Where no initializer can size it, the error still has a place: the
    // member, or the function with the parameter.
    let body =
        "struct S { float a[]; };\nkernel void k(device S* o [[buffer(0)]]) { o[0].a[0] = 1; }\n";
    assert_error(body, "a[]", 0, "arrays need a size");
    let body =
        "void h(thread float a[]) {}\nkernel void k(device float* o [[buffer(0)]]) { o[0] = 1; }\n";
    assert_error(body, "h(", 0, "arrays need a size");
}

/// `static constexpr sampler` at program scope is a sampler, not a
/// function declaration (it was "use of undeclared identifier").
#[test]
fn static_constexpr_sampler_at_program_scope() {
    let lib = translate_body(
        "static constexpr sampler s(filter::linear);\n\
         constexpr static sampler s2(address::repeat);\n\
         fragment float4 f(texture2d<float> t [[texture(0)]], float4 p [[position]]) {\n\
             return t.sample(s, p.xy) + t.sample(s2, p.xy);\n\
         }\n",
    );
    let json = serde_json::to_string(lib.function("f").unwrap()).unwrap();
    assert!(json.contains("\"s2\""), "{json}");
}

/// Metal samples with implicit derivatives in divergent control flow; WGSL's
/// uniformity analysis (Tint's) rejects that unless the module turns it off.
#[test]
fn implicit_derivatives_turn_off_derivative_uniformity() {
    let lib = translate_body(
        "fragment float4 f(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]], float4 p [[position]]) {\n\
             float4 c = 0;\n\
             if (p.x > 3) { c = t.sample(s, p.xy); }\n\
             return c;\n\
         }\n",
    );
    assert!(
        lib.wgsl()
            .starts_with("diagnostic(off, derivative_uniformity);"),
        "{}",
        lib.wgsl()
    );
    let lib = translate_body("kernel void k(device float* o [[buffer(0)]]) { o[0] = 1; }\n");
    assert!(
        !lib.wgsl().contains("derivative_uniformity"),
        "{}",
        lib.wgsl()
    );
}

/// Helpers of a fragment function follow its rules: `discard_fragment`,
/// derivatives and implicit-LOD sampling (before: a located "only available
/// in fragment functions" error, and level-0 sampling). A helper that a
/// kernel calls too is lowered again for it, sampling level 0.
#[test]
fn fragment_helpers_discard_and_sample_with_derivatives() {
    let lib = translate_body(
        "void cut(float a) { if (a < 0.5) discard_fragment(); }\n\
         float4 fetch(texture2d<float> t, sampler s, float2 uv) { return t.sample(s, uv); }\n\
         fragment float4 f(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]], float4 p [[position]]) {\n\
             cut(p.x);\n\
             return fetch(t, s, p.xy) + dfdx(p.x);\n\
         }\n\
         kernel void k(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]], device float4* o [[buffer(0)]]) {\n\
             o[0] = fetch(t, s, float2(0.5));\n\
         }\n",
    );
    let f = lib.function_wgsl("f").unwrap();
    assert!(
        f.contains("discard;")
            && f.contains("textureSample(")
            && !f.contains("textureSampleLevel("),
        "{f}"
    );
    let k = lib.function_wgsl("k").unwrap();
    assert!(
        k.contains("textureSampleLevel(") && !k.contains("textureSample("),
        "{k}"
    );
}

/// A struct template with only a specialisation (its primary declared but
/// not defined): located errors, not a panic. The specialisation is found
/// (a declared primary is enough, as in C++) and matches the pointer
/// argument (`T` is `float`); reading the pointer member, which nothing
/// assigned, is what is refused.
#[test]
fn specialisation_without_a_primary_template_is_located() {
    let body = "template <typename T> struct D;\n\
                template <typename T> struct D<device T*> { device T* p; };\n\
                kernel void k(device float* o [[buffer(0)]]) { D<device float*> d; o[0] = *d.p; }\n";
    assert_eq!(first_code(body), Code::InvalidInitializer);
    // With no specialisation that matches, the undefined primary is named.
    let body = "template <typename T> struct D;\n\
                template <typename T> struct D<device T*> { device T* p; };\n\
                kernel void k(device float* o [[buffer(0)]]) { D<float> d; o[0] = 1; }\n";
    assert_eq!(first_code(body), Code::Template);
}

/// Copies of an object holding atomics (a variable, a parameter, a result)
/// cannot exist in WGSL (nor in Metal): located errors, not naga's "can't
/// be stored in a local variable".
#[test]
fn copies_of_atomic_objects_are_located() {
    let s = "struct A { atomic_uint c; uint x; };\n";
    let body =
        format!("{s}kernel void k(device A* a [[buffer(0)]]) {{ A b; b.x = 1; a[0].x = b.x; }}\n");
    assert_error(&body, "b;", 0, "variable `b` of type `A` holds atomics");
    assert_eq!(first_code(&body), Code::AddressSpace);
    let body = format!(
        "{s}uint get(A v) {{ return v.x; }}\n\
         kernel void k(device A* a [[buffer(0)]], device uint* o [[buffer(1)]]) {{ o[0] = get(a[0]); }}\n"
    );
    assert_error(&body, "A v", 0, "parameter `v` of type `A` holds atomics");
    let body = format!(
        "{s}A make(device A* a) {{ return a[0]; }}\n\
         kernel void k(device A* a [[buffer(0)]], device uint* o [[buffer(1)]]) {{ o[0] = make(a).x; }}\n"
    );
    assert_error(&body, "A make", 0, "the result of type `A` holds atomics");
}

/// A `[[stage_in]]` struct named through a typedef: the fragment inputs
/// were looked up by the written name, missed the library's varying table
/// (`[[flat]]` members), and a lookup panicked. Rendered below.
#[test]
fn stage_in_through_a_typedef_translates() {
    translate_body(
        "struct VertexOut { float4 p [[position]]; float c [[flat]]; float2 uv; };\n\
         typedef VertexOut FragmentIn;\n\
         vertex VertexOut vs(uint v [[vertex_id]]) { return VertexOut{float4(0, 0, 0, 1), 0.5, float2(0)}; }\n\
         fragment float4 fs(FragmentIn in [[stage_in]]) { return float4(in.c, in.uv, 1); }\n",
    );
}

#[cfg(feature = "runner")]
mod gpu {
    use super::common::source::PRELUDE;
    use super::common::{f32_bytes, f32s, gpu};
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
                [
                    a.sin(),
                    a.cos() * 0.5,
                    -1.0 + 0.1 * k as f32,
                    0.6 + 0.1 * k as f32,
                ]
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
                assert_eq!(
                    &out.textures[&2].data[k..k + 4],
                    &[x as u8, y as u8, 0, 255]
                );
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
            textures: [(
                0,
                TextureData::new_2d(F::R32Float, 4, 4, f32_bytes(&values)),
            )]
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
        if super::common::skip(super::common::Limit::DepthSample) {
            return;
        }
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
            textures: [(
                0,
                TextureData::new_2d(F::Depth32Float, 4, 4, f32_bytes(&depth)),
            )]
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

    /// Constant operations WGSL rejects at shader creation, computed at run
    /// time: NaNs and infinities as IEEE arithmetic gives them, an `int`
    /// overflow wrapping (what Metal's GPUs do for this undefined case).
    #[test]
    fn non_finite_constants_on_the_gpu() {
        let src = "constant float inf = 1.0 / 0.0;\n\
                   constant float2 mixed = float2(1.0, 0.0 / 0.0);\n\
                   kernel void k(device float* f [[buffer(0)]], device int* i [[buffer(1)]]) {\n\
                       f[0] = 0.0 / 0.0;\n\
                       f[1] = -1.0 / 0.0;\n\
                       f[2] = half(1e10);\n\
                       f[3] = (float4(1.0) / 0.0).y;\n\
                       f[4] = inf;\n\
                       f[5] = mixed.y;\n\
                       f[6] = mixed.x;\n\
                       f[7] = sqrt(-1.0);\n\
                       f[8] = log(0.0);\n\
                       f[9] = exp(1000.0);\n\
                       f[10] = sqrt(4.0);\n\
                       i[0] = 2147483647 + 1;\n\
                       i[1] = 6 / 2;\n\
                   }\n";
        let resources = Resources {
            buffers: [(0, vec![0; 11 * 4]), (1, vec![0; 2 * 4])]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "k", &Options::default(), [1, 1, 1], &resources) else {
            return;
        };
        let f = f32s(&out.buffers[&0]);
        assert!(f[0].is_nan(), "{f:?}");
        assert_eq!(f[1], f32::NEG_INFINITY, "{f:?}");
        assert_eq!(f[2], f32::INFINITY, "{f:?}");
        assert_eq!(f[3], f32::INFINITY, "{f:?}");
        assert_eq!(f[4], f32::INFINITY, "{f:?}");
        assert!(f[5].is_nan(), "{f:?}");
        assert_eq!(f[6], 1.0, "{f:?}");
        assert!(f[7].is_nan(), "{f:?}");
        assert_eq!(f[8], f32::NEG_INFINITY, "{f:?}");
        assert_eq!(f[9], f32::INFINITY, "{f:?}");
        assert_eq!(f[10], 2.0, "{f:?}");
        let i = super::common::u32s(&out.buffers[&1]);
        assert_eq!(i, [i32::MIN as u32, 3]);
    }

    /// `M_*_H`, the `half` limits and `M_*_F` in a program-scope constant
    /// expression, against their values rounded to `half` and `float`.
    #[test]
    fn math_constants_on_the_gpu() {
        let src = "constant float two_pi = 2 * M_PI_F;\n\
                   kernel void k(device float* f [[buffer(0)]]) {\n\
                       f[0] = M_PI_H; f[1] = M_E_H; f[2] = M_SQRT1_2_H; f[3] = M_LOG2E_H;\n\
                       f[4] = HALF_MAX; f[5] = HALF_MIN; f[6] = HALF_EPSILON; f[7] = two_pi;\n\
                   }\n";
        let resources = Resources {
            buffers: [(0, vec![0; 8 * 4])].into_iter().collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "k", &Options::default(), [1, 1, 1], &resources) else {
            return;
        };
        use std::f64::consts as c;
        let h = |v: f64| half::f16::from_f64(v).to_f32();
        let want = [
            h(c::PI),
            h(c::E),
            h(c::FRAC_1_SQRT_2),
            h(c::LOG2_E),
            65504.0,
            2f32.powi(-14),
            2f32.powi(-10),
            2.0 * std::f32::consts::PI,
        ];
        assert_eq!(f32s(&out.buffers[&0]), want);
    }

    /// Arrays sized by their initializers, read back.
    #[test]
    fn arrays_sized_by_their_initializers_on_the_gpu() {
        let src = "constant float w[] = {1, 2, 3};\n\
                   constant int m[][2] = {{1, 2}, {3, 4}, {5, 6}};\n\
                   kernel void k(device float* o [[buffer(0)]]) {\n\
                       float l[] = {4, 5};\n\
                       o[0] = w[2]; o[1] = l[1]; o[2] = m[2][1];\n\
                       o[3] = sizeof(w) / sizeof(w[0]); o[4] = sizeof(m) / sizeof(m[0]); o[5] = sizeof(l);\n\
                   }\n";
        let resources = Resources {
            buffers: [(0, vec![0; 6 * 4])].into_iter().collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "k", &Options::default(), [1, 1, 1], &resources) else {
            return;
        };
        assert_eq!(f32s(&out.buffers[&0]), [3.0, 5.0, 6.0, 3.0, 3.0, 8.0]);
    }

    /// A program-scope `static constexpr sampler` (pixel coordinates,
    /// nearest) sampling a texture in a kernel.
    #[test]
    fn static_constexpr_sampler_on_the_gpu() {
        let src = "static constexpr sampler px(coord::pixel, filter::nearest);\n\
                   kernel void k(texture2d<float> t [[texture(0)]], device float* o [[buffer(0)]],\n\
                                 uint i [[thread_position_in_grid]]) {\n\
                       o[i] = t.sample(px, float2(i % 4 + 0.5, i / 4 + 0.5)).r;\n\
                   }\n";
        let texels: Vec<u8> = (0..16u8).flat_map(|k| [k * 15, 0, 0, 255]).collect();
        let resources = Resources {
            buffers: [(0, vec![0; 16 * 4])].into_iter().collect(),
            textures: [(0, TextureData::new_2d(F::Rgba8Unorm, 4, 4, texels))]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "k", &Options::default(), [16, 1, 1], &resources) else {
            return;
        };
        let got = f32s(&out.buffers[&0]);
        for (k, g) in got.iter().enumerate() {
            let want = (k * 15) as f32 / 255.0;
            assert!((g - want).abs() < 1e-6, "texel {k}: got {g}, want {want}");
        }
    }

    /// A fragment function's helpers: one discards the left half of the
    /// target, another samples a mipmapped texture with the implicit LOD
    /// (each pixel spans two texels: level 1, green; level 0 would be red).
    #[test]
    fn fragment_helpers_discard_and_pick_the_mip_level() {
        let Some(gpu) = gpu() else { return };
        let src = format!(
            "{PRELUDE}constant float2 tri[3] = {{ float2(-1, -1), float2(3, -1), float2(-1, 3) }};\n\
             struct V {{ float4 p [[position]]; }};\n\
             vertex V vs(uint v [[vertex_id]]) {{ return V{{float4(tri[v], 0, 1)}}; }}\n\
             void cut(float x) {{ if (x < 4) discard_fragment(); }}\n\
             float4 look(texture2d<float> t, sampler s, float2 uv) {{ return t.sample(s, uv); }}\n\
             fragment float4 fs(V in [[stage_in]], texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]]) {{\n\
                 cut(in.p.x);\n\
                 return look(t, s, in.p.xy / 8.0);\n\
             }}\n"
        );
        let options = Options {
            target: Target::Wgpu,
            ..Options::default()
        };
        let lib = Library::from_source("t.metal", &src, &options)
            .unwrap_or_else(|f| panic!("{}", f.render()));
        // 16x16 level 0 red, 8x8 level 1 green, then blue levels.
        let mut data = Vec::new();
        let blue = [0, 0, 255, 255];
        let levels = [[255u8, 0, 0, 255], [0, 255, 0, 255], blue, blue, blue];
        for (level, colour) in levels.iter().enumerate() {
            let side = 16usize >> level;
            for _ in 0..side * side {
                data.extend_from_slice(colour);
            }
        }
        let mut r = RenderResources::new(8, 8, 3);
        r.textures
            .insert(0, TextureData::new_2d_mips(F::Rgba8Unorm, 16, 16, 5, data));
        let mut sampler = default_sampler();
        sampler.lod_max_clamp = 32.0;
        r.samplers.insert(0, sampler);
        let img = render_library(gpu, &lib, "vs", "fs", &r).unwrap().remove(0);
        for y in 0..8u32 {
            for x in 0..8u32 {
                let k = ((y * 8 + x) * 4) as usize;
                let want: [u8; 4] = if x < 4 {
                    [0, 0, 0, 0]
                } else {
                    [0, 255, 0, 255]
                };
                assert_eq!(&img.data[k..k + 4], &want, "pixel ({x}, {y})");
            }
        }
    }

    /// `thread` references and pointers to parts of variables (a member, an
    /// array element, a matrix column) passed to helpers that read and
    /// write them: wgpu's SPIR-V writer panicked on such call arguments
    /// ("Expression is not cached"); they are passed as copies written back.
    #[test]
    fn references_to_parts_of_variables_passed_to_helpers() {
        let src = "struct S { int i; float2 v[3]; };\n\
                   void bump(thread int& x) { x += 10; }\n\
                   void scale(thread float2* p, float k) { *p *= k; }\n\
                   float peek(const thread float2& v) { return v.y; }\n\
                   kernel void k(device float* o [[buffer(0)]], uint t [[thread_position_in_grid]]) {\n\
                       S s = {1, {float2(1, 2), float2(3, 4), float2(5, 6)}};\n\
                       float2x2 m = float2x2(float2(7, 8), float2(9, 10));\n\
                       bump(s.i);\n\
                       scale(&s.v[t + 1], 2);\n\
                       scale(&m[1], 3);\n\
                       o[0] = s.i; o[1] = s.v[1].x; o[2] = s.v[1].y; o[3] = s.v[2].x;\n\
                       o[4] = m[1].x; o[5] = m[0].y; o[6] = peek(s.v[0]);\n\
                   }\n";
        let resources = Resources {
            buffers: [(0, vec![0; 7 * 4])].into_iter().collect(),
            ..Default::default()
        };
        let Some(out) = kernel(src, "k", &Options::default(), [1, 1, 1], &resources) else {
            return;
        };
        assert_eq!(
            f32s(&out.buffers[&0]),
            [11.0, 6.0, 8.0, 5.0, 27.0, 8.0, 2.0]
        );
    }

    /// A `[[stage_in]]` struct named through a typedef, with a `[[flat]]`
    /// member, linked from the vertex function to the fragment function.
    #[test]
    fn stage_in_through_a_typedef_renders() {
        if super::common::skip(super::common::Limit::FlatFirstVertex) {
            return;
        }
        let Some(gpu) = gpu() else { return };
        let src = format!(
            "{PRELUDE}constant float2 tri[3] = {{ float2(-1, -1), float2(3, -1), float2(-1, 3) }};\n\
             struct VertexOut {{ float4 p [[position]]; float c [[flat]]; float2 uv; }};\n\
             typedef VertexOut FragmentIn;\n\
             vertex VertexOut vs(uint v [[vertex_id]]) {{\n\
                 return VertexOut{{float4(tri[v], 0, 1), 0.25 * (v + 1), float2(0.5)}};\n\
             }}\n\
             fragment float4 fs(FragmentIn in [[stage_in]]) {{ return float4(in.c, in.uv, 1); }}\n"
        );
        let options = Options {
            target: Target::Wgpu,
            ..Options::default()
        };
        let lib = Library::from_source("t.metal", &src, &options)
            .unwrap_or_else(|f| panic!("{}", f.render()));
        let img = render_library(gpu, &lib, "vs", "fs", &RenderResources::new(4, 4, 3))
            .unwrap()
            .remove(0);
        // Flat: the provoking (first) vertex's 0.25 everywhere.
        for px in img.data.chunks_exact(4) {
            assert_eq!(px, [64, 128, 128, 255]);
        }
    }
}
