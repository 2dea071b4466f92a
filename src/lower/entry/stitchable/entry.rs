//! The fragment entry point of a SwiftUI effect: it calls the
//! `[[stitchable]]` function as SwiftUI does and returns its colour (or,
//! for a distortion, the layer where it says).

use super::signature::Signature;
use super::{local_name, ARGUMENT_BUFFER, FUNCTION_SUFFIX, LAYER_TEXTURE};
use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{
    Argument, ColorOutput, ConstexprSampler, EffectKind, FunctionReflection, Stage, Stitchable,
    WgslBinding,
};
use crate::syntax::ast::{self, Expr, ExprKind};
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Statement};

impl Lowerer<'_, '_> {
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
        let index = self.user_function_index(f)?;
        let span = f.span;
        let float2 = Type::Vector(Scalar::Float, 2);
        let (mut fx, position) = self.fragment_context(f)?;
        let mut names = vec![local_name(&f.params[0], 0)];
        self.store_local(&mut fx, &names[0], &float2, position, span)?;
        let mut arguments = Vec::new();
        let reads_layer = sig.kind != EffectKind::ShapeStyle;
        if reads_layer {
            arguments.push(self.layer_argument(f, &sig));
        }
        self.bind_fixed(&mut fx, f, &sig, position, &mut names)?;
        let (effect_arguments, block) =
            self.bind_extras(&mut fx, f, &sig, &mut names, &mut arguments)?;
        let color = self.call_effect(&mut fx, f, &sig, index, &names)?;
        fx.push(Statement::Return { value: Some(color) }, span);
        let function = fx.finish();
        let wgsl_function = self.name_stitchable_function(&function, index);
        let constexpr_samplers = self.push_fragment_entry(f, function, &mut arguments)?;
        Ok(self.fragment_reflection(
            f,
            arguments,
            constexpr_samplers,
            Stitchable {
                kind: sig.kind,
                function: wgsl_function,
                layer_texture: reads_layer.then_some(LAYER_TEXTURE),
                argument_buffer: block.map(|_| ARGUMENT_BUFFER),
                argument_buffer_size: block.unwrap_or(0),
                arguments: effect_arguments,
            },
        ))
    }

    /// The index of `f` among the user functions.
    fn user_function_index(&self, f: &ast::FunctionDecl) -> Result<usize> {
        self.program
            .functions
            .iter()
            .position(|g| std::ptr::eq(*g, f))
            .ok_or_else(|| {
                Error::coded(
                    Code::Internal,
                    f.name.span,
                    "internal error: a `[[stitchable]]` function that is not a user function",
                )
            })
    }

    /// The entry point's function, returning the colour at `@location(0)`
    /// and taking `@builtin(position)`, with the pixel's position (its
    /// `.xy`).
    fn fragment_context(&mut self, f: &ast::FunctionDecl) -> Result<(FnCtx, Handle<Expression>)> {
        let span = f.span;
        let float4 = Type::Vector(Scalar::Float, 4);
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
        Ok((fx, position))
    }

    /// The second argument's local, for colour effects (the layer's texel
    /// at `position`) and layer effects (the layer); its name goes in
    /// `names`.
    fn bind_fixed(
        &mut self,
        fx: &mut FnCtx,
        f: &ast::FunctionDecl,
        sig: &Signature,
        position: Handle<Expression>,
        names: &mut Vec<String>,
    ) -> Result<()> {
        let span = f.span;
        let float4 = Type::Vector(Scalar::Float, 4);
        let half4 = Type::Vector(Scalar::Half, 4);
        match (&sig.kind, &sig.fixed) {
            (EffectKind::ColorEffect, Some(_)) => {
                let texel = self.layer_texel(fx, position, span)?;
                let color = self.convert(fx, texel, &float4, &half4, true, span)?;
                names.push(local_name(&f.params[1], 1));
                self.store_local(fx, &names[1], &half4, color, span)?;
            }
            (EffectKind::LayerEffect, Some(layer)) => {
                let th = self.naga_type(layer, span)?;
                let zero = fx.add(Expression::ZeroValue(th), span);
                names.push(local_name(&f.params[1], 1));
                self.store_local(fx, &names[1], layer, zero, span)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The call of `f` (user function `index`) with the locals `names`, as
    /// SwiftUI makes it, and the colour the entry point returns: `f`'s, or
    /// for a distortion the layer sampled where `f` says.
    fn call_effect(
        &mut self,
        fx: &mut FnCtx,
        f: &ast::FunctionDecl,
        sig: &Signature,
        index: usize,
        names: &[String],
    ) -> Result<Handle<Expression>> {
        let span = f.span;
        let float2 = Type::Vector(Scalar::Float, 2);
        let float4 = Type::Vector(Scalar::Float, 4);
        let exprs: Vec<Expr> = names
            .iter()
            .map(|n| Expr {
                kind: ExprKind::Name(vec![n.clone()]),
                span: f.name.span,
            })
            .collect();
        let result = self.call_user(
            fx,
            &f.name.name,
            &[index],
            Vec::new(),
            &exprs,
            f.name.span,
            span,
        )?;
        let (value, ty) = self.load(fx, result, span)?;
        if sig.kind == EffectKind::DistortionEffect {
            let at = self.convert(fx, value, &ty, &float2, false, span)?;
            self.layer_sample(fx, at, span)
        } else {
            self.convert(fx, value, &ty, &float4, true, span)
        }
    }

    /// Marks which of `arguments` `function` uses, checks the bindings and
    /// adds `function` as the fragment entry point of `f`; returns the
    /// `constexpr` samplers it uses.
    fn push_fragment_entry(
        &mut self,
        f: &ast::FunctionDecl,
        function: naga::Function,
        arguments: &mut [Argument],
    ) -> Result<Vec<ConstexprSampler>> {
        let reached = self.reached_globals(&function);
        reached.mark_active(arguments);
        let constexpr_samplers = self.used_constexpr_samplers(&reached);
        let extra: Vec<WgslBinding> = constexpr_samplers.iter().map(|s| s.binding).collect();
        self.check_binding_collisions(f, arguments, &extra)?;
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
        Ok(constexpr_samplers)
    }

    /// The reflection of the effect's fragment entry point.
    fn fragment_reflection(
        &self,
        f: &ast::FunctionDecl,
        arguments: Vec<Argument>,
        constexpr_samplers: Vec<ConstexprSampler>,
        stitchable: Stitchable,
    ) -> FunctionReflection {
        let mut required_features = self.entry.feature_names();
        if self.global.types.uses_f16 {
            required_features.push("shader-f16".to_string());
        }
        FunctionReflection {
            name: f.name.name.clone(),
            wgsl_entry_point: f.name.name.clone(),
            stage: Stage::Fragment,
            workgroup_size: None,
            arguments,
            builtins: Vec::new(),
            dispatch_binding: None,
            uses_barriers: false,
            required_features,
            required_limits: Default::default(),
            simd_groups: None,
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
            stitchable: Some(stitchable),
            point_sprite: None,
            stage_input: None,
            draw_parameters_binding: None,
            vertex_dispatch: None,
        }
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
