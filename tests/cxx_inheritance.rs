//! Base classes (C++ [class.derived]): member lookup through bases, calls
//! of base member functions on derived objects, derived-to-base
//! conversions, template and multiple bases, `__is_empty`, and Metal's
//! layout of derived structs in buffers (Itanium C++ ABI: base subobjects
//! first, empty bases take no space, a non-POD base's tail padding is
//! reused). Each kernel runs on the GPU against a CPU reference; refusals
//! are located diagnostics.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, first_code, translate_body};
use msl2wgsl::diagnostics::Code;

/// Runs kernel `entry` of `body` over `n` threads in threadgroups of 16.
#[cfg(feature = "runner")]
fn run(
    body: &str,
    entry: &str,
    n: u32,
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<std::collections::BTreeMap<u32, Vec<u8>>> {
    common::source::run_body(body, entry, (n, 16), buffers)
}

/// Single inheritance: data members, a const and a non-const member
/// function, a static constant and a member alias of the base, used on a
/// derived object (also unqualified inside the derived struct's own member
/// function); a derived object passed by value and by `thread` reference
/// where a base is expected, and sliced into a base variable.
const SINGLE: &str = r#"
struct Shape {
    float w;
    float h;
    using scalar = float;
    static constexpr constant int sides = 4;
    float area() const { return w * h; }
    void grow(float k) thread { w += k; h += k; }
};
struct Box : public Shape {
    float d;
    float volume() const { return area() * d; }
    void grow_all(float k) thread { grow(k); d += k; }
};
float perimeter(Shape s) { return 2.0f * (s.w + s.h); }
void widen(thread Shape& s, float k) { s.w += k; }
kernel void single(device const float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    Box b;
    b.w = in[i];
    b.h = 2.0f;
    b.d = 3.0f;
    Box::scalar before = b.volume() + float(Box::sides);
    b.grow_all(1.0f);
    widen(b, 0.5f);
    Shape s = b;
    out[i * 4 + 0] = before;
    out[i * 4 + 1] = b.area() + b.d;
    out[i * 4 + 2] = perimeter(b);
    out[i * 4 + 3] = s.w;
}
"#;

#[test]
fn single_inheritance_translates() {
    let lib = translate_body(SINGLE);
    assert!(lib.wgsl().contains("fn single("), "{}", lib.wgsl());
}

#[cfg(feature = "runner")]
#[test]
fn single_inheritance_matches_cpu_reference() {
    let n = 32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 + 1.0).collect();
    let Some(out) = run(
        SINGLE,
        "single",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 16])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, &x) in input.iter().enumerate() {
        let before = x * 2.0 * 3.0 + 4.0;
        // grow_all(1): w, h, d each + 1; widen: w + 0.5.
        let (w, h, d) = (x + 1.5, 3.0, 4.0);
        let want = [before, w * h + d, 2.0 * (w + h), w];
        assert_eq!(&got[i * 4..i * 4 + 4], &want, "[{i}]");
    }
}

/// Multiple bases (one of them empty, one a template instance), a chain of
/// bases, a static member function and a member template found through a
/// base, and `__is_empty` as a trait's base (`struct is_empty_t :
/// flag<__is_empty(T)>`).
const MULTIPLE: &str = r#"
template <bool V>
struct flag { static constexpr constant bool value = V; };
template <typename T>
struct is_empty_t : flag<__is_empty(T)> {};
struct Tag {};
struct Tagged : Tag {};
template <typename T>
struct Pair {
    T a;
    T b;
    T sum() const { return a + b; }
    static T twice(T x) { return x + x; }
    template <typename U> U scaled(U k) const { return U(a) * k; }
};
struct Counter { int n; int next() thread { n += 1; return n; } };
struct Both : Tagged, Pair<float>, Counter { float c; };
struct More : Both { float e; };
kernel void multiple(device const float* in [[buffer(0)]],
                     device float* out [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    More m;
    m.a = in[i];
    m.b = 1.0f;
    m.c = 2.0f;
    m.e = 3.0f;
    m.n = int(i);
    int k = m.next();
    float traits = (is_empty_t<Tag>::value ? 1.0f : 0.0f)
                 + (is_empty_t<Tagged>::value ? 2.0f : 0.0f)
                 + (is_empty_t<More>::value ? 4.0f : 0.0f)
                 + (__is_empty(float) ? 8.0f : 0.0f);
    out[i * 4 + 0] = m.sum() + m.c * m.e;
    out[i * 4 + 1] = More::twice(m.a) + float(m.scaled(2));
    out[i * 4 + 2] = float(k);
    out[i * 4 + 3] = traits;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn multiple_and_template_bases_match_cpu_reference() {
    let n = 32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let Some(out) = run(
        MULTIPLE,
        "multiple",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 16])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, &x) in input.iter().enumerate() {
        let want = [
            x + 1.0 + 2.0 * 3.0,
            2.0 * x + (x as i32 * 2) as f32,
            (i + 1) as f32,
            // Tag and Tagged are empty; More and float are not.
            1.0 + 2.0,
        ];
        assert_eq!(&got[i * 4..i * 4 + 4], &want, "[{i}]");
    }
}

#[test]
fn multiple_and_template_bases_translate() {
    let lib = translate_body(MULTIPLE);
    assert!(lib.wgsl().contains("fn multiple("), "{}", lib.wgsl());
}

/// Derived structs in buffers, in Metal's layout. The offsets below are
/// the Itanium C++ ABI's (which Metal's compiler follows), worked out from
/// the declarations:
/// - `Plain` is POD (no constructor, no base): `sizeof` 32 (a `float4` at 0,
///   a `float` at 16, padded to the `float4`'s alignment 16). `OnPlain :
///   Plain` puts `t` after the whole base: offset 32, `sizeof` 48.
/// - `Built` declares a constructor, so it is not POD for the purpose of
///   layout: its data size is 20 and `OnBuilt : Built` puts `t` in the
///   base's tail padding, at offset 20; `sizeof` 32.
/// - `Nothing` is empty: `OnNothing : Nothing` holds `x` at offset 0,
///   `sizeof` 4 (the empty-base optimisation).
///
/// Each thread reads its element's members and writes the base's `s` (and
/// `t`), which must land at those offsets in the host's bytes.
const LAYOUT: &str = r#"
struct Plain { float4 v; float s; void set(float k) { s = k; } };
struct OnPlain : Plain { float t; };
struct Built { float4 v; float s; Built(float4 a, float b) : v(a), s(b) {} };
struct OnBuilt : Built { float t; };
struct Nothing {};
struct OnNothing : Nothing { float x; };
kernel void layout(device OnPlain* p [[buffer(0)]],
                   device OnBuilt* q [[buffer(1)]],
                   device OnNothing* r [[buffer(2)]],
                   device float* out [[buffer(3)]],
                   uint i [[thread_position_in_grid]]) {
    out[i * 6 + 0] = float(sizeof(OnPlain));
    out[i * 6 + 1] = float(sizeof(OnBuilt));
    out[i * 6 + 2] = float(sizeof(OnNothing));
    out[i * 6 + 3] = p[i].v.y + p[i].s * p[i].t;
    out[i * 6 + 4] = q[i].v.y + q[i].s * q[i].t;
    out[i * 6 + 5] = r[i].x;
    p[i].set(p[i].t + 1.0f);
    q[i].t = q[i].s + 2.0f;
}
"#;

/// A buffer of `n` elements of `size` bytes, element `i` holding the
/// `(offset, value)` pairs `fields(i)` and zeros elsewhere.
fn elements(n: usize, size: usize, fields: impl Fn(usize) -> Vec<(usize, f32)>) -> Vec<u8> {
    let mut bytes = vec![0u8; n * size];
    for i in 0..n {
        for (offset, value) in fields(i) {
            let at = i * size + offset;
            bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
    }
    bytes
}

fn f32_at(bytes: &[u8], at: usize) -> f32 {
    f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

#[cfg(feature = "runner")]
#[test]
fn derived_structs_in_buffers_have_metal_layout() {
    let n = 16;
    // Members: v.y at 4, s at 16; t at 32 (OnPlain) or 20 (OnBuilt).
    let value = |i: usize, k: f32| i as f32 + k;
    let p = elements(n, 48, |i| {
        vec![(4, value(i, 0.5)), (16, value(i, 1.0)), (32, value(i, 2.0))]
    });
    let q = elements(n, 32, |i| {
        vec![
            (4, value(i, 0.25)),
            (16, value(i, 3.0)),
            (20, value(i, 4.0)),
        ]
    });
    let r = elements(n, 4, |i| vec![(0, value(i, 5.0))]);
    let Some(out) = run(
        LAYOUT,
        "layout",
        n as u32,
        vec![(0, p), (1, q), (2, r), (3, vec![0; n * 24])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&3]);
    for i in 0..n {
        let want = [
            48.0,
            32.0,
            4.0,
            value(i, 0.5) + value(i, 1.0) * value(i, 2.0),
            value(i, 0.25) + value(i, 3.0) * value(i, 4.0),
            value(i, 5.0),
        ];
        assert_eq!(&got[i * 6..i * 6 + 6], &want, "[{i}]");
        // `set` wrote the base's `s`; `q[i].t` went into Built's padding.
        assert_eq!(
            f32_at(&out[&0], i * 48 + 16),
            value(i, 2.0) + 1.0,
            "p[{i}].s"
        );
        assert_eq!(f32_at(&out[&0], i * 48 + 32), value(i, 2.0), "p[{i}].t");
        assert_eq!(
            f32_at(&out[&1], i * 32 + 20),
            value(i, 3.0) + 2.0,
            "q[{i}].t"
        );
        assert_eq!(f32_at(&out[&1], i * 32 + 16), value(i, 3.0), "q[{i}].s");
    }
}

#[test]
fn a_virtual_base_is_refused_at_virtual() {
    let body = "struct B { float x; };\n\
                struct D : virtual B { float y; };\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = 1.0f; }\n";
    assert_error(body, "virtual", 0, "virtual base classes are not supported");
    assert_eq!(first_code(body), Code::Unsupported);
}

#[test]
fn a_base_that_is_not_a_struct_is_refused_at_the_base() {
    let body = "struct D : float4 { float y; };\n\
                kernel void k(device float* o [[buffer(0)]]) { D d; d.y = 1.0f; o[0] = d.y; }\n";
    assert_error(
        body,
        "float4",
        0,
        "`D` cannot derive from `float4`: a base must be a struct or class",
    );
    assert_eq!(first_code(body), Code::InvalidType);
}

#[test]
fn a_member_the_derived_struct_declares_hides_the_base_one() {
    // C++ [class.member.lookup]: `D::get` hides `B::get` (even with other
    // parameters), so `d.get(1.0f)` calls D's and `d.get()` has no match.
    let body = "struct B { float x; float get() const { return x; } };\n\
                struct D : B { float get(float k) const { return x * k; } };\n\
                kernel void k(device float* o [[buffer(0)]]) { D d; d.x = 2.0f; o[0] = d.get(); }\n";
    assert_eq!(first_code(body), Code::NoMatchingOverload);
}

#[test]
fn a_member_function_two_bases_declare_is_ambiguous_at_the_call() {
    let body = "struct A { float x; float get() const { return x; } };\n\
                struct B { float y; float get() const { return y; } };\n\
                struct D : A, B {};\n\
                kernel void k(device float* o [[buffer(0)]]) { D d; d.x = 1.0f; o[0] = d.get(); }\n";
    let text = assert_error(
        body,
        "get()",
        2,
        "member `get` found in multiple base classes of `D`",
    );
    assert!(text.contains("note: declared in base `A`"), "{text}");
    assert_eq!(first_code(body), Code::AmbiguousName);
}

#[test]
fn a_data_member_two_bases_declare_is_ambiguous_at_the_use() {
    let body = "struct A { float x; };\n\
                struct B { float x; };\n\
                struct D : A, B { float z; };\n\
                kernel void k(device float* o [[buffer(0)]]) { D d; d.z = 1.0f; o[0] = d.x; }\n";
    assert_error(
        body,
        "x; }\n",
        0,
        "member `x` found in multiple base classes of `D`",
    );
    assert_eq!(first_code(body), Code::AmbiguousName);
}

/// Base initializers in constructors (in the struct and out of line, also
/// of an empty base), a buffer element of a derived struct bound to a
/// `const device` reference to its base, and `static_cast` to a base.
const CONSTRUCTORS: &str = r#"
struct Base { float a; Base(float x) : a(x * 2.0f) {} float get() const { return a; } };
struct Mark { Mark() {} };
struct Derived : Mark, Base {
    float t;
    Derived(float x) : Mark(), Base(x), t(1.5f) {}
    Derived(float x, float y);
};
Derived::Derived(float x, float y) : Base{x + y}, t(y) {}
struct P { float a; };
struct Q : P { float b; };
float first(const device P& p) { return p.a; }
kernel void ctors(device const Q* q [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    Derived d(float(i));
    Derived e(float(i), 3.0f);
    Q local = q[i];
    out[i * 3 + 0] = d.get() + d.t;
    out[i * 3 + 1] = e.a + e.t;
    out[i * 3 + 2] = first(q[i]) + static_cast<P>(local).a + local.b;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn base_initializers_and_base_references_match_cpu_reference() {
    let n = 16;
    // Q: `a` at 0, `b` at 4 (P is POD: `b` follows its 4 bytes).
    let q = elements(n, 8, |i| vec![(0, i as f32 + 0.5), (4, 10.0)]);
    let Some(out) = run(
        CONSTRUCTORS,
        "ctors",
        n as u32,
        vec![(0, q), (1, vec![0; n * 12])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for i in 0..n {
        let x = i as f32;
        let want = [2.0 * x + 1.5, 2.0 * (x + 3.0) + 3.0, 2.0 * (x + 0.5) + 10.0];
        assert_eq!(&got[i * 3..i * 3 + 3], &want, "[{i}]");
    }
}

/// A pointer to a `thread` derived object passed where a pointer to its
/// base is expected ([conv.ptr]/3): it points at the base subobject.
const POINTERS: &str = r#"
struct B { float a; };
struct D : B { float t; };
float get(thread const B* p) { return p->a; }
void bump(thread B* p) { p->a += 1.0f; }
kernel void pointers(device const float* in [[buffer(0)]],
                     device float* out [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    D d;
    d.a = in[i];
    d.t = 0.25f;
    bump(&d);
    out[i] = get(&d) * 2.0f + d.t;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn derived_pointers_convert_to_base_pointers() {
    let n = 16;
    let input: Vec<f32> = (0..n).map(|i| i as f32 - 4.0).collect();
    let Some(out) = run(
        POINTERS,
        "pointers",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, &x) in input.iter().enumerate() {
        assert_eq!(got[i], (x + 1.0) * 2.0 + 0.25, "[{i}]");
    }
}

#[test]
fn a_buffer_pointer_to_a_derived_struct_is_refused_as_a_base_pointer() {
    let body = "struct B { float a; };\n\
                struct D : B { float t; };\n\
                float dev(device B* p) { return p->a; }\n\
                kernel void k(device float* o [[buffer(0)]], device D* ds [[buffer(1)]]) { o[0] = dev(ds + 1); }\n";
    assert_error(
        body,
        "ds + 1",
        0,
        "converting a `device` pointer to `D` into a pointer to its base `B` is not supported yet",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}
