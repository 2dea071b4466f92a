//! Argument buffers (MSL §2.13): a `[[buffer(n)]]` struct of textures,
//! samplers, pointers and plain data, with explicit and implicit
//! `[[id(n)]]`s. Reflection (ids, bindings, data offsets) is checked
//! without a GPU; kernels and a fragment function run through the runner
//! against CPU references; each refusal is a located, coded diagnostic.

mod common;

use common::source::{assert_error, first_code, translate_body};
use msl2wgsl::diagnostics::Code;
use msl2wgsl::reflect::{Argument, ArgumentKind, BufferBindingType};

/// A kernel reading every kind of member: a texture sampled and one read,
/// a sampler, pointers (`device`, `const device`, `constant` to a struct),
/// data (`float4`, `uint`) and an array of textures, indexed by constants
/// and passed to a helper; ids explicit (0, 1, 2, 6) and implicit.
const KERNEL: &str = r#"
struct Params { float scale; float bias; };
struct Args {
    texture2d<float> tex [[id(0)]];
    sampler smp [[id(1)]];
    device float* out [[id(2)]];
    const device float* in;
    float4 tint [[id(6)]];
    uint count;
    constant Params* params;
    array<texture2d<float>, 2> extra;
};
float scaled(constant Args& a, uint i) { return a.in[i] * a.params->scale + a.params->bias; }
float corner(constant array<texture2d<float>, 2>& ts, uint k) { return ts[1].read(uint2(k, 0)).x - ts[0].read(uint2(k, 0)).y; }
kernel void k(device uint* seen [[buffer(0)]], constant Args& args [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
    if (gid >= args.count) return;
    float2 uv = float2((float(gid % 4) + 0.5) / 4.0, 0.5);
    float s = args.tex.sample(args.smp, uv, level(0)).z;
    float e = corner(args.extra, gid % 2);
    args.out[gid] = scaled(args, gid) + args.tint.y * s + e;
    seen[gid] = gid;
}
"#;

/// Metal's layout of `Args` above: each resource 8 bytes, aligned to 8.
const TINT_AT: usize = 32;
const COUNT_AT: usize = 48;
const ARGS_SIZE: usize = 80;

fn member<'a>(arg: &'a Argument, name: &str) -> &'a Argument {
    arg.members
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no member `{name}` in {:?}", arg.members))
}

#[test]
fn reflection_lists_members_with_ids_and_bindings() {
    let lib = translate_body(KERNEL);
    let f = lib.function("k").unwrap();
    let args = f.arguments.iter().find(|a| a.name == "args").unwrap();
    assert_eq!((args.kind, args.index), (ArgumentKind::Buffer, 1));
    let buffer = args.buffer.as_ref().unwrap();
    assert_eq!(buffer.data_size as usize, ARGS_SIZE);
    // The data members stay at `[[buffer(1)]]`'s binding, as a uniform.
    assert_eq!(args.binding.unwrap().binding, 1);
    assert_eq!(buffer.binding_type, BufferBindingType::Uniform);
    let st = buffer.struct_type.as_ref().unwrap();
    let ids: Vec<(&str, u32, u32)> = st
        .members
        .iter()
        .map(|m| (m.name.as_str(), m.argument_index.unwrap(), m.offset))
        .collect();
    // Implicit ids: one past the previous member's last (MSL §2.13).
    assert_eq!(
        ids,
        [
            ("tex", 0, 0),
            ("smp", 1, 8),
            ("out", 2, 16),
            ("in", 3, 24),
            ("tint", 6, TINT_AT as u32),
            ("count", 7, COUNT_AT as u32),
            ("params", 8, 56),
            ("extra", 9, 64),
        ]
    );
    let want = [
        ("args.tex", ArgumentKind::Texture, 0),
        ("args.smp", ArgumentKind::Sampler, 1),
        ("args.out", ArgumentKind::Buffer, 2),
        ("args.in", ArgumentKind::Buffer, 3),
        ("args.params", ArgumentKind::Buffer, 8),
        ("args.extra[0]", ArgumentKind::Texture, 9),
        ("args.extra[1]", ArgumentKind::Texture, 10),
    ];
    let mut bindings = Vec::new();
    for (name, kind, id) in want {
        let m = member(args, name);
        assert_eq!((m.kind, m.index), (kind, id), "{name}");
        assert!(m.active, "{name} is used");
        bindings.push(m.binding.unwrap().binding);
    }
    assert_eq!(bindings, (256..263).collect::<Vec<_>>());
    // The WGSL declares each binding the reflection names.
    for b in bindings {
        assert!(
            lib.wgsl().contains(&format!("@group(0) @binding({b})")),
            "binding {b} missing:\n{}",
            lib.wgsl()
        );
    }
}

#[test]
fn implicit_ids_follow_apples_rules_for_arrays_and_structs() {
    // Apple's "Indexing argument buffers" example, with a struct of data:
    // an array takes one id per element, a struct as many as its members.
    let lib = translate_body(
        r#"
struct MaterialTexture { float4 uvScaleOffset; float2 size; };
struct Material {
    float4 diffuse;
    array<texture2d<float>, 3> texSet1;
    texture2d<float> texSet2[3];
    MaterialTexture materials[3];
    int constants[4] [[id(20)]];
    device float* out;
};
kernel void k(constant Material& m [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    m.out[i] = m.diffuse.x + m.texSet2[2].read(uint2(0, 0)).x + m.materials[1].size.y
             + float(m.constants[3]) + m.texSet1[0].read(uint2(0, 0)).y;
}
"#,
    );
    let a = &lib.function("k").unwrap().arguments[0];
    let st = a.buffer.as_ref().unwrap().struct_type.as_ref().unwrap();
    let ids: Vec<u32> = st
        .members
        .iter()
        .map(|m| m.argument_index.unwrap())
        .collect();
    assert_eq!(ids, [0, 1, 4, 7, 20, 24]);
    assert_eq!(member(a, "m.texSet2[2]").index, 6);
    assert_eq!(member(a, "m.out").index, 24);
    assert!(!member(a, "m.texSet1[1]").active);
}

#[test]
fn sampler_members_used_for_comparison_are_comparison_samplers() {
    let lib = translate_body(
        r#"
struct Args { depth2d<float> d; sampler shadow; sampler plain; device float* out; };
float lit(constant Args& a, float2 uv) { return a.d.sample_compare(a.shadow, uv, 0.5); }
kernel void k(constant Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    a.out[i] = lit(a, float2(0.5)) + a.d.sample(a.plain, float2(0.5), level(0));
}
"#,
    );
    let a = &lib.function("k").unwrap().arguments[0];
    let comparison = |n: &str| member(a, n).sampler.as_ref().unwrap().comparison;
    assert!(comparison("a.shadow"));
    assert!(!comparison("a.plain"));
    // The WGSL binds it as one (naga may rename the global after the
    // helper's parameter of the same name).
    let at = member(a, "a.shadow").binding.unwrap().binding;
    let decl = format!("@group(0) @binding({at}) \nvar a_shadow");
    let wgsl = lib.wgsl();
    let tail = &wgsl[wgsl.find(&decl).unwrap_or_else(|| panic!("{wgsl}"))..];
    assert!(
        tail.lines()
            .nth(1)
            .unwrap()
            .ends_with(": sampler_comparison;"),
        "{wgsl}"
    );
}

#[test]
fn unused_members_are_inactive() {
    let lib = translate_body(
        r#"
struct Args { texture2d<float> t; device float* used; device float* unused; };
kernel void k(device Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a.used[i] = 1.0f; }
"#,
    );
    let a = &lib.function("k").unwrap().arguments[0];
    assert!(a.active);
    assert_eq!(a.binding, None, "no data members, no data binding");
    assert!(member(a, "a.used").active);
    assert!(!member(a, "a.unused").active);
    assert!(!member(a, "a.t").active);
}

#[test]
fn pointer_form_and_helpers_taking_the_buffer() {
    // `constant Args*` read through `->`, `(*p).m` and `p[0].m`, and a
    // helper taking the pointer.
    let lib = translate_body(
        r#"
struct Args { device float* out; uint n [[id(3)]]; float k; };
float twice(constant Args* a) { return a->k * 2.0f; }
kernel void k(constant Args* args [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < args->n) args->out[i] = twice(args) + (*args).k + args[0].k;
}
"#,
    );
    let a = &lib.function("k").unwrap().arguments[0];
    assert!(a.buffer.as_ref().unwrap().is_pointer);
    assert_eq!(member(a, "args.out").index, 0);
}

#[test]
fn texture_array_element_chosen_at_run_time_is_refused_where_it_escapes() {
    // A run-time element is used in a `switch` around each call
    // (tests/resource_arrays.rs); stored in a struct it has no use to
    // switch around.
    let body = r#"
struct Args { array<texture2d<float>, 4> ts [[id(0)]]; device float* out [[id(4)]]; };
struct Held { texture2d<float> t; };
kernel void k(constant Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    Held h = { a.ts[i % 4] };
    a.out[i] = h.t.read(uint2(0, 0)).x;
}
"#;
    assert_error(
        body,
        "i % 4",
        0,
        "an element of an array of `texture2d<float>` chosen at run time can only be used directly here: WGSL and WebGPU have no binding arrays",
    );
    assert_eq!(first_code(body), Code::NoWebGpuEquivalent);
}

#[test]
fn buffer_of_argument_buffers_indexed_past_the_first_is_refused() {
    let body = r#"
struct Instance { texture2d<float> t; float2 at; };
kernel void k(device Instance* all [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    out[i] = all[i].at.x;
}
"#;
    assert_error(
        body,
        "all[i]",
        0,
        "a buffer of argument buffers `Instance` indexed past the first: WGSL and WebGPU have no binding arrays",
    );
    assert_eq!(first_code(body), Code::NoWebGpuEquivalent);
}

#[test]
fn constant_index_past_the_end_is_refused() {
    let body = r#"
struct Args { array<sampler, 2> ss; texture2d<float> t; device float4* out; };
kernel void k(constant Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    a.out[i] = a.t.sample(a.ss[2], float2(0.5));
}
"#;
    assert_error(
        body,
        "a.ss[2]",
        0,
        "index 2 is past the end of an array of 2 elements",
    );
    assert_eq!(first_code(body), Code::IndexOutOfBounds);
}

#[test]
fn ids_must_increase() {
    let body = r#"
struct Args { texture2d<float> t [[id(4)]]; device float* out [[id(2)]]; };
kernel void k(constant Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    a.out[i] = 1.0f;
}
"#;
    assert_error(
        body,
        "out [[id(2)]]",
        0,
        "`[[id(2)]]` of `out` is below the ids the members before it take (the next free one is 5)",
    );
    assert_eq!(first_code(body), Code::InvalidAttributeArgument);
}

#[test]
fn nested_struct_of_resources_is_refused() {
    let body = r#"
struct Inner { texture2d<float> t; };
struct Args { Inner inner; device float* out; };
kernel void k(constant Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    a.out[i] = a.inner.t.read(uint2(0, 0)).x;
}
"#;
    assert_error(
        body,
        "inner;",
        0,
        "member `inner` of type `Inner` in an argument buffer is not supported yet",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}

#[test]
fn too_many_member_bindings_are_refused() {
    let body = r#"
struct Args { array<sampler, 800> many; device float* out; };
kernel void k(constant Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    a.out[i] = 1.0f;
}
"#;
    assert_error(
        body,
        "many;",
        0,
        "the resources of argument buffer `a` need bindings past @binding(999)",
    );
    assert_eq!(first_code(body), Code::Binding);
}

#[cfg(feature = "runner")]
mod gpu {
    use super::*;
    use common::source::PRELUDE;
    use common::{f32_bytes, f32s, gpu, u32s};
    use msl2wgsl::runner::{
        render_library, run_kernel_resources, texture_format, ArgumentBuffer, Dispatch,
        RenderResources, Resources, TextureData,
    };
    use msl2wgsl::{Library, Options};
    use std::collections::BTreeMap;

    /// An rgba32float texture of `w`×1 texels.
    fn texture(w: u32, texel: impl Fn(u32) -> [f32; 4]) -> TextureData {
        let data: Vec<f32> = (0..w).flat_map(texel).collect();
        TextureData::new_2d(
            texture_format("rgba32float").unwrap(),
            w,
            1,
            f32_bytes(&data),
        )
    }

    #[test]
    fn kernel_reads_every_kind_of_member() {
        let Some(gpu) = gpu() else { return };
        let n = 37u32;
        let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 3.0).collect();
        let (scale, bias) = (1.5f32, -0.5f32);
        let tint = [9.0f32, 2.0, 7.0, 5.0];
        let main = |x: u32| [x as f32, 10.0 + x as f32, 0.5 * x as f32 + 1.0, 1.0];
        let extra0 = |x: u32| [0.0, 3.0 * x as f32, 0.0, 0.0];
        let extra1 = |x: u32| [100.0 + x as f32, 0.0, 0.0, 0.0];
        // The argument buffer's bytes: Metal's layout of `Args`, the
        // resource slots left zero.
        let mut data = vec![0u8; ARGS_SIZE];
        data[TINT_AT..TINT_AT + 16].copy_from_slice(&f32_bytes(&tint));
        data[COUNT_AT..COUNT_AT + 4].copy_from_slice(&(n - 5).to_le_bytes());
        let members = ArgumentBuffer {
            buffers: BTreeMap::from([
                (2, vec![0u8; 4 * n as usize]),
                (3, f32_bytes(&input)),
                (8, f32_bytes(&[scale, bias])),
            ]),
            textures: BTreeMap::from([
                (0, texture(4, main)),
                (9, texture(2, extra0)),
                (10, texture(2, extra1)),
            ]),
            samplers: BTreeMap::new(),
        };
        let resources = Resources {
            buffers: BTreeMap::from([(0, vec![0xff; 4 * n as usize]), (1, data)]),
            argument_buffers: BTreeMap::from([(1, members)]),
            ..Default::default()
        };
        let src = format!("{PRELUDE}{KERNEL}");
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [8, 1, 1],
        };
        let out = run_kernel_resources(
            gpu,
            "t.metal",
            &src,
            &Options::default(),
            "k",
            &dispatch,
            &resources,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let got = f32s(&out.argument_buffers[&1].buffers[&2]);
        let seen = u32s(&out.buffers[&0]);
        for i in 0..n {
            let k = i % 2;
            let want = if i < n - 5 {
                let s = main(i % 4)[2];
                let e = extra1(k)[0] - extra0(k)[1];
                input[i as usize] * scale + bias + tint[1] * s + e
            } else {
                0.0
            };
            assert_eq!(got[i as usize], want, "out[{i}]");
            let want_seen = if i < n - 5 { i } else { u32::MAX };
            assert_eq!(seen[i as usize], want_seen, "seen[{i}]");
        }
        // The input member comes back unchanged, under its id.
        assert_eq!(f32s(&out.argument_buffers[&1].buffers[&3]), input);
    }

    #[test]
    fn device_argument_buffer_data_is_written_back() {
        let Some(gpu) = gpu() else { return };
        // `device Args&`: data members are writable; `counts` is a
        // `device uint*` member written per thread, `total` a data member
        // written by thread 0.
        let src = format!(
            "{PRELUDE}{}",
            r#"
struct Args { device uint* counts; uint base; uint total; };
void bump(device Args& a, uint i) { a.counts[i] = a.base + i * i; }
kernel void k(device Args& a [[buffer(3)]], uint i [[thread_position_in_grid]]) {
    bump(a, i);
    if (i == 0) a.total = a.base * 2u;
}
"#
        );
        let base = 41u32;
        let mut data = vec![0u8; 16];
        data[8..12].copy_from_slice(&base.to_le_bytes());
        let n = 20u32;
        let resources = Resources {
            buffers: BTreeMap::from([(3, data)]),
            argument_buffers: BTreeMap::from([(
                3,
                ArgumentBuffer {
                    buffers: BTreeMap::from([(0, vec![0u8; 4 * n as usize])]),
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [4, 1, 1],
        };
        let out = run_kernel_resources(
            gpu,
            "t.metal",
            &src,
            &Options::default(),
            "k",
            &dispatch,
            &resources,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let counts = u32s(&out.argument_buffers[&3].buffers[&0]);
        let want: Vec<u32> = (0..n).map(|i| base + i * i).collect();
        assert_eq!(counts, want);
        let data = u32s(&out.buffers[&3]);
        assert_eq!((data[2], data[3]), (base, base * 2));
    }

    #[test]
    fn data_held_as_words_and_a_member_viewed_as_bytes() {
        let Some(gpu) = gpu() else { return };
        // `bool`, `char` and `packed_float3` data (which WGSL lays out
        // otherwise: the data binding is held as words), and a `device
        // uint*` member written through a `device uchar*` view.
        let src = format!(
            "{PRELUDE}{}",
            r#"
struct Args {
    device uint* words;
    bool flip;
    char bias;
    packed_float3 scale;
    uint n;
};
kernel void k(constant Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    if (i >= a.n) return;
    device uchar* b = (device uchar*)a.words;
    b[i] = uchar(int(i) * 3 + a.bias + (a.flip ? 100 : 0) + int(a.scale.y));
}
"#
        );
        let (flip, bias, scale, n) = (true, -7i8, [0.5f32, 20.0, 9.0], 30u32);
        let mut data = vec![0u8; 32];
        data[8] = u8::from(flip);
        data[9] = bias as u8;
        data[12..24].copy_from_slice(&f32_bytes(&scale));
        data[24..28].copy_from_slice(&n.to_le_bytes());
        let resources = Resources {
            buffers: BTreeMap::from([(0, data)]),
            argument_buffers: BTreeMap::from([(
                0,
                ArgumentBuffer {
                    buffers: BTreeMap::from([(0, vec![0xee; 32])]),
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        let dispatch = Dispatch::Threads {
            grid: [32, 1, 1],
            threadgroup: [8, 1, 1],
        };
        let out = run_kernel_resources(
            gpu,
            "t.metal",
            &src,
            &Options::default(),
            "k",
            &dispatch,
            &resources,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let bytes = &out.argument_buffers[&0].buffers[&0];
        for i in 0..32u32 {
            let want = if i < n {
                (i as i32 * 3 + i32::from(bias) + 100 * i32::from(flip) + scale[1] as i32) as u8
            } else {
                0xee
            };
            assert_eq!(bytes[i as usize], want, "byte {i}");
        }
    }

    #[test]
    fn missing_member_is_named() {
        let Some(gpu) = gpu() else { return };
        let src = format!(
            "{PRELUDE}{}",
            "struct Args { device float* out [[id(7)]]; };\n\
             kernel void k(device Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a.out[i] = 1.0f; }\n"
        );
        let dispatch = Dispatch::Threads {
            grid: [4, 1, 1],
            threadgroup: [4, 1, 1],
        };
        let err = run_kernel_resources(
            gpu,
            "t.metal",
            &src,
            &Options::default(),
            "k",
            &dispatch,
            &Resources::default(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "nothing given for member `a.out` [[id(7)]] of argument buffer [[buffer(0)]] \
             (its `ArgumentBuffer`, by id)"
        );
    }

    #[test]
    fn fragment_function_samples_through_an_argument_buffer() {
        let Some(gpu) = gpu() else { return };
        // Apple's sample's shape: a `device` argument buffer in a fragment
        // function, its sampler copied to a local, a buffer indexed by a
        // data member.
        let src = format!(
            "{PRELUDE}{}",
            r#"
struct V { float4 position [[position]]; };
vertex V vs(uint vid [[vertex_id]]) {
    float2 p = float2((vid << 1) & 2, vid & 2);
    V v; v.position = float4(p * 2.0 - 1.0, 0.0, 1.0); return v;
}
struct FragmentArgs {
    texture2d<float> image [[id(0)]];
    sampler smp [[id(1)]];
    device float* scales [[id(2)]];
    uint period [[id(3)]];
};
fragment float4 fs(V in [[stage_in]], device FragmentArgs& args [[buffer(0)]]) {
    sampler s = args.smp;
    uint i = uint(in.position.x) % args.period;
    float4 c = args.image.sample(s, float2(in.position.x / 8.0, 0.5));
    return float4(c.x * args.scales[i], c.y, 0.0, 1.0);
}
"#
        );
        let lib = Library::from_source("t.metal", &src, &Options::default())
            .unwrap_or_else(|f| panic!("{}", f.render()));
        let (w, h) = (8u32, 4u32);
        let image = |x: u32| [x as f32 / 8.0, 1.0 - x as f32 / 8.0, 0.0, 1.0];
        let scales = [1.0f32, 0.5, 0.25];
        let mut data = vec![0u8; 32];
        data[24..28].copy_from_slice(&3u32.to_le_bytes());
        let mut r = RenderResources::new(w, h, 3);
        r.fragment_buffers.insert(0, data);
        r.fragment_argument_buffers.insert(
            0,
            ArgumentBuffer {
                buffers: BTreeMap::from([(2, f32_bytes(&scales))]),
                textures: BTreeMap::from([(0, texture(w, image))]),
                samplers: BTreeMap::new(),
            },
        );
        let img = &render_library(gpu, &lib, "vs", "fs", &r).unwrap_or_else(|e| panic!("{e}"))[0];
        let q = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
        for y in 0..h {
            for x in 0..w {
                let c = image(x);
                let want = [q(c[0] * scales[(x % 3) as usize]), q(c[1]), 0, 255];
                let k = ((y * w + x) * 4) as usize;
                let got = &img.data[k..k + 4];
                for ch in 0..4 {
                    assert!(
                        got[ch].abs_diff(want[ch]) <= 1,
                        "pixel ({x}, {y}) is {got:?}, want {want:?}"
                    );
                }
            }
        }
    }
}
