//! `get_sample_position(i)` and `get_num_samples()` (MSL §6.10: fragment
//! functions, multisampling).
//!
//! Metal: the render target's sample count and its sample positions, in
//! [0, 1)² of the pixel with the origin at the top-left; without
//! programmable positions, `MTLDevice.getDefaultSamplePositions`' table for
//! 1, 2, 4 and 8 samples.
//!
//! WGSL: no way to ask either. WebGPU renders with 1 or 4 samples, and its
//! 4-sample pattern is the standard one, which is Metal's default.
//!
//! Mapping: the count is the `u32` override
//! [`SAMPLE_COUNT_OVERRIDE`](crate::reflect::SAMPLE_COUNT_OVERRIDE) (1
//! unless the host sets the render pipeline's count), and a position is
//! read from one table of Metal's defaults for 1, 2, 4 and 8 samples, laid
//! end to end so that the `n`-sample pattern starts at `n - 1`. An index
//! past the count (undefined in Metal) wraps within the pattern.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::simd::bin;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, Statement};

/// Metal's default sample positions for 1, 2, 4 and 8 samples, in that
/// order (`getDefaultSamplePositions(sampleCount:)`).
const POSITIONS: [(f32, f32); 15] = [
    (0.5, 0.5),
    (0.75, 0.75),
    (0.25, 0.25),
    (0.375, 0.125),
    (0.875, 0.375),
    (0.125, 0.625),
    (0.625, 0.875),
    (0.5625, 0.3125),
    (0.4375, 0.6875),
    (0.8125, 0.5625),
    (0.3125, 0.1875),
    (0.1875, 0.8125),
    (0.0625, 0.4375),
    (0.6875, 0.9375),
    (0.9375, 0.0625),
];

impl Lowerer<'_, '_> {
    /// `get_num_samples()`: the pipeline's sample count.
    pub(in crate::lower) fn num_samples(
        &mut self,
        fx: &mut FnCtx,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        if let Some(extra) = args.first() {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                extra.span,
                "`get_num_samples` takes no arguments",
            ));
        }
        let count = self.sample_count(fx, span)?;
        Ok(Value::Rv(count, Type::UINT))
    }

    /// `get_sample_position(index)`: the position of sample `index` in the
    /// pixel, from Metal's default pattern for the pipeline's count.
    pub(in crate::lower) fn sample_position(
        &mut self,
        fx: &mut FnCtx,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [arg] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "`get_sample_position` takes one argument (a sample index), {} given",
                    args.len()
                ),
            ));
        };
        let (index, ty) = self.rvalue(fx, arg)?;
        let index = self.convert(fx, index, &ty, &Type::UINT, false, arg.span)?;
        // The pattern of a count past 8 is the 8-sample one.
        let count = self.sample_count(fx, span)?;
        let eight = self.u32_lit(fx, 8, span);
        let count = fx.add(
            Expression::Math {
                fun: naga::MathFunction::Min,
                arg: count,
                arg1: Some(eight),
                arg2: None,
                arg3: None,
            },
            span,
        );
        let one = self.u32_lit(fx, 1, span);
        let first = bin(fx, Bo::Subtract, count, one, span);
        let within = bin(fx, Bo::And, index, first, span);
        let slot = bin(fx, Bo::Add, first, within, span);
        let table = self.sample_position_table(fx, span)?;
        let at = fx.add(
            Expression::Access {
                base: table,
                index: slot,
            },
            span,
        );
        let position = fx.add(Expression::Load { pointer: at }, span);
        Ok(Value::Rv(position, Type::Vector(Scalar::Float, 2)))
    }

    /// A local holding [`POSITIONS`] (WGSL indexes a constant array at a
    /// run-time index only through memory).
    fn sample_position_table(&mut self, fx: &mut FnCtx, span: Span) -> Result<Handle<Expression>> {
        let vec2 = self.naga_type(&Type::Vector(Scalar::Float, 2), span)?;
        let table_ty = self.naga_type(
            &Type::Array(
                Box::new(Type::Vector(Scalar::Float, 2)),
                POSITIONS.len() as u32,
            ),
            span,
        )?;
        let components = POSITIONS
            .iter()
            .map(|&(x, y)| {
                let x = fx.add(Expression::Literal(Literal::F32(x)), span);
                let y = fx.add(Expression::Literal(Literal::F32(y)), span);
                fx.add(
                    Expression::Compose {
                        ty: vec2,
                        components: vec![x, y],
                    },
                    span,
                )
            })
            .collect();
        let value = fx.add(
            Expression::Compose {
                ty: table_ty,
                components,
            },
            span,
        );
        let var = fx.local("metal_sample_positions", table_ty, span);
        let pointer = fx.add(Expression::LocalVariable(var), span);
        fx.push(Statement::Store { pointer, value }, span);
        Ok(pointer)
    }

    /// The value of the module's sample-count override (1 unless the host
    /// sets it).
    fn sample_count(&mut self, fx: &mut FnCtx, span: Span) -> Result<Handle<Expression>> {
        let h = self.named_override(
            crate::reflect::SAMPLE_COUNT_OVERRIDE,
            &Type::UINT,
            Literal::U32(1),
            span,
        )?;
        Ok(fx.add(Expression::Override(h), span))
    }
}
