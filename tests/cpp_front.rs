//! C++ front end for real MSL, beyond templates: `auto` and `decltype`,
//! member forms (static member functions, out-of-struct definitions,
//! `operator[]`, `operator()`), pointer reinterpretation, namespaces with
//! repeated names, template calls against comparisons, `#line` and
//! `__cplusplus`. GPU tests compare with a CPU reference computed here.

mod common;

use common::source::{assert_error, translate_body, PRELUDE};

use msl2wgsl::{Library, Options};

#[cfg_attr(not(feature = "runner"), allow(dead_code))]
fn fixture(name: &str) -> String {
    let path = format!(
        "{}/fixtures/declarations/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const KERNEL: &str =
    "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {";

#[test]
fn auto_without_initializer_is_located() {
    let body = format!("{KERNEL} auto z; o[i] = 0; }}\n");
    assert_error(
        &body,
        "z;",
        0,
        "declaration of variable `z` with deduced type `auto` requires an initializer",
    );
}

#[test]
fn auto_reference_to_a_temporary_is_located() {
    let body = format!("{KERNEL} auto& r = o[i] + 1.0f; o[i] = r; }}\n");
    assert_error(
        &body,
        "o[i] + 1.0f",
        0,
        "a non-const reference (`auto&`) cannot bind to a temporary",
    );
}

#[test]
fn auto_from_braces_and_mixed_declarators_are_located() {
    let body = format!("{KERNEL} auto q = {{1, 2}}; o[i] = 0; }}\n");
    assert_error(
        &body,
        "{1, 2}",
        0,
        "cannot deduce `auto` from a braced initializer list",
    );
    let body = format!("{KERNEL} auto a = 1, b = 2.0f; o[i] = a + b; }}\n");
    assert_error(
        &body,
        "2.0f",
        0,
        "`auto` deduced as `float` here but as `int` in the first declarator",
    );
}

#[test]
fn auto_at_program_scope_is_located() {
    let body = "constant auto k = 1.0f;\n";
    assert_error(
        body,
        "auto",
        0,
        "`auto` is supported for local variables and function return types only; write the type here",
    );
}

#[test]
fn decltype_of_constants_works_at_program_scope() {
    let body = format!(
        "constant float scale = 2.0f;\nconstant decltype(scale) twice_scale = scale * 2;\n\
         static_assert(is_same_v<decltype(1u), uint>, \"uint literal\");\n\
         {KERNEL} o[i] = twice_scale; }}\n"
    );
    translate_body(&body);
}

#[test]
fn pointer_casts_of_thread_memory_are_refused() {
    // Device, constant and threadgroup memory can be viewed as another type
    // (tests/pointer_views.rs); a function's own variables only as what
    // they are made of (tests/thread_views.rs).
    let body = format!(
        "{KERNEL} float w[2] = {{1.0f, 2.0f}}; thread uint* u = (thread uint*)&w[0]; o[i] = float(u[1]); }}\n"
    );
    let text = assert_error(
        &body,
        "(thread uint*)&w[0]",
        0,
        "cannot reinterpret this `float*` as `uint*`: a pointer into thread memory can only view the object as the elements, components or columns it is made of",
    );
    assert!(text.contains("note: `as_type<uint>(x)`"), "{text}");
    let body = format!("{KERNEL} thread float* t = (thread float*)o; o[i] = t[0]; }}\n");
    assert_error(
        &body,
        "(thread float*)o",
        0,
        "cannot cast a `device` pointer to a `thread` pointer: address spaces differ",
    );
    let body = format!("{KERNEL} o[i] = reinterpret_cast<float>(i); }}\n");
    assert_error(
        &body,
        "reinterpret_cast",
        0,
        "`reinterpret_cast` is supported between pointer types only",
    );
}

#[test]
fn pointer_comparisons_that_cannot_hold_are_refused() {
    let body = format!(
        "{KERNEL} float a = 1; float b = 2; thread float* pa = &a; thread float* pb = &b;\n\
         if (pa < pb) {{ o[i] = 1; }} }}\n"
    );
    assert_error(
        &body,
        "pa < pb",
        0,
        "ordering pointers into different objects is not supported",
    );
    let body = format!("{KERNEL} if (o > nullptr) {{ o[i] = 1; }} }}\n");
    assert_error(
        &body,
        "nullptr",
        0,
        "ordering comparison between a pointer and `nullptr`",
    );
    let body = format!("{KERNEL} if (i == nullptr) {{ o[i] = 1; }} }}\n");
    assert_error(
        &body,
        "i ==",
        0,
        "`nullptr` can only be compared with a pointer",
    );
}

#[test]
fn name_in_two_used_namespaces_is_ambiguous() {
    let body = format!(
        "namespace a {{ float g(float x) {{ return x; }} }}\n\
         namespace b {{ float g(float x) {{ return -x; }} }}\n\
         using namespace a;\nusing namespace b;\n{KERNEL} o[i] = g(1.0f); }}\n"
    );
    assert_error(
        &body,
        "g(1.0f)",
        0,
        "reference to `g` is ambiguous: it could be `a::g` or `b::g`",
    );
}

#[test]
fn same_kernel_name_in_two_namespaces_is_refused() {
    let body = format!(
        "namespace a {{ {KERNEL} o[i] = 1; }} }}\nnamespace b {{ {KERNEL} o[i] = 2; }} }}\n"
    );
    assert_error(
        &body,
        "k(device",
        1,
        "`k` is declared in namespace `a` and in namespace `b`",
    );
}

#[test]
fn line_directive_moves_diagnostics() {
    let src = format!("{PRELUDE}#line 40 \"shader.metal\"\n{KERNEL}\n  o[i] = missing; }}\n");
    let text = match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render(),
    };
    assert!(
        text.starts_with("shader.metal:41:10: error: use of undeclared identifier `missing`"),
        "{text}"
    );
}

#[test]
fn cplusplus_is_cxx14() {
    let body = format!(
        "#if __cplusplus != 201402L\n#error wrong __cplusplus\n#endif\n\
         static_assert(__cplusplus == 201402L, \"C++14\");\n{KERNEL} o[i] = 1; }}\n"
    );
    translate_body(&body);
}

#[test]
fn template_call_and_comparison_parse_apart() {
    let body = format!(
        "template <typename T> T two(T x) {{ return x + x; }}\n\
         {KERNEL} int a = 1, b = 2; float c = 0.5f; bool lt = a < b > (c); o[i] = two<float>(c) + float(lt); }}\n"
    );
    let wgsl = translate_body(&body).wgsl().to_string();
    assert!(wgsl.contains("fn two_float("), "{wgsl}");
}

/// A function declared in a namespace (as a header declares a library's
/// functions) and defined out of line as `N::f`, then called as `N::f`:
/// C++ makes both the same function. It runs, and computes what it says.
#[cfg(feature = "runner")]
#[test]
fn namespace_member_defined_out_of_line_runs() {
    let body = "namespace lib {\n  float scale(float x);\n  namespace inner { float shift(float x); }\n}\n\
                float lib::scale(float x) { return x * 3.0f; }\n\
                namespace lib { float inner::shift(float x) { return x - 1.0f; } }\n\
                kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
                  o[i] = lib::inner::shift(lib::scale(float(i)));\n}\n";
    let n = 16u32;
    let Some(out) =
        common::source::run_body(body, "k", (n, 16), vec![(0, vec![0; 4 * n as usize])])
    else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, i as f32 * 3.0 - 1.0, "[{i}]");
    }
}

/// `N::f` naming a namespace function declared nowhere is still the
/// located "no member" error, and a namespace function has no object.
#[test]
fn out_of_line_namespace_definitions_are_checked() {
    let err = common::source::fails(
        "namespace lib { float scale(float x); }\nfloat lib::scale(float x) const { return x; }\n",
    );
    assert!(
        err.contains(
            "t.metal:4:12: error: `lib` is a namespace: its function `scale` has no object"
        ),
        "{err}"
    );
    let err = common::source::fails("namespace lib { float scale(float x); }\nkernel void k(device float* o [[buffer(0)]]) { o[0] = lib::other(1.0f); }\n");
    assert!(
        err.contains("no member named `other` in namespace `lib`"),
        "{err}"
    );
}

#[cfg(feature = "runner")]
mod gpu {
    use super::{common, fixture};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use msl2wgsl::Options;
    use std::collections::BTreeMap;

    fn run(
        name: &str,
        entry: &str,
        n: u32,
        buffers: Vec<(u32, Vec<u8>)>,
    ) -> Option<BTreeMap<u32, Vec<u8>>> {
        let gpu = common::gpu()?;
        let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [32, 1, 1],
        };
        Some(
            run_kernel(
                gpu,
                name,
                &fixture(name),
                &Options::default(),
                entry,
                &dispatch,
                &buffers,
            )
            .unwrap_or_else(|e| panic!("{name}/{entry}: {e}")),
        )
    }

    #[test]
    fn byte_buffers_viewed_as_floats_run() {
        let n = 24;
        let floats: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 4.0).collect();
        let mut base = vec![0xAAu8; 8];
        base.extend(common::f32_bytes(&floats));
        let run_with = |offset: u32| {
            run(
                "pointers.metal",
                "byte_views",
                n as u32,
                vec![
                    (0, base.clone()),
                    (1, vec![0; 4 + n * 4]),
                    (2, offset.to_le_bytes().to_vec()),
                    (3, vec![0; n * 4]),
                ],
            )
        };
        let Some(out) = run_with(8) else { return };
        let written = common::f32s(&out[&1][4..]);
        let bits = common::u32s(&out[&3]);
        for i in 0..n {
            assert_eq!(written[i], floats[i] * 2.0, "[{i}]");
            assert_eq!(bits[i], floats[i].to_bits(), "[{i}]");
        }
        // A misaligned offset (10) reads the word containing it: the
        // offset rounds down to 8 (Metal leaves this undefined).
        let out = run_with(10).expect("a GPU");
        let bits = common::u32s(&out[&3]);
        for i in 0..n {
            assert_eq!(bits[i], floats[i].to_bits(), "[{i}] misaligned");
        }
    }

    #[test]
    fn pointer_helpers_and_comparisons_run() {
        let n = 20;
        let buf: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 + 1.0).collect();
        let Some(out) = run(
            "pointers.metal",
            "pointer_helpers",
            n as u32,
            vec![(0, common::f32_bytes(&buf)), (1, vec![0; n * 4])],
        ) else {
            return;
        };
        let got = common::f32s(&out[&1]);
        for i in 0..n {
            // sum_n(buf + 4, 2) + first(buf[i]) + sum_n(&buf[i], 1), the
            // comparisons all hold (+100), `p < q` never, then add_one.
            let want = buf[4] + buf[5] + buf[i] + buf[i] + 100.0 + 1.0;
            assert_eq!(got[i], want, "[{i}]");
        }
    }

    #[test]
    fn same_names_in_namespaces_run() {
        let n = 30;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.125 - 1.0).collect();
        let Some(out) = run(
            "same_names.metal",
            "same_names",
            n as u32,
            vec![(0, common::f32_bytes(&x)), (1, vec![0; n * 4])],
        ) else {
            return;
        };
        let got = common::f32s(&out[&1]);
        for i in 0..n {
            let x = x[i];
            let (af, bf, gf) = (x + 1.0, x * 2.0, x - 3.0);
            // `m < n > (x)` is `(m < 3) > x`.
            let cmp = (((i as i32) < 3) as i32 as f32) > x;
            let want = af
                + bf
                + gf
                + gf
                + af * 10.0
                + (bf + 100.0)
                + bf
                + 10.0
                + 100.0
                + x * 5.0
                + if cmp { 1000.0 } else { 0.0 };
            assert!(
                (got[i] - want).abs() <= 1e-4 * want.abs().max(1.0),
                "[{i}]: got {}, want {want}",
                got[i]
            );
        }
    }

    #[test]
    fn auto_and_decltype_run() {
        let n = 40;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.75 - 9.0).collect();
        let accs: Vec<u8> = (0..n)
            .flat_map(|i| {
                let mut b = (i as f32 * 0.5).to_le_bytes().to_vec();
                b.extend((i as i32 * 3).to_le_bytes());
                b
            })
            .collect();
        let Some(out) = run(
            "deduced.metal",
            "deduced",
            n as u32,
            vec![(0, common::f32_bytes(&x)), (1, accs)],
        ) else {
            return;
        };
        let got = common::f32s(&out[&0]);
        let acc = common::f32s(&out[&1]);
        for i in 0..n {
            let y = x[i] * 2.0;
            // slot = y + 3x + 3 + *p + twice<float>(1) + 1.
            let want = y + 3.0 * x[i] + 3.0 + x[i] + 2.0 + 1.0;
            assert!(
                (got[i] - want).abs() <= 1e-4 * want.abs().max(1.0),
                "[{i}]: got {}, want {want}",
                got[i]
            );
            assert_eq!(acc[2 * i], i as f32 * 0.5 + y, "[{i}] sum");
            assert_eq!(
                acc[2 * i + 1].to_bits() as i32,
                i as i32 * 3 + 1,
                "[{i}] count"
            );
        }
    }
}
