//! SwiftUI's `[[stitchable]]` effects: each such function becomes a WGSL
//! fragment entry point that calls it the way SwiftUI does, and the
//! function itself stays an ordinary (callable) WGSL function.
//!
//! SwiftUI finds the effect's shape in the signature (Apple's `Shader`
//! documentation), and so does this module:
//!
//! | signature | effect | the entry point |
//! | --- | --- | --- |
//! | `half4 f(float2 position, half4 color, args...)` | `colorEffect` | passes the layer's texel at the pixel as `color` |
//! | `float2 f(float2 position, args...)` | `distortionEffect` | samples the layer where `f` says |
//! | `half4 f(float2 position, SwiftUI::Layer layer, args...)` | `layerEffect` | passes the layer; `layer.sample(p)` samples it |
//! | `half4 f(float2 position, args...)` | `Shader` as a `ShapeStyle` | passes only the arguments |
//!
//! `position` is `@builtin(position).xy`: the pixel's centre, in pixels
//! from the top left corner (SwiftUI's user space at one pixel per point).
//! The layer is a `texture2d<half>` at `[[texture(0)]]` (`@group(1)
//! @binding(64)`, fixed: it is one global that `SwiftUI::Layer::sample`
//! reads from any function) with a linear, clamp-to-edge `constexpr`
//! sampler; `sample(p)` reads it at `p / size` with level 0, so it may be
//! called in non-uniform control flow.
//!
//! `args...` are what SwiftUI's `Shader.Argument`s become:
//! - scalars and vectors of `float`, `half`, `int`, `uint` (`.float`,
//!   `.float2`.., `.color` is a premultiplied `half4`, `.boundingRect` a
//!   `float4`): members of one uniform, the argument buffer at
//!   `[[buffer(0)]]`, in Metal's layout of the equivalent struct, `half`
//!   stored as `float` (the entry point rounds it);
//! - a `device const T*` (or `constant T*`) followed by an `int` or `uint`
//!   (`.floatArray`: `float`, `.colorArray`: `half4`, `.data`: any other
//!   `T`, the count then in bytes): the elements in `[[buffer(1)]]`,
//!   `[[buffer(2)]]`, ... as ordinary buffer arguments, the count in the
//!   argument buffer;
//! - `texture2d<half>` (`.image`): `[[texture(1)]]`, `[[texture(2)]]`, ...
//!
//! The reflection's `stitchable` says all of it ([`Stitchable`]); the
//! resources are also ordinary `arguments`, so a host binds them by Metal
//! index as it binds any fragment function's. A signature of no shape, or
//! an argument SwiftUI cannot pass, is a located E0332.

use crate::diagnostics::Code;
use crate::layout;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Value};
use crate::lower::entry::compute::KernelParam;
use crate::lower::metal::inline_samplers::FIRST_CONSTEXPR_SAMPLER_BINDING;
use crate::lower::{Error, Lowerer, Result};
use crate::preprocess::swiftui::LAYER_SAMPLE;
use crate::reflect::{
    Access, Argument, ArgumentKind, BufferInfo, ColorOutput, ConstexprSampler, EffectArgument,
    EffectArgumentKind, EffectKind, FunctionReflection, SamplerDescriptor, Stage, Stitchable,
    StructMember, StructType, TextureBinding, TextureInfo, WgslBinding,
};
use crate::sema::consteval::{self, ConstValue};
use crate::source_map::Span;
use crate::syntax::ast::{self, Expr, ExprKind};
use crate::types::{AddressSpace, Pointer, Scalar, Texture, TextureAccess, TextureShape, Type};
use naga::{Expression, Handle, Statement};

/// `[[texture(n)]]` of the layer.
pub const LAYER_TEXTURE: u32 = 0;

/// `[[buffer(n)]]` of the argument buffer; arrays take the next indices.
pub const ARGUMENT_BUFFER: u32 = 0;

/// Where the layer texture is bound: the fragment group, at the default
/// binding of `[[texture(0)]]`.
const LAYER_BINDING: WgslBinding = WgslBinding {
    group: 1,
    binding: 64 + LAYER_TEXTURE,
};

/// The layer texture's name in the WGSL and in reflection (when the
/// function does not name it).
const LAYER_NAME: &str = "swiftui_layer";

/// The name of the layer's `constexpr` sampler.
const LAYER_SAMPLER: &str = "swiftui_layer_sampler";

/// The suffix of the WGSL name of the stitchable function itself (the
/// entry point has its MSL name).
const FUNCTION_SUFFIX: &str = "_stitchable";

/// True if `f` is declared `[[stitchable]]`.
pub(in crate::lower) fn is_stitchable(f: &ast::FunctionDecl) -> bool {
    f.attributes.iter().any(|a| a.name == "stitchable")
}

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

/// One argument after the fixed ones.
enum Extra<'f> {
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
struct Signature<'f> {
    kind: EffectKind,
    /// The MSL type of the second parameter (`half4` or the layer struct)
    /// for colour and layer effects.
    fixed: Option<Type>,
    extras: Vec<Extra<'f>>,
}

/// The name a parameter is known by in the entry point: its own, or one
/// made up for an unnamed parameter.
fn local_name(p: &ast::Param, i: usize) -> String {
    p.name
        .as_ref()
        .map(|n| n.name.clone())
        .unwrap_or_else(|| format!("__stitchable_arg{i}"))
}

/// A parameter with the name [`local_name`] gives it.
fn named(p: &ast::Param, i: usize) -> ast::Param {
    let mut p = p.clone();
    p.name = Some(ast::Ident {
        name: local_name(&p, i),
        span: p.span,
    });
    p
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

/// The components of a constant, as numbers.
fn numbers(v: &ConstValue, out: &mut Vec<f64>) {
    match v {
        ConstValue::Bool(b) => out.push(f64::from(u8::from(*b))),
        ConstValue::Int(i, _) => out.push(*i as f64),
        ConstValue::Float(f, _) => out.push(*f),
        ConstValue::Composite(_, parts) => parts.iter().for_each(|p| numbers(p, out)),
    }
}

impl Lowerer<'_, '_> {
    /// True if `ty` is `SwiftUI::Layer`: the struct `Layer` (structs keep
    /// their unqualified names) whose `sample` is the provided header's,
    /// which calls the layer intrinsic.
    fn is_swiftui_layer(&self, ty: &Type) -> bool {
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
                    crate::sema::callgraph::reaches(self.program, body, &|n| n == LAYER_SAMPLE)
                })
        })
    }

    /// Classifies `f`'s parameters as SwiftUI passes them.
    fn effect_signature<'f>(&self, f: &'f ast::FunctionDecl) -> Result<Signature<'f>> {
        let ret = self.program.resolve_type(&f.ret)?;
        let param_type = |p: &ast::Param| -> Result<Type> {
            let ty = self.program.resolve_type(&p.ty)?;
            self.program.apply_array(ty, &p.array)
        };
        let float2 = Type::Vector(Scalar::Float, 2);
        let half4 = Type::Vector(Scalar::Half, 4);
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
        if param_type(first)? != float2 {
            return Err(signature_error(
                first.ty.span,
                format!(
                    "the first argument of a `[[stitchable]]` function is the pixel's \
                     `float2 position`, not `{}`",
                    self.program.display(&param_type(first)?)
                ),
            ));
        }
        let second = f.params.get(1).map(param_type).transpose()?;
        let (kind, fixed) = match &ret {
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
        };
        let start = if fixed.is_some() { 2 } else { 1 };
        let mut extras = Vec::new();
        let mut i = start;
        while i < f.params.len() {
            let p = &f.params[i];
            let ty = param_type(p)?;
            match &ty {
                t if self.is_swiftui_layer(t) => {
                    return Err(signature_error(
                        p.ty.span,
                        "`SwiftUI::Layer` must be the second argument (after `float2 position`), \
                         in a function returning `half4`",
                    ))
                }
                Type::Scalar(s) | Type::Vector(s, _)
                    if matches!(s, Scalar::Float | Scalar::Half | Scalar::Int | Scalar::UInt) =>
                {
                    let stored = match s {
                        Scalar::Half => ty.with_scalar(Scalar::Float),
                        _ => ty.clone(),
                    };
                    extras.push(Extra::Value {
                        param: p,
                        ty: ty.clone(),
                        stored,
                    });
                }
                Type::Pointer(ptr)
                    if !ptr.is_reference
                        && matches!(ptr.space, AddressSpace::Device | AddressSpace::Constant) =>
                {
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
                        .map(param_type)
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
                    extras.push(Extra::Array {
                        param: p,
                        ptr: (**ptr).clone(),
                        kind,
                        count,
                        count_ty,
                    });
                    i += 1;
                }
                Type::Texture(t)
                    if t.shape == TextureShape::D2
                        && matches!(t.scalar, Scalar::Half | Scalar::Float)
                        && matches!(t.access, TextureAccess::Sample | TextureAccess::Read) =>
                {
                    extras.push(Extra::Image {
                        param: p,
                        texture: *t,
                    });
                }
                other => {
                    return Err(signature_error(
                        p.ty.span,
                        format!(
                            "SwiftUI cannot pass a `{}` to a `[[stitchable]]` function: it passes \
                             scalars and vectors of `float`/`half`/`int`/`uint`, `texture2d<half>` \
                             images and `device const T*, int` arrays",
                            self.program.display(other)
                        ),
                    ))
                }
            }
            i += 1;
        }
        Ok(Signature {
            kind,
            fixed,
            extras,
        })
    }

    /// Lowers `[[stitchable]]` function `f` into a fragment entry point of
    /// the same name that calls it as SwiftUI would.
    pub(in crate::lower) fn stitchable_entry(
        &mut self,
        f: &ast::FunctionDecl,
    ) -> Result<FunctionReflection> {
        self.with_entry(f, crate::lower::ctx::entry::EntryStage::Fragment, |l| {
            l.stitchable(f)
        })
    }

    fn stitchable(&mut self, f: &ast::FunctionDecl) -> Result<FunctionReflection> {
        let sig = self.effect_signature(f)?;
        let Some(index) = self
            .program
            .functions
            .iter()
            .position(|g| std::ptr::eq(*g, f))
        else {
            return Err(Error::coded(
                Code::Internal,
                f.name.span,
                "internal error: a `[[stitchable]]` function that is not a user function",
            ));
        };
        let span = f.span;
        let float2 = Type::Vector(Scalar::Float, 2);
        let float4 = Type::Vector(Scalar::Float, 4);
        let half4 = Type::Vector(Scalar::Half, 4);
        let mut fx = FnCtx::new(&f.name.name, float4.clone());
        fx.fragment = true;
        let out_ty = self.naga_type(&float4, span)?;
        fx.function.result = Some(naga::FunctionResult {
            ty: out_ty,
            binding: Some(naga::Binding::Location {
                location: 0,
                interpolation: None,
                sampling: None,
                blend_src: None,
                per_primitive: false,
            }),
        });
        fx.function.arguments.push(naga::FunctionArgument {
            name: Some("frag_position".into()),
            ty: out_ty,
            binding: Some(naga::Binding::BuiltIn(naga::BuiltIn::Position {
                invariant: false,
            })),
        });
        let frag = fx.add(Expression::FunctionArgument(0), span);
        let position = fx.add(
            Expression::Swizzle {
                size: naga::VectorSize::Bi,
                vector: frag,
                pattern: [
                    naga::SwizzleComponent::X,
                    naga::SwizzleComponent::Y,
                    naga::SwizzleComponent::X,
                    naga::SwizzleComponent::X,
                ],
            },
            span,
        );
        let mut names = vec![local_name(&f.params[0], 0)];
        self.store_local(&mut fx, &names[0], &float2, position, span)?;
        let mut arguments = Vec::new();
        let reads_layer = sig.kind != EffectKind::ShapeStyle;
        if reads_layer {
            arguments.push(self.layer_argument(f, &sig));
        }
        match (&sig.kind, &sig.fixed) {
            (EffectKind::ColorEffect, Some(_)) => {
                let texel = self.layer_texel(&mut fx, position, span)?;
                let color = self.convert(&mut fx, texel, &float4, &half4, true, span)?;
                names.push(local_name(&f.params[1], 1));
                self.store_local(&mut fx, &names[1], &half4, color, span)?;
            }
            (EffectKind::LayerEffect, Some(layer)) => {
                let th = self.naga_type(layer, span)?;
                let zero = fx.add(Expression::ZeroValue(th), span);
                names.push(local_name(&f.params[1], 1));
                self.store_local(&mut fx, &names[1], layer, zero, span)?;
            }
            _ => {}
        }
        let (effect_arguments, block) =
            self.bind_extras(&mut fx, f, &sig, &mut names, &mut arguments)?;
        // The call, as SwiftUI makes it.
        let exprs: Vec<Expr> = names
            .iter()
            .map(|n| Expr {
                kind: ExprKind::Name(vec![n.clone()]),
                span: f.name.span,
            })
            .collect();
        let result = self.call_user(
            &mut fx,
            &f.name.name,
            &[index],
            Vec::new(),
            &exprs,
            f.name.span,
            span,
        )?;
        let (value, ty) = self.load(&mut fx, result, span)?;
        let color = if sig.kind == EffectKind::DistortionEffect {
            let at = self.convert(&mut fx, value, &ty, &float2, false, span)?;
            self.layer_sample(&mut fx, at, span)?
        } else {
            self.convert(&mut fx, value, &ty, &float4, true, span)?
        };
        fx.push(Statement::Return { value: Some(color) }, span);
        let function = fx.finish();
        let wgsl_function = self.name_stitchable_function(&function, index);
        for arg in &mut arguments {
            if let Some(b) = arg.binding {
                arg.active = self.entry_uses_binding(&function, b);
            }
        }
        let constexpr_samplers = self.used_constexpr_samplers(&function);
        let extra: Vec<WgslBinding> = constexpr_samplers.iter().map(|s| s.binding).collect();
        self.check_binding_collisions(f, &arguments, &extra)?;
        self.global.module.entry_points.push(naga::EntryPoint {
            name: f.name.name.clone(),
            stage: naga::ShaderStage::Fragment,
            early_depth_test: None,
            workgroup_size: [0, 0, 0],
            workgroup_size_overrides: None,
            function,
            mesh_info: None,
            task_payload: None,
            incoming_ray_payload: None,
        });
        let mut required_features = self.entry.feature_names();
        if self.global.types.uses_f16 {
            required_features.push("shader-f16".to_string());
        }
        Ok(FunctionReflection {
            name: f.name.name.clone(),
            wgsl_entry_point: f.name.name.clone(),
            stage: Stage::Fragment,
            workgroup_size: None,
            arguments,
            builtins: Vec::new(),
            dispatch_binding: None,
            uses_barriers: false,
            required_features,
            constexpr_samplers,
            vertex_attributes: Vec::new(),
            vertex_stride: 0,
            varyings: Vec::new(),
            color_outputs: vec![ColorOutput {
                index: 0,
                blend_src: None,
                data_type: "half4".into(),
            }],
            function_constants: Vec::new(),
            stitchable: Some(Stitchable {
                kind: sig.kind,
                function: wgsl_function,
                layer_texture: reads_layer.then_some(LAYER_TEXTURE),
                argument_buffer: block.map(|_| ARGUMENT_BUFFER),
                argument_buffer_size: block.unwrap_or(0),
                arguments: effect_arguments,
            }),
        })
    }

    /// A local variable `name` of type `ty` holding `value`.
    fn store_local(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        ty: &Type,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<()> {
        let th = self.naga_type(ty, span)?;
        let var = fx.local(name, th, span);
        let ptr = fx.add(Expression::LocalVariable(var), span);
        fx.push(
            Statement::Store {
                pointer: ptr,
                value,
            },
            span,
        );
        fx.declare(
            name,
            Local::Var {
                var,
                ty: ty.clone(),
                is_const: false,
            },
        );
        Ok(())
    }

    /// Binds the arguments after the fixed ones: the argument buffer (a
    /// uniform struct, if any value or count), arrays and images. Returns
    /// their reflection and the argument buffer's size.
    fn bind_extras(
        &mut self,
        fx: &mut FnCtx,
        f: &ast::FunctionDecl,
        sig: &Signature,
        names: &mut Vec<String>,
        arguments: &mut Vec<Argument>,
    ) -> Result<(Vec<EffectArgument>, Option<u32>)> {
        // The argument buffer's members: (name, stored type, offset).
        let mut members: Vec<(String, Type, u32)> = Vec::new();
        let mut offset = 0u32;
        let mut place = |name: &str, stored: &Type, structs: &crate::types::Structs| {
            let sa = layout::metal(stored, structs);
            let at = offset.next_multiple_of(sa.align);
            offset = at + sa.size;
            members.push((name.to_string(), stored.clone(), at));
            at
        };
        let mut effect = Vec::new();
        let (mut next_buffer, mut next_texture) = (ARGUMENT_BUFFER + 1, LAYER_TEXTURE + 1);
        let position = |p: &ast::Param| {
            f.params
                .iter()
                .position(|q| std::ptr::eq(q, p))
                .unwrap_or(0)
        };
        for extra in &sig.extras {
            match extra {
                Extra::Value { param, ty, stored } => {
                    let name = local_name(param, position(param));
                    let at = place(&name, stored, &self.program.structs);
                    let default = param.default.as_ref().and_then(|e| {
                        let v = consteval::eval(self.program, e).ok()?;
                        let mut out = Vec::new();
                        numbers(&v, &mut out);
                        Some(out)
                    });
                    effect.push(EffectArgument {
                        name,
                        kind: EffectArgumentKind::Value,
                        data_type: self.program.display(ty),
                        stored_as: Some(self.program.display(stored)),
                        offset: Some(at),
                        default,
                        buffer: None,
                        count_name: None,
                        count_offset: None,
                        count_unit: None,
                        texture: None,
                    });
                }
                Extra::Array {
                    param,
                    ptr,
                    kind,
                    count,
                    count_ty,
                } => {
                    let name = local_name(param, position(param));
                    let count_name = local_name(count, position(count));
                    let at = place(&count_name, count_ty, &self.program.structs);
                    let element = layout::metal(&ptr.pointee, &self.program.structs).size;
                    effect.push(EffectArgument {
                        name,
                        kind: *kind,
                        data_type: self.program.display(&ptr.pointee),
                        stored_as: None,
                        offset: None,
                        default: None,
                        buffer: Some(next_buffer),
                        count_name: Some(count_name),
                        count_offset: Some(at),
                        count_unit: Some(if *kind == EffectArgumentKind::Data {
                            1
                        } else {
                            element
                        }),
                        texture: None,
                    });
                    next_buffer += 1;
                }
                Extra::Image { param, .. } => {
                    effect.push(EffectArgument {
                        name: local_name(param, position(param)),
                        kind: EffectArgumentKind::Image,
                        data_type: self.program.display(&self.program.resolve_type(&param.ty)?),
                        stored_as: None,
                        offset: None,
                        default: None,
                        buffer: None,
                        count_name: None,
                        count_offset: None,
                        count_unit: None,
                        texture: Some(next_texture),
                    });
                    next_texture += 1;
                }
            }
        }
        let size = offset.next_multiple_of(16);
        let block = if members.is_empty() {
            None
        } else {
            Some(self.argument_buffer(f, &members, size, arguments)?)
        };
        // Each value's and count's member, in the order placed.
        let mut member = 0u32..;
        // Locals, in parameter order: values and counts from the buffer,
        // pointers and textures as a buffer or texture argument binds them.
        let body = f.body.as_ref().expect("definitions have bodies");
        for (extra, arg) in sig.extras.iter().zip(&effect) {
            match extra {
                Extra::Value { param, ty, stored } => {
                    let g = block.expect("values are in the buffer");
                    let m = member.next().expect("unbounded");
                    let value = self.load_member(fx, g, m, param.span);
                    let value = self.convert(fx, value, stored, ty, true, param.span)?;
                    self.store_local(fx, &arg.name, ty, value, param.span)?;
                    names.push(arg.name.clone());
                }
                Extra::Array {
                    param,
                    ptr,
                    count,
                    count_ty,
                    ..
                } => {
                    let p = named(param, position(param));
                    let kp = KernelParam::Buffer {
                        param: &p,
                        ptr: ptr.clone(),
                        index: arg.buffer.expect("arrays have a buffer"),
                    };
                    self.bind_param(fx, &kp, None, body, arguments)?;
                    names.push(arg.name.clone());
                    let g = block.expect("counts are in the buffer");
                    let m = member.next().expect("unbounded");
                    let count_name = arg.count_name.clone().unwrap_or_default();
                    let value = self.load_member(fx, g, m, count.span);
                    self.store_local(fx, &count_name, count_ty, value, count.span)?;
                    names.push(count_name);
                }
                Extra::Image { param, texture } => {
                    let p = named(param, position(param));
                    let kp = KernelParam::Texture {
                        param: &p,
                        texture: *texture,
                        index: arg.texture.expect("images have a texture"),
                    };
                    self.bind_param(fx, &kp, None, body, arguments)?;
                    names.push(arg.name.clone());
                }
            }
        }
        Ok((effect, block.map(|_| size)))
    }

    /// The argument buffer: a uniform struct of `members` (name, stored
    /// type, offset), `size` bytes, at `[[buffer(0)]]`, and its reflection.
    fn argument_buffer(
        &mut self,
        f: &ast::FunctionDecl,
        members: &[(String, Type, u32)],
        size: u32,
        arguments: &mut Vec<Argument>,
    ) -> Result<Handle<naga::GlobalVariable>> {
        let span = f.span;
        let mut naga_members = Vec::new();
        for (name, stored, offset) in members {
            naga_members.push(naga::StructMember {
                name: Some(name.clone()),
                ty: self.naga_type(stored, span)?,
                binding: None,
                offset: *offset,
            });
        }
        let struct_name = format!("{}_Arguments", f.name.name);
        let global_name = format!("{}_arguments", f.name.name);
        let ty = self.global.module.types.insert(
            naga::Type {
                name: Some(struct_name.clone()),
                inner: naga::TypeInner::Struct {
                    members: naga_members,
                    span: size,
                },
            },
            Self::span(span),
        );
        let binding = self.resource_binding(
            ArgumentKind::Buffer,
            ARGUMENT_BUFFER,
            WgslBinding {
                group: self.entry.group(),
                binding: ARGUMENT_BUFFER,
            },
            span,
        )?;
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(global_name.clone()),
                space: naga::AddressSpace::Uniform,
                binding: Some(naga::ResourceBinding {
                    group: binding.group,
                    binding: binding.binding,
                }),
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            Self::span(span),
        );
        let reflected = members
            .iter()
            .map(|(name, stored, offset)| StructMember {
                name: name.clone(),
                offset: *offset,
                data_type: self.program.display(stored),
                size: layout::metal(stored, &self.program.structs).size,
                struct_type: None,
                array_type: None,
            })
            .collect();
        arguments.push(Argument {
            name: global_name,
            kind: ArgumentKind::Buffer,
            index: ARGUMENT_BUFFER,
            access: Access::Read,
            active: true,
            binding: Some(binding),
            buffer: Some(BufferInfo {
                alignment: 16,
                data_size: size,
                data_type: "struct".into(),
                is_pointer: false,
                struct_type: Some(StructType {
                    name: struct_name,
                    members: reflected,
                }),
                array_type: None,
            }),
            threadgroup: None,
            texture: None,
            sampler: None,
        });
        Ok(g)
    }

    /// Member `member` of the uniform `g`, loaded.
    fn load_member(
        &mut self,
        fx: &mut FnCtx,
        g: Handle<naga::GlobalVariable>,
        member: u32,
        span: Span,
    ) -> Handle<Expression> {
        let base = fx.add(Expression::GlobalVariable(g), span);
        let pointer = fx.add(
            Expression::AccessIndex {
                base,
                index: member,
            },
            span,
        );
        fx.add(Expression::Load { pointer }, span)
    }

    /// The reflection of the layer texture argument.
    fn layer_argument(&self, f: &ast::FunctionDecl, sig: &Signature) -> Argument {
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
                view_dimension: view_dimension(t.shape).into(),
                binding_kind: TextureBinding::Sampled,
                sample_type: "float".into(),
                multisampled: false,
                storage_format: None,
            }),
            sampler: None,
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
    fn layer_texel(
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
    fn layer_sample(
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

    /// Names the WGSL function the entry point calls (user function
    /// `index`) `NAME_stitchable`, so that the entry point keeps the MSL
    /// name; returns the name.
    fn name_stitchable_function(&mut self, entry: &naga::Function, index: usize) -> String {
        let called = entry.body.iter().find_map(|s| match s {
            Statement::Call { function, .. } => Some(*function),
            _ => None,
        });
        let base = self.program.functions[index].name.name.clone();
        let wanted = format!("{base}{FUNCTION_SUFFIX}");
        let handles: Vec<Handle<naga::Function>> = self
            .global
            .functions
            .iter()
            .filter(|((i, ..), _)| *i == index)
            .map(|(_, h)| *h)
            .collect();
        for h in handles {
            let function = &mut self.global.module.functions[h];
            if function.name.as_deref() == Some(base.as_str()) {
                function.name = Some(wanted.clone());
            }
        }
        called
            .and_then(|h| self.global.module.functions[h].name.clone())
            .unwrap_or(wanted)
    }
}
