//! The layer of a SwiftUI effect: the `texture2d<half>` at
//! `[[texture(0)]]`, its `constexpr` sampler, and the intrinsic that
//! `SwiftUI::Layer::sample` calls.

use super::signature::Signature;
use super::{local_name, LAYER_BINDING, LAYER_NAME, LAYER_SAMPLER, LAYER_TEXTURE};
use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::metal::inline_samplers::FIRST_CONSTEXPR_SAMPLER_BINDING;
use crate::lower::{Error, Lowerer, Result};
use crate::preprocess::swiftui::LAYER_SAMPLE;
use crate::reflect::{
    Access, Argument, ArgumentKind, ConstexprSampler, EffectKind, SamplerDescriptor,
    TextureBinding, TextureInfo, WgslBinding,
};
use crate::source_map::Span;
use crate::syntax::ast::{self, Expr};
use crate::types::{Scalar, Texture, TextureAccess, TextureShape, Type};
use naga::{Expression, Handle};

/// The type of the layer texture: what SwiftUI's layers are sampled as.
fn layer_type() -> Type {
    Type::Texture(Texture {
        shape: TextureShape::D2,
        scalar: Scalar::Half,
        access: TextureAccess::Sample,
        format: None,
    })
}

/// The layer's sampler: linear, clamped to the edge, one level.
fn layer_descriptor() -> SamplerDescriptor {
    SamplerDescriptor {
        address_mode_u: "clamp-to-edge".into(),
        address_mode_v: "clamp-to-edge".into(),
        address_mode_w: "clamp-to-edge".into(),
        mag_filter: "linear".into(),
        min_filter: "linear".into(),
        mipmap_filter: "nearest".into(),
        lod_min_clamp: 0.0,
        lod_max_clamp: 0.0,
        compare: None,
        anisotropy_clamp: 1,
        border_color: None,
    }
}

impl Lowerer<'_, '_> {
    /// The reflection of the layer texture argument.
    pub(super) fn layer_argument(&self, f: &ast::FunctionDecl, sig: &Signature) -> Argument {
        let name = match sig.kind {
            EffectKind::LayerEffect => local_name(&f.params[1], 1),
            _ => LAYER_NAME.to_string(),
        };
        let Type::Texture(t) = layer_type() else {
            unreachable!("the layer is a texture")
        };
        use crate::lower::texture_types::{metal_texture_type, view_dimension};
        Argument {
            name,
            kind: ArgumentKind::Texture,
            index: LAYER_TEXTURE,
            access: Access::Read,
            active: true,
            binding: Some(LAYER_BINDING),
            buffer: None,
            threadgroup: None,
            texture: Some(TextureInfo {
                texture_type: metal_texture_type(t.shape).into(),
                data_type: t.scalar.name().into(),
                view_dimension: view_dimension(&t).into(),
                binding_kind: TextureBinding::Sampled,
                sample_type: "float".into(),
                multisampled: false,
                storage_format: None,
            }),
            sampler: None,
            members: Vec::new(),
        }
    }

    /// The layer texture's global (one per module).
    fn layer_texture(&mut self, span: Span) -> Result<Handle<naga::GlobalVariable>> {
        self.resource_global(LAYER_NAME, &layer_type(), LAYER_BINDING, span)
    }

    /// The layer sampler's global (one per module), a `constexpr` sampler
    /// the reflection describes.
    fn layer_sampler(&mut self, span: Span) -> Result<Handle<naga::GlobalVariable>> {
        if let Some((g, _)) = self
            .global
            .constexpr_samplers
            .iter()
            .find(|(_, s)| s.name == LAYER_SAMPLER)
        {
            return Ok(*g);
        }
        let ty = self.naga_type(&Type::Sampler { comparison: false }, span)?;
        let binding = FIRST_CONSTEXPR_SAMPLER_BINDING + self.global.constexpr_samplers.len() as u32;
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(LAYER_SAMPLER.into()),
                space: naga::AddressSpace::Handle,
                binding: Some(naga::ResourceBinding { group: 0, binding }),
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            Self::span(span),
        );
        self.global.constexpr_samplers.push((
            g,
            ConstexprSampler {
                name: LAYER_SAMPLER.into(),
                binding: WgslBinding { group: 0, binding },
                descriptor: layer_descriptor(),
            },
        ));
        Ok(g)
    }

    /// The layer's texel at the pixel of `position` (a `float2`), as
    /// `float4`: the colour a colour effect is given.
    pub(super) fn layer_texel(
        &mut self,
        fx: &mut FnCtx,
        position: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let g = self.layer_texture(span)?;
        let image = fx.add(Expression::GlobalVariable(g), span);
        let coordinate = fx.add(
            Expression::As {
                expr: position,
                kind: naga::ScalarKind::Sint,
                convert: Some(4),
            },
            span,
        );
        let level = fx.add(Expression::Literal(naga::Literal::I32(0)), span);
        Ok(fx.add(
            Expression::ImageLoad {
                image,
                coordinate,
                array_index: None,
                sample: None,
                level: Some(level),
            },
            span,
        ))
    }

    /// The layer sampled at `position` (a `float2` in pixels), as `float4`:
    /// `textureSampleLevel` at `position / size`, level 0 (no derivatives,
    /// so any control flow may do it).
    pub(super) fn layer_sample(
        &mut self,
        fx: &mut FnCtx,
        position: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let texture = self.layer_texture(span)?;
        let sampler = self.layer_sampler(span)?;
        let image = fx.add(Expression::GlobalVariable(texture), span);
        let sampler = fx.add(Expression::GlobalVariable(sampler), span);
        let size = fx.add(
            Expression::ImageQuery {
                image,
                query: naga::ImageQuery::Size { level: None },
            },
            span,
        );
        let size = fx.add(
            Expression::As {
                expr: size,
                kind: naga::ScalarKind::Float,
                convert: Some(4),
            },
            span,
        );
        let coordinate = fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::Divide,
                left: position,
                right: size,
            },
            span,
        );
        Ok(fx.add(
            Expression::ImageSample {
                image,
                sampler,
                gather: None,
                coordinate,
                array_index: None,
                offset: None,
                level: naga::SampleLevel::Zero,
                depth_ref: None,
                clamp_to_edge: false,
            },
            span,
        ))
    }

    /// The call of a translator intrinsic of the provided SwiftUI header:
    /// `Ok(None)` when `name` is none.
    pub(in crate::lower) fn swiftui_intrinsic(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        if name != LAYER_SAMPLE {
            return Ok(None);
        }
        let float2 = Type::Vector(Scalar::Float, 2);
        let [arg] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{LAYER_SAMPLE}` takes one `float2`"),
            ));
        };
        let (h, ty) = self.rvalue(fx, arg)?;
        if ty != float2 {
            return Err(Error::coded(
                Code::TypeMismatch,
                arg.span,
                format!(
                    "`{LAYER_SAMPLE}` takes a `float2`, not `{}`",
                    self.program.display(&ty)
                ),
            ));
        }
        let color = self.layer_sample(fx, h, span)?;
        let half4 = Type::Vector(Scalar::Half, 4);
        let color = self.convert(
            fx,
            color,
            &Type::Vector(Scalar::Float, 4),
            &half4,
            true,
            span,
        )?;
        Ok(Some(Value::Rv(color, half4)))
    }
}
