//! `half` as `f32` ([`HalfMode::F32`]), the whole-module part: the
//! lowering rounds `half` results as `metal/half_as_f32.rs` says, but
//! generic code (constants, conversions of values that are already binary16
//! values) still writes `f16`; this pass rewrites what is left into `f32`
//! once every function is lowered.
//!
//! [`HalfMode::F32`]: crate::lower::HalfMode::F32

use naga::{Expression, Literal, ScalarKind};

/// Rewrites what generic lowering code writes for `half` into `f32` after
/// an emulated-`half` lowering: `f16` literals become the same `f32` values
/// and conversions to `f16` become (exact) `f32` conversions. Both are exact
/// because every remaining `f16` conversion converts a value that is already
/// a binary16 value (unpacked fields, widened polyfill results, infinities);
/// conversions that round go through `Lowerer::convert`, which rounds.
pub(crate) fn demote_f16(module: &mut naga::Module) {
    demote_expressions(&mut module.global_expressions);
    for (_, f) in module.functions.iter_mut() {
        demote_expressions(&mut f.expressions);
    }
    for ep in &mut module.entry_points {
        demote_expressions(&mut ep.function.expressions);
    }
}

fn demote_expressions(arena: &mut naga::Arena<Expression>) {
    for (_, e) in arena.iter_mut() {
        match e {
            Expression::Literal(Literal::F16(v)) => {
                *e = Expression::Literal(Literal::F32(v.to_f32()))
            }
            Expression::As {
                kind: ScalarKind::Float,
                convert: Some(width),
                ..
            } if *width == 2 => *width = 4,
            _ => {}
        }
    }
}

/// True if the module still mentions `f16` anywhere in its types (an
/// internal error in [`HalfMode::F32`]).
pub(crate) fn mentions_f16(module: &naga::Module) -> bool {
    let is_f16 = |s: &naga::Scalar| *s == naga::Scalar::F16;
    module.types.iter().any(|(_, t)| match &t.inner {
        naga::TypeInner::Scalar(s)
        | naga::TypeInner::Vector { scalar: s, .. }
        | naga::TypeInner::Matrix { scalar: s, .. } => is_f16(s),
        _ => false,
    })
}

/// True if an expression makes an `f16` (a conversion or literal whose
/// type is only inferred, as in `f32(f16(x))`) but no type mentions one:
/// naga's WGSL writer decides on `enable f16;` from the types alone.
pub(crate) fn f16_undeclared(module: &naga::Module) -> bool {
    let makes_f16 = |arena: &naga::Arena<Expression>| {
        arena.iter().any(|(_, e)| {
            matches!(
                e,
                Expression::Literal(Literal::F16(_))
                    | Expression::As {
                        kind: ScalarKind::Float,
                        convert: Some(2),
                        ..
                    }
            )
        })
    };
    let used = makes_f16(&module.global_expressions)
        || module
            .functions
            .iter()
            .any(|(_, f)| makes_f16(&f.expressions))
        || module
            .entry_points
            .iter()
            .any(|e| makes_f16(&e.function.expressions));
    used && !mentions_f16(module)
}

/// Adds the `f16` type, so that the writer enables `f16` (see
/// [`f16_undeclared`]).
pub(crate) fn declare_f16(module: &mut naga::Module) {
    module.types.insert(
        naga::Type {
            name: None,
            inner: naga::TypeInner::Scalar(naga::Scalar::F16),
        },
        naga::Span::UNDEFINED,
    );
}
