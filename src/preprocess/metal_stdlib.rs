//! What `#include <metal_stdlib>` (or any `<metal_*>` header) reads: the
//! part of Metal's standard library that is C++ class templates rather than
//! functions and types the translator knows natively.
//!
//! `<metal_type_traits>` declares `metal::integral_constant<T, v>`,
//! `metal::bool_constant<B>`, `metal::true_type` and `metal::false_type`
//! (the MSL specification's "Type Traits Functions" section; C++'s
//! [meta.help]). ML kernels pass them to select a template's form at
//! compile time (MLX's NAX tiles take `metal::bool_constant<transpose>`
//! parameters), and many sources define look-alikes of their own (MLX's
//! `mlx::steel::integral_constant`, a distinct type).
//!
//! Their program-scope names start with `__metal_`, and the namespace
//! resolver writes `metal::integral_constant` (and an unqualified
//! `integral_constant` after `using namespace metal;` that no user
//! declaration answers) as `__metal_integral_constant`: WGSL has one
//! program scope, and a source's own `integral_constant` at global scope or
//! in its namespace keeps its name and stays a type of its own.

/// The name under which the text is shown in diagnostics
/// (`<sdk>/metal_type_traits`).
pub(crate) const NAME: &str = "metal_type_traits";

/// The `metal` namespace's class templates provided here, by the name
/// Metal gives them; each is declared at program scope as
/// `__metal_<name>` ([`program_scope_name`]).
pub(crate) const NAMES: &[&str] = &[
    "integral_constant",
    "bool_constant",
    "true_type",
    "false_type",
];

/// The program-scope name of the provided `metal::<name>`.
pub(crate) fn program_scope_name(name: &str) -> Option<String> {
    NAMES.contains(&name).then(|| format!("__metal_{name}"))
}

/// The header's text. `#include`d once per translation unit, whichever
/// `<metal_*>` header comes first.
pub(crate) const TEXT: &str = r#"// Metal's <metal_type_traits> class templates as msl2wgsl provides them.
template <typename T, T v>
struct __metal_integral_constant {
  static constexpr constant T value = v;
  using value_type = T;
  using type = __metal_integral_constant;
  constexpr operator value_type() const thread { return value; }
  constexpr value_type operator()() const thread { return value; }
};
template <bool B>
using __metal_bool_constant = __metal_integral_constant<bool, B>;
using __metal_true_type = __metal_bool_constant<true>;
using __metal_false_type = __metal_bool_constant<false>;
"#;
