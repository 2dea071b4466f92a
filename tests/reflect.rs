//! Reflection: each argument's Metal index, kind, access, activity, Metal
//! layout numbers, and WGSL binding.

use msl2wgsl::reflect::{Access, ArgumentKind, WgslBinding};
use msl2wgsl::{Library, Options};

#[test]
fn params_fixture_reflects_metal_layout_and_bindings() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/params.metal");
    let lib = Library::from_file(path, &Options::default()).unwrap();
    let f = lib.function("apply_params").unwrap();
    assert_eq!(f.workgroup_size, Some([64, 1, 1]));
    let names: Vec<_> = f
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.index, a.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("p", 0, ArgumentKind::Buffer),
            ("in", 1, ArgumentKind::Buffer),
            ("out", 2, ArgumentKind::Buffer)
        ]
    );
    let p = &f.arguments[0];
    assert_eq!(p.access, Access::Read);
    assert_eq!(
        p.binding,
        Some(WgslBinding {
            group: 0,
            binding: 0
        })
    );
    let b = p.buffer.as_ref().unwrap();
    // Params: float, float3@16, uint@32, float@36, int2@40 → 48 bytes, 16-aligned.
    assert_eq!(
        (b.data_size, b.alignment, b.data_type.as_str(), b.is_pointer),
        (48, 16, "Params", false)
    );
    let out = f.arguments[2].buffer.as_ref().unwrap();
    assert_eq!(
        (out.data_size, out.alignment, out.is_pointer),
        (32, 16, true)
    );
    assert_eq!(f.arguments[2].access, Access::ReadWrite);
}

#[test]
fn unused_argument_is_inactive() {
    let src = "kernel void k(device float* used [[buffer(0)]], device float* unused [[buffer(3)]], uint i [[thread_position_in_grid]]) { used[i] = 1.0f; }";
    let lib = Library::from_source("k.metal", src, &Options::default()).unwrap();
    let args = &lib.function("k").unwrap().arguments;
    assert!(args[0].active);
    assert!(!args[1].active);
    assert_eq!(
        args[1].binding,
        Some(WgslBinding {
            group: 0,
            binding: 3
        })
    );
}

#[test]
fn reserved_entry_names_are_reported_as_emitted() {
    // `loop` is a WGSL keyword: naga's writer renames it; reflection says how.
    let src = "kernel void loop(device float* a [[buffer(0)]]) { a[0] = 1.0f; }";
    let lib = Library::from_source("k.metal", src, &Options::default()).unwrap();
    let f = lib.function("loop").unwrap();
    assert_ne!(f.wgsl_entry_point, "loop");
    assert!(
        lib.wgsl().contains(&format!("fn {}(", f.wgsl_entry_point)),
        "{}",
        lib.wgsl()
    );
}

#[test]
fn threadgroup_size_option_and_default_shape() {
    let src = "kernel void k(device uint* a [[buffer(0)]], uint2 p [[thread_position_in_grid]]) { a[p.x] = p.y; }";
    let lib = Library::from_source("k.metal", src, &Options::default()).unwrap();
    assert_eq!(lib.function("k").unwrap().workgroup_size, Some([8, 8, 1]));
    assert!(lib.wgsl().contains("@workgroup_size(8, 8, 1)"));
    let opts = Options {
        threadgroup_size: Some([16, 4, 1]),
        ..Options::default()
    };
    let lib = Library::from_source("k.metal", src, &opts).unwrap();
    assert!(lib.wgsl().contains("@workgroup_size(16, 4, 1)"));
}

#[test]
fn max_total_threads_is_checked() {
    let src = "[[max_total_threads_per_threadgroup(32)]] kernel void k(device uint* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = i; }";
    // The default size is made to fit the maximum (issue #18: Tint writes the
    // WGSL workgroup size's product there); a requested size must fit it.
    let lib = Library::from_source("k.metal", src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(lib.wgsl().contains("@workgroup_size(32, 1, 1)"));
    let opts = Options {
        threadgroup_size: Some([64, 1, 1]),
        ..Options::default()
    };
    let err = Library::from_source("k.metal", src, &opts)
        .unwrap_err()
        .render();
    assert!(
        err.starts_with(
            "k.metal:1:3: error: the requested threadgroup size 64x1x1 (64 threads) exceeds"
        ),
        "{err}"
    );
    let opts = Options {
        threadgroup_size: Some([32, 1, 1]),
        ..Options::default()
    };
    assert!(Library::from_source("k.metal", src, &opts).is_ok());
}

fn reflect_one(src: &str, entry: &str) -> msl2wgsl::reflect::FunctionReflection {
    let lib = Library::from_source("r.metal", src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    lib.function(entry).unwrap().clone()
}

#[test]
fn spec_example_foo_drilled_down() {
    // MSL spec §2.5's example: size 20, members at 0 and 12, array strides 4.
    let f = reflect_one("struct Foo { float a[3]; int b[2]; };\nkernel void k(device Foo* foo [[buffer(0)]]) { foo[0].b[1] = 1; }", "k");
    let b = f.arguments[0].buffer.as_ref().unwrap();
    assert_eq!(
        (b.data_size, b.alignment, b.data_type.as_str()),
        (20, 4, "Foo")
    );
    let s = b.struct_type.as_ref().unwrap();
    let members: Vec<(&str, u32, &str)> = s
        .members
        .iter()
        .map(|m| (m.name.as_str(), m.offset, m.data_type.as_str()))
        .collect();
    assert_eq!(members, [("a", 0, "array"), ("b", 12, "array")]);
    let a = s.members[0].array_type.as_ref().unwrap();
    assert_eq!(
        (a.element_type.as_str(), a.array_length, a.stride),
        ("float", 3, 4)
    );
    let b = s.members[1].array_type.as_ref().unwrap();
    assert_eq!(
        (b.element_type.as_str(), b.array_length, b.stride),
        ("int", 2, 4)
    );
}

#[test]
fn mixed_struct_offsets() {
    let f = reflect_one(
        "struct M { float3 a; float b; packed_float3 c; char d; float3x3 e; half2 f; };\nkernel void k(device M* m [[buffer(0)]]) { m[0].b = 1.0f; }",
        "k",
    );
    let b = f.arguments[0].buffer.as_ref().unwrap();
    assert_eq!((b.data_size, b.alignment), (112, 16));
    let offsets: Vec<u32> = b
        .struct_type
        .as_ref()
        .unwrap()
        .members
        .iter()
        .map(|m| m.offset)
        .collect();
    assert_eq!(offsets, [0, 16, 20, 32, 48, 96]);
    let types: Vec<&str> = b
        .struct_type
        .as_ref()
        .unwrap()
        .members
        .iter()
        .map(|m| m.data_type.as_str())
        .collect();
    assert_eq!(
        types,
        [
            "float3",
            "float",
            "packed_float3",
            "char",
            "float3x3",
            "half2"
        ]
    );
}

#[test]
fn nested_structs_and_arrays_of_structs() {
    let f = reflect_one(
        "struct In { char c; float2 v; };\nstruct Out { In one; In many[3]; uint n; };\nkernel void k(constant Out& o [[buffer(2)]], device uint* r [[buffer(0)]]) { r[0] = o.n; }",
        "k",
    );
    let arg = f.arguments.iter().find(|a| a.name == "o").unwrap();
    let s = arg.buffer.as_ref().unwrap().struct_type.as_ref().unwrap();
    // In: c@0, v@8, size 16 (align 8). Out: one@0, many@16 (stride 16), n@64; size 72.
    assert_eq!(arg.buffer.as_ref().unwrap().data_size, 72);
    let inner = s.members[0].struct_type.as_ref().unwrap();
    assert_eq!(
        inner.members.iter().map(|m| m.offset).collect::<Vec<_>>(),
        [0, 8]
    );
    let many = s.members[1].array_type.as_ref().unwrap();
    assert_eq!(
        (
            many.element_type.as_str(),
            many.array_length,
            many.stride,
            s.members[1].offset
        ),
        ("struct", 3, 16, 16)
    );
    assert_eq!(many.element_struct_type.as_ref().unwrap().name, "In");
    assert_eq!(s.members[2].offset, 64);
    assert_eq!(arg.access, Access::Read);
}

#[test]
fn json_document_has_the_documented_fields() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/textures/sampling.metal"
    );
    let lib = Library::from_file(path, &Options::default()).unwrap();
    let doc = msl2wgsl::reflect::ReflectionDocument {
        schema_version: msl2wgsl::reflect::SCHEMA_VERSION,
        functions: lib.functions().iter().collect(),
    };
    let json: serde_json::Value = serde_json::to_value(&doc).unwrap();
    assert_eq!(json["schemaVersion"], msl2wgsl::reflect::SCHEMA_VERSION);
    let f = &json["functions"][0];
    for key in [
        "name",
        "wgslEntryPoint",
        "stage",
        "workgroupSize",
        "arguments",
        "dispatchBinding",
        "usesBarriers",
        "requiredFeatures",
        "constexprSamplers",
    ] {
        assert!(f.get(key).is_some(), "missing `{key}` in {f}");
    }
    let tex = &f["arguments"][0];
    assert_eq!(tex["type"], "texture");
    assert_eq!(tex["binding"]["group"], 0);
    assert_eq!(tex["texture"]["textureType"], "type2D");
    let sampler = &f["constexprSamplers"][0];
    for key in [
        "addressModeU",
        "magFilter",
        "minFilter",
        "mipmapFilter",
        "lodMinClamp",
        "lodMaxClamp",
        "anisotropyClamp",
    ] {
        assert!(
            sampler["descriptor"].get(key).is_some(),
            "missing descriptor `{key}`"
        );
    }
    let buf = &f["arguments"][1];
    for key in [
        "name", "type", "index", "access", "active", "binding", "buffer",
    ] {
        assert!(buf.get(key).is_some(), "missing `{key}` in {buf}");
    }
    for key in ["alignment", "dataSize", "dataType", "isPointer"] {
        assert!(buf["buffer"].get(key).is_some(), "missing buffer `{key}`");
    }
}

#[test]
fn one_function_wgsl_has_only_what_it_reaches() {
    let src = "kernel void a(device float* x [[buffer(0)]]) { x[0] = 1.0f; }\nkernel void b(device uint* y [[buffer(3)]]) { y[0] = 2u; }\n";
    let lib = Library::from_source("two.metal", src, &Options::default()).unwrap();
    assert_eq!(lib.function_names(), ["a", "b"]);
    let only_b = lib.function_wgsl("b").unwrap();
    assert!(
        only_b.contains("fn b(") && !only_b.contains("fn a("),
        "{only_b}"
    );
    assert!(
        only_b.contains("@binding(3)") && !only_b.contains("@binding(0)"),
        "{only_b}"
    );
    assert!(lib.function_wgsl("c").is_none());
}

fn map(json: &str) -> msl2wgsl::reflect::BindingMap {
    msl2wgsl::reflect::BindingMap::from_json(json).unwrap()
}

#[test]
fn binding_map_overrides_and_errors() {
    let src = "kernel void k(device float* x [[buffer(0)]], device float* y [[buffer(1)]]) { x[0] = y[0]; }\n";
    let opts = Options {
        binding_map: map(r#"{"k": {"buffer": {"1": {"group": 2, "binding": 7}}}}"#),
        ..Options::default()
    };
    let lib = Library::from_source("m.metal", src, &opts).unwrap();
    let y = &lib.function("k").unwrap().arguments[1];
    assert_eq!(
        y.binding,
        Some(WgslBinding {
            group: 2,
            binding: 7
        })
    );
    assert!(
        lib.wgsl().contains("@group(2) @binding(7)"),
        "{}",
        lib.wgsl()
    );
    let clash = Options {
        binding_map: map(r#"{"k": {"buffer": {"1": {"group": 0, "binding": 0}}}}"#),
        ..Options::default()
    };
    let err = Library::from_source("m.metal", src, &clash)
        .unwrap_err()
        .render();
    assert!(
        err.starts_with(
            "m.metal:1:13: error: `y` and `x` of `k` are both bound at @group(0) @binding(0)"
        ),
        "{err}"
    );
    let far = Options {
        binding_map: map(r#"{"k": {"buffer": {"0": {"group": 4, "binding": 0}}}}"#),
        ..Options::default()
    };
    let err = Library::from_source("m.metal", src, &far)
        .unwrap_err()
        .render();
    assert!(err.contains("beyond WebGPU's default limits"), "{err}");
    assert!(
        msl2wgsl::reflect::BindingMap::from_json(r#"{"k": {"buffers": {}}}"#).is_err(),
        "unknown keys are errors"
    );
}

#[cfg(feature = "runner")]
#[test]
fn remapped_kernel_still_runs() {
    #[path = "common/mod.rs"]
    mod common;
    let Some(gpu) = common::gpu() else { return };
    let src = "kernel void k(device const float* x [[buffer(0)]], device float* y [[buffer(1)]], uint i [[thread_position_in_grid]]) { y[i] = x[i] * 2.0f; }\n";
    let opts = Options {
        binding_map: map(
            r#"{"k": {"buffer": {"0": {"group": 1, "binding": 5}, "1": {"group": 3, "binding": 0}}}}"#,
        ),
        ..Options::default()
    };
    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let buffers: std::collections::BTreeMap<u32, Vec<u8>> =
        [(0, common::f32_bytes(&x)), (1, vec![0; 400])]
            .into_iter()
            .collect();
    let out = msl2wgsl::runner::run_kernel(
        gpu,
        "m.metal",
        src,
        &opts,
        "k",
        &msl2wgsl::runner::Dispatch::Threads {
            grid: [100, 1, 1],
            threadgroup: [64, 1, 1],
        },
        &buffers,
    )
    .unwrap();
    assert_eq!(
        common::f32s(&out[&1]),
        x.iter().map(|v| v * 2.0).collect::<Vec<_>>()
    );
}

#[test]
fn builtins_are_listed_apart_from_resources() {
    let f = reflect_one(
        "kernel void k(device float* out [[buffer(0)]], uint2 gid [[thread_position_in_grid]],\n\
         ushort lane [[thread_index_in_simdgroup]]) { out[gid.x] = float(lane); }",
        "k",
    );
    let builtins: Vec<_> = f
        .builtins
        .iter()
        .map(|b| (b.name.as_str(), b.attribute.as_str(), b.data_type.as_str()))
        .collect();
    assert_eq!(
        builtins,
        [
            ("gid", "thread_position_in_grid", "uint2"),
            ("lane", "thread_index_in_simdgroup", "ushort")
        ]
    );
    assert_eq!(f.arguments.len(), 1);
    let json = serde_json::to_value(&f).unwrap();
    assert_eq!(json["builtins"][0]["dataType"], "uint2", "{json}");
    let v = reflect_one(
        "struct O { float4 p [[position]]; };\n\
         vertex O v(uint vid [[vertex_id]], uint iid [[instance_id]]) { O o; o.p = float4(float(vid + iid)); return o; }",
        "v",
    );
    let names: Vec<_> = v.builtins.iter().map(|b| b.attribute.as_str()).collect();
    assert_eq!(names, ["vertex_id", "instance_id"]);
}

/// `active` is Metal's `MTLArgument.isActive` for every kind of argument
/// and stage: an argument the function never touches, directly or in a
/// function it calls, is inactive, whether it is a `constant T&`
/// reference, a pointer, a texture, a sampler or threadgroup memory.
#[test]
fn every_kind_of_argument_is_active_only_when_used() {
    const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct V { float4 position [[position]]; };
float scaled(constant float& s, float x) { return s * x; }
float4 fetch(texture2d<float> t, sampler s) { return t.sample(s, float2(0.5)); }
kernel void k(device float* out [[buffer(0)]],
              constant float4x4& unused_matrix [[buffer(1)]],
              constant float& scale [[buffer(2)]],
              device float* unused_pointer [[buffer(3)]],
              texture2d<float> unused_texture [[texture(0)]],
              texture2d<float> texture [[texture(1)]],
              sampler unused_sampler [[sampler(0)]],
              sampler linear [[sampler(1)]],
              threadgroup float* unused_scratch [[threadgroup(0)]],
              uint i [[thread_position_in_grid]]) {
    out[i] = scaled(scale, fetch(texture, linear).x);
}
vertex V vs(constant float4x4& unused_matrix [[buffer(1)]],
            constant float4& offset [[buffer(2)]],
            uint vid [[vertex_id]]) {
    V out;
    out.position = float4(float(vid), 0.0, 0.0, 1.0) + offset;
    return out;
}
fragment float4 fs(V in [[stage_in]],
                   constant float4& unused_tint [[buffer(0)]],
                   constant float4& tint [[buffer(1)]],
                   texture2d<float> unused_texture [[texture(0)]],
                   sampler unused_sampler [[sampler(0)]]) {
    return tint;
}
"#;
    let lib = Library::from_source("active.metal", SOURCE, &Options::default()).unwrap();
    for (function, want) in [
        (
            "k",
            &[
                ("out", true),
                ("unused_matrix", false),
                ("scale", true),
                ("unused_pointer", false),
                ("unused_texture", false),
                ("texture", true),
                ("unused_sampler", false),
                ("linear", true),
                ("unused_scratch", false),
            ][..],
        ),
        ("vs", &[("unused_matrix", false), ("offset", true)][..]),
        (
            "fs",
            &[
                ("unused_tint", false),
                ("tint", true),
                ("unused_texture", false),
                ("unused_sampler", false),
            ][..],
        ),
    ] {
        let got: Vec<(&str, bool)> = lib
            .function(function)
            .unwrap()
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), a.active))
            .collect();
        assert_eq!(got, want, "{function}");
        // The function's own WGSL binds exactly its active arguments.
        let wgsl = lib.function_wgsl(function).unwrap();
        for (name, active) in want {
            let declared = wgsl.contains(&format!("var {name}:"))
                || wgsl.contains(&format!("var<uniform> {name}:"))
                || wgsl.contains(&format!("> {name}:"));
            assert_eq!(declared, *active, "{function}: `{name}` in\n{wgsl}");
        }
    }
}

/// Metal texture types WGSL binds as another type keep Metal's
/// `textureType` beside the WGSL binding's view dimension and kind
/// (docs/REFLECTION.md): `texture1d_array` and cube textures read face by
/// face as 2-D arrays, `texture_buffer` as a storage buffer of texels.
#[test]
fn texture_types_wgsl_binds_as_others() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        kernel void k(texture1d_array<float> rows [[texture(0)]],\n\
                      texturecube<float, access::read> faces [[texture(1)]],\n\
                      texturecube_array<uint, access::write> cubes [[texture(2)]],\n\
                      texture_buffer<float, access::read_write> texels [[texture(3)]],\n\
                      texture2d<uint, access::read_write> bins [[texture(4)]],\n\
                      sampler s [[sampler(0)]], device float4* o [[buffer(0)]]) {\n\
            o[0] = rows.sample(s, 0.5f, 1) + faces.read(uint2(0), 3) + texels.read(1);\n\
            cubes.write(uint4(1), uint2(0), 5, 1);\n\
            texels.write(o[1], 0);\n\
            bins.atomic_fetch_add(uint2(0), uint4(1));\n\
        }\n";
    let wgpu = Options {
        target: msl2wgsl::Target::Wgpu,
        ..Options::default()
    };
    let lib =
        Library::from_source("r.metal", src, &wgpu).unwrap_or_else(|f| panic!("{}", f.render()));
    let f = lib.function("k").unwrap();
    let texture = |name: &str| {
        let a = f.arguments.iter().find(|a| a.name == name).unwrap();
        let t = a.texture.as_ref().unwrap();
        (
            t.texture_type.as_str(),
            t.view_dimension.as_str(),
            t.binding_kind,
            t.storage_format.as_deref(),
            a.binding.unwrap().binding,
        )
    };
    use msl2wgsl::reflect::TextureBinding as B;
    assert_eq!(
        texture("rows"),
        ("type1DArray", "2d-array", B::Sampled, None, 64)
    );
    assert_eq!(
        texture("faces"),
        ("typeCube", "2d-array", B::Sampled, None, 65)
    );
    assert_eq!(
        texture("cubes"),
        (
            "typeCubeArray",
            "2d-array",
            B::Storage,
            Some("rgba32uint"),
            66
        )
    );
    assert_eq!(
        texture("texels"),
        (
            "typeTextureBuffer",
            "buffer",
            B::Buffer,
            Some("r32float"),
            67
        )
    );
    assert_eq!(
        texture("bins"),
        ("type2D", "2d", B::Storage, Some("r32uint"), 68)
    );
    assert!(
        f.required_features.iter().any(|r| r == "texture-atomic"),
        "{:?}",
        f.required_features
    );
    let wgsl = lib.wgsl();
    for decl in [
        "texture_2d_array<f32>",
        "texture_storage_2d_array<rgba32uint,write>",
        "var<storage, read_write> texels: array<u32>",
        "texture_storage_2d<r32uint,atomic>",
    ] {
        assert!(wgsl.contains(decl), "no `{decl}` in\n{wgsl}");
    }
    // Without atomics, the same texture is an ordinary read_write one and
    // needs no feature.
    let plain = src.replace("bins.atomic_fetch_add(uint2(0), uint4(1));", "");
    let lib =
        Library::from_source("r.metal", &plain, &wgpu).unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(lib.function("k").unwrap().required_features.is_empty());
}
