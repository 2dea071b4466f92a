//! Texture shapes WGSL has no binding of, lowered to 2-D arrays.
//!
//! Metal: `texture1d_array<T, A>` is an array of rows addressed by one
//! coordinate (`read(uint x, uint array)`, `sample(s, float x, uint array)`);
//! a cube texture may be read and written texel by texel, a face at a time
//! (`read(uint2 coord, uint face[, uint lod])`, on cube arrays
//! `read(uint2 coord, uint face, uint cube[, uint lod])`).
//!
//! WGSL: there is no 1-D array texture, and `textureLoad`/`textureStore`
//! take no cube textures.
//!
//! Mapping: a `texture1d_array` is a `texture_2d_array` of height 1, its
//! coordinate `x` the texel `(x, 0)` (or, sampled, the point `(x, 0.5)`,
//! the centre of the only row: every filter and address mode gives that
//! row's texels there, as they would at `x` of a 1-D texture). A cube
//! texture that is not sampled (`access::read`, `write`, `read_write`) is a
//! `texture_2d_array` of its faces, as WebGPU lets a cube texture be viewed:
//! face `f` of cube `c` is layer `6 * c + f`, in the order Metal and WebGPU
//! both number faces (+X, -X, +Y, -Y, +Z, -Z). Which binding a type gets is
//! `lower::texture_types::dimension`; reflection keeps Metal's texture type
//! (`type1DArray`, `typeCube`) beside the view dimension (`2d-array`).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::texture_types::cube_as_layers;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Texture, TextureShape, Type};
use naga::{Expression, Handle};

/// Faces of a cube: layers of the 2-D array a cube array is bound as.
const FACES: u32 = 6;

impl Lowerer<'_, '_> {
    /// The coordinate and array layer a texel `read` or `write` addresses,
    /// from the arguments that follow the value (`args` starts at the
    /// coordinate): `coord[, array]`, or for a cube bound as layers
    /// `coord, face[, cube]`. What is left of `args` is the level (or the
    /// sample index).
    pub(in crate::lower) fn texel_address<'e>(
        &mut self,
        fx: &mut FnCtx,
        t: &Texture,
        args: &mut std::slice::Iter<'e, Expr>,
        what: &str,
        span: Span,
    ) -> Result<(Handle<Expression>, Option<Handle<Expression>>)> {
        let mut next = |needed: &str| {
            args.next().ok_or_else(|| {
                Error::coded(
                    Code::NoMatchingOverload,
                    span,
                    format!("`{what}` on `{}` needs {needed}", t.shape.name()),
                )
            })
        };
        let coord = next("a coordinate")?;
        if cube_as_layers(t) {
            let coordinate = self.integer_coordinate(fx, coord, 2)?;
            let face = next("the face (0 to 5) after the coordinate")?;
            let cube = match t.shape {
                TextureShape::CubeArray | TextureShape::DepthCubeArray => {
                    Some(next("the face and the cube's index in the array")?)
                }
                _ => None,
            };
            let layer = self.face_layer(fx, face, cube, span)?;
            return Ok((coordinate, Some(layer)));
        }
        let coordinate = self.integer_coordinate(fx, coord, t.shape.coordinates())?;
        let coordinate = match t.shape {
            TextureShape::D1Array => self.row_texel(fx, coordinate, span)?,
            _ => coordinate,
        };
        let array_index = match t.shape.is_array() {
            true => Some(self.scalar_arg(fx, next("the array index")?, Scalar::UInt)?),
            false => None,
        };
        Ok((coordinate, array_index))
    }

    /// Texel `x` of a `texture1d_array`'s rows: `(x, 0)` of the 2-D array.
    fn row_texel(
        &mut self,
        fx: &mut FnCtx,
        x: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let zero = self.u32_lit(fx, 0, span);
        self.compose2(fx, Scalar::UInt, x, zero, span)
    }

    /// The point `x` (normalised) of a `texture1d_array`'s rows: `(x, 0.5)`
    /// of the 2-D array, the centre of its only row.
    pub(in crate::lower) fn row_point(
        &mut self,
        fx: &mut FnCtx,
        x: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let centre = fx.add(Expression::Literal(naga::Literal::F32(0.5)), span);
        self.compose2(fx, Scalar::Float, x, centre, span)
    }

    fn compose2(
        &mut self,
        fx: &mut FnCtx,
        scalar: Scalar,
        x: Handle<Expression>,
        y: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let ty = self.naga_type(&Type::vector(scalar, 2), span)?;
        Ok(fx.add(
            Expression::Compose {
                ty,
                components: vec![x, y],
            },
            span,
        ))
    }

    /// The layer of face `face` of cube `cube` (of the only cube when
    /// `None`): `6 * cube + face`.
    fn face_layer(
        &mut self,
        fx: &mut FnCtx,
        face: &Expr,
        cube: Option<&Expr>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let face = self.scalar_arg(fx, face, Scalar::UInt)?;
        let Some(cube) = cube else {
            return Ok(face);
        };
        let cube = self.scalar_arg(fx, cube, Scalar::UInt)?;
        let six = self.u32_lit(fx, FACES, span);
        let first = fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::Multiply,
                left: cube,
                right: six,
            },
            span,
        );
        Ok(fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::Add,
                left: first,
                right: face,
            },
            span,
        ))
    }

    /// `get_array_size()` of a cube array bound as layers: the number of
    /// cubes, a sixth of the layers.
    pub(in crate::lower) fn cubes_of_layers(
        &mut self,
        fx: &mut FnCtx,
        layers: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let six = self.u32_lit(fx, FACES, span);
        fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::Divide,
                left: layers,
                right: six,
            },
            span,
        )
    }
}
