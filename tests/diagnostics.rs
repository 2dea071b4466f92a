//! Every rejected input produces a located diagnostic: `FILE:LINE:COL: error: MESSAGE`.

use msl2wgsl::{ErrorLimit, Library, Options};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// Translates `body` (after a two-line prelude, so line numbers start at 3)
/// and returns the rendered diagnostics, which must be a failure.
fn fails(body: &str) -> String {
    let src = format!("{PRELUDE}{body}");
    match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render(),
    }
}

/// Asserts that the first line of the diagnostics is exactly
/// `t.metal:LINE:COL: error: MESSAGE...` (MESSAGE a prefix).
fn assert_error(body: &str, line: usize, col: usize, message: &str) {
    let text = fails(body);
    let first = text.lines().next().unwrap_or_default();
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(first.starts_with(&want), "want `{want}`\n got:\n{text}");
    // The source line and a caret follow.
    let mut lines = text.lines().skip(1);
    assert!(lines.next().is_some_and(|l| l.contains(" | ")), "{text}");
    assert!(lines.next().is_some_and(|l| l.contains('^')), "{text}");
}

#[test]
fn syntax_error_says_what_was_expected() {
    assert_error(
        "kernel void k() {\n  int x = ;\n}\n",
        4,
        11,
        "expected `{` or an expression, found `;`",
    );
}

#[test]
fn syntax_error_missing_semicolon() {
    // As clang: just past the token the `;` belongs after, not at the
    // next line's token.
    assert_error(
        "kernel void k() {\n  int x = 1\n}\n",
        4,
        12,
        "expected ';' at end of declaration",
    );
    assert_error(
        "\nkernel void k(device float* data [[buffer(0)]],\n              uint id [[thread_position_in_grid]])\n{\n    float x = data[id]\n    data[id] = x * 2.0;\n}\n",
        7,
        23,
        "expected ';' at end of declaration",
    );
    assert_error(
        "struct S {\n    float a;\n}\nkernel void k(device float* d [[buffer(0)]]) { d[0] = 1.0; }\n",
        5,
        2,
        "expected ';' after struct",
    );
    assert_error(
        "kernel void k(device float* d [[buffer(0)]]) {\n  d[0] = 1.0\n  d[1] = 2.0;\n}\n",
        4,
        13,
        "expected ';' after expression",
    );
    assert_error(
        "float f() {\n  return 1.0\n}\n",
        4,
        13,
        "expected ';' after return statement",
    );
    assert_error(
        "constant float k = 1.0\nkernel void f() {}\n",
        3,
        23,
        "expected ';' after top level declarator",
    );
}

#[test]
fn unknown_identifier() {
    assert_error(
        "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = foo;\n}\n",
        4,
        10,
        "use of undeclared identifier `foo`",
    );
}

#[test]
fn unknown_type() {
    assert_error(
        "kernel void k(device Foo* a [[buffer(0)]]) {}\n",
        3,
        22,
        "unknown type name `Foo`",
    );
}

#[test]
fn unknown_function() {
    assert_error(
        "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = frobnicate(1.0f);\n}\n",
        4,
        10,
        "use of undeclared function `frobnicate`",
    );
}

#[test]
fn implicit_vector_conversion_is_a_type_mismatch() {
    assert_error("kernel void k(device float4* a [[buffer(0)]]) {\n  int4 i = int4(1);\n  float4 f = i;\n  a[0] = f;\n}\n", 5, 14, "implicit conversion from `int4` to `float4` is not allowed");
}

#[test]
fn invalid_binary_operands() {
    assert_error(
        "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = a[1] % 2.0f;\n}\n",
        4,
        10,
        "invalid operands to binary `%` (`float` and `float`)",
    );
}

#[test]
fn pointer_argument_without_address_space() {
    assert_error(
        "kernel void k(float* a [[buffer(0)]]) {}\n",
        3,
        15,
        "pointer type `float` needs an address space",
    );
}

#[test]
fn reference_argument_without_address_space() {
    assert_error(
        "void f(float& x) { x = 1.0f; }\nkernel void k() {}\n",
        3,
        8,
        "reference type `float` needs an address space",
    );
}

#[test]
fn kernel_must_return_void() {
    assert_error(
        "kernel float k() { return 1.0f; }\n",
        3,
        8,
        "kernel function `k` must return `void`",
    );
}

#[test]
fn calling_a_kernel_is_an_error() {
    assert_error(
        "kernel void other(device float* a [[buffer(0)]]) {}\nkernel void k(device float* a [[buffer(0)]]) {\n  other(a);\n}\n",
        5,
        3,
        "cannot call kernel function `other`",
    );
}

#[test]
fn duplicate_buffer_index() {
    assert_error(
        "kernel void k(device float* a [[buffer(1)]],\n              device float* b [[buffer(1)]]) {}\n",
        4,
        33,
        "duplicate `[[buffer(1)]]` index",
    );
}

#[test]
fn missing_buffer_index_is_a_located_warning() {
    let src = format!("{PRELUDE}kernel void k(device float* a, device float* b [[buffer(0)]]) {{ a[0] = b[0]; }}\n");
    let lib = Library::from_source("t.metal", &src, &Options::default()).unwrap();
    let w = lib.warnings();
    assert!(w.starts_with("t.metal:3:15: warning: buffer argument `a` has no `[[buffer(n)]]` index; Metal assigns it index 1"), "{w}");
    let a = &lib.function("k").unwrap().arguments[0];
    assert_eq!((a.name.as_str(), a.index), ("a", 1));
}

/// Layered and multi-viewport rendering have no WebGPU equivalent: the
/// vertex outputs that choose a layer or a viewport are dropped with a
/// located warning saying so and what a port does instead.
#[test]
fn layer_and_viewport_outputs_are_dropped_with_a_warning() {
    for (attr, col, note) in [
        (
            "render_target_array_index",
            44,
            "render each layer in a pass of its own",
        ),
        ("viewport_array_index", 44, "draw once per viewport"),
    ] {
        let src = format!(
            "{PRELUDE}struct O {{ float4 p [[position]]; uint l [[{attr}]]; }};\nvertex O v(uint i [[vertex_id]]) {{ O o; o.p = float4(0.0f); o.l = i; return o; }}\n"
        );
        let lib = Library::from_source("t.metal", &src, &Options::default()).unwrap();
        let w = lib.warnings();
        let want =
            format!("t.metal:3:{col}: warning: `[[{attr}]]` was dropped: WebGPU has no equivalent");
        assert!(w.starts_with(&want), "want `{want}`\n got {w}");
        assert!(w.contains(note), "{w}");
    }
}

/// Textures and samplers without an index get the first free one of their
/// kind, as buffers do: Apple's samples write `texture2d<half> t` alone.
#[test]
fn missing_texture_and_sampler_indices_are_assigned_as_metal_does() {
    let src = format!(
        "{PRELUDE}fragment half4 f(float4 p [[position]], texture2d<half> a, texture2d<half> b [[texture(0)]],\n  sampler s) {{\n  return a.sample(s, p.xy) + b.sample(s, p.xy);\n}}\n"
    );
    let lib = Library::from_source("t.metal", &src, &Options::default()).unwrap();
    let w = lib.warnings();
    assert!(
        w.contains("t.metal:3:41: warning: texture argument `a` has no `[[texture(n)]]` index; Metal assigns it index 1"),
        "{w}"
    );
    // The only sampler: index 0, silently (no sampler has an explicit one).
    assert!(!w.contains("sampler argument"), "{w}");
    let f = lib.function("f").unwrap();
    let index = |name: &str| f.arguments.iter().find(|a| a.name == name).map(|a| a.index);
    assert_eq!(
        (index("a"), index("b"), index("s")),
        (Some(1), Some(0), Some(0))
    );
}

#[test]
fn buffer_attribute_on_a_value() {
    assert_error(
        "kernel void k(float a [[buffer(0)]]) {}\n",
        3,
        15,
        "`[[buffer(n)]]` argument `a` must be a pointer or reference",
    );
}

#[test]
fn kernel_parameter_without_attribute() {
    assert_error(
        "kernel void k(uint i) {}\n",
        3,
        15,
        "kernel parameter `i` needs an attribute",
    );
}

#[test]
fn builtin_with_wrong_type() {
    assert_error(
        "kernel void k(float i [[thread_position_in_grid]]) {}\n",
        3,
        15,
        "`[[thread_position_in_grid]]` argument must be of type `uint`",
    );
}

#[test]
fn assignment_to_const_buffer() {
    assert_error(
        "kernel void k(device const float* a [[buffer(0)]]) {\n  a[0] = 1.0f;\n}\n",
        4,
        3,
        "cannot assign to a read-only location",
    );
}

#[test]
fn assignment_to_constant_address_space() {
    assert_error(
        "kernel void k(constant float& a [[buffer(0)]]) {\n  a = 1.0f;\n}\n",
        4,
        3,
        "cannot assign to a read-only location",
    );
}

#[test]
fn break_outside_loop() {
    assert_error(
        "kernel void k() {\n  break;\n}\n",
        4,
        3,
        "`break` statement not in loop or switch statement",
    );
}

#[test]
fn continue_outside_loop() {
    assert_error(
        "kernel void k() {\n  continue;\n}\n",
        4,
        3,
        "`continue` statement not in loop statement",
    );
}

#[test]
fn program_scope_variable_outside_constant() {
    assert_error(
        "float g = 1.0f;\nkernel void k() {}\n",
        3,
        1,
        "program-scope variables must be declared in the `constant` address space",
    );
}

#[test]
fn program_scope_constant_without_initializer() {
    assert_error(
        "constant float g;\nkernel void k() {}\n",
        3,
        16,
        "program-scope constant `g` must be initialized",
    );
}

#[test]
fn non_constant_initializer() {
    // A function with a body is folded, as Metal's compiler does
    // (tests/spirv_cross_forms.rs); one declared without a body is not.
    assert_error(
        "constant float a = 1.0f;\nfloat f();\nconstant float g = f();\nkernel void k() {}\n",
        5,
        20,
        "expression is not a compile-time constant",
    );
}

#[test]
fn double_is_not_metal() {
    assert_error(
        "kernel void k(device double* a [[buffer(0)]]) {}\n",
        3,
        22,
        "`double` is not supported by Metal",
    );
}

#[test]
fn recursion_is_rejected() {
    assert_error("int f(int x) { return x > 0 ? f(x - 1) : 0; }\nkernel void k(device int* a [[buffer(0)]]) {\n  a[0] = f(3);\n}\n", 3, 31, "recursive function calls are not allowed in Metal");
}

#[test]
fn wrong_argument_count() {
    assert_error("float f(float x) { return x; }\nkernel void k(device float* a [[buffer(0)]]) {\n  a[0] = f(1.0f, 2.0f);\n}\n", 5, 10, "no matching function for call to `f`");
}

/// A kernel's `[[stage_in]]` member that no attribute format reads as it
/// is needs a stage-input descriptor (tests/stage_in_kernels.rs has the rest).
#[test]
fn kernel_stage_in_member_without_a_format() {
    assert_error(
        "struct V { bool p [[attribute(0)]]; };\nkernel void k(V v [[stage_in]]) {}\n",
        3,
        12,
        "no attribute format reads `bool` as it is, so `[[stage_in]]` member `p` needs a stage-input descriptor",
    );
}

#[test]
fn unsupported_scalar_type_is_named() {
    assert_error(
        "kernel void k(device double* a [[buffer(0)]]) {}\n",
        3,
        22,
        "`double` is not supported by Metal",
    );
}

#[test]
fn invalid_swizzle() {
    assert_error("kernel void k(device float* a [[buffer(0)]]) {\n  float2 v = float2(1.0f);\n  a[0] = v.z;\n}\n", 5, 12, "invalid vector component or swizzle `z`");
}

#[test]
fn unknown_member() {
    assert_error(
        "struct S { float x; };\nkernel void k(device S* a [[buffer(0)]]) {\n  a[0].y = 1.0f;\n}\n",
        5,
        8,
        "no member named `y` in `S`",
    );
}

#[test]
fn excess_initializer_elements() {
    assert_error(
        "kernel void k() {\n  float a[2] = {1.0f, 2.0f, 3.0f};\n}\n",
        4,
        29,
        "excess elements in initializer",
    );
}

#[test]
fn as_type_size_mismatch() {
    assert_error(
        "kernel void k(device uint* a [[buffer(0)]]) {\n  a[0] = as_type<uint>(float2(1.0f));\n}\n",
        4,
        10,
        "`as_type` needs types of the same size",
    );
}

#[test]
fn nesting_limit_is_a_diagnostic_not_a_crash() {
    let deep = format!(
        "kernel void k(device int* a [[buffer(0)]]) {{ a[0] = {}1{}; }}\n",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let text = fails(&deep);
    assert!(
        text.contains("t.metal:3:") && text.contains("nested too deeply"),
        "{text}"
    );
}

#[test]
fn long_flat_expression_does_not_overflow() {
    // 20 000 terms nest 20 000 deep in the AST (left-associative `+`).
    let sum = vec!["1"; 20_000].join(" + ");
    let src = format!("{PRELUDE}kernel void k(device int* a [[buffer(0)]]) {{ a[0] = {sum}; }}\n");
    let result = Library::from_source("t.metal", &src, &Options::default());
    if let Err(f) = result {
        assert!(f.render().contains("t.metal:3:"), "{}", f.render());
    }
}

#[test]
fn preprocessor_error_is_located() {
    let text = fails("#if 1\nkernel void k() {}\n");
    assert!(text.starts_with("t.metal:"), "{text}");
    assert!(
        text.contains("unterminated conditional directive"),
        "{text}"
    );
}

#[test]
fn several_errors_in_one_run() {
    let text = fails("kernel float a() { return 1.0f; }\nkernel float b() { return 1.0f; }\n");
    assert!(
        text.contains("t.metal:3:8:") && text.contains("t.metal:4:8:"),
        "{text}"
    );
}

/// One row per further diagnostic: (source after the prelude, line, column, message prefix).
const MORE: &[(&str, usize, usize, &str)] = &[
    ("kernel void k(device int* a [[buffer(0)]]) {\n  a[0] = 99999999999999999999;\n}\n", 4, 10, "integer literal `99999999999999999999` is too large"),
    ("kernel void k(device float2* a [[buffer(0)]]) {\n  a[0] = cross(a[0], a[1]);\n}\n", 4, 10, "`cross` takes 3-component vectors"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = select(1.0f, 2.0f);\n}\n", 4, 10, "`select` takes 3 arguments"),
    ("struct S { void v; };\nkernel void k() {}\n", 3, 12, "a member cannot have type `void`"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  float x = a;\n}\n", 4, 13, "a pointer cannot be used as a value here"),
    ("kernel void k() {\n  thread float& r = 1.0f;\n}\n", 4, 21, "a reference must be bound to an lvalue"),
    ("kernel void k() {\n  float x = float(1.0f, 2.0f);\n}\n", 4, 13, "a scalar conversion takes one argument"),
    ("kernel void k() {\n  float x[0];\n}\n", 4, 11, "array size must be a positive integer constant"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  device float* p = a;\n  p = 1;\n}\n", 5, 7, "assigning a non-pointer to a pointer"),
    ("float f(float x) { return x; }\nfloat f(int x) { return 1.0f; }\nkernel void k(device float* a [[buffer(0)]]) {\n  a[0] = f(1u);\n}\n", 6, 10, "call to `f` is ambiguous"),
    ("kernel void k() {\n  float x = 1.0f;\n  x(2);\n}\n", 5, 3, "called object `x` is not a function"),
    ("struct S { float x; };\nkernel void k() {\n  S s = S(1.0f);\n}\n", 5, 9, "cannot construct `S` with parentheses"),
    ("float f(thread float& x) { return x; }\nkernel void k() {\n  f(1.0f);\n}\n", 5, 5, "cannot pass this argument as `thread float&`"),
    ("kernel void k() {\n  thread float* p = &1.0f;\n}\n", 4, 21, "cannot take the address of an rvalue"),
    ("kernel void k(device int* a [[buffer(0)]]) {\n  switch (a[0]) { case 1.5f: break; }\n}\n", 4, 24, "case value is not an integer constant"),
    ("kernel void k(device int* a [[buffer(0)]]) {\n  switch (a[0]) { case 1: break; case 1: break; }\n}\n", 4, 34, "duplicate case value `1`"),
    ("struct S { float x; int x; };\nkernel void k() {}\n", 3, 25, "duplicate member `x`"),
    ("kernel void k() {\n  threadgroup_barrier(42);\n}\n", 4, 23, "expected a `mem_flags` value"),
    ("kernel void k() {\n  float x = float;\n}\n", 4, 13, "expected a value, found type `float`"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = k;\n}\n", 4, 10, "function `k` used as a value"),
    ("void g() {}\nkernel void k() {\n  float x = g();\n}\n", 5, 13, "expression has type `void` and no value"),
    ("kernel void k() {\n  1 = 2;\n}\n", 4, 3, "expression is not assignable"),
    ("constant float t[2] = {1.0f, 2.0f};\nconstant float u = t[5];\nkernel void k() {}\n", 4, 22, "index out of bounds"),
    ("kernel void k() {\n  float x = 1.0f;\n  float y = *x;\n}\n", 5, 13, "indirection requires a pointer operand"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  device float* p = a;\n  p *= 2;\n}\n", 5, 3, "invalid pointer arithmetic"),
    ("kernel void k() {\n  float x = 1.0f;\n  float y = x.z.w;\n}\n", 5, 15, "member reference base type `float`"),
    ("float f() { return; }\nkernel void k() {}\n", 3, 13, "non-void function should return a value"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  ushort x = 1;\n  a[0] = float(*(thread uint*)&x);\n}\n", 5, 17, "cannot reinterpret this `ushort*` as `uint*`"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  device float* p = a + 1.5f;\n}\n", 4, 25, "pointer offsets must be integers"),
    // (A second struct `S` hides the first, W0300: files of pasted units.)
    ("constant float S = 1.0f;\nfloat S(float x) { return x; }\nkernel void k() {}\n", 4, 7, "redefinition of `S`"),
    ("float f(float x, float x) { return x; }\nkernel void k() {}\n", 3, 24, "redefinition of parameter `x`"),
    ("kernel void k() {\n  int a = 1;\n  int a = 2;\n}\n", 5, 7, "redefinition of `a`"),
    ("kernel void k(device float* a [[buffer(0)]], uint i [[vertex_id]]) {}\n", 3, 55, "unknown or unsupported kernel argument attribute `[[vertex_id]]`"),
    ("kernel void k() {\n  void v;\n}\n", 4, 8, "variable `v` has type `void`"),
    ("kernel void k(device float* o [[buffer(0)]]) {\n  float a[2]; a[0] = 1; o[0] = a[5];\n}\n", 4, 34, "index 5 is past the end of `float[2]` (2 elements)"),
    ("kernel void k(device float* o [[buffer(0)]]) {\n  float4 v = float4(1.0f); o[0] = v[-1];\n}\n", 4, 37, "index -1 is before the beginning of `float4` (4 elements)"),
    ("kernel void k() {\n  const int c;\n}\n", 4, 13, "default initialization of an object of const type `int`"),
    ("kernel void k() {\n  int4 v = int4(1, 2);\n}\n", 4, 12, "`int4` constructor needs 4 components, found 2"),
    ("kernel void k(device int* a [[buffer(0)]]) {\n  a[0] = a[1.0f];\n}\n", 4, 12, "array subscript is not an integer"),
    ("kernel void k() {\n  float4 v = float4(0);\n  v.xx = float2(1);\n}\n", 5, 3, "vector swizzle with repeated components is not assignable"),
    ("kernel void k(device float4* a [[buffer(0)]]) {\n  if (a[0] > 1.0f) {}\n}\n", 4, 7, "a vector condition needs `all()` or `any()`"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  device float* p = a;\n  device float* q = p + 1;\n  a[0] = q - a + p;\n}\n", 6, 18, "a pointer cannot be used as a value here"),
    ("void f() {\n  threadgroup float t[4];\n}\nkernel void k() { f(); }\n", 4, 3, "`threadgroup` variables can only be declared in a kernel function"),
    ("vertex float4 v(threadgroup float* t [[threadgroup(0)]]) { return float4(0); }\n", 3, 40, "`[[threadgroup(n)]]` arguments are only allowed in kernel functions"),
    ("kernel void k(device int* a [[buffer(0)]]) {\n  atomic_fetch_add_explicit(&a[0], 1, memory_order_relaxed);\n}\n", 4, 29, "`atomic_fetch_add_explicit` needs a pointer to an atomic type, found `device int*`"),
    ("kernel void k(device atomic_int* a [[buffer(0)]]) {\n  atomic_fetch_add_explicit(&a[0], 1, memory_order_seq_cst);\n}\n", 4, 39, "`memory_order_seq_cst` is not supported for atomic operations"),
    ("kernel void k(device atomic_int* a [[buffer(0)]]) {\n  atomic_fetch_add_explicit(&a[0], 1, 5);\n}\n", 4, 39, "expected a memory order such as `memory_order_relaxed`"),
    ("kernel void k(device atomic_int* a [[buffer(0)]]) {\n  a[0] = 1;\n}\n", 4, 3, "atomic objects can only be accessed with atomic functions"),
    ("kernel void k(device atomic_int* a [[buffer(0)]], device int* b [[buffer(1)]]) {\n  b[0] = a[0];\n}\n", 4, 10, "atomic objects can only be accessed with atomic functions"),
    ("kernel void k(device atomic_int* a [[buffer(0)]]) {\n  atomic_fetch_add_explicit(&a[0], 1);\n}\n", 4, 3, "`atomic_fetch_add_explicit` takes 3 arguments, 2 given"),
    ("kernel void k(device atomic_bool* a [[buffer(0)]]) {}\n", 3, 15, "`atomic_bool` in buffers is not supported"),
    ("kernel void k(const device atomic_int* a [[buffer(0)]]) {\n  atomic_fetch_add_explicit(&a[0], 1, memory_order_relaxed);\n}\n", 4, 29, "`atomic_fetch_add_explicit` cannot modify an atomic object through a `const` pointer"),
    ("kernel void k(threadgroup float* t [[threadgroup(0)]], threadgroup float* u [[threadgroup(0)]]) {}\n", 3, 79, "duplicate `[[threadgroup(0)]]` index"),
    ("kernel void k(device float* t [[threadgroup(0)]]) {}\n", 3, 15, "`[[threadgroup(n)]]` argument `t` must be a `threadgroup` pointer"),
    ("kernel void k() {\n  threadgroup float t = 1.0f;\n}\n", 4, 25, "`threadgroup` variables cannot have an initializer"),
    ("kernel void k(device atomic_float* a [[buffer(0)]]) {\n  atomic_fetch_max_explicit(&a[0], 1.0f, memory_order_relaxed);\n}\n", 4, 3, "`atomic_fetch_max_explicit` is not available for `atomic_float`"),
    ("kernel void k() {\n  float f = float4(1.0f);\n}\n", 4, 13, "cannot convert `float4` to `float`"),
    ("kernel void k() {\n  float4 v = float4x4(1.0f);\n}\n", 4, 14, "cannot convert `float4x4` to `float4`"),
    ("kernel void k() {\n  float2x2 m = 1.0f;\n}\n", 4, 16, "cannot convert `float` to `float2x2`"),
    ("kernel void k() {\n  float3x3 m = float4x4(1.0f);\n}\n", 4, 16, "cannot convert `float4x4` to `float3x3`"),
    ("constant float K = 1.0f;\nkernel void k() {\n  K = 2.0f;\n}\n", 5, 3, "cannot assign to program-scope constant `K`"),
    ("void f(thread texture2d<float>* t) {}\nkernel void k() {}\n", 3, 8, "pointers to textures and samplers are not allowed"),
    ("sampler s(filter::linear);\nkernel void k() {}\n", 3, 1, "a sampler declared in a program or function must be `constexpr`"),
    ("kernel void k(texture2d<float, access::read> t [[texture(0)]]) {\n  t.write(float4(1.0f), uint2(0));\n}\n", 4, 3, "cannot write to a texture declared with `access::read`"),
    ("kernel void k(texture2d<float> t [[texture(0)]]) {\n  t.write(float4(1.0f), uint2(0));\n}\n", 4, 3, "cannot write to a texture declared with `access::sample`"),
    ("constexpr sampler s(filter::linear);\nkernel void k(texture2d<float, access::write> t [[texture(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.sample(s, float2(0.5f));\n}\n", 5, 10, "cannot sample a texture declared with `access::write`"),
    ("kernel void k(texture2d_ms_array<float> t [[texture(0)]]) {}\n", 3, 15, "`texture2d_ms_array` has no WebGPU equivalent: WebGPU cannot bind multisampled array textures"),
    ("kernel void k(depth2d_ms_array<float> t [[texture(0)]]) {}\n", 3, 15, "`depth2d_ms_array` has no WebGPU equivalent: WebGPU cannot bind multisampled array textures"),
    ("kernel void k(depth2d<float> t [[texture(0)]], sampler s [[sampler(0)]], device float* o [[buffer(0)]]) {\n  o[0] = t.sample(s, float2(0.5f), min_lod_clamp(1.0f));\n}\n", 4, 50, "`min_lod_clamp` on `depth2d` has no WGSL equivalent"),
    ("kernel void k(texturecube<float> t [[texture(0)]], sampler s [[sampler(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.sample(s, float3(1.0f), min_lod_clamp(1.0f));\n}\n", 4, 50, "`min_lod_clamp` on `texturecube` has no WGSL equivalent"),
    ("kernel void k(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.gather(s, float2(0.5f), level(1.0f));\n}\n", 4, 42, "`gather` takes no LOD option (it reads level 0)"),
    ("kernel void k(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]], device float4* o [[buffer(0)]], constant int& d [[buffer(1)]]) {\n  o[0] = t.sample(s, float2(0.5f), int3(d));\n}\n", 4, 36, "expected a texel offset of type `int2`, found `int3`"),
    ("kernel void k(texture2d<uint, access::read_write> t [[texture(0)]]) {\n  t.atomic_fetch_add(uint2(0), uint4(1));\n}\n", 4, 3, "texture atomics (`atomic_fetch_add`) have no WebGPU equivalent"),
    ("kernel void k(texture2d<uint, access::read> t [[texture(0)]]) {\n  t.atomic_fetch_or(uint2(0), uint4(1));\n}\n", 4, 3, "`atomic_fetch_or` needs a `read_write` texture of `int` or `uint`"),
    ("constexpr sampler s(reduction::minimum);\nkernel void k(texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.sample(s, float2(0.5f));\n}\n", 3, 21, "sampler reduction modes have no WebGPU equivalent"),
    ("constexpr sampler s(bias(1.0f));\nkernel void k(texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.sample(s, float2(0.5f));\n}\n", 3, 21, "sampler LOD bias has no WebGPU equivalent"),
    ("kernel void k(texture_buffer<float, access::sample> t [[texture(0)]]) {}\n", 3, 15, "a `texture_buffer` cannot be sampled"),
    ("struct Args { texture_buffer<float> t [[id(0)]]; };\nkernel void k(constant Args& a [[buffer(0)]], device float4* o [[buffer(1)]]) {\n  o[0] = a.t.read(0u);\n}\n", 3, 37, "a `texture_buffer` in an argument buffer is not supported yet"),
    ("struct V { float4 p [[position]]; };\nvertex V v(texture_buffer<float, access::write> t [[texture(0)]]) {\n  t.write(float4(1.0f), 0u);\n  return V{float4(0.0f)};\n}\n", 4, 12, "a vertex function cannot write a `texture_buffer` in WebGPU"),
    ("kernel void k(texture2d<bool> t [[texture(0)]]) {}\n", 3, 25, "`bool` is not a texture component type"),
    ("kernel void k(texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.sample(1.0f, float2(0.5f));\n}\n", 4, 19, "expected a sampler, found `float`"),
    ("kernel void k(texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.read(float2(0.5f));\n}\n", 4, 17, "expected a coordinate of type `uint2`, found `float2`"),
    ("kernel void k(texture2d<float> t [[texture(0)]]) {\n  t.frobnicate();\n}\n", 4, 3, "`texture2d` has no member function `frobnicate`"),
    ("constexpr sampler s(address::sideways);\nkernel void k(texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.sample(s, float2(0.5f));\n}\n", 3, 21, "unknown sampler property `address::sideways`"),
    ("kernel void k(texture2d<float> t [[texture(0)]], texture2d<float> u [[texture(0)]]) {}\n", 3, 71, "duplicate `[[texture(0)]]` index"),
    ("kernel void k(texturecube<float> t [[texture(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.read(uint2(0));\n}\n", 4, 10, "WGSL cannot read a sampled cube texture texel by texel"),
    ("struct A { float4 p [[attribute(0)]]; };\nstruct B { float4 q [[attribute(1)]]; };\nvertex float4 v(A a [[stage_in]], B b [[stage_in]]) { return a.p; }\n", 5, 35, "a function can have only one `[[stage_in]]` argument"),
    ("struct A { float4 p [[attribute(0)]]; float m[2] [[attribute(1)]]; };\nvertex float4 v(A a [[stage_in]]) { return a.p; }\n", 3, 39, "`[[stage_in]]` member `m` must be a scalar or vector"),
    ("struct O { float4 a [[color(0)]]; float4 b [[color(0)]]; };\nfragment O f() { return O{}; }\n", 3, 46, "duplicate `[[color(0)]]` output"),
    ("vertex float4 v(float b [[base_vertex]]) { return float4(0); }\n", 3, 17, "`[[base_vertex]]` argument must be of type `uint` or `ushort`"),
    ("vertex float4 v(ushort a [[amplification_id]]) { return float4(0); }\n", 3, 28, "`[[amplification_id]]` (vertex amplification) has no WebGPU equivalent"),
    ("vertex void v(device float* o [[buffer(0)]]) {\n  threadgroup_barrier(mem_flags::mem_device);\n}\n", 4, 3, "barriers and SIMD-group functions have no WebGPU equivalent in vertex function `v`"),
    ("fragment float4 f(float c [[point_coord]]) { return float4(0); }\n", 3, 19, "`[[point_coord]]` argument must be of type `float2`"),
    ("struct O { float4 p [[position]]; int s [[point_size]]; };\nvertex O v() { return O{}; }\n", 3, 43, "`[[point_size]]` outputs are `float` members of vertex outputs"),
    ("fragment float4 f(uint v [[vertex_id]]) { return float4(0); }\n", 3, 28, "`[[vertex_id]]` is not available as a fragment function argument"),
    ("vertex float4 v(uint g [[thread_position_in_grid]]) { return float4(0); }\n", 3, 26, "`[[thread_position_in_grid]]` is only available in kernel functions"),
    ("kernel void k() {\n  discard_fragment();\n}\n", 4, 3, "`discard_fragment` is only available in fragment functions"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = dfdx(a[1]);\n}\n", 4, 10, "`dfdx` is only available in fragment functions"),
    ("struct O { float4 p; };\nvertex O v() { return O{}; }\n", 3, 8, "vertex output struct `O` needs a `[[position]]` member"),
    ("struct O { float4 p [[position]]; float2 c [[clip_distance]]; };\nvertex O v() { return O{}; }\n", 3, 35, "`[[clip_distance]]` member `c` must be a `float` or an array of 1 to 8 `float`s"),
    ("struct O { float4 p [[position]]; float c[9] [[clip_distance]]; };\nvertex O v() { return O{}; }\n", 3, 35, "`[[clip_distance]]` member `c` must be a `float` or an array of 1 to 8 `float`s"),
    ("struct F { float4 c [[color(0)]]; float d [[clip_distance]]; };\nfragment F f() { return F{}; }\n", 3, 45, "`[[clip_distance]]` is an output of vertex functions"),
    ("struct O { float4 c; };\nfragment O f() { return O{}; }\n", 3, 19, "fragment output member `c` needs `[[color(m)]]`"),
    ("struct A { float4 p; };\nvertex float4 v(A a [[stage_in]]) { return a.p; }\n", 3, 19, "vertex `[[stage_in]]` member `p` needs `[[attribute(n)]]`"),
    ("kernel void k() {\n  constant float c = 1.0f;\n}\n", 4, 3, "`constant` variables must be declared at program scope"),
    ("kernel void k(device float* a [[buffer(200)]]) {}\n", 3, 15, "buffer index 200 is too large"),
    ("kernel void k(device float* a [[buffer(-1)]]) {}\n", 3, 40, "buffer index must be a non-negative integer constant"),
    ("using V = vec<float, 5>;\nkernel void k() {}\n", 3, 11, "`vec<T, N>` needs a scalar T and N between 1 and 4"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  float2 v = float2(1.0f);\n  a[0] = v + float3(1.0f);\n}\n", 5, 10, "invalid operands to binary `+` (`float2` and `float3`)"),
    ("kernel void k() {\n  float x = 1.0f;\n  x++ ;\n  bool b = true;\n  b++;\n}\n", 7, 3, "cannot increment or decrement a value of type `bool`"),
    ("kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = as_type<float2>(1.0f);\n}\n", 4, 10, "`as_type` needs types of the same size"),
];

#[test]
fn every_further_diagnostic_is_located() {
    let mut failures = Vec::new();
    for (body, line, col, message) in MORE {
        let src = format!("{PRELUDE}{body}");
        let text = match Library::from_source("t.metal", &src, &Options::default()) {
            Ok(_) => "(translated without error)".to_string(),
            Err(f) => f.render(),
        };
        let want = format!("t.metal:{line}:{col}: error: {message}");
        if !text.lines().next().unwrap_or_default().starts_with(&want) {
            failures.push(format!(
                "want `{want}`\n got `{}`",
                text.lines().next().unwrap_or_default()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unknown_entry_point_is_reported() {
    let src = format!("{PRELUDE}kernel void k() {{}}\n");
    let opts = Options {
        entries: vec!["nope".into()],
        ..Options::default()
    };
    let err = Library::from_source("t.metal", &src, &opts)
        .unwrap_err()
        .render();
    assert!(
        err.contains("error: no kernel, vertex or fragment function named `nope`"),
        "{err}"
    );
}

#[test]
fn half_and_float3_struct_is_representable() {
    // Padding of 2 bytes (an f16 member) and after a float3 (a u32 member).
    let src = format!("{PRELUDE}struct S {{ half a; float3 b; half c; }};\nkernel void k(device S* s [[buffer(0)]]) {{ s[0].c = s[0].a; }}\n");
    assert!(Library::from_source("t.metal", &src, &Options::default()).is_ok());
}

#[test]
fn storage_format_errors() {
    let src = format!(
        "{PRELUDE}kernel void k(texture2d<float, access::read_write> t [[texture(0)]]) {{}}\n"
    );
    let opts = |f: &str| Options {
        texture_formats: vec![(0, f.into())],
        ..Options::default()
    };
    let err = Library::from_source("t.metal", &src, &opts("rgba8unorm"))
        .unwrap_err()
        .render();
    assert!(err.starts_with("t.metal:3:15: error: `access::read_write` textures need a format WebGPU allows read-write access to, not `rgba8unorm`"), "{err}");
    assert!(err.contains("r32float, r32uint, r32sint"), "{err}");
    let err = Library::from_source("t.metal", &src, &opts("rgba9000"))
        .unwrap_err()
        .render();
    assert!(
        err.starts_with("t.metal:3:15: error: unknown storage texture format `rgba9000`"),
        "{err}"
    );
    let err = Library::from_source("t.metal", &src, &opts("r32uint"))
        .unwrap_err()
        .render();
    assert!(
        err.starts_with("t.metal:3:15: error: format `r32uint` does not hold `float` components"),
        "{err}"
    );
    assert!(Library::from_source("t.metal", &src, &opts("r32float")).is_ok());
}

#[test]
fn a_function_only_declared_says_its_definition_is_elsewhere() {
    let body = "float blend(float a, float b);\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = blend(o[0], 1.0f); }";
    assert_error(
        body,
        4,
        55,
        "`blend` is declared but not defined in this translation unit",
    );
    assert!(fails(body).contains("-include FILE.metal"));
    let src = format!("{PRELUDE}{body}");
    let failure = Library::from_source("t.metal", &src, &Options::default()).unwrap_err();
    let codes: Vec<_> = failure.diagnostics.0.iter().map(|d| d.code).collect();
    assert_eq!(codes, [msl2wgsl::diagnostics::Code::FunctionNotDefined]);
}

#[test]
fn a_forced_include_supplies_the_definition_of_a_declared_function() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("blend.metal"),
        "float blend(float a, float b) { return a * 0.5f + b; }\n",
    )
    .unwrap();
    let src = format!(
        "{PRELUDE}float blend(float a, float b);\n\
         kernel void k(device float* o [[buffer(0)]]) {{ o[0] = blend(o[0], 1.0f); }}"
    );
    let mut options = Options::default();
    options.preprocess.forced_includes = vec![dir.path().join("blend.metal")];
    let lib = Library::from_source("t.metal", &src, &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(lib.wgsl().contains("fn blend("));
}

/// `t.metal:LINE:COL: error: MESSAGE` of every error, in order.
fn error_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.contains(": error: ")).collect()
}

#[test]
fn every_error_of_a_file_is_reported_in_source_order() {
    let text = fails(concat!(
        "kernel void a(device float* d [[buffer(0)]]) { d[0] = ; }\n",
        "kernel void b(device float* d [[buffer(0)]]) { float x = d[0]\n d[0] = x; }\n",
        "kernel void c(device float* d [[buffer(0)]]) { d[0] = undeclared; }\n",
        "kernel void e(device float* d [[buffer(0)]]) { d[0] = ); }\n",
        "kernel void f(device float* d [[buffer(0)]]) { d[0] = a_too; }\n",
    ));
    let lines = error_lines(&text);
    let places: Vec<&str> = lines
        .iter()
        .map(|l| &l[..l.find(": error").unwrap()])
        .collect();
    assert_eq!(
        places,
        [
            "t.metal:3:55",
            "t.metal:4:62",
            "t.metal:6:55",
            "t.metal:7:55",
            "t.metal:8:55"
        ],
        "{text}"
    );
    assert!(
        lines[1].ends_with("expected ';' at end of declaration"),
        "{text}"
    );
    assert!(
        lines[2].contains("undeclared identifier `undeclared`"),
        "{text}"
    );
}

#[test]
fn declarations_left_out_after_a_syntax_error_cause_no_further_errors() {
    // `S` is left out (its member is malformed): `k`'s use of it is not
    // the user's error, `k`'s undeclared name is not reported as a cascade
    // either, but the syntax error in `m` is.
    let text = fails(concat!(
        "struct S { float a b; };\n",
        "kernel void k(device S* s [[buffer(0)]]) { s[0].a = 1.0; }\n",
        "kernel void m(device float* d [[buffer(0)]]) { d[0] = ]; }\n",
    ));
    let lines = error_lines(&text);
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("t.metal:3:"), "{text}");
    assert!(lines[1].starts_with("t.metal:5:55:"), "{text}");
}

#[test]
fn errors_past_the_limit_stop_with_one_fatal_error() {
    let body: String = (0..25)
        .map(|i| format!("kernel void k{i}(device float* d [[buffer(0)]]) {{ d[0] = u{i}; }}\n"))
        .collect();
    let src = format!("{PRELUDE}{body}");
    let codes = |limit: ErrorLimit| -> Vec<String> {
        let options = Options {
            error_limit: limit,
            ..Options::default()
        };
        let failure = Library::from_source("t.metal", &src, &options).unwrap_err();
        failure
            .diagnostics
            .0
            .iter()
            .map(|d| d.code().to_string())
            .collect()
    };
    // clang's default: 20, then "too many errors emitted, stopping now".
    let default = codes(ErrorLimit::default());
    assert_eq!(default.len(), 21);
    assert_eq!(default[19], "E0301");
    assert_eq!(default[20], "E0008");
    assert_eq!(
        codes(ErrorLimit::new(3)),
        ["E0301", "E0301", "E0301", "E0008"]
    );
    assert_eq!(codes(ErrorLimit::NONE).len(), 25);
    // The same for syntax errors, which are found one parse at a time.
    let broken = body.replace("= u", "= ) u");
    let options = Options {
        error_limit: ErrorLimit::new(2),
        ..Options::default()
    };
    let failure =
        Library::from_source("t.metal", &format!("{PRELUDE}{broken}"), &options).unwrap_err();
    let text = failure.render();
    let lines = error_lines(&text);
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[1].starts_with("t.metal:4:56: error: expected"),
        "{text}"
    );
    assert_eq!(
        lines[2],
        "msl2wgsl: error: too many errors emitted, stopping now"
    );
}

/// The notes of the first diagnostic of a failed translation of `body`.
fn first_notes(body: &str) -> Vec<String> {
    let src = format!("{PRELUDE}{body}");
    match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(_) => panic!("expected an error"),
        Err(f) => f.diagnostics.0[0].notes.clone(),
    }
}

#[test]
fn errors_in_macro_expansions_name_the_macro() {
    // Syntax, semantic and lowering errors alike.
    let note = "expanded from macro `M` defined at t.metal:3:9";
    let syntax = "#define M(n) float n = 1.0 float\nkernel void k(device float* d [[buffer(0)]]) { M(q); d[0] = q; }\n";
    let semantic = "#define M(x) (x + undefined_thing)\nkernel void k(device float* d [[buffer(0)]]) { d[0] = M(1.0); }\n";
    let lowering =
        "#define M float2(1.0f).z\nkernel void k(device float* d [[buffer(0)]]) { d[0] = M; }\n";
    for body in [syntax, semantic, lowering] {
        let notes = first_notes(body);
        assert!(notes.iter().any(|n| n == note), "{body}: {notes:?}");
    }
    // The error still points at the invocation.
    let text = fails(semantic);
    assert!(
        text.starts_with("t.metal:4:55: error: use of undeclared identifier `undefined_thing`"),
        "{text}"
    );
    assert!(text.contains(&format!("note: {note}\n")), "{text}");
    // Not in an expansion: no note.
    assert!(
        first_notes("kernel void k(device float* d [[buffer(0)]]) { d[0] = nope; }\n").is_empty()
    );
}

#[test]
fn narrowing_a_vector_suggests_a_swizzle() {
    assert_error(
        "kernel void k(device float* d [[buffer(0)]]) {\n  float4 v = float4(1.0); float k = 2.0;\n  float3 w = v * k;\n  d[0] = w.x;\n}\n",
        5,
        14,
        "implicit conversion from `float4` to `float3` is not allowed; take the first 3 components with `.xyz`",
    );
}

#[test]
fn buffers_without_indices_get_them_in_order_silently() {
    // Apple's "Performing Calculations on a GPU" kernel.
    let src = format!("{PRELUDE}kernel void add_arrays(device const float* inA,\n                       device const float* inB,\n                       device float* result,\n                       uint index [[thread_position_in_grid]])\n{{\n    result[index] = inA[index] + inB[index];\n}}\n");
    let lib = Library::from_source("t.metal", &src, &Options::default()).unwrap();
    assert_eq!(lib.warnings(), "");
    let indices: Vec<(&str, u32)> = lib.function("add_arrays").unwrap().arguments[..3]
        .iter()
        .map(|a| (a.name.as_str(), a.index))
        .collect();
    assert_eq!(indices, [("inA", 0), ("inB", 1), ("result", 2)]);
}

/// With `--target wgpu` texture atomics translate, except what wgpu's
/// `textureAtomic*` cannot do: return the old value, load, store or
/// exchange, or work on a texture of another format than r32uint/r32sint.
#[test]
fn texture_atomics_refuse_what_wgpu_lacks() {
    let fails_on_wgpu = |body: &str, format: &str, line: usize, col: usize, message: &str| {
        let options = Options {
            target: msl2wgsl::Target::Wgpu,
            texture_formats: vec![(0, format.to_string())],
            ..Options::default()
        };
        let src = format!("{PRELUDE}{body}");
        let text = match Library::from_source("t.metal", &src, &options) {
            Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
            Err(f) => f.render(),
        };
        let want = format!("t.metal:{line}:{col}: error: {message}");
        assert!(text.starts_with(&want), "want `{want}`\n got:\n{text}");
    };
    let texture = "kernel void k(texture2d<uint, access::read_write> t [[texture(0)]], device uint* o [[buffer(0)]]) {\n";
    fails_on_wgpu(
        &format!("{texture}  o[0] = t.atomic_fetch_add(uint2(0), uint4(1)).x;\n}}\n"),
        "r32uint",
        4,
        10,
        "the old value `atomic_fetch_add` returns has no wgpu equivalent",
    );
    fails_on_wgpu(
        &format!("{texture}  o[0] = t.atomic_load(uint2(0)).x;\n}}\n"),
        "r32uint",
        4,
        10,
        "texture `atomic_load` has no wgpu equivalent",
    );
    fails_on_wgpu(
        &format!("{texture}  t.atomic_fetch_max(uint2(0), uint4(1));\n}}\n"),
        "rgba32uint",
        4,
        3,
        "texture atomics need an r32uint or r32sint texture, not `rgba32uint`",
    );
    // Only a stage function's own texture arguments are bound for atomics.
    fails_on_wgpu(
        "struct Args { texture2d<uint, access::read_write> t [[id(0)]]; };\nkernel void k(constant Args& a [[buffer(0)]]) {\n  a.t.atomic_fetch_add(uint2(0), uint4(1));\n}\n",
        "r32uint",
        5,
        3,
        "`atomic_fetch_add` on a texture that is not bound for atomics",
    );
    // A texel buffer narrower than a word cannot be written alone.
    fails_on_wgpu(
        "kernel void k(texture_buffer<float> t [[texture(0)]], device float4* o [[buffer(0)]]) {\n  o[0] = t.read(0u);\n}\n",
        "r8unorm",
        3,
        15,
        "a texel buffer of `r8unorm` has no WGSL equivalent",
    );
    // The same kernel on an r32uint texture translates, bound `atomic`.
    let options = Options {
        target: msl2wgsl::Target::Wgpu,
        ..Options::default()
    };
    let src = format!("{PRELUDE}{texture}  t.atomic_fetch_max(uint2(0), uint4(1));\n}}\n");
    let lib = Library::from_source("t.metal", &src, &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(
        lib.wgsl().contains("texture_storage_2d<r32uint,atomic>"),
        "{}",
        lib.wgsl()
    );
    assert!(lib.wgsl().contains("textureAtomicMax("), "{}", lib.wgsl());
}

#[test]
fn bit_fields_this_translator_does_not_lay_out_are_refused() {
    assert_error(
        "struct W {\n    ulong a : 40;\n};\nkernel void k(device W* w [[buffer(0)]]) {}\n",
        4,
        5,
        "64-bit bit-fields are not supported",
    );
    assert_error(
        "union U {\n    uint a : 4;\n    float f;\n};\nkernel void k(device U* u [[buffer(0)]]) {}\n",
        4,
        14,
        "bit-fields in unions are not supported",
    );
    assert_error(
        "struct D {\n    uint a : 4 = 1;\n};\nkernel void k(device D* d [[buffer(0)]]) {}\n",
        4,
        14,
        "bit-fields in a struct with default member initializers are not supported",
    );
    assert_error(
        "struct Z {\n    uint a : 0;\n    uint b : 33;\n};\nkernel void k(device Z* z [[buffer(0)]]) {}\n",
        4,
        14,
        "named bit-field `a` has zero width",
    );
    assert_error(
        "struct Z {\n    uint b : 33;\n};\nkernel void k(device Z* z [[buffer(0)]]) {}\n",
        4,
        14,
        "the width of a bit-field of type `uint` must be a constant from 0 to 32",
    );
    assert_error(
        "struct B {\n    uint a : 4;\n};\nkernel void k(device B* b [[buffer(0)]]) {\n  B x = {1u};\n  b[0] = x;\n}\n",
        7,
        9,
        "initializing `B`, a struct with bit-fields, from a braced list is not supported",
    );
}

#[test]
fn null_pointers_outside_comparisons_are_located() {
    assert_error(
        "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  device float* p = nullptr;\n  if (i > 2) p = o;\n}\n",
        5,
        14,
        "`p` is null from its declaration (or from every call of this specialisation); it cannot be made to point at memory later",
    );
    assert_error(
        "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  device float* p = i > 2 ? o : nullptr;\n}\n",
        4,
        33,
        "a null pointer is not supported here: a WGSL pointer always points to a variable",
    );
}

#[test]
fn a_pointer_read_before_its_first_assignment_is_located() {
    assert_error(
        "kernel void k(device float* o [[buffer(0)]]) {\n  device float* p;\n  o[0] = p[0];\n  p = o;\n}\n",
        5,
        10,
        "pointer `p` is read before anything is assigned to it",
    );
}

#[test]
fn a_sampler_used_to_compare_and_to_sample_is_located_at_both_uses() {
    // WGSL's `sampler_comparison` and `sampler` are different types; the
    // comparison is inside a helper, found through the call.
    let body = "static float shadow(depth2d<float> d, sampler s, float2 uv) {\n    return d.sample_compare(s, uv, 0.5f);\n}\nfragment float4 f(depth2d<float> d [[texture(0)]], texture2d<float> t [[texture(1)]], sampler s [[sampler(0)]]) {\n    return t.sample(s, float2(0.5f)) * shadow(d, s, float2(0.5f));\n}\n";
    assert_error(
        body,
        4,
        12,
        "this sampler compares here, and the same sampler samples without comparing (next error)",
    );
    let text = fails(body);
    assert!(
        text.contains("t.metal:7:12: error: this sampler samples without comparing here"),
        "{text}"
    );
    let src = format!("{PRELUDE}{body}");
    let f = Library::from_source("t.metal", &src, &Options::default()).unwrap_err();
    let codes: Vec<_> = f.diagnostics.0.iter().map(|d| d.code().as_str()).collect();
    assert_eq!(codes, ["E0323", "E0323"]);
}

#[test]
fn a_texture_array_element_chosen_at_run_time_that_escapes_is_located() {
    // Each use of a run-time element becomes a `switch` over the elements;
    // stored in a struct it has none to switch around.
    let body = "struct Held { texture2d<float> t; };\nkernel void k(array<texture2d<float>, 2> ts [[texture(0)]], device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n    Held h = { ts[i] };\n    out[i] = h.t.read(uint2(0)).x;\n}\n";
    assert_error(
        body,
        5,
        19,
        "an element of an array of `texture2d<float>` chosen at run time can only be used directly here",
    );
}

#[test]
fn texture_array_arguments_take_one_index_per_element() {
    let body = "kernel void k(array<texture2d<float>, 4> ts [[texture(0)]], texture2d<float> t [[texture(3)]], device float* out [[buffer(0)]]) {\n    out[0] = ts[0].read(uint2(0)).x + t.read(uint2(0)).x;\n}\n";
    assert_error(body, 3, 82, "duplicate `[[texture(3)]]` index");
    let body = "kernel void k(array<sampler, 8> ss [[sampler(60)]], device float* out [[buffer(0)]]) {\n    out[0] = 0.0f;\n}\n";
    assert_error(
        body,
        3,
        38,
        "sampler indices 60 to 67 of this array of 8 are too large (at most 63)",
    );
}

#[test]
fn lod_queries_are_refused_where_called() {
    let body = "fragment float4 f(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]], float4 p [[position]]) {\n    return float4(t.calculate_clamped_lod(s, p.xy));\n}\n";
    assert_error(
        body,
        4,
        19,
        "`calculate_clamped_lod` has no WGSL equivalent: WGSL has no level-of-detail query",
    );
}

#[test]
fn sixty_four_bit_atomics_are_refused_where_written() {
    let body = "kernel void k(device atomic_ulong* a [[buffer(0)]]) {\n    atomic_max_explicit(a, 5ul, memory_order_relaxed);\n}\n";
    assert_error(
        body,
        3,
        22,
        "`atomic_ulong` has no WebGPU equivalent: WebGPU has no 64-bit integers, so no 64-bit atomics",
    );
}

#[test]
fn integers_cast_to_pointers_are_refused_as_gpu_addresses() {
    let body = "struct Regs { ulong addr; };\nkernel void k(constant Regs& r [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n    device float* p = reinterpret_cast<device float*>(r.addr);\n    p[i] = 1.0f;\n}\n";
    assert_error(
        body,
        5,
        55,
        "casting an integer to a pointer (a buffer's GPU address) has no WebGPU equivalent",
    );
}

#[test]
fn pointers_held_in_buffer_memory_are_refused() {
    // Structs that an argument buffer points to, holding pointers
    // themselves (an argument buffer's own pointers are bindings).
    let body = "struct Node { float v; device float* data; };\nstruct Table { device Node* nodes; };\nkernel void k(device Table& t [[buffer(0)]]) {\n    t.nodes[0].v = 1.0f;\n}\n";
    assert_error(
        body,
        3,
        38,
        "a pointer stored in buffer memory (a buffer's GPU address) has no WebGPU equivalent",
    );
    // A pointer to pointers that live in a buffer.
    let body = "kernel void k(device float* device* ps [[buffer(0)]]) {\n    ps[0][0] = 1.0f;\n}\n";
    assert_error(
        body,
        3,
        15,
        "a pointer stored in buffer memory (a buffer's GPU address) has no WebGPU equivalent",
    );
}

#[test]
fn textures_held_in_buffer_memory_are_refused() {
    let body = "kernel void k(const device texture2d<float>* heap [[buffer(0)]], device float* out [[buffer(1)]]) {\n    out[0] = heap[1].read(uint2(0)).x;\n}\n";
    assert_error(
        body,
        3,
        15,
        "textures and samplers held in buffer memory (a bindless descriptor heap) have no WebGPU equivalent",
    );
}

#[test]
fn linked_structures_are_located_at_their_pointer_member() {
    // A `device` pointer to the struct itself: a linked structure in
    // memory, pointers stored in memory (buffer device addresses).
    let body = "struct Node { float v; device Node* next; };\nkernel void k(device Node* nodes [[buffer(0)]], device float* out [[buffer(1)]]) { out[0] = nodes->next->v; }\n";
    assert_error(
        body,
        3,
        24,
        "a linked structure in memory has no WebGPU equivalent: `Node` points to its own type",
    );
    // Two structs pointing to each other, through `constant` memory: the
    // first one's member is in the cycle (nothing to wait for).
    let body = "struct B;\nstruct A { constant B* b; float x; };\nstruct B { constant A* a; };\nkernel void k(constant A& a [[buffer(0)]], device float* out [[buffer(1)]]) { out[0] = a.b->a->x; }\n";
    assert_error(
        body,
        4,
        12,
        "a linked structure in memory has no WebGPU equivalent: `A` points to `B`, which leads back to `A`",
    );
    // In `thread` memory it is a limit of the translation, not of WebGPU.
    let body = "struct Link { thread Link* next; int v; };\nkernel void k(device int* out [[buffer(0)]]) { Link a = {nullptr, 1}; out[0] = a.v; }\n";
    assert_error(
        body,
        3,
        15,
        "a pointer member to `Link`, which leads back to `Link` (a struct pointing to its own type), is not supported",
    );
}

/// MLX's fence kernels spin on a `coherent(system)` flag that the CPU
/// sets: WebGPU has no such memory, and the note says what a port does.
#[test]
fn system_coherent_memory_is_refused_with_what_a_port_does() {
    let body = "kernel void wait_flag(volatile coherent(system) device uint* flag [[buffer(0)]]) {\n    while (flag[0] == 0u) {}\n}\n";
    assert_error(
        body,
        3,
        32,
        "`coherent(system)` memory is not supported: WebGPU keeps no memory coherent with the CPU and other devices while a dispatch runs",
    );
    let text = fails(body);
    assert!(
        text.contains("a port does not wait inside a kernel"),
        "{text}"
    );
}

#[test]
fn coherent_without_a_scope_is_refused_as_device_coherence() {
    let body = "kernel void k(coherent device uint& a [[buffer(0)]]) {\n    a += 1u;\n}\n";
    assert_error(
        body,
        3,
        15,
        "`coherent` memory is not supported: WebGPU keeps no memory coherent between threadgroups while a dispatch runs",
    );
}

#[test]
fn pull_model_interpolants_are_refused_where_written() {
    let body = "struct In { interpolant<float4, interpolation::perspective> c [[user(locn0)]]; };\nfragment float4 f(In in [[stage_in]]) {\n    return in.c.interpolate_at_offset(float2(0.25));\n}\n";
    assert_error(
        body,
        3,
        13,
        "`interpolant` has no WebGPU equivalent: WGSL fixes how each fragment input is interpolated where it is declared",
    );
}
