//! Structs with member functions, constructors, operator overloads and static
//! member constants (issue #8 item 5), and their diagnostics.

mod common;

use msl2wgsl::{Library, Options};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/members/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn translate(name: &str, src: &str) -> Library {
    Library::from_source(name, src, &Options::default())
        .unwrap_or_else(|f| panic!("{name}:\n{}", f.render()))
}

/// Asserts the first diagnostic is `t.metal:LINE:COL: error: MESSAGE...`,
/// where LINE:COL is where the first `at` starts in `body`.
fn assert_error(body: &str, at: &str, message: &str) {
    let offset = body
        .find(at)
        .unwrap_or_else(|| panic!("`{at}` not in the test source"));
    let before = &body[..offset];
    let line = before.matches('\n').count() + 3;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let src = format!("{PRELUDE}{body}");
    let text = match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render(),
    };
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(
        text.lines().next().unwrap_or_default().starts_with(&want),
        "want `{want}`\n got:\n{text}"
    );
}

const COMPLEX: &str = "struct Complex {
    float re, im;
    Complex(float r, float i) : re(r), im(i) {}
    float norm() const { return re * re + im * im; }
    void scale(float k) { re *= k; im *= k; }
};
";

#[test]
fn member_functions_become_helpers_taking_the_object() {
    let lib = translate("complex.metal", &fixture("complex.metal"));
    let wgsl = lib.wgsl();
    // A const member takes the object by value, a non-const one by
    // `ptr<function>`, and its device twin by buffer element index.
    assert!(wgsl.contains("fn Complex_norm(this"), "{wgsl}");
    assert!(
        wgsl.contains("fn Complex_scale(this_5: ptr<function, Complex>"),
        "{wgsl}"
    );
    assert!(wgsl.contains("acc[this_index"), "{wgsl}");
    // `Complex::N` is a program-scope constant.
    assert!(wgsl.contains("const Complex_N: i32 = 4i;"), "{wgsl}");
}

#[test]
fn aggregate_and_constructor_initialization_coexist() {
    let src = format!(
        "{PRELUDE}struct P {{ float x, y; float sum() const {{ return x + y; }} }};
{COMPLEX}
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {{
    P p{{1.0f, 2.0f}};
    Complex c(1, 2);
    Complex d = Complex(3.0f, 4.0f);
    out[i] = p.sum() + c.norm() + d.norm();
}}
"
    );
    translate("t.metal", &src);
}

#[test]
fn virtual_functions_are_refused() {
    assert_error(
        "struct S { float x; virtual float f() const { return x; } };\n",
        "virtual",
        "virtual functions are not supported",
    );
}

#[test]
fn non_const_member_on_const_object_is_refused() {
    let body = format!(
        "{COMPLEX}kernel void k(const device Complex* p [[buffer(0)]], uint i [[thread_position_in_grid]]) {{
    p[i].scale(2.0f);
}}
"
    );
    assert_error(
        &body,
        "scale(2.0f)",
        "cannot call non-const member function `scale` on a const object of type `Complex`",
    );
    let body = format!(
        "{COMPLEX}kernel void k(device float* out [[buffer(0)]]) {{
    const Complex c(1, 2);
    c.scale(2.0f);
    out[0] = c.norm();
}}
"
    );
    assert_error(
        &body,
        "scale(2.0f)",
        "cannot call non-const member function `scale` on a const object",
    );
}

#[test]
fn unknown_member_function_is_located() {
    let body = format!(
        "{COMPLEX}kernel void k(device float* out [[buffer(0)]]) {{
    Complex c(1, 2);
    out[0] = c.abs();
}}
"
    );
    assert_error(&body, "abs()", "no member function `abs` in `Complex`");
}

#[test]
fn wrong_member_argument_count_is_located() {
    let body = format!(
        "{COMPLEX}kernel void k(device float* out [[buffer(0)]]) {{
    Complex c(1, 2);
    c.scale(1.0f, 2.0f);
    out[0] = c.norm();
}}
"
    );
    assert_error(
        &body,
        "c.scale(1.0f, 2.0f)",
        "no matching member function for call to `scale`: it takes 1 argument(s), 2 given",
    );
}

#[test]
fn static_member_function_cannot_be_const() {
    assert_error(
        "struct S { float x; static float f() const { return 1.0f; } };\n",
        "f()",
        "a static member function cannot be `const`: it has no object",
    );
}

#[test]
fn out_of_line_definition_must_match_a_declaration() {
    assert_error(
        "struct S { float x; float f() const; };\nfloat S::g() const { return x; }\n",
        "g()",
        "out-of-line definition of `g` does not match any declaration in `S`",
    );
    assert_error(
        "struct S { float x; float f() const; };\nfloat S::f() { return x; }\n",
        "f() {",
        "out-of-line definition of `f` differs in `const` from its declaration in `S` (declared const)",
    );
    assert_error(
        "float T::f() { return 1.0f; }\n",
        "T::",
        "`T` is not a struct with member declarations",
    );
}

#[test]
fn member_forms_translate() {
    let wgsl = translate("member_forms.metal", &fixture("member_forms.metal"))
        .wgsl()
        .to_string();
    // Static members take no object; out-of-line members are members.
    for want in [
        "fn Grid_make(base: f32, w: i32) -> Grid",
        "fn Grid_clamp_index(",
        "fn Grid_at(this",
        "fn Grid_bump(this",
        "fn Pt_sum(this",
    ] {
        assert!(wgsl.contains(want), "missing {want}:\n{wgsl}");
    }
}

#[cfg(feature = "runner")]
mod gpu {
    use super::fixture;
    use crate::common::{f32_bytes, f32s, gpu};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use msl2wgsl::Options;
    use std::collections::BTreeMap;

    /// The CPU reference of `complex_ops` for one element.
    fn reference(x: f32, y: f32, acc: [f32; 2]) -> ([f32; 2], f32) {
        let mul = |a: [f32; 2], b: [f32; 2]| [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]];
        let norm = |a: [f32; 2]| a[0] * a[0] + a[1] * a[1];
        let a = [x, y];
        let b = [y, 0.5];
        let ab = mul(a, b);
        let mut c = [ab[0] + x, ab[1] - y];
        c = [c[0] * 2.0, c[1] * 2.0];
        let d = [-c[0], -c[1]];
        let acc = [(acc[0] + d[0]) * 0.5, (acc[1] + d[1]) * 0.5];
        (acc, norm(c) + norm(a) + 2.0 * norm(d) + 3.0)
    }

    #[test]
    fn member_forms_match_cpu() {
        let Some(gpu) = gpu() else { return };
        let n = 50;
        let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
        let buffers: BTreeMap<u32, Vec<u8>> = [(0, f32_bytes(&input)), (1, vec![0; n * 4])]
            .into_iter()
            .collect();
        let out = run_kernel(
            gpu,
            "member_forms.metal",
            &fixture("member_forms.metal"),
            &Options::default(),
            "member_forms",
            &Dispatch::Threads {
                grid: [n as u32, 1, 1],
                threadgroup: [32, 1, 1],
            },
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let got = f32s(&out[&1]);
        for (i, x) in input.iter().enumerate() {
            // cells = x+1..x+4 after bump, width 5.
            let cells = [x + 1.0, x + 2.0, x + 3.0, x + 4.0];
            let total: f32 = cells.iter().sum();
            let want = cells[1] // g[1]
                + cells[3] // g[9], clamped
                + cells[2] * 0.5 // g(2, 0.5f)
                + cells[0] // g.at(-3), clamped
                + total
                + 5.0 // width
                + (x + 2.0) // Pt::sum
                + 3.0; // Grid::clamp_index(7)
            assert!(
                (got[i] - want).abs() <= 1e-4 * want.abs().max(1.0),
                "[{i}]: got {}, want {want}",
                got[i]
            );
        }
    }

    #[test]
    fn complex_struct_kernel_matches_cpu() {
        let Some(gpu) = gpu() else { return };
        let n = 100;
        let input: Vec<f32> = (0..2 * n).map(|i| (i as f32 * 0.37).sin()).collect();
        let acc: Vec<f32> = (0..2 * n).map(|i| i as f32 * 0.25 - 3.0).collect();
        let buffers: BTreeMap<u32, Vec<u8>> = [
            (0, f32_bytes(&input)),
            (1, f32_bytes(&acc)),
            (2, vec![0; n * 4]),
        ]
        .into_iter()
        .collect();
        let out = run_kernel(
            gpu,
            "complex.metal",
            &fixture("complex.metal"),
            &Options::default(),
            "complex_ops",
            &Dispatch::Threads {
                grid: [n as u32, 1, 1],
                threadgroup: [64, 1, 1],
            },
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (got_acc, got_out) = (f32s(&out[&1]), f32s(&out[&2]));
        for i in 0..n {
            let (want_acc, want_out) =
                reference(input[2 * i], input[2 * i + 1], [acc[2 * i], acc[2 * i + 1]]);
            for (g, w) in [
                (got_acc[2 * i], want_acc[0]),
                (got_acc[2 * i + 1], want_acc[1]),
                (got_out[i], want_out),
            ] {
                assert!(
                    (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                    "[{i}]: got {g}, want {w}"
                );
            }
        }
    }
}

/// A barrier reached only through a member function, on a ragged grid:
/// the threads past the grid must stay for the barrier (they are
/// predicated, not returned early), or the WGSL's barrier would sit in
/// non-uniform control flow.
const MEMBER_BARRIER: &str = "#include <metal_stdlib>\nusing namespace metal;\n\
    struct Pairer {\n\
        float bias;\n\
        float pair(device const float* in, uint i) const {\n\
            threadgroup_barrier(mem_flags::mem_device);\n\
            return in[i] + in[i ^ 1u] + bias;\n\
        }\n\
    };\n\
    kernel void pairs(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],\n\
                      uint gid [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]]) {\n\
        Pairer p{0.5f};\n\
        out[gid] = p.pair(in, gid);\n\
    }\n";

#[test]
fn barriers_inside_member_functions_keep_ragged_threads() {
    let lib = Library::from_source("pairs.metal", MEMBER_BARRIER, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(lib.function("pairs").unwrap().uses_barriers);
    #[cfg(feature = "runner")]
    {
        use msl2wgsl::runner::{run_kernel, Dispatch};
        let Some(gpu) = common::gpu() else { return };
        let n = 100u32;
        let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let buffers = [(0, common::f32_bytes(&input)), (1, vec![0; n as usize * 4])].into();
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [64, 1, 1],
        };
        let out = run_kernel(
            gpu,
            "pairs.metal",
            MEMBER_BARRIER,
            &Options::default(),
            "pairs",
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let got = common::f32s(&out[&1]);
        for (i, g) in got.iter().enumerate() {
            let want = (i ^ 1) as f32 + i as f32 + 0.5;
            assert_eq!(*g, want, "[{i}]");
        }
    }
}

/// Non-const member functions on threadgroup objects (unqualified ones and
/// one written for `threadgroup` objects) and on parts of buffer elements
/// (through a buffer pointer parameter, a reference, a pointer, and a
/// buffer held as words).
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
const OBJECTS_IN_MEMORY: &str = "#include <metal_stdlib>\nusing namespace metal;\n\
    struct Acc {\n\
        float sum;\n\
        uint n;\n\
        void add(float x) { sum += x; n += 1u; }\n\
        void reset() threadgroup { sum = 0.0f; n = 0u; }\n\
    };\n\
    struct Pair { Acc a; Acc b; };\n\
    struct Packed { packed_float3 p; Acc a; half h; };\n\
    void bump(device Pair* p, uint i) { p[i].b.add(2.0f); }\n\
    kernel void objects(device Pair* p [[buffer(0)]], device Packed* q [[buffer(1)]],\n\
                        device float* o [[buffer(2)]],\n\
                        uint i [[thread_position_in_grid]], uint l [[thread_index_in_threadgroup]]) {\n\
        threadgroup Acc slots[4];\n\
        threadgroup Acc total;\n\
        if (l < 4u) { slots[l].reset(); }\n\
        if (l == 0u) { total.reset(); }\n\
        threadgroup_barrier(mem_flags::mem_threadgroup);\n\
        if (l < 4u) { for (uint k = 0u; k < 3u; k++) { slots[l].add(float(i + k)); } }\n\
        threadgroup_barrier(mem_flags::mem_threadgroup);\n\
        if (l == 0u) { for (uint k = 0u; k < 4u; k++) { total.add(slots[k].sum); } }\n\
        threadgroup_barrier(mem_flags::mem_threadgroup);\n\
        o[3u * i] = slots[l % 4u].sum;\n\
        o[3u * i + 1u] = total.sum;\n\
        o[3u * i + 2u] = float(slots[l % 4u].n + 10u * total.n);\n\
        bump(p, i);\n\
        p[i].a.add(1.5f);\n\
        device Acc* pa = &p[i].a;\n\
        pa->add(5.0f);\n\
        device Pair& r = p[i];\n\
        r.b.add(4.0f);\n\
        q[i].a.add(3.0f);\n\
    }\n";

#[test]
#[cfg(feature = "runner")]
fn non_const_members_of_threadgroup_objects_and_buffer_parts() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    let n = 128usize;
    let mut pairs = Vec::new();
    let mut packed = Vec::new();
    for i in 0..n {
        for v in [i as f32, 0.0, 10.0 * i as f32, 0.0] {
            pairs.extend(v.to_le_bytes());
        }
        // packed_float3 p, Acc a {sum, n} at 12, half h at 20: 24 bytes.
        let mut e = vec![0u8; 24];
        e[12..16].copy_from_slice(&(i as f32 * 0.5).to_le_bytes());
        e[16..20].copy_from_slice(&7u32.to_le_bytes());
        e[20..22].copy_from_slice(&0x3C00u16.to_le_bytes());
        packed.extend(e);
    }
    let buffers = [(0, pairs), (1, packed), (2, vec![0; n * 12])].into();
    let dispatch = Dispatch::Threads {
        grid: [n as u32, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "objects.metal",
        OBJECTS_IN_MEMORY,
        &Options::default(),
        "objects",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = common::f32s(&out[&2]);
    let p = common::f32s(&out[&0]);
    let q = &out[&1];
    for i in 0..n {
        let (group, l) = (i / 64 * 64, i % 64);
        let slot = |s: usize| (0..3).map(|k| (group + s + k) as f32).sum::<f32>();
        let total: f32 = (0..4).map(slot).sum();
        assert_eq!(o[3 * i], slot(l % 4), "[{i}] slot sum");
        assert_eq!(o[3 * i + 1], total, "[{i}] total");
        assert_eq!(o[3 * i + 2], 3.0 + 40.0, "[{i}] counts");
        let pair = [p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]];
        let counts = [pair[1].to_bits(), pair[3].to_bits()];
        assert_eq!(
            [pair[0], pair[2]],
            [i as f32 + 1.5 + 5.0, 10.0 * i as f32 + 2.0 + 4.0],
            "[{i}] pair sums"
        );
        assert_eq!(counts, [2, 2], "[{i}] pair counts");
        let e = &q[24 * i..24 * i + 24];
        let sum = f32::from_le_bytes(e[12..16].try_into().unwrap());
        let count = u32::from_le_bytes(e[16..20].try_into().unwrap());
        let h = u16::from_le_bytes(e[20..22].try_into().unwrap());
        assert_eq!(
            (sum, count, h),
            (i as f32 * 0.5 + 3.0, 8, 0x3C00),
            "[{i}] packed"
        );
    }
}

/// `s[i] = x` through non-const `operator[]`s returning a reference to a
/// place computed from the index: on a thread object, a buffer element and
/// a threadgroup object; the index is evaluated once.
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
const REFERENCE_INDEX: &str = "#include <metal_stdlib>\nusing namespace metal;\n\
    struct Ring {\n\
        float data[4];\n\
        thread float& operator[](uint i) { return data[i & 3u]; }\n\
    };\n\
    struct Grid {\n\
        float rows[2][3];\n\
        float& operator[](uint i) { return this->rows[i / 3u][2u - i % 3u]; }\n\
    };\n\
    kernel void refs(device Grid* g [[buffer(0)]], device float* o [[buffer(1)]],\n\
                     uint i [[thread_position_in_grid]], uint l [[thread_index_in_threadgroup]]) {\n\
        Ring r;\n\
        for (uint k = 0u; k < 4u; k++) { r.data[k] = 0.0f; }\n\
        uint n = i;\n\
        r[n++] = 2.0f;\n\
        r[n] += 1.0f;\n\
        r[i + 6u] *= 3.0f;\n\
        o[2u * i] = r.data[0] + r.data[1] * 10.0f + r.data[2] * 100.0f + r.data[3] * 1000.0f + float(n - i) * 10000.0f;\n\
        g[i][i % 6u] = float(i);\n\
        g[i][5u - i % 6u] += 0.5f;\n\
        threadgroup Ring shared[8];\n\
        if (l < 8u) { for (uint k = 0u; k < 4u; k++) { shared[l].data[k] = float(k); } shared[l][l + 1u] = 9.0f; }\n\
        threadgroup_barrier(mem_flags::mem_threadgroup);\n\
        Ring s = shared[l % 8u];\n\
        o[2u * i + 1u] = s.data[0] + s.data[1] * 10.0f + s.data[2] * 100.0f + s.data[3] * 1000.0f;\n\
    }\n";

#[test]
#[cfg(feature = "runner")]
fn writes_through_references_that_operator_index_returns() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    let n = 64usize;
    let grid: Vec<f32> = (0..n * 6).map(|k| k as f32).collect();
    let buffers = [(0, common::f32_bytes(&grid)), (1, vec![0; n * 8])].into();
    let dispatch = Dispatch::Threads {
        grid: [n as u32, 1, 1],
        threadgroup: [32, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "refs.metal",
        REFERENCE_INDEX,
        &Options::default(),
        "refs",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = common::f32s(&out[&1]);
    let g = common::f32s(&out[&0]);
    let digits = |d: [f32; 4]| d[0] + d[1] * 10.0 + d[2] * 100.0 + d[3] * 1000.0;
    for i in 0..n {
        let mut ring = [0.0f32; 4];
        ring[i & 3] = 2.0;
        ring[(i + 1) & 3] += 1.0;
        ring[(i + 6) & 3] *= 3.0;
        assert_eq!(o[2 * i], digits(ring) + 10000.0, "[{i}] thread ring");
        // Grid element i: rows[k / 3][2 - k % 3] is float k' = 3 (k / 3) + 2 - k % 3.
        let mut cells: Vec<f32> = (0..6).map(|k| (i * 6 + k) as f32).collect();
        let at = |k: usize| 3 * (k / 3) + 2 - k % 3;
        cells[at(i % 6)] = i as f32;
        cells[at(5 - i % 6)] += 0.5;
        assert_eq!(&g[6 * i..6 * i + 6], &cells[..], "[{i}] buffer grid");
        let l = i % 32 % 8;
        let mut shared = [0.0, 1.0, 2.0, 3.0];
        shared[(l + 1) & 3] = 9.0;
        assert_eq!(o[2 * i + 1], digits(shared), "[{i}] threadgroup ring");
    }
}
