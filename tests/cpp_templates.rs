//! C++ front end for real MSL: struct templates with full and partial
//! specialisations, dependent member types, static members of instances,
//! Metal's type traits, `numeric_limits`, and the diagnostics for what goes
//! wrong. GPU tests compare with a CPU reference computed here.

mod common;

use common::source::{assert_error, fails, translate_body};

use msl2wgsl::{Library, Options};

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/templates/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn translate(name: &str) -> Library {
    Library::from_source(name, &fixture(name), &Options::default())
        .unwrap_or_else(|f| panic!("{name}:\n{}", f.render()))
}

#[test]
fn struct_template_instances_are_ordinary_structs() {
    let wgsl = translate("struct_templates.metal").wgsl().to_string();
    for want in [
        "struct Small_float_3_",
        "struct Small_int_2_",
        "v: array<f32, 3>",
        "v: array<i32, 2>",
        "fn Small_float_3_sum(",
        "fn Small_float_3_scale(",
        "fn widen_float(",
        "fn widen_int(",
    ] {
        assert!(wgsl.contains(want), "missing {want}:\n{wgsl}");
    }
    // Traits instances hold no data: only their constants exist.
    assert!(!wgsl.contains("struct Traits"), "{wgsl}");
}

#[test]
fn instances_nest_and_are_made_once() {
    let body = "template <typename T> struct Box { T x; T get() const { return x; } };\n\
                template <typename T, int N> struct Arr { Box<T> items[N]; };\n\
                struct Holder { Arr<float, 2> a; Box<int> b; };\n\
                kernel void k(device float* o [[buffer(0)]]) {\n\
                    Holder h;\n\
                    h.a.items[0].x = 1.0f; h.a.items[1].x = 2.0f; h.b.x = 3;\n\
                    Box<float> c = h.a.items[1];\n\
                    o[0] = c.get() + h.a.items[0].get() + float(h.b.get());\n\
                }\n";
    let wgsl = translate_body(body).wgsl().to_string();
    assert_eq!(wgsl.matches("struct Box_float {").count(), 1, "{wgsl}");
    assert!(wgsl.contains("items: array<Box_float, 2>"), "{wgsl}");
}

#[test]
fn dependent_struct_types_inside_function_templates() {
    let body = "template <typename T> struct Pair { T a; T b; T sum() const { return a + b; } };\n\
                template <typename T> T total(T x) { Pair<T> p; p.a = x; p.b = x * T(2); return p.sum(); }\n\
                kernel void k(device float* o [[buffer(0)]], device int* n [[buffer(1)]]) {\n\
                    o[0] = total(o[1]);\n    n[0] = total(n[1]);\n}\n";
    let wgsl = translate_body(body).wgsl().to_string();
    assert!(
        wgsl.contains("struct Pair_float") && wgsl.contains("struct Pair_int"),
        "{wgsl}"
    );
}

#[test]
fn out_of_line_template_members_must_use_the_parameter_names() {
    let body = "template <typename T> struct P { T a; T get() const; };\n\
                template <typename U> U P<U>::get() const { return a; }\n";
    assert_error(
        body,
        "P<U>",
        0,
        "an out-of-line member of `P` must be written `template <T> ... P<T>::member`",
    );
    let body = "template <typename T> T Q<T>::get() const { return T(0); }\n";
    assert_error(
        body,
        "Q<T>",
        0,
        "`Q` is not a struct template declared before this definition",
    );
}

#[test]
fn missing_template_arguments_are_located() {
    let body = "template <typename T> struct Box { T x; };\n\
                kernel void k(device float* o [[buffer(0)]]) { Box b; o[0] = 0; }\n";
    assert_error(
        body,
        "Box b",
        0,
        "use of struct template `Box` requires template arguments: `Box<...>`",
    );
}

#[test]
fn too_many_and_too_few_template_arguments() {
    let body = "template <typename T, int N> struct V { T x[N]; };\n\
                kernel void k(device float* o [[buffer(0)]]) { V<float, 2, 3> v; o[0] = 0; }\n";
    assert_error(
        body,
        "V<float, 2, 3>",
        0,
        "too many template arguments for `V`: it has 2 template parameter(s), 3 given",
    );
    let body = "template <typename T, int N> struct V { T x[N]; };\n\
                kernel void k(device float* o [[buffer(0)]]) { V<float> v; o[0] = 0; }\n";
    assert_error(
        body,
        "V<float>",
        0,
        "too few template arguments for `V`: `N` has no default",
    );
}

#[test]
fn specialisation_without_primary_is_refused() {
    let body = "template <> struct Only<int> { int x; };\n";
    assert_error(
        body,
        "Only",
        0,
        "`Only` is not a struct template: a specialisation needs the primary template declared before it",
    );
    let body = "struct Plain<int> { int x; };\n";
    assert_error(
        body,
        "int>",
        0,
        "a specialisation of `Plain` must follow `template <>`",
    );
}

#[test]
fn missing_member_type_is_located() {
    let body = "template <typename T> struct Tr { using type = T; };\n\
                kernel void k(device float* o [[buffer(0)]]) { typename Tr<float>::kind x = 0; o[0] = x; }\n";
    assert_error(
        body,
        "Tr<float>::kind",
        0,
        "no type named `kind` in `Tr<float>`",
    );
}

#[test]
fn false_enable_if_is_located() {
    let body = "template <typename T, typename = enable_if_t<is_floating_point_v<T>>>\n\
                T halve(T x) { return x / T(2); }\n\
                kernel void k(device int* o [[buffer(0)]]) { o[0] = halve(o[1]); }\n";
    let text = assert_error(
        body,
        "is_floating_point_v<T>",
        0,
        "`enable_if` condition is false",
    );
    assert!(text.contains("not viable"), "{text}");
}

#[test]
fn self_recursive_struct_templates_stop_at_the_depth_limit() {
    let body = "template <int N> struct Deep { Deep<N + 1> next; };\n\
                kernel void k(device float* o [[buffer(0)]]) { Deep<0> d; o[0] = 0; }\n";
    let text = fails(body);
    assert!(
        text.contains("template instantiation depth exceeds the limit of 256"),
        "{text}"
    );
}

#[test]
fn traits_are_constant_expressions() {
    let body = "static_assert(is_same_v<float, float> && !is_same_v<float, half>, \"same\");\n\
                static_assert(is_floating_point_v<half> && !is_floating_point_v<int>, \"fp\");\n\
                static_assert(is_integral_v<uint> && is_integral<bool>::value, \"int\");\n\
                static_assert(is_signed_v<int> && is_unsigned_v<uint> && !is_signed_v<uint>, \"sign\");\n\
                static_assert(is_vector_v<float4> && !is_scalar_v<float4>, \"vec\");\n\
                static_assert(is_same_v<conditional_t<true, int, float>, int>, \"cond\");\n\
                static_assert(numeric_limits<int>::max() == 2147483647, \"limits\");\n\
                static_assert(numeric_limits<ushort>::max() == 65535, \"limits\");\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = 0; }\n";
    translate_body(body);
    let body = "static_assert(is_same_v<float, int>, \"differ\");\n";
    assert_error(body, "static_assert", 0, "static assertion failed: differ");
}

#[test]
fn numeric_limits_of_a_struct_is_refused() {
    let body = "struct S { float a; };\nkernel void k(device float* o [[buffer(0)]]) { o[0] = numeric_limits<S>::max().a; }\n";
    assert_error(
        body,
        "S>",
        0,
        "`numeric_limits` is defined for scalar and vector types only",
    );
}

#[test]
fn overloads_mixing_templates_and_plain_functions_resolve() {
    let wgsl = translate("overloads.metal").wgsl().to_string();
    for want in ["fn pick(", "fn pick_int(", "fn mix3_float("] {
        assert!(wgsl.contains(want), "missing {want}:\n{wgsl}");
    }
}

#[test]
fn ambiguous_template_calls_list_the_candidates() {
    let body = "template <typename T> float f(T a, float b) { return a + b; }\n\
                template <typename T> float f(float a, T b) { return a - b; }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = f(o[1], o[2]); }\n";
    let text = assert_error(body, "f(o[1]", 0, "call to `f` is ambiguous");
    assert!(
        text.contains("note: candidate: template `float f(float, float)` [with T = float]"),
        "{text}"
    );
    assert_eq!(text.matches("note: candidate").count(), 2, "{text}");
}

#[test]
fn ambiguous_plain_overloads_list_the_candidates() {
    let body = "float g(int a) { return 1.0f; }\nfloat g(uint a) { return 2.0f; }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = g(o[1]); }\n";
    let text = assert_error(body, "g(o[1])", 0, "call to `g` is ambiguous");
    assert!(text.contains("note: candidate: `float g(int)`"), "{text}");
    assert!(text.contains("note: candidate: `float g(uint)`"), "{text}");
}

#[test]
fn no_viable_template_overload_reports_deduction() {
    let body = "template <typename T> T larger(T a, T b) { return a > b ? a : b; }\n\
                template <typename T> T larger(T a, T b, T c) { return a; }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = larger(o[1], 2); }\n";
    assert_error(
        body,
        "2)",
        0,
        "conflicting deductions for template parameter `T`",
    );
}

#[cfg(feature = "runner")]
mod gpu {
    use super::{common, fixture};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use msl2wgsl::Options;
    use std::collections::BTreeMap;

    fn run(
        gpu: &msl2wgsl::runner::Gpu,
        name: &str,
        entry: &str,
        n: u32,
        buffers: Vec<(u32, Vec<u8>)>,
    ) -> BTreeMap<u32, Vec<u8>> {
        let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [32, 1, 1],
        };
        run_kernel(
            gpu,
            name,
            &fixture(name),
            &Options::default(),
            entry,
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{name}/{entry}: {e}"))
    }

    fn i32s(bytes: &[u8]) -> Vec<i32> {
        bytes
            .chunks(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    #[test]
    fn struct_templates_run() {
        let Some(gpu) = common::gpu() else { return };
        let n = 67;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 - 20.0) * 0.25).collect();
        let out = run(
            gpu,
            "struct_templates.metal",
            "struct_templates",
            n as u32,
            vec![
                (0, common::f32_bytes(&x)),
                (1, vec![0; n * 4]),
                (2, vec![0; n * 4]),
            ],
        );
        let got = common::f32s(&out[&1]);
        let codes = i32s(&out[&2]);
        for i in 0..n {
            let (xi, fi) = (x[i], i as f32);
            // Small<float, 3>(x) scaled by 2, Small<int, 2>(i), widen(x),
            // widen(int(i)), halve(x); then twice_get(Pair2(x, 3)),
            // Agg{x, 2} and Traits<Pair2<int>>::code.
            let want = 2.0 * (3.0 * xi + 3.0)
                + (2.0 * fi + 1.0)
                + 2.0 * xi
                + 2.0 * fi
                + 0.5 * xi
                + 2.0 * (xi * 3.0)
                + xi * 2.0
                + 9.0
                // first_plus(a): 1 + the scaled sum.
                + 1.0
                + 2.0 * (3.0 * xi + 3.0);
            assert!(
                (got[i] - want).abs() <= 1e-4 * want.abs().max(1.0),
                "[{i}]: got {}, want {want}",
                got[i]
            );
            // Traits<float>::code 1 (primary), Traits<int> 2 (full),
            // Traits<float4> 3 + sizeof(float) (partial), Small<int, 5>::size.
            assert_eq!(codes[i], 100 + 2 * 10 + 7 + 5 * 1000, "[{i}]");
        }
    }

    #[test]
    fn overloads_run() {
        let Some(gpu) = common::gpu() else { return };
        let n = 45;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
        let out = run(
            gpu,
            "overloads.metal",
            "overloads",
            n as u32,
            vec![(0, common::f32_bytes(&x)), (1, vec![0; n * 4])],
        );
        let got = common::f32s(&out[&1]);
        for i in 0..n {
            // pick: plain 1, template T 2, pointer template 3, vec<T, 4> 4.
            let want = 1.0 + 10.0 * 2.0 + 100.0 * 3.0 + 1000.0 * 4.0
                + x[i] * 2.0
                + (x[i] + x[i] + 1.0)
                // kind: 1 for floating point, 2 for integers (enable_if).
                + 10000.0 * (1.0 + 2.0);
            assert!(
                (got[i] - want).abs() <= 1e-2,
                "[{i}]: got {}, want {want}",
                got[i]
            );
        }
    }

    #[test]
    fn numeric_limits_run() {
        let Some(gpu) = common::gpu() else { return };
        let out = run(
            gpu,
            "struct_templates.metal",
            "limits",
            1,
            vec![
                (0, vec![0; 7 * 4]),
                (1, vec![0; 4 * 4]),
                (2, vec![0; 3 * 4]),
            ],
        );
        let f = common::f32s(&out[&0]);
        assert_eq!(
            f,
            vec![
                f32::MAX,
                f32::MIN_POSITIVE,
                f32::MIN,
                f32::EPSILON,
                f32::INFINITY,
                65504.0,
                0.0009765625
            ]
        );
        assert_eq!(
            i32s(&out[&1]),
            vec![i32::MAX, i32::MIN, i16::MIN as i32, i8::MAX as i32]
        );
        assert_eq!(
            common::u32s(&out[&2]),
            vec![u32::MAX, u16::MAX as u32, u8::MAX as u32]
        );
    }
}
