//! Function constants as WGSL `override`s (the model is described in
//! `sema::function_constants`): each is created on first use, so the module
//! holds only those some function reads, and reflection lists per function
//! the ones its WGSL reaches, with the conditional arguments
//! (`[[buffer(n), function_constant(b)]]`) each one switches on. Such an
//! argument keeps its WGSL binding whatever `b` is (a binding cannot depend
//! on an override); the source's reads of it are guarded by `b` as the
//! source guards them, and a host binds it only when `b` is true (the
//! runner binds a placeholder otherwise).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::entry::compute::KernelParam;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{ConditionalArgument, FunctionConstantReflection, FunctionReflection};
use crate::sema::consteval::ConstValue;
use crate::sema::function_constant_values::Given;
use crate::sema::function_constants::{FunctionConstant, IS_DEFINED};
use crate::sema::{callgraph, Symbol};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Override};
use std::collections::BTreeSet;

impl Lowerer<'_, '_> {
    /// A read of function constant `i`: `Expression::Override`, or for a
    /// vector constant a `Compose` of its components' overrides.
    pub(in crate::lower) fn function_constant(
        &mut self,
        fx: &mut FnCtx,
        i: usize,
        span: Span,
    ) -> Result<Value> {
        let c = self.program.function_constants[i].clone();
        // Given a value at translation: a constant, no override.
        if let Given::Value(v) = &c.given {
            return Ok(self.const_value(fx, v, span));
        }
        if c.is_wide() {
            return self.wide_function_constant(fx, &c, span);
        }
        let scalar = Type::Scalar(c.ty);
        let ty = match c.components {
            1 => scalar.clone(),
            n => Type::Vector(c.ty, n),
        };
        let ids = match c.components {
            1 => vec![c.index],
            _ => c.component_ids.clone(),
        };
        let mut parts = Vec::with_capacity(ids.len());
        for (k, id) in ids.into_iter().enumerate() {
            let init = self.unset_constant_default(&scalar, c.span)?;
            let name = match c.components {
                1 => c.name.clone(),
                _ => format!("{}_{}", c.name, ["x", "y", "z", "w"][k]),
            };
            let h = self.override_with_id(id, &name, &scalar, init, c.span)?;
            parts.push(fx.add(Expression::Override(h), span));
        }
        let value = match parts.as_slice() {
            [one] => *one,
            _ => {
                let t = self.naga_type(&ty, span)?;
                fx.add(
                    Expression::Compose {
                        ty: t,
                        components: parts,
                    },
                    span,
                )
            }
        };
        // With `half` as `f32`, the host's value rounds to half precision
        // here; a `bfloat` one rounds to `bfloat`.
        Ok(Value::Rv(self.round_float_value(fx, value, &ty, span), ty))
    }

    /// A read of the 64-bit function constant `c`: its low word's override
    /// at `c.index` and its high word's at `c.high_id`, joined (only the
    /// low word where `long` is 32 bits).
    fn wide_function_constant(
        &mut self,
        fx: &mut FnCtx,
        c: &FunctionConstant,
        span: Span,
    ) -> Result<Value> {
        use naga::{BinaryOperator as Bo, ScalarKind};
        let word = Type::Scalar(Scalar::UInt);
        let mut words = Vec::new();
        let high = c.high_id.expect("64-bit constants have a high word");
        // Where `long` is 32 bits, the high word is not declared at all.
        let narrow = self.narrows_wide_integers();
        let parts = [(c.index, c.name.clone()), (high, format!("{}_hi", c.name))];
        for (id, name) in parts.into_iter().take(if narrow { 1 } else { 2 }) {
            let init = self.unset_constant_default(&word, c.span)?;
            let h = self.override_with_id(id, &name, &word, init, c.span)?;
            words.push(fx.add(Expression::Override(h), span));
        }
        let ty = Type::Scalar(c.ty);
        let signed = c.ty == Scalar::Long;
        let cast = |fx: &mut FnCtx, expr, kind, convert| {
            fx.add(
                Expression::As {
                    expr,
                    kind,
                    convert,
                },
                span,
            )
        };
        if narrow {
            self.warn_narrowed_wide(span);
            let low = match signed {
                true => cast(fx, words[0], ScalarKind::Sint, None),
                false => words[0],
            };
            return Ok(Value::Rv(low, ty));
        }
        self.check_64_bit(span)?;
        let low = cast(fx, words[0], ScalarKind::Uint, Some(8));
        let high = cast(fx, words[1], ScalarKind::Uint, Some(8));
        let shift = self.u32_lit(fx, 32, span);
        let high = fx.add(
            Expression::Binary {
                op: Bo::ShiftLeft,
                left: high,
                right: shift,
            },
            span,
        );
        let mut value = fx.add(
            Expression::Binary {
                op: Bo::InclusiveOr,
                left: low,
                right: high,
            },
            span,
        );
        if signed {
            value = cast(fx, value, ScalarKind::Sint, None);
        }
        Ok(Value::Rv(value, ty))
    }

    /// The default of a function constant's override: zero, for every
    /// constant. An optional constant's value is then unobservable behind
    /// its `defined` flag (which defaults to `false`). A required one
    /// (never asked about) must be set in Metal, where
    /// `makeFunction(name:constantValues:)` fails without it, so a Metal
    /// program never reads it unset; the default only lets a WebGPU
    /// pipeline be created without pipeline constants (wgpu refuses an
    /// override with neither a default nor a value), and reflection still
    /// reports it `required`, which the runner enforces.
    fn unset_constant_default(
        &mut self,
        ty: &Type,
        span: Span,
    ) -> Result<Option<Handle<Expression>>> {
        let t = self.naga_type(ty, span)?;
        Ok(Some(
            self.global
                .module
                .global_expressions
                .append(Expression::ZeroValue(t), Self::span(span)),
        ))
    }

    /// Makes the function being lowered read function constant `i` (the
    /// condition of one of its conditional arguments) even where its body
    /// does not: reflection then lists the constant for the function, and
    /// the module declares its override, so a host sets it (and a required
    /// one must be set) as Metal needs it to decide whether the argument
    /// exists.
    pub(in crate::lower) fn read_condition(
        &mut self,
        fx: &mut FnCtx,
        param: &KernelParam,
    ) -> Result<()> {
        let param = match param {
            KernelParam::Buffer { param, .. }
            | KernelParam::Texture { param, .. }
            | KernelParam::Sampler { param, .. } => *param,
            _ => return Ok(()),
        };
        let Some(a) = param
            .attributes
            .iter()
            .find(|a| a.name == "function_constant")
        else {
            return Ok(());
        };
        let i = self.program.argument_condition(param, a)?.constant;
        let value = self.function_constant(fx, i, a.span)?;
        let Value::Rv(h, _) = value else {
            unreachable!("function constants are values")
        };
        // Named, the read survives compaction (a module of one function).
        let name = format!("{}_condition", self.program.function_constants[i].name);
        fx.function.named_expressions.insert(h, name);
        Ok(())
    }

    /// `is_function_constant_defined(name)`: the companion `bool` override.
    pub(in crate::lower) fn function_constant_defined(
        &mut self,
        fx: &mut FnCtx,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = match args {
            [Expr {
                kind: ExprKind::Name(path),
                ..
            }] if path.len() == 1 => path[0].as_str(),
            _ => {
                return Err(Error::coded(
                    Code::InvalidBuiltinArgument,
                    span,
                    format!("`{IS_DEFINED}` takes the name of a function constant"),
                ))
            }
        };
        let Some(Symbol::FunctionConstant(i)) = self.program.symbols.get(name) else {
            return Err(Error::coded(
                Code::InvalidBuiltinArgument,
                args[0].span,
                format!("`{name}` is not a function constant (`[[function_constant(n)]]`)"),
            ));
        };
        let c = self.program.function_constants[*i].clone();
        // Known at translation when a value (or `undefined`) was given.
        match c.given {
            Given::Value(_) => return Ok(self.const_value(fx, &ConstValue::Bool(true), span)),
            Given::Undefined => return Ok(self.const_value(fx, &ConstValue::Bool(false), span)),
            Given::No => {}
        }
        let id = c.defined_id.expect("sema marks every queried constant");
        let init = self.global.module.global_expressions.append(
            Expression::Literal(naga::Literal::Bool(false)),
            Self::span(c.span),
        );
        let name = format!("{}_is_defined", c.name);
        let h = self.override_with_id(id, &name, &Type::BOOL, Some(init), c.span)?;
        Ok(Value::Rv(fx.add(Expression::Override(h), span), Type::BOOL))
    }

    /// A constant computed from function constants: its initializer,
    /// lowered where it is used and converted to the declared type.
    pub(in crate::lower) fn spec_constant(
        &mut self,
        fx: &mut FnCtx,
        i: usize,
        span: Span,
    ) -> Result<Value> {
        let c = self.program.spec_constants[i].clone();
        // The initializer's names mean program-scope ones, not this
        // function's locals.
        let mut shadowed = None;
        callgraph::visit_expr(c.init, &mut |e| {
            if let ExprKind::Name(path) = &e.kind {
                if path.len() == 1 && fx.lookup(&path[0]).is_some() {
                    shadowed.get_or_insert(path[0].clone());
                }
            }
        });
        if let Some(local) = shadowed {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                format!(
                    "`{}` uses `{local}`, which a local variable hides here",
                    c.name
                ),
            )
            .note("rename the local variable"));
        }
        let (h, from) = self.rvalue(fx, c.init)?;
        let h = self.convert(fx, h, &from, &c.ty, false, c.init.span)?;
        Ok(Value::Rv(h, c.ty))
    }

    /// The override with pipeline-constant id `id`, created on first use.
    fn override_with_id(
        &mut self,
        id: u16,
        name: &str,
        ty: &Type,
        init: Option<Handle<Expression>>,
        span: Span,
    ) -> Result<Handle<Override>> {
        if let Some((h, _)) = self
            .global
            .module
            .overrides
            .iter()
            .find(|(_, o)| o.id == Some(id))
        {
            return Ok(h);
        }
        let ty = self.naga_type(ty, span)?;
        Ok(self.global.module.overrides.append(
            Override {
                name: Some(name.to_string()),
                id: Some(id),
                ty,
                init,
            },
            Self::span(span),
        ))
    }
}

/// The function constants `entry`'s WGSL reads (directly or through the
/// functions it calls), for reflection, each with the arguments of
/// `function` (an entry point's reflection) that it conditions.
pub(in crate::lower) fn reflect(
    program: &crate::sema::Program,
    module: &naga::Module,
    entry: &naga::Function,
    function: &mut FunctionReflection,
) {
    let mut constants = reached(program, module, entry);
    let decl = program
        .functions
        .iter()
        .find(|d| d.stage.is_some() && d.name.name == function.name);
    for p in decl.iter().flat_map(|d| &d.params) {
        let Some(a) = p.attributes.iter().find(|a| a.name == "function_constant") else {
            continue;
        };
        let (Ok(condition), Some(name)) = (program.argument_condition(p, a), &p.name) else {
            continue;
        };
        let Some(arg) = function.arguments.iter_mut().find(|g| g.name == name.name) else {
            continue;
        };
        let fc = &program.function_constants[condition.constant];
        // Specialised at translation: whether the argument exists is
        // known, as in a Metal function made with the value, whose
        // reflection reports a missing argument inactive.
        let known = match &fc.given {
            Given::Value(v) => Some(v.as_f64().is_some_and(|x| x != 0.0)),
            Given::Undefined => Some(false),
            Given::No => None,
        };
        if let Some(value) = known {
            arg.active &= value != condition.negated;
            continue;
        }
        if let Some(c) = constants.iter_mut().find(|c| c.index == fc.index) {
            c.arguments.push(ConditionalArgument {
                name: arg.name.clone(),
                kind: arg.kind,
                index: arg.index,
                when_false: condition.negated,
            });
        }
    }
    function.function_constants = constants;
}

/// The function constants `entry`'s WGSL reads (directly or through the
/// functions it calls).
fn reached(
    program: &crate::sema::Program,
    module: &naga::Module,
    entry: &naga::Function,
) -> Vec<FunctionConstantReflection> {
    let mut ids = BTreeSet::new();
    let callees = crate::lower::passes::ir_walk::callees(entry, module);
    for f in std::iter::once(entry).chain(callees.iter().map(|h| &module.functions[*h])) {
        for (_, e) in f.expressions.iter() {
            if let Expression::Override(h) = *e {
                ids.extend(module.overrides[h].id);
            }
        }
    }
    program
        .function_constants
        .iter()
        .filter(|c| ids.contains(&c.index) || c.defined_id.is_some_and(|d| ids.contains(&d)))
        .map(|c| constant_reflection(program, module, c))
        .collect()
}

/// The reflection of function constant `c` in a translation whose module
/// is `module`.
pub(in crate::lower) fn constant_reflection(
    program: &crate::sema::Program,
    module: &naga::Module,
    c: &FunctionConstant,
) -> FunctionConstantReflection {
    // Ids only where the WGSL has their overrides (not a high word when
    // `long` is 32 bits, nor a flag or value known at translation).
    let declared = |id: &u16| module.overrides.iter().any(|(_, o)| o.id == Some(*id));
    FunctionConstantReflection {
        name: c.name.clone(),
        index: c.index,
        data_type: program.display(&match c.components {
            1 => Type::Scalar(c.ty),
            n => Type::Vector(c.ty, n),
        }),
        required: c.defined_id.is_none(),
        defined_id: c.defined_id.filter(declared),
        component_ids: c.component_ids.clone(),
        high_id: c.high_id.filter(declared),
        arguments: Vec::new(),
        needed_at_translation: false,
    }
}

/// The reflection of entry point `f` (of `stage`), left out of the WGSL
/// because it needs the values of the function constants `needed` at
/// translation (W0415): its name, stage and those constants, each
/// [`FunctionConstantReflection::needed_at_translation`].
pub(in crate::lower) fn awaiting_reflection(
    program: &crate::sema::Program,
    module: &naga::Module,
    f: &crate::syntax::ast::FunctionDecl,
    stage: crate::syntax::ast::Stage,
    needed: &BTreeSet<usize>,
) -> FunctionReflection {
    use crate::reflect::Stage;
    let function_constants = needed
        .iter()
        .map(|&i| FunctionConstantReflection {
            needed_at_translation: true,
            ..constant_reflection(program, module, &program.function_constants[i])
        })
        .collect();
    FunctionReflection {
        name: f.name.name.clone(),
        wgsl_entry_point: String::new(),
        stage: match stage {
            crate::syntax::ast::Stage::Kernel => Stage::Kernel,
            crate::syntax::ast::Stage::Vertex => Stage::Vertex,
            crate::syntax::ast::Stage::Fragment => Stage::Fragment,
        },
        workgroup_size: None,
        arguments: Vec::new(),
        builtins: Vec::new(),
        dispatch_binding: None,
        uses_barriers: false,
        required_features: Vec::new(),
        required_limits: Default::default(),
        simd_groups: None,
        constexpr_samplers: Vec::new(),
        vertex_attributes: Vec::new(),
        vertex_stride: 0,
        varyings: Vec::new(),
        color_outputs: Vec::new(),
        function_constants,
        stitchable: None,
        point_sprite: None,
        stage_input: None,
        draw_parameters_binding: None,
        vertex_dispatch: None,
    }
}

/// The warning for entry point `name`, left out of the WGSL because
/// lowering it needed a function constant's value (`e`, E0336).
pub(in crate::lower) fn left_for_constants(name: &str, e: Error) -> Error {
    let mut w = Error::coded(
        Code::FunctionLeftForConstants,
        e.span,
        format!("`{name}` is left out of the WGSL: {}", e.message),
    );
    for note in e.notes {
        w = w.note(note);
    }
    w.note("reflection lists the constants it waits for (`neededAtTranslation`)")
}
