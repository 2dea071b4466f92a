//! Every rejected input produces a located diagnostic: `FILE:LINE:COL: error: MESSAGE`.

use msl2wgsl::{Library, Options};

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
    assert_error("kernel void k() {\n  int x = 1\n}\n", 5, 1, "expected ");
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
    assert_error("constant float a = 1.0f;\nfloat f() { return 1.0f; }\nconstant float g = f();\nkernel void k() {}\n", 5, 20, "expression is not a compile-time constant");
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

#[test]
fn unsupported_attribute_argument() {
    assert_error(
        "kernel void k(texture2d<float> t [[texture(0)]]) {}\n",
        3,
        15,
        "texture and sampler types are not supported yet",
    );
}

#[test]
fn vertex_functions_are_not_yet_translated() {
    assert_error(
        "vertex float4 v(uint id [[vertex_id]]) { return float4(0); }\n",
        3,
        1,
        "vertex and fragment functions are not supported yet",
    );
}

#[test]
fn unsupported_scalar_type_is_named() {
    assert_error(
        "kernel void k(device uchar* a [[buffer(0)]]) {}\n",
        3,
        22,
        "type `uchar` is not supported yet",
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
