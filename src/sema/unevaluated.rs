//! The type of `decltype`'s operand where it is no constant expression
//! and no function body types it (an alias template, a function
//! template's return type): `std::declval<T>()` (C++ [declval], a `T`
//! that is never evaluated) and the texture member functions called on
//! one, as in `decltype(declval<Tex>().gather(declval<sampler>(),
//! declval<Ts>()...))`, the return type SPIRV-Cross's gather wrappers
//! name (MSL §6.12: `gather` and `gather_compare` return `vec<T, 4>`,
//! `sample` and `read` `vec<T, 4>` or, of a depth texture, `T`).

use super::Program;
use crate::syntax::ast::{Expr, ExprKind, TemplateArg};
use crate::types::{Scalar, Type};

impl Program<'_> {
    /// The type of unevaluated operand `e`; `None` when it is none of the
    /// forms read here.
    pub(crate) fn unevaluated_type(&self, e: &Expr) -> Option<Type> {
        let ExprKind::Call(callee, args) = &e.kind else {
            return None;
        };
        match &callee.kind {
            ExprKind::Templated(path, targs) if is_declval(path) && args.is_empty() => {
                match targs.as_slice() {
                    [TemplateArg::Type(ts)] => self.resolve_type(ts).ok(),
                    _ => None,
                }
            }
            ExprKind::Member(base, method, false) => {
                let Type::Texture(t) = self.unevaluated_type(base)? else {
                    return None;
                };
                let texel = |depth_scalar: bool| match depth_scalar && t.shape.is_depth() {
                    true => Type::Scalar(t.scalar),
                    false => Type::vector(t.scalar, 4),
                };
                Some(match method.name.as_str() {
                    "gather" | "gather_compare" => texel(false),
                    "sample" | "read" => texel(true),
                    "sample_compare" => Type::Scalar(t.scalar),
                    "get_width" | "get_height" | "get_depth" | "get_array_size"
                    | "get_num_mip_levels" | "get_num_samples" => Type::Scalar(Scalar::UInt),
                    _ => return None,
                })
            }
            _ => None,
        }
    }
}

/// `declval` or `metal::declval`.
fn is_declval(path: &[String]) -> bool {
    matches!(path, [n] | [_, n] if n == "declval") && (path.len() == 1 || path[0] == "metal")
}
