//! The texture member functions: sampling, gathering, reading, writing and
//! queries (MSL §6.12 → naga `ImageSample`/`ImageLoad`/`ImageStore`/`ImageQuery`).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::Builtin;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Texture, TextureAccess as A, Type};
use naga::{Expression, Handle, ImageQuery, SampleLevel, Statement};

impl Lowerer<'_, '_> {
    /// `sample(s, coord[, array][, options])`, `sample_compare(s, coord[, array], ref[, level])`.
    pub(in crate::lower) fn texture_sample(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: Texture,
        args: &[Expr],
        compare: bool,
        span: Span,
    ) -> Result<Value> {
        self.check_access(&t, &[A::Sample], "sample", span)?;
        if t.shape.is_multisampled() {
            return Err(Error::coded(
                Code::TextureUsage,
                span,
                "multisampled textures cannot be sampled; use `read`",
            ));
        }
        if compare && !t.shape.is_depth() {
            return Err(Error::coded(
                Code::TextureUsage,
                span,
                "`sample_compare` needs a depth texture",
            ));
        }
        // MSL samples integer textures (with nearest filtering); WGSL's
        // `textureSample*` take float and depth textures only.
        if !t.shape.is_depth() && !matches!(t.scalar, Scalar::Float | Scalar::Half) {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                format!(
                    "sampling an integer texture (`{}`) has no WebGPU equivalent: WGSL samples only float and depth textures, and reads integer ones with `textureLoad`",
                    self.program.display(&Type::Texture(t))
                ),
            )
            .note("a port reads the texel the sample would filter to with `read` (Metal filters integer textures with `filter::nearest` only): `t.read(uint2(coord * float2(t.get_width(), t.get_height())))`, applying the sampler's address mode itself"));
        }
        let (mut plain, mut options) = self.sample_options(args)?;
        let arity = 2 + usize::from(t.shape.is_array()) + usize::from(compare);
        self.typed_gradient(fx, &mut plain, &mut options)?;
        self.typed_offset(fx, &mut plain, &mut options, arity)?;
        if plain.len() != arity {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "`{}` on `{}` takes {arity} arguments before its options, {} given",
                    if compare { "sample_compare" } else { "sample" },
                    t.shape.name(),
                    plain.len()
                ),
            ));
        }
        let (sampler, pixel) = self.sampler_arg(fx, plain[0], compare)?;
        let n = t.shape.coordinates();
        let mut coordinate = self.float_coordinate(fx, plain[1], n)?;
        if pixel {
            coordinate = self.normalize_pixel_coordinate(fx, image, &t, coordinate, span)?;
        }
        if t.shape == crate::types::TextureShape::D1Array {
            coordinate = self.row_point(fx, coordinate, span)?;
        }
        let array_index = match t.shape.is_array() {
            true => Some(self.scalar_arg(fx, plain[2], Scalar::UInt)?),
            false => None,
        };
        let depth_ref = match compare {
            true => Some(self.scalar_arg(fx, plain[arity - 1], Scalar::Float)?),
            false => None,
        };
        let level = match self.sample_level(fx, &t, &options, compare, span)? {
            // Fragment functions sample with the implicit LOD (and may bias it).
            SampleLevel::Zero if fx.fragment && options.level.is_none() => SampleLevel::Auto,
            // naga's WGSL writer spells `Zero` as `0.0`, which WGSL rejects
            // as a depth texture's level (`i32`/`u32` only): say `0u`.
            SampleLevel::Zero if t.shape.is_depth() && !compare => {
                SampleLevel::Exact(self.u32_lit(fx, 0, span))
            }
            SampleLevel::Exact(b)
                if fx.fragment && options.bias.is_some() && !compare && !t.shape.is_depth() =>
            {
                SampleLevel::Bias(b)
            }
            other => other,
        };
        let offset = match options.offset {
            Some(o) if t.shape.is_cube() => {
                return Err(Error::coded(
                    Code::TextureUsage,
                    o.span,
                    "cube textures take no texel offset",
                ))
            }
            Some(o) => match self.texel_offset(fx, o, n)? {
                Some(constant) => Some(constant),
                None => {
                    coordinate = self.fold_offset(fx, image, &t, coordinate, o, span)?;
                    None
                }
            },
            None => None,
        };
        let level = match options.min_lod_clamp {
            Some(clamp) if compare => {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    clamp.span,
                    "`min_lod_clamp` on `sample_compare` has no WGSL equivalent (WGSL compares at level 0 or the implicit LOD only)",
                ))
            }
            Some(clamp) => self.clamped_level(fx, (image, &t), coordinate, level, clamp)?,
            None => level,
        };
        let h = fx.add(
            Expression::ImageSample {
                image,
                sampler,
                gather: None,
                coordinate,
                array_index,
                offset,
                level,
                depth_ref,
                clamp_to_edge: false,
            },
            span,
        );
        self.texel(fx, h, &t, t.shape.is_depth(), span)
    }

    /// The LOD of a sample: Metal samples outside fragment functions at LOD 0
    /// unless told otherwise (MSL §6.12); kernels have no implicit LOD.
    fn sample_level(
        &mut self,
        fx: &mut FnCtx,
        t: &Texture,
        o: &crate::lower::stdlib::textures::SampleOptions,
        compare: bool,
        span: Span,
    ) -> Result<SampleLevel> {
        if (o.gradient.is_some() || o.gradient_value.is_some()) && compare {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                "`sample_compare` takes no gradient in WGSL",
            ));
        }
        if let Some(g) = o.gradient_value {
            return self.gradient_value(fx, t, g);
        }
        if let Some((dx, dy)) = o.gradient {
            let n = t.shape.coordinates();
            let x = self.gradient_arg(fx, dx, n)?;
            let y = self.gradient_arg(fx, dy, n)?;
            return Ok(SampleLevel::Gradient { x, y });
        }
        let lod = o.level.or(o.bias);
        match lod {
            None => Ok(SampleLevel::Zero),
            Some(e) if compare => match crate::sema::consteval::eval(self.program, e)
                .ok()
                .and_then(|v| v.as_int().or(Some(0)).filter(|_| is_zero(&v)))
            {
                Some(_) => Ok(SampleLevel::Zero),
                None => Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    e.span,
                    "`sample_compare` in WGSL only samples level 0 outside fragment functions",
                )),
            },
            // naga wants an integer level for depth textures; fractional levels are lost.
            Some(e) if t.shape.is_depth() => {
                Ok(SampleLevel::Exact(self.scalar_arg(fx, e, Scalar::Int)?))
            }
            // A bias outside fragment functions applies to LOD 0.
            Some(e) => Ok(SampleLevel::Exact(self.scalar_arg(fx, e, Scalar::Float)?)),
        }
    }

    /// The derivatives of `g`, a value of a gradient type, for sampling
    /// `t`: its type must be the one for `t`'s shape (`gradientcube` for
    /// cube textures, `gradient3d` for 3-D ones, `gradient2d` otherwise).
    fn gradient_value(&mut self, fx: &mut FnCtx, t: &Texture, g: &Expr) -> Result<SampleLevel> {
        let (h, ty) = self.rvalue(fx, g)?;
        let want = match t.shape.coordinates() {
            _ if t.shape.is_cube() => "gradientcube",
            3 => "gradient3d",
            _ => "gradient2d",
        };
        let Type::Struct(id) = ty else {
            unreachable!("typed_gradient found a gradient type")
        };
        if self.program.gradient_type(id) != Some(want) {
            return Err(Error::coded(
                Code::TypeMismatch,
                g.span,
                format!(
                    "`{}` takes a `{want}` gradient, found `{}`",
                    t.shape.name(),
                    self.program.display(&ty)
                ),
            ));
        }
        let x = fx.add(Expression::AccessIndex { base: h, index: 0 }, g.span);
        let y = fx.add(Expression::AccessIndex { base: h, index: 1 }, g.span);
        Ok(SampleLevel::Gradient { x, y })
    }

    /// An argument of `gradient2d(dPdx, dPdy)` (and `gradient3d`,
    /// `gradientcube`): a `float` vector of `n` lanes, or a scalar, which
    /// converts to one as any argument of a vector parameter does (MSL
    /// §2.13: a scalar converts implicitly to a vector, replicated in each
    /// lane), so `gradient2d(5.0, 8.0)` is `gradient2d(float2(5.0), float2(8.0))`.
    fn gradient_arg(&mut self, fx: &mut FnCtx, e: &Expr, n: u8) -> Result<Handle<Expression>> {
        let ty = self.type_of(fx, e)?;
        if !matches!(ty, Type::Scalar(_)) {
            return self.float_coordinate(fx, e, n);
        }
        let (h, t) = self.rvalue(fx, e)?;
        self.convert(fx, h, &t, &Type::vector(Scalar::Float, n), false, e.span)
    }

    /// `coord::pixel` samplers: divide by the level-0 size.
    fn normalize_pixel_coordinate(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: &Texture,
        coordinate: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let n = t.shape.coordinates();
        let zero = self.u32_lit(fx, 0, span);
        let mut size = fx.add(
            Expression::ImageQuery {
                image,
                query: ImageQuery::Size { level: Some(zero) },
            },
            span,
        );
        if t.shape == crate::types::TextureShape::D1Array {
            // The width of the 2-D array of height 1.
            size = fx.add(
                Expression::AccessIndex {
                    base: size,
                    index: 0,
                },
                span,
            );
        }
        let size = self.convert(
            fx,
            size,
            &Type::vector(Scalar::UInt, n),
            &Type::vector(Scalar::Float, n),
            true,
            span,
        )?;
        Ok(fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::Divide,
                left: coordinate,
                right: size,
            },
            span,
        ))
    }

    /// `gather(s, coord[, array][, offset][, component])`, `gather_compare(s, coord[, array], ref)`.
    pub(in crate::lower) fn texture_gather(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: Texture,
        args: &[Expr],
        compare: bool,
        span: Span,
    ) -> Result<Value> {
        self.check_access(&t, &[A::Sample], "gather from", span)?;
        if !matches!(t.shape.coordinates(), 2 | 3)
            || t.shape == crate::types::TextureShape::D3
            || t.shape.is_multisampled()
        {
            return Err(Error::coded(
                Code::TextureUsage,
                span,
                format!("`gather` is not available on `{}`", t.shape.name()),
            ));
        }
        let (mut plain, mut options) = self.sample_options(args)?;
        let arity = 2 + usize::from(t.shape.is_array()) + usize::from(compare);
        self.typed_offset(fx, &mut plain, &mut options, arity)?;
        if plain.len() != arity {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "`gather` on `{}` takes {arity} arguments before its options, {} given",
                    t.shape.name(),
                    plain.len()
                ),
            ));
        }
        let (sampler, _) = self.sampler_arg(fx, plain[0], compare)?;
        let n = t.shape.coordinates();
        let mut coordinate = self.float_coordinate(fx, plain[1], n)?;
        let array_index = match t.shape.is_array() {
            true => Some(self.scalar_arg(fx, plain[2], Scalar::UInt)?),
            false => None,
        };
        let depth_ref = match compare {
            true => Some(self.scalar_arg(fx, plain[arity - 1], Scalar::Float)?),
            false => None,
        };
        if let Some(e) = options.min_lod_clamp.or(options.level).or(options.bias) {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                e.span,
                "`gather` takes no LOD option (it reads level 0)",
            ));
        }
        let component = options.component.unwrap_or(0);
        if t.shape.is_depth() && component != 0 {
            return Err(Error::coded(
                Code::TextureUsage,
                span,
                "depth textures gather the `x` component only",
            ));
        }
        let offset = match options.offset {
            Some(o) => match self.texel_offset(fx, o, n)? {
                Some(constant) => Some(constant),
                None => {
                    coordinate = self.fold_offset(fx, image, &t, coordinate, o, span)?;
                    None
                }
            },
            None => None,
        };
        let gather = Some(naga::SwizzleComponent::XYZW[component as usize]);
        let h = fx.add(
            Expression::ImageSample {
                image,
                sampler,
                gather,
                coordinate,
                array_index,
                offset,
                level: SampleLevel::Zero,
                depth_ref,
                clamp_to_edge: false,
            },
            span,
        );
        let value = self.texel(fx, h, &t, false, span)?;
        Ok(value)
    }

    /// `read(coord[, array][, lod])`, `read(coord, sample)` for multisampled textures.
    pub(in crate::lower) fn texture_read(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: Texture,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        self.check_access(&t, &[A::Sample, A::Read, A::ReadWrite], "read from", span)?;
        if t.shape.is_cube() && !crate::lower::texture_types::cube_as_layers(&t) {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                "WGSL cannot read a sampled cube texture texel by texel",
            )
            .note(format!(
                "declare it `{}<{}, access::read>` to read it (it is then bound as a 2-D array of its faces), or sample it",
                t.shape.name(),
                t.scalar.name()
            )));
        }
        let mut rest = args.iter();
        let (coordinate, array_index) = self.texel_address(fx, &t, &mut rest, "read", span)?;
        let extra = rest.next();
        if let Some(e) = rest.next() {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                e.span,
                "too many arguments to `read`",
            ));
        }
        // The sample index and the level are `i32`, which WGSL allows as
        // well as `u32`: naga's GLSL writer passes them to `texelFetch`
        // and `textureSize` as they are, and GLSL has only `int` overloads
        // (TESTING.md "Backends", known defect 2).
        let (sample, level) = match (t.shape.is_multisampled(), t.is_storage(), extra) {
            (true, _, Some(e)) => (Some(self.scalar_arg(fx, e, Scalar::Int)?), None),
            (true, _, None) => {
                return Err(Error::coded(
                    Code::NoMatchingOverload,
                    span,
                    "`read` on a multisampled texture needs the sample index",
                ))
            }
            (false, true, Some(e)) if self.is_constant_zero(e) => (None, None),
            (false, true, Some(e)) => {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    e.span,
                    "storage textures have one mip level; `read` takes no level here",
                ))
            }
            (false, true, None) => (None, None),
            (false, false, Some(e)) => (None, Some(self.scalar_arg(fx, e, Scalar::Int)?)),
            (false, false, None) => (
                None,
                Some(fx.add(Expression::Literal(naga::Literal::I32(0)), span)),
            ),
        };
        let h = fx.add(
            Expression::ImageLoad {
                image,
                coordinate,
                array_index,
                sample,
                level,
            },
            span,
        );
        self.texel(fx, h, &t, t.shape.is_depth(), span)
    }

    /// `write(color, coord[, array][, lod])`.
    pub(in crate::lower) fn texture_write(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: Texture,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        self.check_access(&t, &[A::Write, A::ReadWrite], "write to", span)?;
        let [color, _coord, ..] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                "`write` needs a value and a coordinate",
            ));
        };
        let (h, ty) = self.rvalue(fx, color)?;
        let kind = crate::lower::texture_types::sampled_kind(t.scalar);
        let wide = Type::Vector(
            match kind {
                naga::ScalarKind::Float => Scalar::Float,
                naga::ScalarKind::Sint => Scalar::Int,
                _ => Scalar::UInt,
            },
            4,
        );
        if ty.vector_size() != Some(4) && !matches!(ty, Type::Scalar(_)) {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                color.span,
                format!(
                    "`write` takes a 4-component value, found `{}`",
                    self.program.display(&ty)
                ),
            ));
        }
        let value = self.convert(fx, h, &ty, &wide, true, color.span)?;
        let mut rest = args[1..].iter();
        let (coordinate, array_index) = self.texel_address(fx, &t, &mut rest, "write", span)?;
        if let Some(lod) = rest.next() {
            if !self.is_constant_zero(lod) {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    lod.span,
                    "WGSL storage textures have one mip level: `write` takes only level 0",
                ));
            }
        }
        self.push_effect(
            fx,
            Statement::ImageStore {
                image,
                coordinate,
                array_index,
                value,
            },
            None,
            span,
        );
        Ok(Value::Void)
    }

    /// `get_width(lod)`, `get_height(lod)`, `get_depth(lod)`.
    pub(in crate::lower) fn texture_size(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: Texture,
        member: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let method = member.name();
        let n = if t.shape.is_cube() {
            2
        } else {
            t.shape.coordinates()
        };
        // The lanes of WGSL's size: a `texture1d_array` is a 2-D array.
        let n_wgsl = match t.shape {
            crate::types::TextureShape::D1Array => 2,
            _ => n,
        };
        let axis = match member {
            Builtin::TextureGetWidth => 0,
            Builtin::TextureGetHeight if n >= 2 => 1,
            Builtin::TextureGetDepth if n == 3 => 2,
            _ => {
                return Err(Error::coded(
                    Code::UnknownMember,
                    span,
                    format!("`{}` has no `{method}`", t.shape.name()),
                ))
            }
        };
        let level = match (args.first(), t.is_storage() || t.shape.is_multisampled()) {
            // Metal's `get_width(uint lod = 0)` on a write texture: level 0 is
            // the only level WGSL's storage textures have, so it is the query
            // without a level.
            (Some(e), true) if t.is_storage() && self.is_constant_zero(e) => None,
            (Some(e), true) => {
                return Err(Error::coded(
                    Code::TextureUsage,
                    e.span,
                    "this texture has one mip level; the query takes no level",
                ))
            }
            (Some(e), false) => Some(self.scalar_arg(fx, e, Scalar::UInt)?),
            (None, true) => None,
            (None, false) => Some(self.u32_lit(fx, 0, span)),
        };
        let size = fx.add(
            Expression::ImageQuery {
                image,
                query: ImageQuery::Size { level },
            },
            span,
        );
        let h = if n_wgsl == 1 {
            size
        } else {
            fx.add(
                Expression::AccessIndex {
                    base: size,
                    index: axis,
                },
                span,
            )
        };
        Ok(Value::Rv(h, Type::UINT))
    }

    /// `get_num_mip_levels()`, `get_array_size()`, `get_num_samples()`.
    pub(in crate::lower) fn texture_query(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: Texture,
        member: Builtin,
        span: Span,
    ) -> Result<Value> {
        let method = member.name();
        let query = match member {
            Builtin::TextureGetNumMipLevels if t.is_storage() => {
                return Ok(Value::Rv(self.u32_lit(fx, 1, span), Type::UINT))
            }
            Builtin::TextureGetNumMipLevels if !t.shape.is_multisampled() => ImageQuery::NumLevels,
            Builtin::TextureGetArraySize if t.shape.is_array() => ImageQuery::NumLayers,
            Builtin::TextureGetNumSamples if t.shape.is_multisampled() => ImageQuery::NumSamples,
            _ => {
                return Err(Error::coded(
                    Code::UnknownMember,
                    span,
                    format!("`{}` has no `{method}`", t.shape.name()),
                ))
            }
        };
        let mut h = fx.add(Expression::ImageQuery { image, query }, span);
        if query == ImageQuery::NumLayers && crate::lower::texture_types::cube_as_layers(&t) {
            h = self.cubes_of_layers(fx, h, span);
        }
        Ok(Value::Rv(h, Type::UINT))
    }

    /// Whether `e` is a compile-time zero: the only mip level WGSL's storage
    /// textures have, which Metal code often names explicitly.
    fn is_constant_zero(&self, e: &Expr) -> bool {
        crate::sema::consteval::eval(self.program, e)
            .ok()
            .is_some_and(|v| is_zero(&v))
    }
}

fn is_zero(v: &crate::sema::consteval::ConstValue) -> bool {
    use crate::sema::consteval::ConstValue;
    matches!(v, ConstValue::Int(0, _)) || matches!(v, ConstValue::Float(f, _) if *f == 0.0)
}
