//! The WebGPU dialect on the IR: what browsers' WGSL compiler (Tint) needs
//! of a module beyond what naga validates, done before naga's WGSL writer
//! runs, so that nothing is matched in the text and no user identifier can
//! be hit (`src/library/browser_dialect.rs` lists the rest of the dialect).
//!
//! - No constant infinities or NaNs: WGSL makes a constant expression that
//!   yields one a shader-creation error, and `bitcast<f32>(2139095040u)`
//!   (Metal's `INFINITY`, `numeric_limits<float>::infinity()`, the identity
//!   of `simd_min`, `as_type<float>(-8388608)`) is one. The constant
//!   operand (a literal, possibly negated or complemented) becomes its bits
//!   OR-ed with a private variable that is always zero, which makes the
//!   expression a runtime one with the same bits. Module-scope constants
//!   are left alone (naga only keeps fully evaluated constants there, and
//!   the lowering puts no such bitcast in one).
//! - No loop without an exit: Tint refuses one ("loop does not exit"), and
//!   [`super::loop_exits`] gives it an unreachable `break`.

use super::loop_exits;
use super::rebuild::{rebuild_function, Front};
use naga::{Expression, Handle, Literal, ScalarKind};

/// The private variable that makes non-finite bit patterns runtime values
/// (naga's namer renames it if a user name takes it).
const RUNTIME_ZERO: &str = "msl2wgsl_runtime_zero";

/// `module` as browsers take it, or `None` if it already is (most modules:
/// they are not copied).
pub(crate) fn adapt(module: &naga::Module) -> Option<naga::Module> {
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    let (mut non_finite, mut endless) = (false, false);
    for f in functions {
        non_finite |= !constant_non_finite(f).is_empty();
        endless |= loop_exits::has_loop_without_exit(f);
    }
    if !non_finite && !endless {
        return None;
    }
    let mut module = module.clone();
    let zero = non_finite.then(|| runtime_zero(&mut module));
    let functions = module
        .functions
        .iter_mut()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter_mut().map(|e| &mut e.function));
    for f in functions {
        if let Some(zero) = zero {
            runtime_non_finite(f, zero);
        }
        loop_exits::add_unreachable_breaks(f);
    }
    Some(module)
}

/// The `bitcast<f32>` expressions of `f` that an `Emit` covers and that
/// reinterpret a constant integer whose bits are an infinity or a NaN
/// (flags by handle index; empty if there are none).
fn constant_non_finite(f: &naga::Function) -> Vec<bool> {
    let mut emitted = vec![false; f.expressions.len()];
    mark_emitted(&f.body, &mut emitted);
    let mut found = Vec::new();
    for (h, e) in f.expressions.iter() {
        let hit = emitted[h.index()]
            && matches!(*e, Expression::As { expr, kind: ScalarKind::Float, convert: None }
                if non_finite_bits(&f.expressions, expr).is_some());
        if hit {
            found.resize(f.expressions.len(), false);
            found[h.index()] = true;
        }
    }
    found
}

/// Marks every expression an `Emit` in `block` covers (nested blocks too).
fn mark_emitted(block: &naga::Block, emitted: &mut [bool]) {
    use naga::Statement as S;
    for statement in block.iter() {
        match statement {
            S::Emit(range) => {
                for i in range.index_range() {
                    emitted[i as usize] = true;
                }
            }
            S::Block(b) => mark_emitted(b, emitted),
            S::If { accept, reject, .. } => {
                mark_emitted(accept, emitted);
                mark_emitted(reject, emitted);
            }
            S::Switch { cases, .. } => cases.iter().for_each(|c| mark_emitted(&c.body, emitted)),
            S::Loop {
                body, continuing, ..
            } => {
                mark_emitted(body, emitted);
                mark_emitted(continuing, emitted);
            }
            _ => {}
        }
    }
}

/// The bits of a constant integer operand (a literal, possibly negated or
/// complemented: `as_type<float>(-8388608)`) that are an `f32` infinity or
/// NaN.
fn non_finite_bits(arena: &naga::Arena<Expression>, h: Handle<Expression>) -> Option<u32> {
    let bits = constant_bits(arena, h)?;
    (!f32::from_bits(bits).is_finite()).then_some(bits)
}

/// The 32 bits of a constant integer expression of the kinds above.
fn constant_bits(arena: &naga::Arena<Expression>, h: Handle<Expression>) -> Option<u32> {
    match arena[h] {
        Expression::Literal(Literal::U32(v)) => Some(v),
        Expression::Literal(Literal::I32(v)) => Some(v as u32),
        Expression::Unary { op, expr } => {
            let v = constant_bits(arena, expr)?;
            match op {
                naga::UnaryOperator::Negate => Some(v.wrapping_neg()),
                naga::UnaryOperator::BitwiseNot => Some(!v),
                naga::UnaryOperator::LogicalNot => None,
            }
        }
        _ => None,
    }
}

/// Adds the always-zero `var<private> msl2wgsl_runtime_zero: u32`.
fn runtime_zero(module: &mut naga::Module) -> Handle<naga::GlobalVariable> {
    let ty = module.types.insert(
        naga::Type {
            name: None,
            inner: naga::TypeInner::Scalar(naga::Scalar::U32),
        },
        naga::Span::UNDEFINED,
    );
    module.global_variables.append(
        naga::GlobalVariable {
            name: Some(RUNTIME_ZERO.into()),
            space: naga::AddressSpace::Private,
            binding: None,
            ty,
            init: None,
            memory_decorations: Default::default(),
        },
        naga::Span::UNDEFINED,
    )
}

/// Rewrites each constant non-finite `bitcast<f32>(N)` of `f` into
/// `bitcast<f32>(Nu | msl2wgsl_runtime_zero)` (`N` as its `u32` bits).
fn runtime_non_finite(f: &mut naga::Function, zero: Handle<naga::GlobalVariable>) {
    let found = constant_non_finite(f);
    if found.is_empty() {
        return;
    }
    rebuild_function(f, &mut |front: &mut Front, old, e| {
        if !found.get(old.index()).copied().unwrap_or(false) {
            return e;
        }
        let Expression::As {
            expr,
            kind,
            convert,
        } = e
        else {
            unreachable!("found above")
        };
        let bits = non_finite_bits(front.arena(), expr).expect("found above");
        let bits = front.add(Expression::Literal(Literal::U32(bits)));
        let pointer = front.add(Expression::GlobalVariable(zero));
        let zero = front.add(Expression::Load { pointer });
        let runtime = front.add(Expression::Binary {
            op: naga::BinaryOperator::InclusiveOr,
            left: bits,
            right: zero,
        });
        Expression::As {
            expr: runtime,
            kind,
            convert,
        }
    });
}
