//! C++ declaration forms that real MSL uses: GCC/clang `__attribute__`s,
//! elaborated type specifiers and C-style typedefs, opaque enums
//! (`NS_ENUM`), `volatile`. Each runs on the GPU against a CPU reference,
//! or is refused with a located diagnostic.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, first_code, translate_body};
use msl2wgsl::diagnostics::Code;

/// Runs kernel `entry` of `body` (after the prelude) over `n` threads in
/// threadgroups of 16 with `buffers`, or `None` without a GPU.
#[cfg(feature = "runner")]
fn run(
    body: &str,
    entry: &str,
    n: u32,
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<std::collections::BTreeMap<u32, Vec<u8>>> {
    common::source::run_body(body, entry, (n, 16), buffers)
}

/// Attributes in every place clang accepts them in a declaration.
const GNU_ATTRIBUTES: &str = r#"
static inline __attribute__((always_inline)) float sq(float x) { return x * x; }
__attribute__((always_inline)) static float cube(float x) { return x * x * x; }
inline float __attribute__((__always_inline__, __const__)) twice(float x) __attribute__((pure));
inline float twice(float x) { return 2.0f * x; }
float __attribute__((noinline)) add(float a __attribute__((unused)), __attribute__((unused)) float b) __attribute__((visibility("default"))) { return a + b; }
struct __attribute__((aligned(4))) Pair {
    float a __attribute__((aligned(4)));
    __attribute__((aligned(2))) float b;
    float sum() const __attribute__((always_inline)) { return a + b; }
} __attribute__((__aligned__(4)));
typedef float Real __attribute__((aligned(4)));
kernel void gnu_attrs(device const float* in [[buffer(0)]],
                      device float* out [[buffer(1)]] __attribute__((unused)),
                      uint i [[thread_position_in_grid]]) {
    float x __attribute__((aligned(16))) = in[i];
    __attribute__((unused)) Real y = twice(x);
    Pair p = { sq(x), cube(x) };
    out[i] = add(p.sum(), y);
}
"#;

#[test]
fn gnu_attributes_parse_everywhere_and_are_ignored() {
    let lib = translate_body(GNU_ATTRIBUTES);
    assert!(lib.wgsl().contains("fn gnu_attrs("), "{}", lib.wgsl());
}

#[cfg(feature = "runner")]
#[test]
fn gnu_attributes_kernel_matches_cpu_reference() {
    let n = 32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 2.0).collect();
    let Some(out) = run(
        GNU_ATTRIBUTES,
        "gnu_attrs",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, x) in input.iter().enumerate() {
        let want = x * x + x * x * x + 2.0 * x;
        assert_eq!(got[i], want, "[{i}]");
    }
}

#[test]
fn packed_without_padding_is_accepted_with_metal_alignment() {
    // `packed` moves nothing in `P` but lowers its alignment to 1, and so
    // that of `Q`, which holds it; `R`'s `float` keeps it at 4.
    translate_body(
        "struct __attribute__((packed)) P { float a; float b; };\n\
         struct Q { P p; };\n\
         struct R { P p; float c; };\n\
         typedef struct __attribute__((__packed__)) { packed_float2 t; packed_float3 n; } V;\n\
         static_assert(sizeof(P) == 8 && alignof(P) == 1, \"P\");\n\
         static_assert(alignof(Q) == 1 && alignof(R) == 4, \"Q, R\");\n\
         static_assert(sizeof(V) == 20 && alignof(V) == 1, \"V\");\n\
         kernel void k(device P* p [[buffer(0)]]) { p[0].a = float(alignof(Q)); }\n",
    );
}

#[test]
fn packed_that_moves_a_member_is_refused_where_written() {
    assert_error(
        "struct A { char c; float x; } __attribute__((packed));\n",
        "packed",
        0,
        "`packed` puts member `x` of `A` at offset 1 instead of 4",
    );
    // An array of it would put `x` off its 4-byte boundary.
    let text = assert_error(
        "typedef struct __attribute__ ((__packed__)) { float x; char tag; } Tagged;\n",
        "__packed__",
        0,
        "`packed` makes `Tagged` 5 bytes instead of 8",
    );
    assert!(
        text.contains("note: a port does this instead: add padding members"),
        "{text}"
    );
    // A packed struct inside another, after a `char`: its floats off their boundary.
    assert_error(
        "typedef struct __attribute__ ((__packed__)) { float4 p; float2 uv; } Q;\nstruct B { char c; Q q; };\n",
        "q;",
        0,
        "member `q` of `B` is at offset 1, where the 4-byte scalars of the packed struct `Q`",
    );
    assert_eq!(
        first_code("typedef struct __attribute__ ((__packed__)) { float4 p; float2 uv; } Q;\nstruct B { char c; Q q; };\n"),
        Code::Unsupported
    );
    assert_eq!(
        first_code("typedef struct __attribute__ ((__packed__)) { float x; char tag; } Tagged;\n"),
        Code::Unsupported
    );
    assert_error(
        "struct __attribute__((packed)) P { float a; };\nstruct B { char c; P p; };\n",
        "P p",
        0,
        "`P` (aligned to 1 bytes) puts member `p` of `B` at offset 1 instead of 4",
    );
    assert_error(
        "struct A { char c; float x __attribute__((packed)); };\n",
        "packed",
        0,
        "`packed` puts member `x` of `A` at offset 1 instead of 4",
    );
}

#[test]
fn aligned_that_changes_the_layout_is_refused_where_written() {
    assert_error(
        "struct A { float x; float y __attribute__((aligned(8))); };\n",
        "aligned(8)",
        0,
        "`aligned(8)` puts member `y` of `A` at offset 8 instead of 4",
    );
    assert_error(
        "typedef float F __attribute__((aligned(16)));\n",
        "aligned(16)",
        0,
        "`aligned` gives `F` an alignment of 16 bytes instead of 4",
    );
    assert_error(
        "struct A { float x __attribute__((aligned(3))); };\n",
        "3)",
        0,
        "the alignment must be a power of two",
    );
}

/// `aligned(256)` on a struct (Apple's samples align per-draw parameters
/// to the 256 bytes of a buffer offset): Metal's size, array stride and
/// member offsets, read from buffers a host laid out so.
const ALIGNED_256: &str = r#"
typedef struct __attribute__((aligned(256))) { float4 c; float x; } Actor;
struct Scene { float a; Actor b; };
static_assert(sizeof(Actor) == 256 && alignof(Actor) == 256, "");
static_assert(sizeof(Scene) == 512 && alignof(Scene) == 256, "");
kernel void k(device const Actor* actors [[buffer(0)]],
              device const Scene& scene [[buffer(1)]],
              device float* out [[buffer(2)]],
              uint i [[thread_position_in_grid]]) {
    out[i] = actors[i].c.y * actors[i].x + scene.b.c.w + scene.a;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn aligned_struct_has_metal_size_stride_and_offsets() {
    let n = 16usize;
    // Garbage everywhere the layout leaves padding.
    let mut actors = vec![0xA5u8; 256 * n];
    for i in 0..n {
        let c = [i as f32, 2.0 * i as f32 + 1.0, 0.5, 0.25];
        actors[256 * i..256 * i + 16].copy_from_slice(bytemuck::cast_slice(&c));
        actors[256 * i + 16..256 * i + 20].copy_from_slice(&(3.0 + i as f32).to_le_bytes());
    }
    let mut scene = vec![0xA5u8; 512];
    scene[0..4].copy_from_slice(&100.0f32.to_le_bytes());
    scene[256 + 12..256 + 16].copy_from_slice(&7.0f32.to_le_bytes());
    let Some(out) = run(
        ALIGNED_256,
        "k",
        n as u32,
        vec![(0, actors), (1, scene), (2, vec![0; 4 * n])],
    ) else {
        return;
    };
    let got: Vec<f32> = bytemuck::pod_collect_to_vec(&out[&2]);
    let want: Vec<f32> = (0..n)
        .map(|i| (2.0 * i as f32 + 1.0) * (3.0 + i as f32) + 7.0 + 100.0)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn aligned_that_changes_nothing_is_accepted() {
    translate_body(
        "typedef struct __attribute__((aligned(16))) { float4x4 m; float4 c; } ActorParams;\n\
         struct __attribute__((aligned(32))) W { float4 a; float4 b; };\n\
         struct H { W w; };\n\
         static_assert(sizeof(ActorParams) == 80 && alignof(W) == 32 && alignof(H) == 32, \"\");\n\
         kernel void k(device ActorParams* p [[buffer(0)]], device H* h [[buffer(1)]]) { p[0].c = h[0].w.a; }\n",
    );
}

#[test]
fn attributes_that_change_the_type_are_refused() {
    assert_error(
        "typedef float F4 __attribute__((ext_vector_type(4)));\n",
        "ext_vector_type",
        0,
        "`__attribute__((ext_vector_type))` changes the declared type; it is not supported",
    );
    assert_error(
        "enum __attribute__((packed)) E { A, B };\n",
        "packed",
        0,
        "`packed` on an enum is not supported",
    );
    for body in [
        "typedef float F4 __attribute__((ext_vector_type(4)));\n",
        "enum __attribute__((packed)) E { A, B };\n",
        "struct A { char c; float x; } __attribute__((packed));\n",
        "struct A { float x; float y __attribute__((aligned(8))); };\n",
        "typedef float F __attribute__((aligned(16)));\n",
    ] {
        assert_eq!(first_code(body), Code::Unsupported, "{body}");
    }
}

/// C-style typedefs, elaborated names and the `NS_ENUM` shape.
const TAGS: &str = r#"
typedef struct Node Node;
struct Node { float v; int k; };
typedef struct Node Node;
typedef struct Tagged { float w; } Tagged;
typedef struct { float s; } Anonymous;
struct Fwd;
typedef enum BufferIndex : int32_t BufferIndex;
enum BufferIndex : int32_t { BufferIndexIn = 0, BufferIndexOut = 1 };
enum class Mode : uint;
enum class Mode : uint { Add = 1, Mul = 2 };
typedef enum Colour { Red = 3, Green } Colour;
typedef enum Colour Hue;
float weigh(constant struct Node& n, thread const struct Tagged& t) { return n.v * t.w; }
kernel void tags(constant struct Node* nodes [[buffer(BufferIndexIn)]],
                 device float* out [[buffer(BufferIndexOut)]],
                 uint i [[thread_position_in_grid]]) {
    struct Node n = nodes[i];
    struct Tagged t = { 2.0f };
    Anonymous a = { 0.5f };
    enum BufferIndex b = BufferIndexOut;
    enum Mode m = n.k > 0 ? Mode::Mul : Mode::Add;
    Hue h = Green;
    out[i] = weigh(nodes[i], t) + a.s + float(b) + float(uint(m)) + float(h) + n.v;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn typedefs_of_tags_and_opaque_enums_match_cpu_reference() {
    let n = 20;
    let mut bytes = Vec::new();
    let nodes: Vec<(f32, i32)> = (0..n).map(|i| (i as f32 * 0.5, i as i32 % 3 - 1)).collect();
    for (v, k) in &nodes {
        bytes.extend(v.to_le_bytes());
        bytes.extend(k.to_le_bytes());
    }
    let Some(out) = run(
        TAGS,
        "tags",
        n as u32,
        vec![(0, bytes), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, (v, k)) in nodes.iter().enumerate() {
        let mode = if *k > 0 { 2.0 } else { 1.0 };
        let want = v * 2.0 + 0.5 + 1.0 + mode + 4.0 + v;
        assert_eq!(got[i], want, "[{i}]");
    }
}

#[test]
fn typedefs_of_tags_translate() {
    translate_body(TAGS);
}

#[test]
fn an_opaque_enum_redeclared_with_another_type_is_refused() {
    assert_error(
        "typedef enum E : int32_t E;\nenum E : uint { A };\n",
        "E : uint",
        0,
        "redefinition of `E`",
    );
}

#[test]
fn a_typedef_to_another_type_is_still_a_redefinition() {
    assert_error(
        "struct S { float a; };\ntypedef int S;\n",
        "S;",
        0,
        "redefinition of `S`",
    );
}

/// `volatile` in the places Tint, SPIRV-Cross and MLX write it.
const VOLATILE: &str = r#"
volatile constexpr constant uint tint_volatile_zero = 0u;
void bump(volatile device atomic_uint* c) {
    atomic_fetch_add_explicit((volatile device atomic_uint*)c, 1u, memory_order_relaxed);
}
struct Box { volatile int n; };
kernel void vol(volatile device atomic_uint* counter [[buffer(0)]],
                device float* out [[buffer(1)]],
                uint i [[thread_position_in_grid]]) {
    volatile int compiler_barrier = int(i);
    int volatile twice = compiler_barrier * 2;
    Box b = { twice };
    thread volatile int* const p = &b.n;
    bump(counter);
    out[i] = float(*p + int(tint_volatile_zero));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn volatile_objects_read_and_write_as_others_on_the_gpu() {
    let n = 48;
    let Some(out) = run(
        VOLATILE,
        "vol",
        n as u32,
        vec![(0, vec![0; 4]), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    assert_eq!(common::u32s(&out[&0]), [n as u32]);
    let got = common::f32s(&out[&1]);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, (2 * i) as f32, "[{i}]");
    }
}

#[test]
fn volatile_translates() {
    translate_body(VOLATILE);
}

/// Empty structs: tags, function objects and C headers' empty uniforms.
const EMPTY: &str = r#"
typedef struct {} Unused;
struct Empty {};
struct Holder { Empty e; float v; };
struct Twice { float operator()(float x) const { return 2.0f * x; } };
template <typename T> struct Plus { T operator()(T a, T b) const { return a + b; } };
template <typename T, typename Op> T fold(T a, T b, Op op) { return op(a, b); }
constant Empty none = {};
constant Holder held = { {}, 3.0f };
float keep(Empty e, thread Empty& r, float x) { r = e; return x; }
Empty make() { return Empty{}; }
kernel void empty(device float* out [[buffer(0)]],
                  constant Unused& unused [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    Empty a;
    Empty b = {};
    Empty c = Empty();
    Empty list[2] = { make(), none };
    Holder h = held;
    Twice twice;
    b = a;
    out[i] = keep(list[1], c, float(i)) + twice(h.v) + fold(1.0f, 2.0f, Plus<float>())
           + float(sizeof(Empty) * 100 + sizeof(Holder) * 10 + sizeof(Unused));
}
"#;

#[test]
fn empty_structs_have_metal_size_one() {
    translate_body(&format!(
        "{EMPTY}static_assert(sizeof(Empty) == 1 && alignof(Empty) == 1 && sizeof(Holder) == 8, \"\");\n"
    ));
}

#[cfg(feature = "runner")]
#[test]
fn empty_structs_as_values_match_cpu_reference() {
    let n = 16;
    let Some(out) = run(
        EMPTY,
        "empty",
        n as u32,
        vec![(0, vec![0; n * 4]), (1, vec![0; 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for (i, g) in got.iter().enumerate() {
        let want = i as f32 + 6.0 + 3.0 + 181.0;
        assert_eq!(*g, want, "[{i}]");
    }
}

#[test]
fn an_empty_struct_takes_no_initializers() {
    assert_error(
        "struct Empty {};\nkernel void k(device float* o [[buffer(0)]]) { Empty e = { 1.0f }; o[0] = 0; }\n",
        "1.0f",
        0,
        "excess elements in initializer of `Empty`",
    );
}

/// Member functions qualified with the object's address space, as Tint's
/// `tint_array` and SPIRV-Cross's `spvUnsafeArray` declare them.
const QUALIFIED_MEMBERS: &str = r#"
template<typename T, size_t N>
struct tint_array {
  const constant T& operator[](size_t i) const constant { return elements[i]; }
  device T& operator[](size_t i) device { return elements[i]; }
  const device T& operator[](size_t i) const device { return elements[i]; }
  thread T& operator[](size_t i) thread { return elements[i]; }
  const thread T& operator[](size_t i) const thread { return elements[i]; }
  threadgroup T& operator[](size_t i) threadgroup { return elements[i]; }
  const threadgroup T& operator[](size_t i) const threadgroup { return elements[i]; }
  T elements[N];
};
struct Where {
  float v;
  float tag() const constant { return 1.0f; }
  float tag() const device { return 2.0f; }
  float tag() const thread { return 3.0f; }
  float tag() const threadgroup { return 4.0f; }
  void bump() thread { v += 10.0f; }
  void bump() device { v += 20.0f; }
  float object_only() const object_data { return 0.0f; }
};
kernel void qualified(constant tint_array<float, 4>& c [[buffer(0)]],
                      device Where* w [[buffer(1)]],
                      constant Where& cw [[buffer(2)]],
                      device float* out [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
    threadgroup Where tw;
    if (i == 0) { tw.v = 0.0f; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    tint_array<float, 4> local = {};
    local.elements[i % 4] = c[i % 4];
    Where here = { 0.0f };
    here.bump();
    w[i].bump();
    out[i] = local[i % 4] + cw.tag() * 1000.0f + w[i].tag() * 100.0f + here.tag() * 10.0f
           + tw.tag() + here.v;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn address_space_qualified_members_match_cpu_reference() {
    let n = 8;
    let c = [1.5f32, 2.5, 3.5, 4.5];
    let w: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let Some(out) = run(
        QUALIFIED_MEMBERS,
        "qualified",
        n as u32,
        vec![
            (0, common::f32_bytes(&c)),
            (1, common::f32_bytes(&w)),
            (2, common::f32_bytes(&[0.0])),
            (3, vec![0; n * 4]),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&3]);
    let written = common::f32s(&out[&1]);
    for i in 0..n {
        let want = c[i % 4] + 1000.0 + 200.0 + 30.0 + 4.0 + 10.0;
        assert_eq!(got[i], want, "[{i}]");
        assert_eq!(written[i], w[i] + 20.0, "w[{i}]");
    }
}

#[test]
fn a_member_for_another_address_space_is_refused() {
    assert_error(
        "struct W { float v; float only() const device { return v; } };\n\
         kernel void k(device float* o [[buffer(0)]]) { W w = { 1.0f }; o[0] = w.only(); }\n",
        "only()",
        1,
        "no member function `only` of `W` applies to an object in the `thread` address space",
    );
    assert_error(
        "struct W { float v; static float f() device { return 0.0f; } };\n",
        "device {",
        0,
        "a static member function cannot have an address space",
    );
}

/// Default member initializers, applied wherever an object is created
/// without a value for the member.
const MEMBER_DEFAULTS: &str = r#"
struct Surface {
    float3 reflected { 0.5 };
    float3 emitted { 0 };
    uint32_t start{7};
    int n = 3;
    float k;
};
struct Outer { Surface s; float w = 2.0f; };
struct Counted {
    int a = 10;
    int b = 20;
    Counted(int x) : b(x) {}
    Counted() { b += 1; }
};
template <typename T> struct Box { T v = T(4); };
constant Surface ks = { float3(1) };
kernel void defaults(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    Surface a;
    Surface b = { float3(float(i)) };
    Outer d[2];
    Counted made(int(i));
    Counted dflt;
    Box<float> box;
    Surface value = Surface();
    out[i * 8 + 0] = a.reflected.x + a.emitted.y + a.k;
    out[i * 8 + 1] = float(a.start * 10 + a.n);
    out[i * 8 + 2] = b.reflected.x + float(b.n);
    out[i * 8 + 3] = float(d[1].s.start) + d[1].w;
    out[i * 8 + 4] = float(made.a * 100 + made.b);
    out[i * 8 + 5] = float(dflt.a * 100 + dflt.b);
    out[i * 8 + 6] = box.v + float(value.n);
    out[i * 8 + 7] = ks.reflected.y + float(ks.n);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn default_member_initializers_match_cpu_reference() {
    let n = 4;
    let Some(out) = run(
        MEMBER_DEFAULTS,
        "defaults",
        n as u32,
        vec![(0, vec![0; n * 8 * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for i in 0..n {
        let want = [
            0.5,
            73.0,
            i as f32 + 3.0,
            9.0,
            (1000 + i) as f32,
            1021.0,
            7.0,
            4.0,
        ];
        assert_eq!(got[i * 8..i * 8 + 8], want, "thread {i}");
    }
}

#[test]
fn a_default_member_initializer_must_be_constant() {
    let text = assert_error("float f();\nstruct S { float x = f(); };\n", "f()", 1, "");
    assert!(
        text.contains("the default initializer of member `x` must be a constant expression"),
        "{text}"
    );
}

/// Designated initializers, as Tint writes them
/// (`tint_module_vars_struct{.u=(&u)}`) and nested.
const DESIGNATED: &str = r#"
struct In { float a; int b; };
struct Vars { In inner; float w = 5.0f; float z; };
constant Vars kv = Vars{.inner = {.b = 2}, .z = 1.0f};
constant In kin = In{.b = 9};
kernel void designated(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    Vars v = {.inner{.a = float(i), .b = 3}, .z = 2.0f};
    Vars u = Vars{.z = 4.0f};
    In x;
    x = In{.b = 7, .a = 1.5f};
    out[i * 4 + 0] = v.inner.a + float(v.inner.b) * 10.0f + v.w * 100.0f + v.z * 1000.0f;
    out[i * 4 + 1] = u.inner.a + u.w + u.z * 10.0f;
    out[i * 4 + 2] = x.a + float(x.b) * 10.0f;
    out[i * 4 + 3] = float(kv.inner.b) + kv.w * 10.0f + kv.z * 100.0f + float(kin.b) * 1000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn designated_initializers_match_cpu_reference() {
    let n = 6;
    let Some(out) = run(
        DESIGNATED,
        "designated",
        n as u32,
        vec![(0, vec![0; n * 16])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for i in 0..n {
        let want = [i as f32 + 30.0 + 500.0 + 2000.0, 45.0, 71.5, 9152.0];
        assert_eq!(got[i * 4..i * 4 + 4], want, "thread {i}");
    }
}

#[test]
fn designated_initializer_errors_are_located() {
    let k = |body: &str| {
        format!("struct S {{ float a; float b; }};\nkernel void k(device float* o [[buffer(0)]]) {{ {body} o[0] = 0.0f; }}\n")
    };
    assert_error(
        &k("S s = {.c = 1};"),
        "c = 1",
        0,
        "no member named `c` in `S`",
    );
    assert_error(
        &k("S s = {.a = 1, .a = 2};"),
        "a = 2",
        0,
        "member `a` is initialized twice",
    );
    assert_error(
        &k("S s = {.a = 1, 2};"),
        "2}",
        0,
        "an initializer list that mixes designated (`.member = value`) and positional elements is not supported",
    );
    assert_error(
        &k("float2 v = {.x = 1};"),
        ".x",
        0,
        "designated initializers name struct members; `float2` is not a struct",
    );
    assert_eq!(first_code(&k("S s = {.c = 1};")), Code::UnknownMember);
}

#[test]
fn forward_declared_struct_templates_are_defined_later() {
    let lib = translate_body(
        "template <typename T> struct complex_t;\n\
         template <typename T> struct complex_t { T re; T im; };\n\
         struct Fwd;\n\
         kernel void k(device complex_t<float>* c [[buffer(0)]]) { c[0].re = c[0].im; }\n",
    );
    assert!(lib.wgsl().contains("re: f32"), "{}", lib.wgsl());
}

/// Constructors with `constexpr`/`explicit` and an address space after the
/// parameters (MLX's `complex_t`): the `thread` ones build values.
const QUALIFIED_CONSTRUCTORS: &str = r#"
template <typename T>
struct complex_t {
  T real;
  T imag;
  constexpr complex_t(T real, T imag) thread : real(real), imag(imag) {};
  constexpr complex_t() thread : real(0), imag(0) {};
  constexpr complex_t() threadgroup : real(0), imag(0) {};
  explicit complex_t(T r) : real(r), imag(1) {}
};
kernel void ctors(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  complex_t<float> a(float(i), 2.0f);
  complex_t<float> b;
  complex_t<float> c(3.0f);
  out[i] = a.real + a.imag * 10.0f + b.real + c.real * 100.0f + c.imag * 1000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn qualified_constructors_match_cpu_reference() {
    let n = 5;
    let Some(out) = run(
        QUALIFIED_CONSTRUCTORS,
        "ctors",
        n as u32,
        vec![(0, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, i as f32 + 1320.0, "[{i}]");
    }
}

#[test]
fn attributes_may_come_before_array_suffixes() {
    // SPIRV-Cross and Tint write `float c [[clip_distance]] [2];`.
    let lib = translate_body(
        "struct O { float4 p [[position]]; float c [[clip_distance]] [2]; };\n\
         vertex O v(uint i [[vertex_id]]) { O o; o.p = float4(0); o.c[0] = 1; o.c[1] = 2; return o; }\n\
         kernel void k(device float* b [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
             float a [[maybe_unused]] [2] = { 1.0f, 2.0f }; b[i] = a[1]; }\n",
    );
    assert!(lib.wgsl().contains("clip_distances"), "{}", lib.wgsl());
}

/// `enum class` enumerators are scoped (C++ [dcl.enum]): two scoped enums may
/// share enumerator names (Metal samples name buffer indices this way), and
/// the names are found only qualified.
const SCOPED_ENUMS: &str = r#"
enum class VertexBuffer : int { vertices = 0, frame = 1 };
enum class FragmentBuffer : int { frame = 0 };
kernel void k(device int* out [[buffer(VertexBuffer::vertices)]],
              device int* frame [[buffer(VertexBuffer::frame)]],
              uint i [[thread_position_in_grid]]) {
    out[i] = int(FragmentBuffer::frame) * 10 + int(VertexBuffer::frame) + frame[i];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn scoped_enumerators_share_names() {
    let n = 8u32;
    let frame: Vec<u8> = (0..n as i32)
        .flat_map(|v| (v * 100).to_le_bytes())
        .collect();
    let Some(out) = run(
        SCOPED_ENUMS,
        "k",
        n,
        vec![(0, vec![0; n as usize * 4]), (1, frame)],
    ) else {
        return;
    };
    let got: Vec<i32> = common::u32s(&out[&0])
        .into_iter()
        .map(|v| v as i32)
        .collect();
    let want: Vec<i32> = (0..n as i32).map(|i| 1 + i * 100).collect();
    assert_eq!(got, want);
}

#[test]
fn a_scoped_enumerator_is_not_an_unqualified_name() {
    let body = "enum class E : int { a = 1 };\n\
                kernel void k(device int* o [[buffer(0)]]) { o[0] = int(a); }";
    assert_eq!(first_code(body), Code::UndeclaredIdentifier);
}

/// Compound literals `(T){...}` (C99; clang, and so Metal, accepts them in
/// C++) are `T{...}`, designated or not.
const COMPOUND_LITERALS: &str = r#"
struct Point { float4 position; float w; };
kernel void k(device Point* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float3 c = (float3){ 1.0f, 2.0f, float(i) };
    out[i] = (Point){ .position = float4(c, (float)(i) + (float)2), .w = 0.5f };
}
"#;

#[cfg(feature = "runner")]
#[test]
fn compound_literals_construct() {
    let n = 4u32;
    let Some(out) = run(
        COMPOUND_LITERALS,
        "k",
        n,
        vec![(0, vec![0; n as usize * 32])],
    ) else {
        return;
    };
    let got: Vec<f32> = common::f32s(&out[&0]);
    for i in 0..n as usize {
        // Metal's layout: float4 at 0, float at 16, size 32 (alignment 16).
        let want = [1.0, 2.0, i as f32, i as f32 + 2.0, 0.5];
        assert_eq!(&got[i * 8..i * 8 + 5], &want, "element {i}");
    }
}

/// Program-scope matrix constants (MSL §2.3.2's constructors: columns,
/// scalars in column-major order, a diagonal), as GPUImage writes colour
/// matrices.
const MATRIX_CONSTANTS: &str = r#"
constant float3x3 by_columns = float3x3(float3(1, 2, 3), float3(4, 5, 6), float3(7, 8, 9));
constant float2x2 by_scalars = float2x2(1.0, 2.0, 3.0, 4.0);
constant float3x3 diagonal = float3x3(2.0);
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float3 v = float3(1.0, 10.0, 100.0) * float(i + 1);
    float3 a = by_columns * v;
    float2 b = by_scalars * v.xy;
    float3 c = diagonal * v;
    out[i * 8 + 0] = a.x; out[i * 8 + 1] = a.y; out[i * 8 + 2] = a.z;
    out[i * 8 + 3] = b.x; out[i * 8 + 4] = b.y;
    out[i * 8 + 5] = c.x; out[i * 8 + 6] = c.y; out[i * 8 + 7] = c.z;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn matrix_constants_at_program_scope() {
    let n = 3u32;
    let Some(out) = run(
        MATRIX_CONSTANTS,
        "k",
        n,
        vec![(0, vec![0; n as usize * 32])],
    ) else {
        return;
    };
    let got: Vec<f32> = common::f32s(&out[&0]);
    for i in 0..n as usize {
        let s = (i + 1) as f32;
        let v = [s, 10.0 * s, 100.0 * s];
        // Column-major: M * v = sum of column_j * v[j].
        let cols = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
        let a: Vec<f32> = (0..3)
            .map(|r| (0..3).map(|c| cols[c][r] * v[c]).sum())
            .collect();
        let b = [1.0 * v[0] + 3.0 * v[1], 2.0 * v[0] + 4.0 * v[1]];
        let want = [
            a[0],
            a[1],
            a[2],
            b[0],
            b[1],
            2.0 * v[0],
            2.0 * v[1],
            2.0 * v[2],
        ];
        assert_eq!(&got[i * 8..i * 8 + 8], &want, "thread {i}");
    }
}
