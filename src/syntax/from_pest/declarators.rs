//! Declarator forms that name a type the type specifier alone cannot
//! spell, rewritten into one that can.

use super::super::ast::*;

/// `thread T (&a)[N][M]`, a reference to an array (SPIRV-Cross's
/// `spvArrayCopy*` helpers take them), is `thread metal::array<metal::array<T,
/// M>, N>& a`: the array suffixes move into the referenced type, so that
/// they do not make an array of references.
///
/// `device S* (&a)[N]` (SPIRV-Cross's arrays of buffers passed to helpers)
/// refers to an array of pointers: the written space is the pointers', and
/// the array is the caller's local, so the reference is `thread` (or
/// the space written after the `*`, the pointers' own).
///
/// `device T (*p)[N]` (`op` a pointer) is `device metal::array<T, N>* p`
/// the same way.
pub(super) fn array_reference(ty: TypeSpec, dims: Vec<Option<Expr>>, op: PtrOp) -> TypeSpec {
    let (mut space, mut is_const, span) = (ty.space, ty.is_const, ty.span);
    let mut elem = if ty.ptr_ops.is_empty() {
        TypeSpec {
            space: None,
            ptr_ops: Vec::new(),
            ..ty
        }
    } else {
        // `device S* const device (&a)[N]`: the pointers' own space (an
        // argument buffer's array), written after the `*`.
        let own = match ty.ptr_ops.last() {
            Some(PtrOp::Pointer { space: Some(s), .. }) => *s,
            _ => AddressSpace::Thread,
        };
        space = Some((own, span));
        is_const = false;
        ty
    };
    elem = array_of(elem, dims);
    TypeSpec {
        is_const,
        space,
        ptr_ops: vec![op],
        ..elem
    }
}

/// `T[N][M]` spelled as a type: `metal::array<metal::array<T, M>, N>`.
pub(super) fn array_of(elem: TypeSpec, dims: Vec<Option<Expr>>) -> TypeSpec {
    let span = elem.span;
    dims.into_iter().rev().fold(elem, |elem, dim| {
        // `T (&a)[]` has no size: `array<T>` is refused where it is resolved.
        let args = match dim {
            Some(n) => vec![TemplateArg::Type(elem), TemplateArg::Expr(n)],
            None => vec![TemplateArg::Type(elem)],
        };
        TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: vec!["metal".into(), "array".into()],
            args,
            ptr_ops: Vec::new(),
            name_span: span,
            span,
        }
    })
}
