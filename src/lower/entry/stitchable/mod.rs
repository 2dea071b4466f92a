//! SwiftUI's `[[stitchable]]` effects: each such function becomes a WGSL
//! fragment entry point that calls it the way SwiftUI does, and the
//! function itself stays an ordinary (callable) WGSL function.
//!
//! SwiftUI finds the effect's shape in the signature (Apple's `Shader`
//! documentation), and so does this module:
//!
//! | signature | effect | the entry point |
//! | --- | --- | --- |
//! | `half4 f(float2 position, half4 color, args...)` | `colorEffect` | passes the layer's texel at the pixel as `color` |
//! | `float2 f(float2 position, args...)` | `distortionEffect` | samples the layer where `f` says |
//! | `half4 f(float2 position, SwiftUI::Layer layer, args...)` | `layerEffect` | passes the layer; `layer.sample(p)` samples it |
//! | `half4 f(float2 position, args...)` | `Shader` as a `ShapeStyle` | passes only the arguments |
//!
//! `position` is `@builtin(position).xy`: the pixel's centre, in pixels
//! from the top left corner (SwiftUI's user space at one pixel per point).
//! The layer is a `texture2d<half>` at `[[texture(0)]]` (`@group(1)
//! @binding(64)`, fixed: it is one global that `SwiftUI::Layer::sample`
//! reads from any function) with a linear, clamp-to-edge `constexpr`
//! sampler; `sample(p)` reads it at `p / size` with level 0, so it may be
//! called in non-uniform control flow.
//!
//! `args...` are what SwiftUI's `Shader.Argument`s become:
//! - scalars and vectors of `float`, `half`, `int`, `uint` (`.float`,
//!   `.float2`.., `.color` is a premultiplied `half4`, `.boundingRect` a
//!   `float4`): members of one uniform, the argument buffer at
//!   `[[buffer(0)]]`, in Metal's layout of the equivalent struct, `half`
//!   stored as `float` (the entry point rounds it);
//! - a `device const T*` (or `constant T*`) followed by an `int` or `uint`
//!   (`.floatArray`: `float`, `.colorArray`: `half4`, `.data`: any other
//!   `T`, the count then in bytes): the elements in `[[buffer(1)]]`,
//!   `[[buffer(2)]]`, ... as ordinary buffer arguments, the count in the
//!   argument buffer;
//! - `texture2d<half>` (`.image`): `[[texture(1)]]`, `[[texture(2)]]`, ...
//!
//! The reflection's `stitchable` says all of it
//! ([`Stitchable`](crate::reflect::Stitchable)); the resources are also
//! ordinary `arguments`, so a host binds them by Metal
//! index as it binds any fragment function's. A signature of no shape, or
//! an argument SwiftUI cannot pass, is a located E0332.
//!
//! The module's parts: `signature` (the effect's shape from the
//! signature), `arguments` (the argument buffer, arrays and images and
//! their reflection), `layer` (the layer texture, its sampler and the
//! `SwiftUI::Layer::sample` intrinsic) and `entry` (the fragment entry
//! point).

mod arguments;
mod entry;
mod layer;
mod signature;

use crate::reflect::WgslBinding;
use crate::syntax::ast;

/// `[[texture(n)]]` of the layer.
pub const LAYER_TEXTURE: u32 = 0;

/// `[[buffer(n)]]` of the argument buffer; arrays take the next indices.
pub const ARGUMENT_BUFFER: u32 = 0;

/// Where the layer texture is bound: the fragment group, at the default
/// binding of `[[texture(0)]]`.
const LAYER_BINDING: WgslBinding = WgslBinding {
    group: 1,
    binding: 64 + LAYER_TEXTURE,
};

/// The layer texture's name in the WGSL and in reflection (when the
/// function does not name it).
const LAYER_NAME: &str = "swiftui_layer";

/// The name of the layer's `constexpr` sampler.
const LAYER_SAMPLER: &str = "swiftui_layer_sampler";

/// The suffix of the WGSL name of the stitchable function itself (the
/// entry point has its MSL name).
const FUNCTION_SUFFIX: &str = "_stitchable";

/// True if `f` is declared `[[stitchable]]`.
pub(in crate::lower) fn is_stitchable(f: &ast::FunctionDecl) -> bool {
    f.attributes.iter().any(|a| a.name == "stitchable")
}

/// The name a parameter is known by in the entry point: its own, or one
/// made up for an unnamed parameter.
fn local_name(p: &ast::Param, i: usize) -> String {
    p.name
        .as_ref()
        .map(|n| n.name.clone())
        .unwrap_or_else(|| format!("__stitchable_arg{i}"))
}

/// A parameter with the name [`local_name`] gives it.
fn named(p: &ast::Param, i: usize) -> ast::Param {
    let mut p = p.clone();
    p.name = Some(ast::Ident {
        name: local_name(&p, i),
        span: p.span,
    });
    p
}
