//! The shape of a `[[stitchable]]` function: which SwiftUI effect its
//! signature makes it, and how SwiftUI passes each argument after the
//! fixed ones.

use crate::diagnostics::Code;
use crate::lower::{Error, Lowerer, Result};
use crate::preprocess::swiftui::LAYER_SAMPLE;
use crate::reflect::{EffectArgumentKind, EffectKind};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{AddressSpace, Pointer, Scalar, Texture, TextureAccess, TextureShape, Type};

/// One argument after the fixed ones.
pub(super) enum Extra<'f> {
    /// A scalar or vector in the argument buffer, held as `stored`.
    Value {
        param: &'f ast::Param,
        ty: Type,
        stored: Type,
    },
    /// A pointer and the count after it.
    Array {
        param: &'f ast::Param,
        ptr: Pointer,
        kind: EffectArgumentKind,
        count: &'f ast::Param,
        count_ty: Type,
    },
    /// A `texture2d<half>`.
    Image {
        param: &'f ast::Param,
        texture: Texture,
    },
}

/// A stitchable function's shape.
pub(super) struct Signature<'f> {
    pub(super) kind: EffectKind,
    /// The MSL type of the second parameter (`half4` or the layer struct)
    /// for colour and layer effects.
    pub(super) fixed: Option<Type>,
    pub(super) extras: Vec<Extra<'f>>,
}

/// The error for a signature SwiftUI would not call.
fn signature_error(span: Span, message: impl Into<String>) -> Error {
    Error::coded(Code::StitchableSignature, span, message.into()).note(
        "SwiftUI calls `half4 f(float2 position, half4 color, args...)` (colorEffect), \
         `float2 f(float2 position, args...)` (distortionEffect), \
         `half4 f(float2 position, SwiftUI::Layer layer, args...)` (layerEffect) \
         and `half4 f(float2 position, args...)` (a shader fill)",
    )
}

impl Lowerer<'_, '_> {
    /// True if `ty` is `SwiftUI::Layer`: the struct `Layer` (structs keep
    /// their unqualified names) whose `sample` is the provided header's,
    /// which calls the layer intrinsic.
    pub(super) fn is_swiftui_layer(&self, ty: &Type) -> bool {
        let Type::Struct(id) = ty else {
            return false;
        };
        if self.program.struct_name(*id) != "Layer" {
            return false;
        }
        let Some(crate::sema::Symbol::Functions(list)) = self.program.symbols.get("Layer::sample")
        else {
            return false;
        };
        list.iter().any(|&i| {
            self.program
                .functions
                .get(i)
                .and_then(|f| f.body.as_ref())
                .is_some_and(|body| {
                    crate::sema::callgraph::reaches(self.program, body, &|n| {
                        crate::lower::stdlib::library_answer(n, n == LAYER_SAMPLE)
                    })
                })
        })
    }

    /// The type of parameter `p`, with its array bounds.
    fn param_type(&self, p: &ast::Param) -> Result<Type> {
        let ty = self.program.resolve_type(&p.ty)?;
        self.program.apply_array(ty, &p.array)
    }

    /// Classifies `f`'s parameters as SwiftUI passes them.
    pub(super) fn effect_signature<'f>(&self, f: &'f ast::FunctionDecl) -> Result<Signature<'f>> {
        let ret = self.program.resolve_type(&f.ret)?;
        self.check_position_param(f)?;
        let (kind, fixed) = self.effect_kind(f, &ret)?;
        let start = if fixed.is_some() { 2 } else { 1 };
        let mut extras = Vec::new();
        let mut i = start;
        while i < f.params.len() {
            let (extra, taken) = self.effect_extra(f, i)?;
            extras.push(extra);
            i += taken;
        }
        Ok(Signature {
            kind,
            fixed,
            extras,
        })
    }

    /// Checks that `f` takes the pixel's `float2 position` first.
    fn check_position_param(&self, f: &ast::FunctionDecl) -> Result<()> {
        let float2 = Type::Vector(Scalar::Float, 2);
        let first = f.params.first().ok_or_else(|| {
            signature_error(
                f.name.span,
                format!(
                    "`[[stitchable]]` function `{}` takes no `float2 position`: \
                     SwiftUI passes the pixel's position first",
                    f.name.name
                ),
            )
        })?;
        if self.param_type(first)? != float2 {
            return Err(signature_error(
                first.ty.span,
                format!(
                    "the first argument of a `[[stitchable]]` function is the pixel's \
                     `float2 position`, not `{}`",
                    self.program.display(&self.param_type(first)?)
                ),
            ));
        }
        Ok(())
    }

    /// The effect `f` is, from its return type `ret` and its second
    /// parameter, and the type of that parameter when it is a fixed one
    /// (a colour effect's `half4`, a layer effect's layer).
    fn effect_kind(&self, f: &ast::FunctionDecl, ret: &Type) -> Result<(EffectKind, Option<Type>)> {
        let float2 = Type::Vector(Scalar::Float, 2);
        let half4 = Type::Vector(Scalar::Half, 4);
        let second = f.params.get(1).map(|p| self.param_type(p)).transpose()?;
        Ok(match ret {
            t if *t == float2 => (EffectKind::DistortionEffect, None),
            t if *t == half4 => match &second {
                Some(t) if *t == half4 => (EffectKind::ColorEffect, second.clone()),
                Some(t) if self.is_swiftui_layer(t) => (EffectKind::LayerEffect, second.clone()),
                _ => (EffectKind::ShapeStyle, None),
            },
            other => {
                return Err(signature_error(
                    f.ret.span,
                    format!(
                        "a `[[stitchable]]` function returns `half4` (a colour) or `float2` \
                         (a distortion's position), not `{}`",
                        self.program.display(other)
                    ),
                ))
            }
        })
    }

    /// Parameter `i` of `f` (after the fixed ones) as SwiftUI passes it,
    /// and how many parameters it takes (an array takes its count too).
    fn effect_extra<'f>(&self, f: &'f ast::FunctionDecl, i: usize) -> Result<(Extra<'f>, usize)> {
        let p = &f.params[i];
        let ty = self.param_type(p)?;
        match &ty {
            t if self.is_swiftui_layer(t) => Err(signature_error(
                p.ty.span,
                "`SwiftUI::Layer` must be the second argument (after `float2 position`), \
                 in a function returning `half4`",
            )),
            Type::Scalar(s) | Type::Vector(s, _)
                if matches!(s, Scalar::Float | Scalar::Half | Scalar::Int | Scalar::UInt) =>
            {
                let stored = match s {
                    Scalar::Half => ty.with_scalar(Scalar::Float),
                    _ => ty.clone(),
                };
                Ok((
                    Extra::Value {
                        param: p,
                        ty: ty.clone(),
                        stored,
                    },
                    1,
                ))
            }
            Type::Pointer(ptr)
                if !ptr.is_reference
                    && matches!(ptr.space, AddressSpace::Device | AddressSpace::Constant) =>
            {
                Ok((self.array_extra(f, i, ptr)?, 2))
            }
            Type::Texture(t)
                if t.shape == TextureShape::D2
                    && matches!(t.scalar, Scalar::Half | Scalar::Float)
                    && matches!(t.access, TextureAccess::Sample | TextureAccess::Read) =>
            {
                Ok((
                    Extra::Image {
                        param: p,
                        texture: *t,
                    },
                    1,
                ))
            }
            other => Err(signature_error(
                p.ty.span,
                format!(
                    "SwiftUI cannot pass a `{}` to a `[[stitchable]]` function: it passes \
                     scalars and vectors of `float`/`half`/`int`/`uint`, `texture2d<half>` \
                     images and `device const T*, int` arrays",
                    self.program.display(other)
                ),
            )),
        }
    }

    /// The array of pointer parameter `i` of `f` (of type `ptr`) and the
    /// `int` or `uint` count after it.
    fn array_extra<'f>(
        &self,
        f: &'f ast::FunctionDecl,
        i: usize,
        ptr: &Pointer,
    ) -> Result<Extra<'f>> {
        let p = &f.params[i];
        let half4 = Type::Vector(Scalar::Half, 4);
        if !ptr.is_const {
            return Err(signature_error(
                p.ty.span,
                "SwiftUI passes arrays and data read-only: declare the pointer \
                 `device const`",
            ));
        }
        if ptr.pointee == Type::Void {
            return Err(Error::coded(
                Code::Unsupported,
                p.ty.span,
                "a `device const void*` effect argument (`.data`) is not supported \
                 yet: declare the pointer with the type of its elements",
            ));
        }
        let count = f.params.get(i + 1);
        let count_ty = count
            .map(|c| self.param_type(c))
            .transpose()?
            .filter(|t| *t == Type::INT || *t == Type::UINT);
        let (Some(count), Some(count_ty)) = (count, count_ty) else {
            return Err(signature_error(
                p.span,
                "SwiftUI passes an array as a pointer followed by an `int` count \
                 (`device const float *values, int count`)",
            ));
        };
        let kind = match &ptr.pointee {
            t if *t == Type::FLOAT => EffectArgumentKind::FloatArray,
            t if *t == half4 => EffectArgumentKind::ColorArray,
            _ => EffectArgumentKind::Data,
        };
        Ok(Extra::Array {
            param: p,
            ptr: ptr.clone(),
            kind,
            count,
            count_ty,
        })
    }
}
