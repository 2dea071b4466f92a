//! C++ function templates: deduction, explicit and default arguments,
//! non-type parameters, explicitly instantiated kernel templates under their
//! `host_name`, and the diagnostics for what goes wrong.

mod common;

use common::source::assert_error;

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
fn helper_templates_are_instantiated_once_per_argument_list() {
    let lib = translate("helpers.metal");
    let wgsl = lib.wgsl();
    // `square(in[i])` and `square<float>(k)` share one instantiation.
    assert_eq!(wgsl.matches("fn square_float(").count(), 1, "{wgsl}");
    for f in [
        "fn square_int(",
        "fn sum_4_(",
        "fn sum_2_(",
        "fn twice_float_float(",
        "fn first_sum_float_3_(",
        "fn first_sum_float_2_(",
    ] {
        assert!(wgsl.contains(f), "missing {f}:\n{wgsl}");
    }
    // A non-type parameter sizes a local array.
    assert!(
        wgsl.contains("array<f32, 3>") && wgsl.contains("array<f32, 2>"),
        "{wgsl}"
    );
}

#[test]
fn kernel_template_instances_are_entry_points_named_by_host_name() {
    let lib = translate("scale.metal");
    assert_eq!(lib.function_names(), vec!["scale_float", "scale_half"]);
    let f = lib.function("scale_float").unwrap();
    let json = serde_json::to_value(f).unwrap();
    assert_eq!(json["name"], "scale_float");
    assert!(lib.wgsl().contains("fn scale_half("));
}

#[test]
fn deduction_failure_is_located_with_a_note() {
    let body = "template <typename T> T zero() { return T(0); }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = zero(); }\n";
    let text = assert_error(body, "zero()", 1, "could not deduce template argument `T`");
    assert!(
        text.contains("note: candidate template `zero<T>`"),
        "{text}"
    );
}

#[test]
fn non_type_parameter_without_argument_cannot_be_deduced() {
    let body = "template <int N> float total(device const float* a) { return a[N - 1]; }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = total(o); }\n";
    assert_error(
        body,
        "total(o)",
        0,
        "could not deduce template argument `N`",
    );
}

#[test]
fn conflicting_deductions_are_reported() {
    let body = "template <typename T> T larger(T a, T b) { return a > b ? a : b; }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = larger(o[1], 2); }\n";
    let text = assert_error(
        body,
        "2)",
        0,
        "conflicting deductions for template parameter `T`: deduced as both `float` and `int`",
    );
    assert!(
        text.contains("note: candidate template `larger` ignored"),
        "{text}"
    );
}

#[test]
fn too_many_explicit_arguments_are_reported() {
    let body = "template <typename T> T square(T x) { return x * x; }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = square<float, int>(o[1]); }\n";
    assert_error(
        body,
        "int>",
        0,
        "too many template arguments for `square`: it has 1 template parameter(s), 2 given",
    );
}

#[test]
fn recursive_instantiation_is_limited() {
    let body = "template <int N> int depth() { return depth<N + 1>() + 1; }\n\
                kernel void k(device int* o [[buffer(0)]]) { o[0] = depth<0>(); }\n";
    assert_error(
        body,
        "depth<N + 1>",
        0,
        "template instantiation depth exceeds the limit of 1024",
    );
}

#[test]
fn kernel_instantiation_without_host_name_is_refused() {
    let body = "template <typename T> kernel void s(device T* d [[buffer(0)]]) { d[0] = T(1); }\n\
                template kernel void s<float>(device float*);\n";
    assert_error(
        body,
        "template kernel",
        0,
        "explicit instantiation of a kernel without `[[host_name(\"...\")]]` is not supported yet",
    );
}

#[test]
fn instantiation_of_an_unknown_template_is_refused() {
    let body = "template [[host_name(\"x\")]] kernel void nothing<float>(device float*);\n";
    assert_error(body, "nothing", 0, "`nothing` is not a function template");
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
        let options = Options::default();
        run_kernel(
            gpu,
            name,
            &fixture(name),
            &options,
            entry,
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{name}/{entry}: {e}"))
    }

    fn input(n: usize) -> Vec<f32> {
        (0..n).map(|i| (i as f32 - 20.0) * 0.25).collect()
    }

    #[test]
    fn helper_templates_run() {
        let Some(gpu) = common::gpu() else { return };
        let n = 67;
        let x = input(n);
        let out = run(
            gpu,
            "helpers.metal",
            "helpers",
            n as u32,
            vec![(0, common::f32_bytes(&x)), (1, vec![0; n * 4])],
        );
        let got = common::f32s(&out[&1]);
        for i in 0..n {
            let k = i as i32;
            let mut r = x[i] * x[i] + (k * k) as f32 + (k * k) as f32;
            let a3 = 3.0;
            r += (x[0] + x[1] + x[2] + x[3]) + (x[1] + x[2]) + a3;
            r += (x[i] + x[i]) + (x[0] + x[1] + x[2]) + (x[0] + x[1]);
            assert!(
                (got[i] - r).abs() <= 1e-3 * r.abs().max(1.0),
                "[{i}]: got {}, want {r}",
                got[i]
            );
        }
    }

    #[test]
    fn kernel_template_float_instance_runs() {
        let Some(gpu) = common::gpu() else { return };
        let n = 70;
        let x = input(n);
        let out = run(
            gpu,
            "scale.metal",
            "scale_float",
            n as u32,
            vec![(0, common::f32_bytes(&x)), (1, common::f32_bytes(&[1.5]))],
        );
        let got = common::f32s(&out[&0]);
        let want: Vec<f32> = x.iter().map(|v| v * 1.5 + 1.0).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn kernel_template_half_instance_runs() {
        let Some(gpu) = common::gpu() else { return };
        if !gpu.features().contains(wgpu::Features::SHADER_F16) {
            // Translation alone is checked by the non-GPU tests.
            eprintln!("note: skipping the half run: the adapter lacks shader-f16");
            return;
        }
        let n = 70;
        let x = input(n);
        let halves = |v: &[f32]| -> Vec<u8> {
            v.iter()
                .flat_map(|f| half::f16::from_f32(*f).to_le_bytes())
                .collect()
        };
        let out = run(
            gpu,
            "scale.metal",
            "scale_half",
            n as u32,
            vec![(0, halves(&x)), (1, halves(&[1.5]))],
        );
        let got: Vec<f32> = out[&0]
            .chunks(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect();
        // Every value here is exact in half.
        let want: Vec<f32> = x.iter().map(|v| v * 1.5 + 1.0).collect();
        assert_eq!(got, want);
    }
}

/// `Box<float>` is named only in `unbox<float>`'s body, which lowering
/// instantiates: `second` asks for it in the first round and is lowered
/// again in the next, where `first` (which asked for nothing) is lowered
/// after it into the same module. Entry points and reflection still come
/// out in source order, and both kernels compute.
const LATE_INSTANCE: &str = r#"
template <typename T> struct Box { T v; T twice() const { return v + v; } };
template <typename T> T unbox(T x) { Box<T> b; b.v = x; return b.twice(); }
kernel void first(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i] = float(i) + 0.5f;
}
kernel void second(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i] = unbox(float(i));
}
"#;

#[test]
fn entry_points_lowered_in_a_later_round_stay_in_source_order() {
    let lib = Library::from_source("late.metal", LATE_INSTANCE, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert_eq!(lib.function_names(), vec!["first", "second"]);
    let wgsl = lib.wgsl();
    let at = |name: &str| {
        wgsl.find(&format!("fn {name}("))
            .unwrap_or_else(|| panic!("no `{name}`:\n{wgsl}"))
    };
    assert!(at("first") < at("second"), "{wgsl}");
    let entries: Vec<&str> = lib
        .module()
        .0
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(entries, ["first", "second"]);
    #[cfg(feature = "runner")]
    {
        let first: fn(f32) -> f32 = |i| i + 0.5;
        let second: fn(f32) -> f32 = |i| i + i;
        for (entry, model) in [("first", first), ("second", second)] {
            let buffers = vec![(0, vec![0; 4 * 8])];
            let Some(out) = common::source::run_body(LATE_INSTANCE, entry, (8, 8), buffers) else {
                return;
            };
            let want: Vec<f32> = (0..8).map(|i| model(i as f32)).collect();
            assert_eq!(common::f32s(&out[&0]), want, "{entry}");
        }
    }
}
