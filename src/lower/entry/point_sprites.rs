//! Point sprites: Metal's `[[point_size]]` and `[[point_coord]]` (MSL
//! §5.2.3.3, §5.2.3.4) on WebGPU, whose points are one pixel.
//!
//! A vertex function writing `[[point_size]]` gets a second entry point,
//! `NAME_point_sprite`, that draws each point as a square of two triangles:
//! vertex `v` of a triangle list is corner `v % 6` of point `v / 6`, the
//! function's body runs with `[[vertex_id]]` the point's index, and the
//! corner moves the returned `[[position]]` by `corner × size / viewport ×
//! w` in clip space: after the perspective divide, `size` pixels across,
//! centred on the point. The viewport's size comes from a uniform the host
//! fills (reflection's `pointSprite`). `[[point_coord]]` is a varying that
//! entry point writes: the corner in [0, 1]², (0, 0) at the top-left, as
//! Metal's point coordinates (and Vulkan's, and OpenGL's default) are.
//!
//! Vertex buffers step per vertex, so a `[[stage_in]]` would be read per
//! corner: such a function keeps its plain entry point only, with the
//! point size dropped (W0401).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Local;
use crate::lower::entry::compute::KernelParam;
use crate::lower::entry::stages::Interp;
use crate::lower::stdlib::simd::bin;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{FunctionReflection, PointSprite, Varying, WgslBinding, POINT_COORD_VARYING};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Binding, BuiltIn, Expression, Handle, Literal};

/// Vertices per point: two triangles.
pub const VERTICES_PER_POINT: u32 = 6;

/// `@binding` (in `@group(0)`) of the viewport uniform of point-sprite
/// entry points: the first synthetic binding, which only kernels' dispatch
/// uniform shares, never in one entry point.
pub const POINT_SPRITE_VIEWPORT_BINDING: u32 = crate::lower::DISPATCH_BINDING;

/// The largest point size, in pixels: Apple GPUs' (Metal feature set
/// tables), to which Metal clamps `[[point_size]]`.
pub const MAX_POINT_SIZE: f32 = 511.0;

/// Corner `c` of a point's two triangles is at x = bit `c` of this mask
/// (0 left, 1 right)...
const CORNER_X_BITS: u32 = 0b11_0010;
/// ... and y = bit `c` of this one (0 bottom, 1 top, in clip space): the
/// corners (0,0) (1,0) (0,1), (0,1) (1,0) (1,1).
const CORNER_Y_BITS: u32 = 0b10_1100;

/// The state of a point-sprite entry point being lowered (in the entry
/// context): what its prologue computed, for the body and `return`s.
#[derive(Clone, Debug, Default)]
pub(in crate::lower) struct SpriteCtx {
    /// The WGSL entry point's name.
    pub entry_name: String,
    /// The point's index (`vertex_index / 6`), a `u32`.
    point: Option<Handle<Expression>>,
    /// The corner in clip-space units: (±1, ±1).
    corner: Option<Handle<Expression>>,
    /// The corner as `[[point_coord]]`: (0, 0) top-left, (1, 1) bottom-right.
    coord: Option<Handle<Expression>>,
    /// The viewport's size in pixels, loaded from the uniform.
    viewport: Option<Handle<Expression>>,
}

/// The `[[point_size]]` attribute of a struct's members, if one has it.
fn point_size_attribute(decl: &ast::StructDecl) -> Option<&ast::Attribute> {
    decl.members
        .iter()
        .flat_map(|m| &m.attributes)
        .find(|a| a.name == "point_size")
}

/// Whether a fragment function's parameter or `[[stage_in]]` member is
/// `[[point_coord]]`.
fn has_point_coord(attrs: &[ast::Attribute]) -> bool {
    attrs.iter().any(|a| a.name == "point_coord")
}

/// How `[[point_coord]]` is interpolated: linearly, as the corner of a
/// square all of whose corners share one w (so that is exact).
pub(in crate::lower) fn point_coord_interpolation() -> Interp {
    use naga::{Interpolation as I, Sampling as S};
    (I::Linear, Some(S::Center), "linear".to_string())
}

/// A fragment function's `[[point_coord]]` argument, which is a `float2`.
pub(in crate::lower) fn point_coord_param<'f>(
    p: &'f ast::Param,
    ty: &Type,
) -> Result<KernelParam<'f>> {
    match ty {
        Type::Vector(Scalar::Float, 2) => Ok(KernelParam::PointCoord {
            param: p,
            ty: ty.clone(),
        }),
        _ => Err(Error::coded(
            Code::EntryPointSignature,
            p.ty.span,
            "`[[point_coord]]` argument must be of type `float2`",
        )),
    }
}

impl Lowerer<'_, '_> {
    /// The struct declaration a vertex function returns, if it returns one
    /// declared in this file.
    fn returned_struct(&self, f: &ast::FunctionDecl) -> Option<&ast::StructDecl> {
        let Ok(Type::Struct(id)) = self.program.resolve_type(&f.ret) else {
            return None;
        };
        let name = self.program.struct_name(id);
        self.tu.items.iter().find_map(|i| match i {
            ast::Item::Struct(s) if s.name.name == name => Some(s),
            _ => None,
        })
    }

    /// Adds the point-sprite entry point of vertex function `f` (already
    /// lowered, with `refl` its reflection) if `f` writes `[[point_size]]`.
    /// With a `[[stage_in]]` it gets none: W0401.
    pub(in crate::lower) fn point_sprite_entry(
        &mut self,
        f: &ast::FunctionDecl,
        refl: &mut FunctionReflection,
    ) -> Result<()> {
        let Some(attr) = self.returned_struct(f).and_then(point_size_attribute) else {
            return Ok(());
        };
        let attr_span = attr.span;
        let stage_in = f
            .params
            .iter()
            .find(|p| p.attributes.iter().any(|a| a.name == "stage_in"));
        if let Some(p) = stage_in {
            self.global.warnings.push(
                Error::coded(
                    Code::AttributeDropped,
                    attr_span,
                    "`[[point_size]]` of a vertex function with a `[[stage_in]]` was dropped: \
                     WebGPU points are one pixel, and its point-sprite entry point would read \
                     the vertex attributes once per corner, not per point",
                )
                .note(format!(
                    "`{}` here: read the points from a `[[buffer(n)]]` indexed by `[[vertex_id]]` \
                     to get a point-sprite entry point",
                    p.name.as_ref().map_or("[[stage_in]]", |n| n.name.as_str())
                )),
            );
            return Ok(());
        }
        let entry_name = self.sprite_entry_name(&refl.wgsl_entry_point);
        // The same body again: its warnings were given once already.
        let warnings = self.global.warnings.len();
        let sprite = SpriteCtx {
            entry_name: entry_name.clone(),
            ..Default::default()
        };
        let lowered = self.with_entry(f, crate::lower::ctx::entry::EntryStage::Vertex, |l| {
            l.entry.point_sprite = Some(sprite.clone());
            l.stage_function(f, ast::Stage::Vertex)
        });
        self.global.warnings.truncate(warnings);
        lowered?;
        let point_coord_location = self
            .varying_slots(POINT_COORD_VARYING)
            .first()
            .map(|s| s.location);
        refl.point_sprite = Some(PointSprite {
            entry_point: entry_name,
            primitive: "point".into(),
            topology: "triangle-list".into(),
            vertices_per_point: VERTICES_PER_POINT,
            viewport_binding: WgslBinding {
                group: 0,
                binding: POINT_SPRITE_VIEWPORT_BINDING,
            },
            max_point_size: MAX_POINT_SIZE,
            point_coord_location,
        });
        Ok(())
    }

    /// `NAME_point_sprite`, with `_` added until no function of the
    /// library has that name.
    fn sprite_entry_name(&self, name: &str) -> String {
        let mut wanted = format!("{name}_point_sprite");
        let taken = |n: &str| {
            self.tu.items.iter().any(|i| match i {
                ast::Item::Function(g) => g.name.name == n,
                _ => false,
            })
        };
        while taken(&wanted) {
            wanted.push('_');
        }
        wanted
    }

    /// The entry point's name: the sprite's, or the MSL function's.
    pub(in crate::lower) fn stage_entry_name(&self, f: &ast::FunctionDecl) -> String {
        self.entry
            .point_sprite
            .as_ref()
            .map_or_else(|| f.name.name.clone(), |s| s.entry_name.clone())
    }

    /// Whether a fragment function of the library reads `[[point_coord]]`
    /// (the link table then gives it a location).
    pub(in crate::lower) fn reads_point_coord(&self) -> bool {
        self.tu.items.iter().any(|i| match i {
            ast::Item::Function(f) if f.stage.map(|s| s.0) == Some(ast::Stage::Fragment) => f
                .params
                .iter()
                .any(|p| has_point_coord(&p.attributes) || self.has_point_coord_member(&p.ty)),
            _ => false,
        })
    }

    /// Whether `ty` names a struct of this file with a `[[point_coord]]`
    /// member (a fragment function's `[[stage_in]]`).
    fn has_point_coord_member(&self, ty: &ast::TypeSpec) -> bool {
        let Ok(Type::Struct(id)) = self.program.resolve_type(ty) else {
            return false;
        };
        let name = self.program.struct_name(id);
        self.tu.items.iter().any(|i| {
            matches!(i, ast::Item::Struct(s) if s.name.name == name
                && s.members.iter().any(|m| has_point_coord(&m.attributes)))
        })
    }

    /// The point-sprite prologue: `@builtin(vertex_index)`, the point it
    /// belongs to, its corner and the viewport size.
    pub(in crate::lower) fn sprite_prologue(&mut self, fx: &mut FnCtx, span: Span) -> Result<()> {
        let u32_ty = self.naga_type(&Type::UINT, span)?;
        let i = fx.function.arguments.len() as u32;
        fx.function.arguments.push(naga::FunctionArgument {
            name: Some("metal_sprite_vertex".into()),
            ty: u32_ty,
            binding: Some(Binding::BuiltIn(BuiltIn::VertexIndex)),
        });
        let vertex = fx.add(Expression::FunctionArgument(i), span);
        let six = fx.add(Expression::Literal(Literal::U32(VERTICES_PER_POINT)), span);
        let point = bin(fx, Bo::Divide, vertex, six, span);
        let corner_index = bin(fx, Bo::Modulo, vertex, six, span);
        let bit = |fx: &mut FnCtx, mask: u32| {
            let mask = fx.add(Expression::Literal(Literal::U32(mask)), span);
            let one = fx.add(Expression::Literal(Literal::U32(1)), span);
            let shifted = bin(fx, Bo::ShiftRight, mask, corner_index, span);
            let b = bin(fx, Bo::And, shifted, one, span);
            fx.add(
                Expression::As {
                    expr: b,
                    kind: naga::ScalarKind::Float,
                    convert: Some(4),
                },
                span,
            )
        };
        let (x, y) = (bit(fx, CORNER_X_BITS), bit(fx, CORNER_Y_BITS));
        let f32_lit = |fx: &mut FnCtx, v: f32| fx.add(Expression::Literal(Literal::F32(v)), span);
        let (one, two) = (f32_lit(fx, 1.0), f32_lit(fx, 2.0));
        let signed = |fx: &mut FnCtx, v| {
            let doubled = bin(fx, Bo::Multiply, v, two, span);
            bin(fx, Bo::Subtract, doubled, one, span)
        };
        let (cx, cy) = (signed(fx, x), signed(fx, y));
        let vec2 = self.naga_type(&Type::Vector(Scalar::Float, 2), span)?;
        let corner = fx.add(
            Expression::Compose {
                ty: vec2,
                components: vec![cx, cy],
            },
            span,
        );
        // Point coordinates grow downwards: the top corner (y = 1) is 0.
        let down = bin(fx, Bo::Subtract, one, y, span);
        let coord = fx.add(
            Expression::Compose {
                ty: vec2,
                components: vec![x, down],
            },
            span,
        );
        let global = self.viewport_global(vec2);
        let pointer = fx.add(Expression::GlobalVariable(global), span);
        let viewport = fx.add(Expression::Load { pointer }, span);
        let sprite = self
            .entry
            .point_sprite
            .as_mut()
            .expect("a point-sprite entry point");
        sprite.point = Some(point);
        sprite.corner = Some(corner);
        sprite.coord = Some(coord);
        sprite.viewport = Some(viewport);
        Ok(())
    }

    /// The viewport uniform, `vec2<f32>` at `@group(0)
    /// @binding(POINT_SPRITE_VIEWPORT_BINDING)`.
    fn viewport_global(&mut self, vec2: Handle<naga::Type>) -> Handle<naga::GlobalVariable> {
        if let Some(g) = self.global.point_sprite_viewport {
            return g;
        }
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some("metal_point_sprite_viewport".into()),
                space: naga::AddressSpace::Uniform,
                binding: Some(naga::ResourceBinding {
                    group: 0,
                    binding: POINT_SPRITE_VIEWPORT_BINDING,
                }),
                ty: vec2,
                init: None,
                memory_decorations: Default::default(),
            },
            naga::Span::UNDEFINED,
        );
        self.global.point_sprite_viewport = Some(g);
        g
    }

    /// In a point-sprite entry point: the viewport uniform's binding.
    pub(in crate::lower) fn sprite_viewport_binding(&self) -> Option<WgslBinding> {
        self.entry.point_sprite.as_ref().map(|_| WgslBinding {
            group: 0,
            binding: POINT_SPRITE_VIEWPORT_BINDING,
        })
    }

    /// In a point-sprite entry point, `[[vertex_id]]`: the point's index.
    pub(in crate::lower) fn sprite_point(&self) -> Option<Handle<Expression>> {
        self.entry.point_sprite.as_ref().and_then(|s| s.point)
    }

    /// In a point-sprite entry point: the corner's position, `position`
    /// moved by `corner × clamp(size, 1, max) / viewport × w` in clip space.
    pub(in crate::lower) fn sprite_position(
        &mut self,
        fx: &mut FnCtx,
        position: Handle<Expression>,
        size: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let (corner, viewport) = match &self.entry.point_sprite {
            Some(SpriteCtx {
                corner: Some(c),
                viewport: Some(v),
                ..
            }) => (*c, *v),
            _ => return Err(internal(span)),
        };
        let lo = fx.add(Expression::Literal(Literal::F32(1.0)), span);
        let hi = fx.add(Expression::Literal(Literal::F32(MAX_POINT_SIZE)), span);
        let size = fx.add(
            Expression::Math {
                fun: naga::MathFunction::Clamp,
                arg: size,
                arg1: Some(lo),
                arg2: Some(hi),
                arg3: None,
            },
            span,
        );
        let w = fx.add(
            Expression::AccessIndex {
                base: position,
                index: 3,
            },
            span,
        );
        let scaled = bin(fx, Bo::Multiply, corner, size, span);
        let per_pixel = bin(fx, Bo::Divide, scaled, viewport, span);
        let offset = bin(fx, Bo::Multiply, per_pixel, w, span);
        let xy = fx.add(
            Expression::Swizzle {
                size: naga::VectorSize::Bi,
                vector: position,
                pattern: [
                    naga::SwizzleComponent::X,
                    naga::SwizzleComponent::Y,
                    naga::SwizzleComponent::X,
                    naga::SwizzleComponent::X,
                ],
            },
            span,
        );
        let moved = bin(fx, Bo::Add, xy, offset, span);
        let z = fx.add(
            Expression::AccessIndex {
                base: position,
                index: 2,
            },
            span,
        );
        let vec4 = self.naga_type(&Type::Vector(Scalar::Float, 4), span)?;
        Ok(fx.add(
            Expression::Compose {
                ty: vec4,
                components: vec![moved, z, w],
            },
            span,
        ))
    }

    /// In a point-sprite entry point: the corner's `[[point_coord]]`.
    pub(in crate::lower) fn sprite_coord(&self, span: Span) -> Result<Handle<Expression>> {
        self.entry
            .point_sprite
            .as_ref()
            .and_then(|s| s.coord)
            .ok_or_else(|| internal(span))
    }

    /// The `[[point_coord]]` varying's slot, its binding and reflection.
    pub(in crate::lower) fn point_coord_binding(
        &mut self,
        span: Span,
    ) -> Result<(Binding, Varying)> {
        let slot = self
            .varying_slots(POINT_COORD_VARYING)
            .into_iter()
            .next()
            .ok_or_else(|| internal(span))?;
        let varying = Varying {
            name: POINT_COORD_VARYING.into(),
            location: slot.location,
            data_type: "float2".into(),
            interpolation: slot.text.clone(),
        };
        let binding = Binding::Location {
            location: slot.location,
            interpolation: Some(slot.interpolation),
            sampling: slot.sampling,
            blend_src: None,
            per_primitive: false,
        };
        Ok((binding, varying))
    }

    /// A fragment `[[stage_in]]` member `[[point_size]]` (the vertex
    /// output struct, reused): no fragment input, so it reads as 0 (W0401).
    pub(in crate::lower) fn point_size_input(
        &mut self,
        fx: &mut FnCtx,
        m: &ast::Member,
        ty: &Type,
    ) -> Result<Handle<Expression>> {
        let span = m
            .attributes
            .iter()
            .find(|a| a.name == "point_size")
            .map_or(m.name.span, |a| a.span);
        self.global.warnings.push(Error::coded(
            Code::AttributeDropped,
            span,
            format!("`[[point_size]]` is not a fragment input: `{}` reads as 0 in the fragment function", m.name.name),
        ));
        let th = self.naga_type(ty, m.ty.span)?;
        Ok(fx.add(Expression::ZeroValue(th), m.ty.span))
    }

    /// A fragment `[[stage_in]]` member `float2 c [[point_coord]]`: its
    /// binding and type.
    pub(in crate::lower) fn point_coord_input(
        &mut self,
        m: &ast::Member,
        ty: &Type,
        varyings: &mut Vec<Varying>,
    ) -> Result<(Binding, Type)> {
        if *ty != Type::Vector(Scalar::Float, 2) {
            return Err(Error::coded(
                Code::EntryPointSignature,
                m.ty.span,
                "`[[point_coord]]` must be of type `float2`",
            ));
        }
        let (binding, varying) = self.point_coord_binding(m.name.span)?;
        varyings.push(varying);
        Ok((binding, ty.clone()))
    }

    /// A fragment function's `float2 c [[point_coord]]` argument: the
    /// varying point-sprite entry points write.
    pub(in crate::lower) fn bind_point_coord(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        varyings: &mut Vec<Varying>,
    ) -> Result<()> {
        let ty = Type::Vector(Scalar::Float, 2);
        let (binding, varying) = self.point_coord_binding(param.span)?;
        varyings.push(varying);
        let th = self.naga_type(&ty, param.span)?;
        let i = fx.function.arguments.len() as u32;
        fx.function.arguments.push(naga::FunctionArgument {
            name: Some(
                param
                    .name
                    .as_ref()
                    .map_or_else(|| "point_coord".into(), |n| n.name.clone()),
            ),
            ty: th,
            binding: Some(binding),
        });
        let value = fx.add(Expression::FunctionArgument(i), param.span);
        let var = fx.local(
            param.name.as_ref().map_or("_", |n| n.name.as_str()),
            th,
            param.span,
        );
        let pointer = fx.add(Expression::LocalVariable(var), param.span);
        fx.push(naga::Statement::Store { pointer, value }, param.span);
        if let Some(n) = &param.name {
            fx.declare(
                &n.name,
                Local::Var {
                    var,
                    ty,
                    is_const: false,
                },
            );
        }
        Ok(())
    }
}

/// Puts the point-sprite entry points after all others: the first
/// entry points are then those of `functions`, in order, as the library
/// expects (`Library::module`).
pub(in crate::lower) fn move_sprites_last(
    module: &mut naga::Module,
    functions: &[FunctionReflection],
) {
    let is_sprite = |e: &naga::EntryPoint| {
        functions.iter().any(|f| {
            f.point_sprite
                .as_ref()
                .is_some_and(|s| s.entry_point == e.name)
        })
    };
    let (sprites, others): (Vec<_>, Vec<_>) = std::mem::take(&mut module.entry_points)
        .into_iter()
        .partition(is_sprite);
    module.entry_points = others;
    module.entry_points.extend(sprites);
}

fn internal(span: Span) -> Error {
    Error::coded(
        Code::Internal,
        span,
        "internal error: point-sprite state missing",
    )
}
