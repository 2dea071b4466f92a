//! Sample options WGSL has no argument for: `min_lod_clamp` and texel
//! offsets that are not constant (MSL §6.12.3).
//!
//! Metal: `sample(s, coord, min_lod_clamp(c))` (alone or after `bias(b)` or
//! `gradient2d(dx, dy)`) samples at the LOD the sample would have, raised
//! to `c` where it is lower; the offset of `sample(s, coord, offset)` and
//! `gather(s, coord, offset)` may be any `int2`/`int3` value.
//!
//! WGSL: `textureSample*` take no LOD clamp, and their `offset` must be a
//! const-expression.
//!
//! Mapping, `min_lod_clamp(c)`: the LOD is made explicit and clamped,
//! `textureSampleLevel(t, s, coord, max(lod, c))`. Outside fragment
//! functions the LOD is the one Metal samples at: 0, `bias(b)` (on LOD 0,
//! so `b`) or `level(l)`. Where it is implicit (fragment functions) or
//! given by gradients it is computed as WebGPU's sampling rules describe it,
//! `log2(max(|∂(coord × size)/∂x|, |∂(coord × size)/∂y|))` plus the bias,
//! with the level-0 size: a GPU's own LOD may differ from that formula by
//! its approximations (the specifications allow both), and a gradient
//! sample loses its anisotropic filtering, becoming an isotropic sample at
//! that LOD. The other ways (`textureSampleGrad` with gradients scaled up
//! to reach `c`) depend on the same formula, and clamping a sampler's
//! `lodMinClamp` cannot vary per call. Cube textures (whose LOD is taken
//! on the face the direction selects) and depth textures (which WGSL
//! samples at integer levels only) are refused.
//!
//! Mapping, non-constant offsets: the offset is folded into the
//! coordinate, `coord + vec(offset) / vec(size)` with the level-0 size.
//! For level 0 (every sample in a kernel without `level`, `bias` or
//! `gradient`, and every `gather`) this addresses the texels Metal's offset
//! does, with nearest and linear filtering and in every address mode (the
//! offset moves the footprint before the address mode applies, in both),
//! up to the rounding of the added `f32` (exact for power-of-two sizes).
//! Sampled at another level, Metal's offset counts that level's texels, the
//! folded one level 0's: the offset shrinks with the level, `offset >> lod`
//! texels. Constant offsets stay WGSL's `offset` argument.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::stdlib::simd::bin;
use crate::lower::texture_types::dimension;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Texture, Type};
use naga::{Expression, Handle, ImageQuery, MathFunction, SampleLevel};

impl Lowerer<'_, '_> {
    /// The level of a sample with `min_lod_clamp(clamp)`: `level` made
    /// explicit and raised to `clamp` (the IR it adds is located at the
    /// option). `coordinate` is the WGSL one (normalised, a
    /// `texture1d_array`'s row added).
    pub(in crate::lower) fn clamped_level(
        &mut self,
        fx: &mut FnCtx,
        (image, t): (Handle<Expression>, &Texture),
        coordinate: Handle<Expression>,
        level: SampleLevel,
        clamp: &Expr,
    ) -> Result<SampleLevel> {
        let span = clamp.span;
        if t.shape.is_cube() || t.shape.is_depth() {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                clamp.span,
                format!(
                    "`min_lod_clamp` on `{}` has no WGSL equivalent",
                    t.shape.name()
                ),
            )
            .note(if t.shape.is_depth() {
                "WGSL samples depth textures at integer levels only; pass `level(n)`"
            } else {
                "a cube's LOD is taken on the face the direction selects, which WGSL does not expose; pass `level(...)` clamped in the shader"
            }));
        }
        let clamp = self.scalar_arg(fx, clamp, Scalar::Float)?;
        let lod = match level {
            SampleLevel::Zero => fx.add(Expression::Literal(naga::Literal::F32(0.0)), span),
            SampleLevel::Exact(l) => l,
            SampleLevel::Auto => {
                let dx = self.coordinate_derivative(fx, coordinate, naga::DerivativeAxis::X, span);
                let dy = self.coordinate_derivative(fx, coordinate, naga::DerivativeAxis::Y, span);
                self.lod_of_gradients(fx, image, t, dx, dy, span)?
            }
            SampleLevel::Bias(b) => {
                let dx = self.coordinate_derivative(fx, coordinate, naga::DerivativeAxis::X, span);
                let dy = self.coordinate_derivative(fx, coordinate, naga::DerivativeAxis::Y, span);
                let lod = self.lod_of_gradients(fx, image, t, dx, dy, span)?;
                bin(fx, naga::BinaryOperator::Add, lod, b, span)
            }
            SampleLevel::Gradient { x, y } => self.lod_of_gradients(fx, image, t, x, y, span)?,
        };
        Ok(SampleLevel::Exact(math2(
            fx,
            MathFunction::Max,
            lod,
            clamp,
            span,
        )))
    }

    fn coordinate_derivative(
        &mut self,
        fx: &mut FnCtx,
        expr: Handle<Expression>,
        axis: naga::DerivativeAxis,
        span: Span,
    ) -> Handle<Expression> {
        fx.add(
            Expression::Derivative {
                axis,
                ctrl: naga::DerivativeControl::None,
                expr,
            },
            span,
        )
    }

    /// `log2(max(|dx × size|, |dy × size|))`: the LOD of a footprint whose
    /// normalised gradients are `dx` and `dy` (WGSL-shaped: a
    /// `texture1d_array`'s have the row's `y`, which is constant).
    fn lod_of_gradients(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: &Texture,
        dx: Handle<Expression>,
        dy: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let size = self.level0_size(fx, image, t, span)?;
        let lanes = wgsl_lanes(t);
        let x = texel_length(fx, dx, size, lanes, span);
        let y = texel_length(fx, dy, size, lanes, span);
        let rho = math2(fx, MathFunction::Max, x, y, span);
        Ok(math1(fx, MathFunction::Log2, rho, span))
    }

    /// The level-0 size as floats, as many lanes as the WGSL coordinate.
    fn level0_size(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: &Texture,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let zero = self.u32_lit(fx, 0, span);
        let size = fx.add(
            Expression::ImageQuery {
                image,
                query: ImageQuery::Size { level: Some(zero) },
            },
            span,
        );
        let n = wgsl_lanes(t);
        self.convert(
            fx,
            size,
            &Type::vector(Scalar::UInt, n),
            &Type::vector(Scalar::Float, n),
            true,
            span,
        )
    }

    /// `coordinate + vec(offset) / size`: a texel offset that is not
    /// constant, folded into the (normalised, WGSL-shaped) coordinate.
    pub(in crate::lower) fn fold_offset(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: &Texture,
        coordinate: Handle<Expression>,
        offset: &Expr,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let n = t.shape.coordinates();
        if wgsl_lanes(t) != n {
            return Err(Error::coded(
                Code::TextureUsage,
                offset.span,
                format!("`{}` takes no texel offset", t.shape.name()),
            ));
        }
        let (h, ty) = self.rvalue(fx, offset)?;
        if ty.element_scalar().is_none_or(|s| !s.is_integer()) || ty.vector_size() != Some(n) {
            return Err(Error::coded(
                Code::TypeMismatch,
                offset.span,
                format!(
                    "expected a texel offset of type `int{n}`, found `{}`",
                    self.program.display(&ty)
                ),
            ));
        }
        let texels = self.convert(fx, h, &ty, &Type::vector(Scalar::Float, n), true, span)?;
        let size = self.level0_size(fx, image, t, span)?;
        let step = bin(fx, naga::BinaryOperator::Divide, texels, size, span);
        Ok(bin(fx, naga::BinaryOperator::Add, coordinate, step, span))
    }
}

/// The lanes of the WGSL coordinate of `t` (a `texture1d_array`'s is 2).
fn wgsl_lanes(t: &Texture) -> u8 {
    match dimension(t).0 {
        naga::ImageDimension::D1 => 1,
        naga::ImageDimension::D2 => 2,
        naga::ImageDimension::D3 | naga::ImageDimension::Cube => 3,
    }
}

/// `|d × size|`: the length in texels of a normalised gradient `d`.
fn texel_length(
    fx: &mut FnCtx,
    d: Handle<Expression>,
    size: Handle<Expression>,
    lanes: u8,
    span: Span,
) -> Handle<Expression> {
    let texels = bin(fx, naga::BinaryOperator::Multiply, d, size, span);
    let fun = if lanes == 1 {
        MathFunction::Abs
    } else {
        MathFunction::Length
    };
    math1(fx, fun, texels, span)
}

/// `fun(arg)`, a one-argument math function.
pub(in crate::lower) fn math1(
    fx: &mut FnCtx,
    fun: MathFunction,
    arg: Handle<Expression>,
    span: Span,
) -> Handle<Expression> {
    fx.add(
        Expression::Math {
            fun,
            arg,
            arg1: None,
            arg2: None,
            arg3: None,
        },
        span,
    )
}

fn math2(
    fx: &mut FnCtx,
    fun: MathFunction,
    arg: Handle<Expression>,
    arg1: Handle<Expression>,
    span: Span,
) -> Handle<Expression> {
    fx.add(
        Expression::Math {
            fun,
            arg,
            arg1: Some(arg1),
            arg2: None,
            arg3: None,
        },
        span,
    )
}
