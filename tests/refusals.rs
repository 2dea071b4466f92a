//! What WebGPU cannot express is refused where the MSL asks for it, with
//! what a port does instead (README, "Refused" column): operations a shader
//! stage forbids, stages and types of features WebGPU lacks, and `goto`.

use msl2wgsl::{Library, Options};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// The rendered diagnostics of `body` (after the two-line prelude, so
/// line numbers start at 3), which must fail to translate, and the code of
/// the first error.
fn fails_with(body: &str, options: &Options) -> (String, &'static str) {
    let src = format!("{PRELUDE}{body}");
    match Library::from_source("t.metal", &src, options) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => {
            let code = f.diagnostics.errors().next().expect("an error").code;
            (f.render(), code.as_str())
        }
    }
}

/// Asserts the first error is `t.metal:LINE:COL: error: MESSAGE...` with
/// code `code`, and that a note says what a port does.
fn assert_refused(body: &str, (line, col): (usize, usize), message: &str, code: &str) {
    let (text, got) = fails_with(body, &Options::default());
    let first = text
        .lines()
        .find(|l| l.contains(": error: "))
        .unwrap_or_default();
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(first.starts_with(&want), "want `{want}`\n got:\n{text}");
    assert_eq!(got, code, "{text}");
    assert!(
        text.contains("note: ") || first.contains(": write ") || first.contains("targets of"),
        "nothing says what to do:\n{text}"
    );
}

fn translates(body: &str, options: &Options) -> String {
    let src = format!("{PRELUDE}{body}");
    match Library::from_source("t.metal", &src, options) {
        Ok(lib) => lib.wgsl().to_string(),
        Err(f) => panic!("{}", f.render()),
    }
}

#[test]
fn simd_functions_in_vertex_functions_are_refused_at_the_call() {
    assert_refused(
        "vertex float4 v(uint vid [[vertex_id]]) {\n  float s = simd_sum(float(vid));\n  return float4(s);\n}\n",
        (4, 13),
        "SIMD-group functions have no WebGPU equivalent in a vertex function",
        "E0402",
    );
}

#[test]
fn simd_functions_in_helpers_of_vertex_functions_are_refused_in_the_helper() {
    assert_refused(
        "float spread(float x) {\n  return simd_broadcast_first(x);\n}\nvertex float4 v(uint vid [[vertex_id]]) {\n  return float4(spread(float(vid)));\n}\n",
        (4, 10),
        "SIMD-group functions have no WebGPU equivalent in a vertex function",
        "E0402",
    );
}

#[test]
fn barriers_in_fragment_and_vertex_functions_are_refused() {
    assert_refused(
        "fragment float4 f(float4 p [[position]]) {\n  simdgroup_barrier(mem_flags::mem_threadgroup);\n  return p;\n}\n",
        (4, 3),
        "barriers and memory fences have no WebGPU equivalent in a fragment function",
        "E0402",
    );
    assert_refused(
        "vertex float4 v(uint vid [[vertex_id]], device atomic_uint* c [[buffer(0)]]) {\n  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst);\n  return float4(0);\n}\n",
        (4, 3),
        "barriers and memory fences have no WebGPU equivalent in a vertex function",
        "E0402",
    );
}

#[test]
fn simd_functions_stay_accepted_in_kernels_and_fragment_functions() {
    let wgsl = translates(
        "fragment float4 f(float4 p [[position]]) {\n  return float4(simd_sum(p.x));\n}\nkernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  o[i] = simd_sum(o[i]);\n}\n",
        &Options::default(),
    );
    assert!(
        wgsl.contains("@fragment") && wgsl.contains("@compute"),
        "{wgsl}"
    );
}

#[test]
fn mesh_object_and_intersection_functions_are_refused() {
    let mesh = "struct V { float4 p [[position]]; };\n[[mesh]] void m(uint t [[thread_index_in_threadgroup]]) { }\n";
    assert_refused(
        mesh,
        (4, 3),
        "`m` is a `[[mesh]]` function, which has no WebGPU equivalent: WebGPU has no mesh shading",
        "E0402",
    );
    assert_refused(
        "[[object]] void o(uint t [[thread_index_in_threadgroup]]) { }\n",
        (3, 3),
        "`o` is a `[[object]]` function",
        "E0402",
    );
    assert_refused(
        "[[intersection(bounding_box)]] bool hit(uint p [[primitive_id]]) { return true; }\n",
        (3, 3),
        "`hit` is a `[[intersection]]` function, which has no WebGPU equivalent: WebGPU has no ray tracing",
        "E0402",
    );
    // The other entry points of the file still translate on their own.
    let options = Options {
        entries: vec!["k".into()],
        ..Options::default()
    };
    let wgsl = translates(
        &format!("{mesh}kernel void k(device float* o [[buffer(0)]]) {{ o[0] = 1.0f; }}\n"),
        &options,
    );
    assert!(wgsl.contains("@compute"), "{wgsl}");
}

#[test]
fn mesh_imageblock_and_rate_map_types_are_refused_where_written() {
    assert_refused(
        "struct V { float4 p [[position]]; };\nusing M = metal::mesh<V, void, 3, 1, topology::triangle>;\n",
        (4, 11),
        "`mesh` has no WebGPU equivalent: WebGPU has no mesh shading",
        "E0402",
    );
    assert_refused(
        "struct P { half4 c [[color(0)]]; };\nkernel void k(imageblock<P> b, uint2 i [[thread_position_in_threadgroup]]) { }\n",
        (4, 15),
        "`imageblock` has no WebGPU equivalent: WebGPU exposes no tile memory",
        "E0402",
    );
    assert_refused(
        "vertex float4 v(constant rasterization_rate_map_data& m [[buffer(0)]]) { return float4(0); }\n",
        (3, 26),
        "`rasterization_rate_map_data` has no WebGPU equivalent: WebGPU has no variable rasterization rates",
        "E0402",
    );
}

#[test]
fn goto_and_its_labels_are_refused_as_not_metal() {
    assert_refused(
        "kernel void k(device int* o [[buffer(0)]]) {\n  int i = 0;\n  if (o[0] > 0) goto done;\n  i = 1;\n  o[1] = i;\n}\n",
        (5, 17),
        "`goto` is not supported in Metal",
        "E0203",
    );
    let (text, _) = fails_with(
        "kernel void k(device int* o [[buffer(0)]]) {\n  int i = 0;\nagain:\n  i++;\n  o[0] = i;\n}\n",
        &Options::default(),
    );
    assert!(
        text.starts_with("t.metal:5:1: error: labels (`again:`) are not supported in Metal"),
        "{text}"
    );
    // `?:` and `case` labels are not labels.
    translates(
        "kernel void k(device int* o [[buffer(0)]]) {\n  switch (o[0]) { case 1: o[1] = o[2] > 0 ? 1 : 2; break; default: break; }\n}\n",
        &Options::default(),
    );
}

#[test]
fn barycentric_coordinates_are_refused_as_an_argument_and_as_a_stage_in_member() {
    // As a fragment function's argument, located at the attribute.
    assert_refused(
        "fragment float4 f(float3 w [[barycentric_coord]]) {\n  return float4(w, 1.0);\n}\n",
        (3, 30),
        "`[[barycentric_coord]]` (the fragment's barycentric coordinates) has no WebGPU equivalent",
        "E0402",
    );
    // As a member of the `[[stage_in]]` struct (before, it was linked as
    // an ordinary varying, silently reading a vertex output of its name).
    assert_refused(
        "struct In { float4 p [[position]]; float2 uv; float3 w [[barycentric_coord, center_no_perspective]]; };\nvertex In v() { return In{}; }\nfragment float4 f(In in [[stage_in]]) {\n  return float4(in.w, in.uv.x);\n}\n",
        (3, 58),
        "`[[barycentric_coord]]` (the fragment's barycentric coordinates) has no WebGPU equivalent",
        "E0402",
    );
}

#[test]
fn sampling_integer_textures_is_refused_at_the_call() {
    // MSL samples `int` and `uint` textures (nearest filtering); WGSL only
    // loads them. Here inside a helper, as SPIR-V Cross's swizzle wraps it.
    assert_refused(
        "int4 keep(int4 v) { return v; }\nfragment float4 f(texture2d<int> t [[texture(0)]], sampler s [[sampler(0)]]) {\n  return float4(keep(t.sample(s, float2(0.5))));\n}\n",
        (5, 22),
        "sampling an integer texture (`texture2d<int>`) has no WebGPU equivalent",
        "E0402",
    );
    assert_refused(
        "kernel void k(texture3d<uint> t [[texture(0)]], device uint4* out [[buffer(0)]]) {\n  constexpr sampler s(filter::nearest);\n  out[0] = t.sample(s, float3(0.5), level(0));\n}\n",
        (5, 12),
        "sampling an integer texture (`texture3d<uint>`) has no WebGPU equivalent",
        "E0402",
    );
}

#[test]
fn pointers_cast_to_integers_are_refused_at_the_pointer() {
    // A GPU address computed with (SPIR-V Cross's buffer device address
    // arithmetic): WGSL pointers have no address.
    assert_refused(
        "kernel void k(device uint* p [[buffer(0)]]) {\n  device uint* q = reinterpret_cast<device uint*>(reinterpret_cast<ulong>(p) + 16ul);\n  *q = 1u;\n}\n",
        (4, 75),
        "casting a pointer to an integer (its GPU address) has no WebGPU equivalent",
        "E0402",
    );
    assert_refused(
        "kernel void k(device uint* p [[buffer(0)]]) {\n  p[0] = (uint)p;\n}\n",
        (4, 16),
        "casting a pointer to an integer (its GPU address) has no WebGPU equivalent",
        "E0402",
    );
}

#[test]
fn indirect_command_buffers_are_refused_where_written() {
    // An argument buffer holding the command buffer a culling kernel encodes into.
    assert_refused(
        "struct Commands {\n  command_buffer cmds [[id(0)]];\n};\nkernel void cull(device Commands& c [[buffer(0)]], uint i [[thread_position_in_grid]]) { }\n",
        (4, 3),
        "`command_buffer` has no WebGPU equivalent: WebGPU has no indirect command buffers",
        "E0402",
    );
    // A helper that fills one draw command.
    assert_refused(
        "static void fill(thread render_command& rc, uint n) { }\n",
        (3, 25),
        "`render_command` has no WebGPU equivalent: WebGPU has no indirect command buffers",
        "E0402",
    );
    assert_refused(
        "kernel void k(uint i [[thread_position_in_grid]]) {\n  metal::compute_command c;\n}\n",
        (4, 3),
        "`compute_command` has no WebGPU equivalent: WebGPU has no indirect command buffers",
        "E0402",
    );
}

#[test]
fn pixel_data_types_are_refused_where_written() {
    // The per-pixel layers of an order-independent transparency imageblock.
    assert_refused(
        "constant short kLayers = 4;\nstruct Layers {\n  rgba8unorm<half4> color [[raster_order_group(0)]] [kLayers];\n  half depth [[raster_order_group(0)]] [kLayers];\n};\n",
        (5, 3),
        "`rgba8unorm` (a pixel data type) has no WebGPU equivalent: WGSL has no type kept in a pixel format",
        "E0402",
    );
    assert_refused(
        "kernel void k(device rg11b10f<float3>* p [[buffer(0)]]) { }\n",
        (3, 22),
        "`rg11b10f` (a pixel data type) has no WebGPU equivalent",
        "E0402",
    );
}

#[test]
fn sparse_texture_sampling_is_refused() {
    assert_refused(
        "fragment half4 f(texture2d<half> t [[texture(0)]], sampler s [[sampler(0)]], float4 p [[position]]) {\n  sparse_color<half4> c = t.sparse_sample(s, p.xy);\n  return c.resident() ? c.value() : half4(0);\n}\n",
        (4, 3),
        "`sparse_color` has no WebGPU equivalent: WebGPU has no sparse (partially resident) textures",
        "E0402",
    );
    assert_refused(
        "fragment half4 f(texture2d<half> t [[texture(0)]], sampler s [[sampler(0)]], float4 p [[position]]) {\n  auto c = t.sparse_sample(s, p.xy);\n  return c.value();\n}\n",
        (4, 12),
        "`sparse_sample` has no WebGPU equivalent: WebGPU has no sparse (partially resident) textures",
        "E0402",
    );
}

#[test]
fn threadgroup_memory_of_tile_shading_fragment_functions_is_refused() {
    // A forward+ fragment function reading the light list its tile kernel built.
    assert_refused(
        "struct In { float4 p [[position]]; };\nfragment half4 shade(In in [[stage_in]],\n                     threadgroup int* lights [[threadgroup(0)]]) {\n  return half4(lights[0]);\n}\n",
        (5, 48),
        "a `[[threadgroup(n)]]` argument of a fragment function (threadgroup memory of a tile-shading render pipeline) has no WebGPU equivalent: WebGPU exposes no tile memory",
        "E0402",
    );
    // A vertex function has no threadgroup memory in Metal either.
    let (text, code) = fails_with(
        "vertex float4 v(threadgroup int* t [[threadgroup(0)]]) { return float4(t[0]); }\n",
        &Options::default(),
    );
    assert_eq!(code, "E0308", "{text}");
    assert!(text.starts_with("t.metal:3:38: error: `[[threadgroup(n)]]` arguments are only allowed in kernel functions"), "{text}");
}
