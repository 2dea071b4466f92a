//! Vertex and fragment entry points (MSL §5.2.3, §5.7): `[[stage_in]]`
//! structs, built-in inputs and outputs, and the locations that link a
//! vertex function's outputs to a fragment function's inputs.
//!
//! Metal links the stages by `[[user(name)]]` or member name; WGSL by
//! location. One table per library gives every name a location, in order
//! of first appearance, so any vertex/fragment pair whose structs agree
//! links (mapping doc §4.6). Metal states interpolation on the fragment
//! side only; WGSL needs it on both, so vertex outputs take it from the
//! table.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Local;
use crate::lower::entry::compute::KernelParam;
use crate::lower::entry::point_sprites::{point_coord_interpolation, point_coord_param};
use crate::lower::entry::vertex_dispatch::DrawParameter;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{FunctionReflection, Stage, Varying, VertexAttribute};
use crate::source_map::Span;
use crate::syntax::ast::{self, Item};
use crate::types::{Scalar, StructId, Type};
use naga::{Binding, BuiltIn, Expression, Handle, Statement};

/// An interpolation: naga's, and how reflection spells it.
pub(in crate::lower) type Interp = (naga::Interpolation, Option<naga::Sampling>, String);

/// The type a value crosses a stage boundary as: WebGPU's inter-stage and
/// colour values are 32-bit, so `half` travels as `float`.
pub(in crate::lower) fn io_type(ty: &Type) -> Type {
    match ty.element_scalar() {
        Some(Scalar::Half) => ty.with_scalar(Scalar::Float),
        _ => ty.unpacked(),
    }
}

/// True when every path through `block` ends in a `return`, by WGSL's
/// behaviour analysis restricted to blocks, `if`/`else` and `switch`es
/// with a `default` whose every case returns (loops are not looked into:
/// the `break` of a `while` condition leaves them, and WGSL then needs the
/// `return` after them). `discard` is not a return: its WGSL behaviour is
/// to go on.
pub(in crate::lower) fn always_returns(block: &naga::Block) -> bool {
    block.last().is_some_and(|s| match s {
        Statement::Return { .. } => true,
        Statement::Block(b) => always_returns(b),
        Statement::If { accept, reject, .. } => always_returns(accept) && always_returns(reject),
        Statement::Switch { cases, .. } => {
            // Labels that fall through share the next case's body (`case
            // 1, 2:` in WGSL); one with a body of its own is not judged.
            cases.iter().any(|c| c.value == naga::SwitchValue::Default)
                && cases.last().is_some_and(|c| !c.fall_through)
                && cases.iter().all(|c| match c.fall_through {
                    true => c.body.is_empty(),
                    false => always_returns(&c.body),
                })
        }
        _ => false,
    })
}

/// A stage function has at most one `[[stage_in]]` argument.
pub(super) fn check_one_stage_in(params: &[KernelParam]) -> Result<()> {
    if params
        .iter()
        .filter(|p| matches!(p, KernelParam::StageIn { .. }))
        .count()
        > 1
    {
        let second = params
            .iter()
            .filter_map(|p| match p {
                KernelParam::StageIn { param, .. } => Some(param.span),
                _ => None,
            })
            .nth(1)
            .unwrap();
        return Err(Error::coded(
            Code::EntryPointSignature,
            second,
            "a function can have only one `[[stage_in]]` argument",
        ));
    }
    Ok(())
}

/// A linked value's location and interpolation.
#[derive(Clone, Debug)]
pub(in crate::lower) struct VaryingSlot {
    pub location: u32,
    pub interpolation: naga::Interpolation,
    pub sampling: Option<naga::Sampling>,
    pub text: String,
}

/// The interpolation attributes of a fragment input member (MSL §5.4).
fn interpolation_of(attrs: &[ast::Attribute], ty: &Type) -> Interp {
    use naga::{Interpolation as I, Sampling as S};
    if ty
        .element_scalar()
        .is_some_and(|s| s.is_integer() || s == Scalar::Bool)
    {
        return (I::Flat, None, "flat".into());
    }
    for a in attrs {
        let r = match a.name.as_str() {
            "flat" => (I::Flat, None, "flat"),
            "center_perspective" => (I::Perspective, Some(S::Center), "perspective"),
            "center_no_perspective" => (I::Linear, Some(S::Center), "linear"),
            "centroid_perspective" => (I::Perspective, Some(S::Centroid), "perspective, centroid"),
            "centroid_no_perspective" => (I::Linear, Some(S::Centroid), "linear, centroid"),
            "sample_perspective" => (I::Perspective, Some(S::Sample), "perspective, sample"),
            "sample_no_perspective" => (I::Linear, Some(S::Sample), "linear, sample"),
            _ => continue,
        };
        return (r.0, r.1, r.2.into());
    }
    (I::Perspective, Some(S::Center), "perspective".into())
}

/// The name that links a member across stages.
pub(in crate::lower) fn link_key(m: &ast::Member) -> String {
    for a in &m.attributes {
        if a.name == "user" {
            if let Some(ast::Expr {
                kind: ast::ExprKind::Name(p),
                ..
            }) = a.args.first()
            {
                return p.join("::");
            }
        }
    }
    m.name.name.clone()
}

/// Members that are built-ins rather than linked values.
fn member_builtin(m: &ast::Member) -> Option<&str> {
    m.attributes.iter().map(|a| a.name.as_str()).find(|n| {
        matches!(
            *n,
            "position"
                | "point_size"
                | "clip_distance"
                | "color"
                | "depth"
                | "sample_mask"
                | "front_facing"
                | "sample_id"
                | "primitive_id"
                | "point_coord"
                | "render_target_array_index"
                | "viewport_array_index"
                | "barycentric_coord"
        )
    })
}

/// The refusal of `[[barycentric_coord]]` (MSL §5.2.3.4, a fragment input):
/// WebGPU has no barycentric built-in (wgpu's native `SHADER_BARYCENTRICS`
/// feature is not used by the translation).
fn barycentric_refusal(span: Span) -> Error {
    Error::coded(
        Code::NoWebGpuEquivalent,
        span,
        "`[[barycentric_coord]]` (the fragment's barycentric coordinates) has no WebGPU equivalent: WGSL has no barycentric built-in",
    )
    .note("a port has the vertex function output a `float3` that is (1, 0, 0), (0, 1, 0) and (0, 0, 1) at a triangle's three vertices (from `[[vertex_id]] % 3` with a non-indexed draw) and reads it as an interpolated `[[stage_in]]` member, `[[center_perspective]]` for perspective-correct or `[[center_no_perspective]]` for linear coordinates")
}

impl Lowerer<'_, '_> {
    /// The struct declaration named `name`.
    pub(super) fn struct_decl(&self, name: &str) -> Option<&ast::StructDecl> {
        self.tu.items.iter().find_map(|i| match i {
            Item::Struct(s) if s.name.name == name => Some(s),
            _ => None,
        })
    }

    /// The slots of `key`: one per interpolation some fragment function
    /// asks for (a vertex output feeds each), or a default one.
    pub(in crate::lower) fn varying_slots(&mut self, key: &str) -> Vec<VaryingSlot> {
        if self.global.varyings.is_none() {
            self.global.varyings = Some(self.build_varyings());
        }
        let table = self.global.varyings.as_ref().expect("built above");
        table
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// The slot of `key` with the given interpolation (fragment inputs).
    fn varying_slot(&mut self, key: &str, text: &str) -> Option<VaryingSlot> {
        self.varying_slots(key).into_iter().find(|s| s.text == text)
    }

    /// Every (name, interpolation) pair that links the stages of this
    /// library, with a location each: vertex outputs in source order, each
    /// with every interpolation a fragment function asks for, then inputs
    /// no vertex function writes.
    fn build_varyings(&self) -> Vec<(String, VaryingSlot)> {
        let mut wanted: Vec<(String, Interp)> = Vec::new();
        for m in self.stage_members(ast::Stage::Fragment) {
            let ty = self.program.resolve_type(&m.ty).unwrap_or(Type::Void);
            let interp = interpolation_of(&m.attributes, &ty);
            if !wanted
                .iter()
                .any(|(k, i)| *k == link_key(m) && i.2 == interp.2)
            {
                wanted.push((link_key(m), interp));
            }
        }
        let mut table: Vec<(String, VaryingSlot)> = Vec::new();
        let mut push = |key: &str, (interpolation, sampling, text): Interp| {
            if !table.iter().any(|(k, s)| k == key && s.text == text) {
                let location = table.len() as u32;
                table.push((
                    key.to_string(),
                    VaryingSlot {
                        location,
                        interpolation,
                        sampling,
                        text,
                    },
                ));
            }
        };
        for m in self.stage_members(ast::Stage::Vertex) {
            let key = link_key(m);
            let variants: Vec<_> = wanted
                .iter()
                .filter(|(k, _)| *k == key)
                .map(|(_, i)| i.clone())
                .collect();
            if variants.is_empty() {
                let ty = self.program.resolve_type(&m.ty).unwrap_or(Type::Void);
                push(&key, interpolation_of(&[], &ty));
            }
            for v in variants {
                push(&key, v);
            }
        }
        for (k, i) in &wanted {
            push(k, i.clone());
        }
        if self.reads_point_coord() {
            push(
                crate::reflect::POINT_COORD_VARYING,
                point_coord_interpolation(),
            );
        }
        table
    }

    /// The non-built-in members of vertex outputs or fragment inputs, in source order.
    fn stage_members(&self, stage: ast::Stage) -> Vec<&ast::Member> {
        let mut out = Vec::new();
        for item in &self.tu.items {
            let Item::Function(f) = item else { continue };
            if f.stage.map(|s| s.0) != Some(stage) {
                continue;
            }
            let written = match stage {
                ast::Stage::Vertex => Some(&f.ret),
                _ => f
                    .params
                    .iter()
                    .find(|p| p.attributes.iter().any(|a| a.name == "stage_in"))
                    .map(|p| &p.ty),
            };
            // The struct the type names, through aliases (`typedef
            // VertexOut FragmentIn;`).
            let struct_name = written.map(|ts| match self.program.resolve_type(ts) {
                Ok(Type::Struct(id)) => self.program.struct_name(id).to_string(),
                _ => ts.name(),
            });
            let Some(s) = struct_name.and_then(|n| self.struct_decl(&n)) else {
                continue;
            };
            out.extend(s.members.iter().filter(|m| member_builtin(m).is_none()));
        }
        out
    }

    /// Classifies a vertex/fragment parameter with a stage attribute.
    pub(in crate::lower) fn stage_param<'f>(
        &mut self,
        f: &'f ast::FunctionDecl,
        p: &'f ast::Param,
        ty: &Type,
        attr: &'f ast::Attribute,
    ) -> Result<KernelParam<'f>> {
        let vertex = matches!(f.stage, Some((ast::Stage::Vertex, _)));
        let builtin = |b: BuiltIn, want: &[Type], name: &str| -> Result<KernelParam<'f>> {
            if !want.contains(ty) {
                return Err(Error::coded(
                    Code::EntryPointSignature,
                    p.ty.span,
                    format!(
                        "`[[{name}]]` argument must be of type `{}`",
                        want.iter()
                            .map(|t| self.program.display(t))
                            .collect::<Vec<_>>()
                            .join("` or `")
                    ),
                ));
            }
            Ok(KernelParam::StageBuiltin {
                param: p,
                builtin: b,
                ty: ty.clone(),
            })
        };
        match (attr.name.as_str(), vertex) {
            ("stage_in", _) => match ty {
                Type::Struct(id) => Ok(KernelParam::StageIn { param: p, id: *id }),
                // `float4 p [[stage_in]]` in a fragment function: the input
                // of a vertex function returning a bare `float4`, which is
                // its `[[position]]` (MSL §5.2.3.4), as the fragment sees it.
                Type::Vector(Scalar::Float, 4) if !vertex => builtin(
                    BuiltIn::Position { invariant: false },
                    &[Type::Vector(Scalar::Float, 4)],
                    "stage_in",
                ),
                _ => Err(Error::coded(
                    Code::EntryPointSignature,
                    p.ty.span,
                    "a `[[stage_in]]` argument must be a struct",
                )),
            },
            ("vertex_id", true) => builtin(
                BuiltIn::VertexIndex,
                &[Type::UINT, Type::Scalar(Scalar::UShort)],
                "vertex_id",
            ),
            ("instance_id", true) => builtin(
                BuiltIn::InstanceIndex,
                &[Type::UINT, Type::Scalar(Scalar::UShort)],
                "instance_id",
            ),
            // Read from the draw-parameters uniform (`vertex_dispatch.rs`).
            ("base_vertex", true) => builtin(
                BuiltIn::BaseVertex,
                &[Type::UINT, Type::Scalar(Scalar::UShort)],
                "base_vertex",
            ),
            ("base_instance", true) => builtin(
                BuiltIn::BaseInstance,
                &[Type::UINT, Type::Scalar(Scalar::UShort)],
                "base_instance",
            ),
            // Vertex amplification draws each vertex once per view
            // (multiview); a WebGPU draw renders one view.
            ("amplification_id" | "amplification_count", true) => Err(Error::coded(
                Code::NoWebGpuEquivalent,
                attr.span,
                format!(
                    "`[[{}]]` (vertex amplification) has no WebGPU equivalent: WebGPU has no multiview rendering",
                    attr.name
                ),
            )
            .note("a port draws each view in a render pass of its own and passes the view's index in a buffer")),
            ("position", false) => builtin(
                BuiltIn::Position { invariant: false },
                &[Type::Vector(Scalar::Float, 4)],
                "position",
            ),
            ("front_facing", false) => builtin(BuiltIn::FrontFacing, &[Type::BOOL], "front_facing"),
            ("sample_id", false) => builtin(
                BuiltIn::SampleIndex,
                &[Type::UINT, Type::Scalar(Scalar::UShort)],
                "sample_id",
            ),
            ("sample_mask", false) => builtin(BuiltIn::SampleMask, &[Type::UINT], "sample_mask"),
            ("primitive_id", false) => {
                self.require_feature(crate::lower::ctx::entry::Feature::PrimitiveIndex);
                builtin(BuiltIn::PrimitiveIndex, &[Type::UINT], "primitive_id")
            }
            ("point_coord", false) => point_coord_param(p, ty),
            ("render_target_array_index" | "viewport_array_index", false) => {
                if !matches!(ty, Type::Scalar(Scalar::UInt | Scalar::UShort)) {
                    return Err(Error::coded(
                        Code::EntryPointSignature,
                        p.ty.span,
                        format!(
                            "`[[{}]]` argument must be of type `uint` or `ushort`",
                            attr.name
                        ),
                    ));
                }
                Ok(KernelParam::FirstLayer {
                    param: p,
                    ty: ty.clone(),
                    attr,
                })
            }
            // A fragment function's SIMD group is the adapter's subgroup
            // (vertex and fragment functions never emulate Apple's width).
            ("thread_index_in_simdgroup", false) => {
                self.require_feature(crate::lower::ctx::entry::Feature::Subgroup);
                builtin(
                    BuiltIn::SubgroupInvocationId,
                    &[Type::UINT, Type::Scalar(Scalar::UShort)],
                    "thread_index_in_simdgroup",
                )
            }
            ("threads_per_simdgroup", false) => {
                self.require_feature(crate::lower::ctx::entry::Feature::Subgroup);
                builtin(
                    BuiltIn::SubgroupSize,
                    &[Type::UINT, Type::Scalar(Scalar::UShort)],
                    "threads_per_simdgroup",
                )
            }
            ("color", false) => Err(Error::coded(
                Code::NoWebGpuEquivalent,
                attr.span,
                "reading `[[color(m)]]` (framebuffer fetch) has no WebGPU equivalent",
            )),
            ("barycentric_coord", false) => Err(barycentric_refusal(attr.span)),
            (other, _) => Err(Error::coded(
                Code::InvalidAttribute,
                attr.span,
                format!(
                    "`[[{other}]]` is not available as a {} function argument",
                    if vertex { "vertex" } else { "fragment" }
                ),
            )
            .with_notes(crate::diagnostics::suggest::did_you_mean(
                other,
                crate::diagnostics::suggest::ATTRIBUTES.iter().copied(),
            ))),
        }
    }

    /// Lowers a `vertex` or `fragment` function into an entry point.
    pub(in crate::lower) fn stage_function(
        &mut self,
        f: &ast::FunctionDecl,
        stage: ast::Stage,
    ) -> Result<FunctionReflection> {
        let vertex = stage == ast::Stage::Vertex;
        let params = self.classify_params(f)?;
        check_one_stage_in(&params)?;
        let ret = self.program.resolve_type(&f.ret)?;
        let mut fx = FnCtx::new(&f.name.name, ret.clone());
        fx.fragment = !vertex;
        if self.entry.point_sprite.is_some() {
            self.sprite_prologue(&mut fx, f.name.span)?;
        }
        let body = f.body.as_ref().expect("definitions have bodies");
        let mut arguments = Vec::new();
        let mut reflection_in = (Vec::new(), 0, Vec::new());
        let mut point_coord = Vec::new();
        for p in &params {
            match p {
                KernelParam::StageIn { param, id } => {
                    reflection_in = self.bind_stage_in(&mut fx, param, *id, vertex)?
                }
                KernelParam::StageBuiltin { param, builtin, ty } => {
                    self.bind_stage_builtin(&mut fx, param, *builtin, ty)?
                }
                KernelParam::PointCoord { param, .. } => {
                    self.bind_point_coord(&mut fx, param, &mut point_coord)?
                }
                KernelParam::FirstLayer { param, ty, attr } => {
                    let name = param.name.as_ref().map_or("_", |n| n.name.as_str());
                    let value = self.first_layer_input(&mut fx, name, attr, ty)?;
                    self.local_copy(&mut fx, param.name.as_ref(), ty, value, param.span)?
                }
                other => self.bind_param(&mut fx, other, None, body, &mut arguments)?,
            }
        }
        let (color_outputs, out_varyings) = self.stage_result(&mut fx, f, &ret, vertex)?;
        self.rebind_reassigned_pointers(&mut fx, body)?;
        fx.open();
        let lowered = self.stmts(&mut fx, &body.stmts);
        lowered?;
        let block = fx.close();
        let returns = always_returns(&block);
        fx.push(Statement::Block(block), body.span);
        // A `return T();` after a body that always returns is unreachable
        // code, which browsers warn about.
        if !returns {
            self.finish_body(&mut fx, body.span)?;
        }
        let function = fx.finish();
        let reached = self.reached_globals(&function);
        reached.mark_active(&mut arguments);
        let constexpr_samplers = self.used_constexpr_samplers(&reached);
        let mut extra: Vec<_> = constexpr_samplers.iter().map(|s| s.binding).collect();
        extra.extend(self.sprite_viewport_binding());
        let draw_parameters = (vertex && super::vertex_dispatch::reads_draw_parameters(&params))
            .then(super::vertex_dispatch::draw_parameters_binding);
        extra.extend(draw_parameters);
        self.check_binding_collisions(f, &arguments, &extra)?;
        self.global.module.entry_points.push(naga::EntryPoint {
            name: self.stage_entry_name(f),
            stage: if vertex {
                naga::ShaderStage::Vertex
            } else {
                naga::ShaderStage::Fragment
            },
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
        let (vertex_attributes, vertex_stride, mut in_varyings) = reflection_in;
        in_varyings.extend(point_coord);
        Ok(FunctionReflection {
            name: f.name.name.clone(),
            wgsl_entry_point: f.name.name.clone(),
            stage: if vertex {
                Stage::Vertex
            } else {
                Stage::Fragment
            },
            workgroup_size: None,
            arguments,
            builtins: self.builtin_arguments(&params),
            dispatch_binding: None,
            uses_barriers: false,
            required_features,
            required_limits: Default::default(),
            simd_groups: None,
            constexpr_samplers,
            vertex_attributes,
            vertex_stride,
            varyings: if vertex { out_varyings } else { in_varyings },
            color_outputs,
            function_constants: Vec::new(),
            stitchable: None,
            point_sprite: None,
            stage_input: None,
            draw_parameters_binding: draw_parameters,
            vertex_dispatch: None,
        })
    }

    /// A built-in input parameter: an entry-point argument copied to a local.
    fn bind_stage_builtin(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        builtin: BuiltIn,
        ty: &Type,
    ) -> Result<()> {
        if let Some(field) = DrawParameter::of(builtin) {
            let value = self.draw_parameter(fx, field, param.span);
            let value = self.convert(fx, value, &Type::UINT, ty, true, param.span)?;
            return self.local_copy(fx, param.name.as_ref(), ty, value, param.span);
        }
        // A point sprite's `[[vertex_id]]` is its point's.
        if let (BuiltIn::VertexIndex, Some(point)) = (builtin, self.sprite_point()) {
            let value = self.convert(fx, point, &Type::UINT, ty, true, param.span)?;
            return self.local_copy(fx, param.name.as_ref(), ty, value, param.span);
        }
        let wide = ty.with_scalar(if ty.element_scalar() == Some(Scalar::UShort) {
            Scalar::UInt
        } else {
            ty.element_scalar().unwrap_or(Scalar::UInt)
        });
        let th = self.naga_type(&wide, param.span)?;
        let i = fx.function.arguments.len() as u32;
        let name = param
            .name
            .as_ref()
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_".into());
        fx.function.arguments.push(naga::FunctionArgument {
            name: Some(name.clone()),
            ty: th,
            binding: Some(Binding::BuiltIn(builtin)),
        });
        let arg = fx.add(Expression::FunctionArgument(i), param.span);
        let value = self.convert(fx, arg, &wide, ty, true, param.span)?;
        self.local_copy(fx, param.name.as_ref(), ty, value, param.span)
    }

    /// A fragment input `[[render_target_array_index]]` or
    /// `[[viewport_array_index]]` (`attr`) named `name`: a WebGPU render
    /// pass draws into one layer of each attachment (the one its view
    /// selects) through one viewport, and no vertex output chooses another
    /// (`outputs.rs` drops them, W0401), so the fragment reads 0, as Metal's
    /// would in a pass of one layer and one viewport.
    fn first_layer_input(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        attr: &ast::Attribute,
        ty: &Type,
    ) -> Result<Handle<Expression>> {
        let what = if attr.name == "viewport_array_index" {
            "viewport"
        } else {
            "layer"
        };
        self.global.warnings.push(
            Error::coded(
                Code::AttributeDropped,
                attr.span,
                format!(
                    "`[[{}]]` was dropped: `{name}` reads as 0 (WebGPU has no layered rendering: a render pass draws into one {what})",
                    attr.name
                ),
            )
            .note(format!("a port renders each {what} in a pass of its own and passes its number in a buffer where the shader needs it")),
        );
        let th = self.naga_type(ty, attr.span)?;
        Ok(fx.add(Expression::ZeroValue(th), attr.span))
    }

    /// Stores `value` in a fresh local named after the parameter.
    pub(super) fn local_copy(
        &mut self,
        fx: &mut FnCtx,
        name: Option<&ast::Ident>,
        ty: &Type,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<()> {
        let th = self.naga_type(ty, span)?;
        let text = name.map(|n| n.name.as_str()).unwrap_or("_");
        let var = fx.local(text, th, span);
        let ptr = fx.add(Expression::LocalVariable(var), span);
        fx.push(
            Statement::Store {
                pointer: ptr,
                value,
            },
            span,
        );
        if let Some(n) = name {
            fx.declare(
                &n.name,
                Local::Var {
                    var,
                    ty: ty.clone(),
                    is_const: false,
                },
            );
        }
        Ok(())
    }

    /// `[[stage_in]]`: one entry-point argument per member, composed into the MSL struct.
    fn bind_stage_in(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        id: StructId,
        vertex: bool,
    ) -> Result<(Vec<VertexAttribute>, u32, Vec<Varying>)> {
        let def = self.program.structs.get(id).clone();
        let decl = self.struct_decl(&def.name).cloned().ok_or_else(|| {
            Error::coded(
                Code::Unsupported,
                param.span,
                "the `[[stage_in]]` struct must be declared in this file",
            )
        })?;
        let (mut attributes, mut offset, mut varyings, mut members) =
            (Vec::new(), 0u32, Vec::new(), Vec::new());
        for (m, md) in decl.members.iter().zip(&def.members) {
            if !md.ty.unpacked().is_scalar_or_vector() || matches!(md.ty, Type::Packed(..)) {
                return Err(Error::coded(
                    Code::EntryPointSignature,
                    m.ty.span,
                    format!(
                        "`[[stage_in]]` member `{}` must be a scalar or vector",
                        m.name.name
                    ),
                ));
            }
            if !vertex && member_builtin(m) == Some("point_size") {
                members.push(self.point_size_input(fx, m, &md.ty)?);
                continue;
            }
            let layer = m.attributes.iter().find(|a| {
                matches!(
                    a.name.as_str(),
                    "render_target_array_index" | "viewport_array_index"
                )
            });
            if let (false, Some(attr)) = (vertex, layer) {
                if !matches!(md.ty, Type::Scalar(Scalar::UInt | Scalar::UShort)) {
                    return Err(Error::coded(
                        Code::EntryPointSignature,
                        m.ty.span,
                        format!(
                            "`[[{}]]` member `{}` must be a `uint` or `ushort`",
                            attr.name, m.name.name
                        ),
                    ));
                }
                members.push(self.first_layer_input(fx, &m.name.name, attr, &md.ty)?);
                continue;
            }
            let (binding, io_ty) = if vertex {
                self.vertex_attribute_input(m, &md.ty, &mut attributes, &mut offset)?
            } else {
                self.fragment_input(m, &md.ty, &mut varyings)?
            };
            members.push(self.stage_in_argument(fx, m, &md.ty, binding, &io_ty)?);
        }
        let members = self.with_padding(id, members, param.span, |_, pad| {
            fx.add(Expression::ZeroValue(pad), param.span)
        })?;
        let th = self.naga_type(&Type::Struct(id), param.span)?;
        let value = fx.add(
            Expression::Compose {
                ty: th,
                components: members,
            },
            param.span,
        );
        self.local_copy(
            fx,
            param.name.as_ref(),
            &Type::Struct(id),
            value,
            param.span,
        )?;
        Ok((attributes, offset, varyings))
    }

    /// The binding and WGSL type of the vertex attribute `m` of type `ty`:
    /// its `[[attribute(n)]]` location, and its reflection at `offset` in
    /// the packed vertex (`offset` moves past it).
    fn vertex_attribute_input(
        &mut self,
        m: &ast::Member,
        ty: &Type,
        attributes: &mut Vec<VertexAttribute>,
        offset: &mut u32,
    ) -> Result<(Binding, Type)> {
        let index = self.attribute_index(m)?;
        let (format, size) = vertex_format(ty).ok_or_else(|| {
            Error::coded(
                Code::NoWebGpuEquivalent,
                m.ty.span,
                format!("no vertex format reads `{}`", self.program.display(ty)),
            )
        })?;
        attributes.push(VertexAttribute {
            name: m.name.name.clone(),
            index,
            data_type: self.program.display(ty),
            format: format.into(),
            offset: *offset,
        });
        *offset += size;
        // WebGPU vertex inputs are 32-bit; half attributes convert in the shader.
        let io = ty.with_scalar(match ty.element_scalar() {
            Some(Scalar::Half) => Scalar::Float,
            Some(s) => s,
            None => Scalar::Float,
        });
        Ok((
            Binding::Location {
                location: index,
                interpolation: None,
                sampling: None,
                blend_src: None,
                per_primitive: false,
            },
            io,
        ))
    }

    /// The binding and WGSL type of the fragment input `m` of type `ty`: the
    /// position built-in, or the location that the library's varying table
    /// gives its name (with its reflection).
    fn fragment_input(
        &mut self,
        m: &ast::Member,
        ty: &Type,
        varyings: &mut Vec<Varying>,
    ) -> Result<(Binding, Type)> {
        if member_builtin(m) == Some("position") {
            return Ok((
                Binding::BuiltIn(BuiltIn::Position { invariant: false }),
                ty.clone(),
            ));
        }
        if member_builtin(m) == Some("point_coord") {
            return self.point_coord_input(m, ty, varyings);
        }
        if let Some(b) = member_builtin(m) {
            // Framebuffer fetch is missing from WebGPU itself, not from the
            // translation: its own code, as for a `[[color(m)]]` argument.
            if b == "color" {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    m.name.span,
                    "reading `[[color(m)]]` (framebuffer fetch) has no WebGPU equivalent",
                ));
            }
            if b == "barycentric_coord" {
                let attr = m.attributes.iter().find(|a| a.name == b);
                return Err(barycentric_refusal(attr.map_or(m.name.span, |a| a.span)));
            }
            return Err(Error::coded(
                Code::Unsupported,
                m.name.span,
                format!("`[[{b}]]` is not supported as a `[[stage_in]]` member"),
            ));
        }
        let key = link_key(m);
        let text = interpolation_of(&m.attributes, ty).2;
        let slot = self
            .varying_slot(&key, &text)
            .expect("fragment inputs are in the table");
        varyings.push(Varying {
            name: key,
            location: slot.location,
            data_type: self.program.display(ty),
            interpolation: slot.text.clone(),
        });
        Ok((
            Binding::Location {
                location: slot.location,
                interpolation: Some(slot.interpolation),
                sampling: slot.sampling,
                blend_src: None,
                per_primitive: false,
            },
            io_type(ty),
        ))
    }

    /// A `[[stage_in]]` member `m` of type `ty` as an entry-point argument
    /// of type `io_ty`, converted to `ty`.
    fn stage_in_argument(
        &mut self,
        fx: &mut FnCtx,
        m: &ast::Member,
        ty: &Type,
        binding: Binding,
        io_ty: &Type,
    ) -> Result<Handle<Expression>> {
        let th = self.naga_type(io_ty, m.ty.span)?;
        let i = fx.function.arguments.len() as u32;
        fx.function.arguments.push(naga::FunctionArgument {
            name: Some(m.name.name.clone()),
            ty: th,
            binding: Some(binding),
        });
        let arg = fx.add(Expression::FunctionArgument(i), m.ty.span);
        self.convert(fx, arg, io_ty, ty, true, m.ty.span)
    }

    pub(super) fn attribute_index(&self, m: &ast::Member) -> Result<u32> {
        let a = m
            .attributes
            .iter()
            .find(|a| a.name == "attribute")
            .ok_or_else(|| {
                Error::coded(
                    Code::EntryPointSignature,
                    m.name.span,
                    format!(
                        "vertex `[[stage_in]]` member `{}` needs `[[attribute(n)]]`",
                        m.name.name
                    ),
                )
            })?;
        let [arg] = a.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                "`attribute` takes one index",
            ));
        };
        crate::sema::consteval::eval(self.program, arg)?
            .as_int()
            .filter(|i| *i >= 0)
            .map(|i| i as u32)
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    arg.span,
                    "attribute index must be a non-negative integer constant",
                )
            })
    }
}

/// The wgpu vertex format that reads an MSL attribute type tightly packed, and its size.
///
/// WebGPU has no 3-component formats of 8- or 16-bit components (Metal's
/// `MTLVertexFormatHalf3`, `UChar3`, ...): `half3`, `short3`, `char3` and
/// their unsigned forms read the 4-component format, whose size is Metal's
/// `sizeof` of the type (`half3` is 8 bytes, like `half4`); the shader
/// uses the first three components, as WebGPU allows a format with more
/// components than the shader's type.
fn vertex_format(ty: &Type) -> Option<(&'static str, u32)> {
    let (s, n) = match ty {
        Type::Scalar(s) => (*s, 1),
        Type::Vector(s, n) => (*s, *n),
        _ => return None,
    };
    let name = match (s, n) {
        (Scalar::Float, 1) => "float32",
        (Scalar::Float, 2) => "float32x2",
        (Scalar::Float, 3) => "float32x3",
        (Scalar::Float, 4) => "float32x4",
        (Scalar::Half, 1) => "float16",
        (Scalar::Half, 2) => "float16x2",
        (Scalar::Half, 3) => return Some(("float16x4", 8)),
        (Scalar::Half, 4) => "float16x4",
        (Scalar::Int, 1) => "sint32",
        (Scalar::Int, 2) => "sint32x2",
        (Scalar::Int, 3) => "sint32x3",
        (Scalar::Int, 4) => "sint32x4",
        (Scalar::UInt, 1) => "uint32",
        (Scalar::UInt, 2) => "uint32x2",
        (Scalar::UInt, 3) => "uint32x3",
        (Scalar::UInt, 4) => "uint32x4",
        (Scalar::UChar, 1) => "uint8",
        (Scalar::UChar, 2) => "uint8x2",
        (Scalar::UChar, 3) => return Some(("uint8x4", 4)),
        (Scalar::UChar, 4) => "uint8x4",
        (Scalar::Char, 1) => "sint8",
        (Scalar::Char, 2) => "sint8x2",
        (Scalar::Char, 3) => return Some(("sint8x4", 4)),
        (Scalar::Char, 4) => "sint8x4",
        (Scalar::UShort, 1) => "uint16",
        (Scalar::UShort, 2) => "uint16x2",
        (Scalar::UShort, 3) => return Some(("uint16x4", 8)),
        (Scalar::UShort, 4) => "uint16x4",
        (Scalar::Short, 1) => "sint16",
        (Scalar::Short, 2) => "sint16x2",
        (Scalar::Short, 3) => return Some(("sint16x4", 8)),
        (Scalar::Short, 4) => "sint16x4",
        _ => return None,
    };
    Some((name, s.size() * u32::from(n)))
}
