//! The operands of a naga expression: every `Handle<Expression>` it holds,
//! in one list that every analysis and rewrite of the lowering shares.
//!
//! The list is written once, in `visit_operands!`, and expanded twice:
//! [`for_each`] reads the handles, [`for_each_mut`] lets a rewrite replace
//! them (an arena rebuilt in a new order). The match names every variant
//! and every field, with no `_` arm and no `..`, so a naga upgrade that adds
//! an expression, or an operand to one, fails to compile here rather than
//! leaving an analysis blind to it or a rebuilt arena with stale handles.

use naga::{Expression, Handle};

/// Calls `$f` (a `&mut` closure) on a reference to each operand handle of
/// `$e`: through `&Expression` the references are shared, through
/// `&mut Expression` mutable (the patterns bind by the reference's mode).
macro_rules! visit_operands {
    ($e:expr, $f:expr) => {{
        use naga::{Expression as E, ImageQuery as Q, SampleLevel as L};
        let f = $f;
        match $e {
            E::Literal(_)
            | E::Constant(_)
            | E::Override(_)
            | E::ZeroValue(_)
            | E::FunctionArgument(_)
            | E::GlobalVariable(_)
            | E::LocalVariable(_)
            | E::CallResult(_)
            | E::AtomicResult {
                ty: _,
                comparison: _,
            }
            | E::WorkGroupUniformLoadResult { ty: _ }
            | E::RayQueryProceedResult
            | E::SubgroupBallotResult
            | E::SubgroupOperationResult { ty: _ } => {}
            E::Compose { ty: _, components } => {
                for c in components {
                    f(c);
                }
            }
            E::Access { base, index } => {
                f(base);
                f(index);
            }
            E::AccessIndex { base, index: _ } => f(base),
            E::Splat { size: _, value } => f(value),
            E::Swizzle {
                size: _,
                vector,
                pattern: _,
            } => f(vector),
            E::Load { pointer } => f(pointer),
            E::ImageSample {
                image,
                sampler,
                gather: _,
                coordinate,
                array_index,
                offset,
                level,
                depth_ref,
                clamp_to_edge: _,
            } => {
                f(image);
                f(sampler);
                f(coordinate);
                for h in [array_index, offset].into_iter().flatten() {
                    f(h);
                }
                match level {
                    L::Auto | L::Zero => {}
                    L::Exact(h) | L::Bias(h) => f(h),
                    L::Gradient { x, y } => {
                        f(x);
                        f(y);
                    }
                }
                if let Some(h) = depth_ref {
                    f(h);
                }
            }
            E::ImageLoad {
                image,
                coordinate,
                array_index,
                sample,
                level,
            } => {
                f(image);
                f(coordinate);
                for h in [array_index, sample, level].into_iter().flatten() {
                    f(h);
                }
            }
            E::ImageQuery { image, query } => {
                f(image);
                match query {
                    Q::Size { level } => {
                        if let Some(h) = level {
                            f(h);
                        }
                    }
                    Q::NumLevels | Q::NumLayers | Q::NumSamples => {}
                }
            }
            E::Unary { op: _, expr } => f(expr),
            E::Binary { op: _, left, right } => {
                f(left);
                f(right);
            }
            E::Select {
                condition,
                accept,
                reject,
            } => {
                f(condition);
                f(accept);
                f(reject);
            }
            E::Derivative {
                axis: _,
                ctrl: _,
                expr,
            } => f(expr),
            E::Relational { fun: _, argument } => f(argument),
            E::Math {
                fun: _,
                arg,
                arg1,
                arg2,
                arg3,
            } => {
                f(arg);
                for h in [arg1, arg2, arg3].into_iter().flatten() {
                    f(h);
                }
            }
            E::As {
                expr,
                kind: _,
                convert: _,
            } => f(expr),
            E::ArrayLength(array) => f(array),
            E::RayQueryVertexPositions { query, committed: _ }
            | E::RayQueryGetIntersection {
                query,
                committed: _,
            } => f(query),
            E::CooperativeLoad {
                columns: _,
                rows: _,
                role: _,
                data:
                    naga::CooperativeData {
                        pointer,
                        stride,
                        row_major: _,
                    },
            } => {
                f(pointer);
                f(stride);
            }
            E::CooperativeMultiplyAdd { a, b, c } => {
                f(a);
                f(b);
                f(c);
            }
        }
    }};
}

/// Calls `f` on each operand of `e` (an operand used twice, twice), in the
/// order of `e`'s fields.
pub(in crate::lower) fn for_each(e: &Expression, mut f: impl FnMut(Handle<Expression>)) {
    visit_operands!(e, &mut |h: &Handle<Expression>| f(*h))
}

/// Calls `f` on each operand of `e`, which it may replace (as
/// [`for_each`], mutably).
pub(in crate::lower) fn for_each_mut(
    e: &mut Expression,
    mut f: impl FnMut(&mut Handle<Expression>),
) {
    visit_operands!(e, &mut f)
}

#[cfg(test)]
mod tests {
    use super::{for_each, for_each_mut};
    use naga::{
        AddressSpace, Arena, Expression as E, Handle, ImageQuery, Literal, Module, SampleLevel,
        Span, Type, TypeInner,
    };

    /// Operand handles start here; every other handle in the test
    /// expressions is below (the modules' arenas hold one of each).
    const FIRST_OPERAND: usize = 100;

    /// The expression handles of `e` as its `Debug` print shows them
    /// (`[n]`, field by field), independently of the visitor.
    fn printed_operands(e: &E) -> Vec<usize> {
        let text = format!("{e:?}");
        text.split('[')
            .skip(1)
            .filter_map(|s| s.split(']').next()?.parse().ok())
            .filter(|&n| n >= FIRST_OPERAND)
            .collect()
    }

    fn visited(e: &E) -> Vec<usize> {
        let mut found = Vec::new();
        for_each(e, |h| found.push(h.index()));
        found
    }

    /// Every variant of naga's `Expression`, with each operand that may be
    /// left out present (and, for the image operations, every kind of
    /// level and query), each operand a distinct handle.
    fn every_expression() -> Vec<E> {
        let mut m = Module::default();
        let span = Span::UNDEFINED;
        let ty = m.types.insert(
            Type {
                name: None,
                inner: TypeInner::Scalar(naga::Scalar::F32),
            },
            span,
        );
        let init = m
            .global_expressions
            .append(E::Literal(Literal::F32(0.0)), span);
        let constant = m.constants.append(
            naga::Constant {
                name: None,
                ty,
                init,
            },
            span,
        );
        let over = m.overrides.append(
            naga::Override {
                name: None,
                id: None,
                ty,
                init: None,
            },
            span,
        );
        let global = m.global_variables.append(
            naga::GlobalVariable {
                name: None,
                space: AddressSpace::Private,
                binding: None,
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            span,
        );
        let mut f = naga::Function::default();
        let local = f.local_variables.append(
            naga::LocalVariable {
                name: None,
                ty,
                init: None,
            },
            span,
        );
        let function = m.functions.append(f, span);
        let mut pool = Arena::new();
        let handles: Vec<Handle<E>> = (0..400)
            .map(|_| pool.append(E::Literal(Literal::U32(0)), span))
            .collect();
        let mut next_index = FIRST_OPERAND;
        let mut n = || {
            next_index += 1;
            handles[next_index - 1]
        };
        let image_sample = |n: &mut dyn FnMut() -> Handle<E>, level| E::ImageSample {
            image: n(),
            sampler: n(),
            gather: None,
            coordinate: n(),
            array_index: Some(n()),
            offset: Some(n()),
            level,
            depth_ref: Some(n()),
            clamp_to_edge: false,
        };
        let mut all = vec![
            E::Literal(Literal::U32(1)),
            E::Constant(constant),
            E::Override(over),
            E::ZeroValue(ty),
            E::FunctionArgument(0),
            E::GlobalVariable(global),
            E::LocalVariable(local),
            E::CallResult(function),
            E::AtomicResult {
                ty,
                comparison: true,
            },
            E::WorkGroupUniformLoadResult { ty },
            E::RayQueryProceedResult,
            E::SubgroupBallotResult,
            E::SubgroupOperationResult { ty },
            E::Compose {
                ty,
                components: vec![n(), n(), n()],
            },
            E::Access {
                base: n(),
                index: n(),
            },
            E::AccessIndex {
                base: n(),
                index: 3,
            },
            E::Splat {
                size: naga::VectorSize::Tri,
                value: n(),
            },
            E::Swizzle {
                size: naga::VectorSize::Bi,
                vector: n(),
                pattern: [naga::SwizzleComponent::Y; 4],
            },
            E::Load { pointer: n() },
        ];
        let levels = [
            SampleLevel::Auto,
            SampleLevel::Zero,
            SampleLevel::Exact(n()),
            SampleLevel::Bias(n()),
            SampleLevel::Gradient { x: n(), y: n() },
        ];
        for level in levels {
            all.push(image_sample(&mut n, level));
        }
        all.push(E::ImageSample {
            image: n(),
            sampler: n(),
            gather: Some(naga::SwizzleComponent::W),
            coordinate: n(),
            array_index: None,
            offset: None,
            level: SampleLevel::Zero,
            depth_ref: None,
            clamp_to_edge: true,
        });
        all.push(E::ImageLoad {
            image: n(),
            coordinate: n(),
            array_index: Some(n()),
            sample: Some(n()),
            level: Some(n()),
        });
        for query in [
            ImageQuery::Size { level: Some(n()) },
            ImageQuery::Size { level: None },
            ImageQuery::NumLevels,
            ImageQuery::NumLayers,
            ImageQuery::NumSamples,
        ] {
            all.push(E::ImageQuery { image: n(), query });
        }
        all.extend([
            E::Unary {
                op: naga::UnaryOperator::Negate,
                expr: n(),
            },
            E::Binary {
                op: naga::BinaryOperator::Subtract,
                left: n(),
                right: n(),
            },
            E::Select {
                condition: n(),
                accept: n(),
                reject: n(),
            },
            E::Derivative {
                axis: naga::DerivativeAxis::Width,
                ctrl: naga::DerivativeControl::Fine,
                expr: n(),
            },
            E::Relational {
                fun: naga::RelationalFunction::Any,
                argument: n(),
            },
            E::Math {
                fun: naga::MathFunction::ExtractBits,
                arg: n(),
                arg1: Some(n()),
                arg2: Some(n()),
                arg3: Some(n()),
            },
            E::Math {
                fun: naga::MathFunction::Abs,
                arg: n(),
                arg1: None,
                arg2: None,
                arg3: None,
            },
            E::As {
                expr: n(),
                kind: naga::ScalarKind::Uint,
                convert: Some(4),
            },
            E::ArrayLength(n()),
            E::RayQueryVertexPositions {
                query: n(),
                committed: false,
            },
            E::RayQueryGetIntersection {
                query: n(),
                committed: true,
            },
            E::CooperativeLoad {
                columns: naga::CooperativeSize::Eight,
                rows: naga::CooperativeSize::Sixteen,
                role: naga::CooperativeRole::C,
                data: naga::CooperativeData {
                    pointer: n(),
                    stride: n(),
                    row_major: true,
                },
            },
            E::CooperativeMultiplyAdd {
                a: n(),
                b: n(),
                c: n(),
            },
        ]);
        all
    }

    #[test]
    fn the_test_expressions_cover_every_variant() {
        let kinds: std::collections::HashSet<_> = every_expression()
            .iter()
            .map(std::mem::discriminant)
            .collect();
        // naga 30's `Expression` has 34 variants; a new one fails to
        // compile in `visit_operands!` and belongs here too.
        assert_eq!(kinds.len(), 34);
    }

    #[test]
    fn every_operand_is_visited_in_field_order() {
        let mut operands = 0;
        for e in every_expression() {
            let printed = printed_operands(&e);
            assert_eq!(visited(&e), printed, "{e:?}");
            operands += printed.len();
        }
        // The printed handles are the operands, not an empty match.
        assert!(operands > 60, "{operands}");
    }

    #[test]
    fn every_operand_can_be_replaced() {
        for mut e in every_expression() {
            let before = visited(&e);
            let mut pool = Arena::new();
            let handles: Vec<Handle<E>> = (0..800)
                .map(|_| pool.append(E::Literal(Literal::U32(0)), Span::UNDEFINED))
                .collect();
            for_each_mut(&mut e, |h| *h = handles[h.index() + 300]);
            let want: Vec<usize> = before.iter().map(|i| i + 300).collect();
            assert_eq!(printed_operands(&e), want, "{e:?}");
            assert_eq!(visited(&e), want, "{e:?}");
        }
    }
}
