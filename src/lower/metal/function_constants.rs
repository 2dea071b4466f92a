//! Function constants as WGSL `override`s (the model is described in
//! `sema::function_constants`): each is created on first use, so the module
//! holds only those some function reads, and reflection lists per function
//! the ones its WGSL reaches.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::FunctionConstantReflection;
use crate::sema::function_constants::IS_DEFINED;
use crate::sema::{callgraph, Symbol};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::Type;
use naga::{Expression, Handle, Override};
use std::collections::BTreeSet;

impl Lowerer<'_, '_> {
    /// A read of function constant `i`: `Expression::Override`.
    pub(in crate::lower) fn function_constant(
        &mut self,
        fx: &mut FnCtx,
        i: usize,
        span: Span,
    ) -> Result<Value> {
        let c = self.program.function_constants[i].clone();
        let ty = Type::Scalar(c.ty);
        // Optional constants default to zero, so a pipeline may leave them
        // unset; the value is then unobservable behind the `defined` flag.
        let init = match c.defined_id {
            Some(_) => {
                let t = self.naga_type(&ty, span)?;
                Some(
                    self.global
                        .module
                        .global_expressions
                        .append(Expression::ZeroValue(t), Self::span(c.span)),
                )
            }
            None => None,
        };
        let h = self.override_with_id(c.index, &c.name, &ty, init, c.span)?;
        let value = fx.add(Expression::Override(h), span);
        // With `half` as `f32`, the host's value rounds to half precision here.
        Ok(Value::Rv(self.round_half_value(fx, value, &ty, span), ty))
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
/// functions it calls), for reflection.
pub(in crate::lower) fn reached(
    program: &crate::sema::Program,
    module: &naga::Module,
    entry: &naga::Function,
) -> Vec<FunctionConstantReflection> {
    let mut ids = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut stack = vec![entry];
    while let Some(f) = stack.pop() {
        for (_, e) in f.expressions.iter() {
            if let Expression::Override(h) = *e {
                ids.extend(module.overrides[h].id);
            }
        }
        for callee in calls(&f.body) {
            if seen.insert(callee) {
                stack.push(&module.functions[callee]);
            }
        }
    }
    program
        .function_constants
        .iter()
        .filter(|c| ids.contains(&c.index) || c.defined_id.is_some_and(|d| ids.contains(&d)))
        .map(|c| FunctionConstantReflection {
            name: c.name.clone(),
            index: c.index,
            data_type: program.display(&Type::Scalar(c.ty)),
            required: c.defined_id.is_none(),
            defined_id: c.defined_id,
        })
        .collect()
}

/// Every function a block calls, nested blocks included.
fn calls(block: &naga::Block) -> Vec<Handle<naga::Function>> {
    let mut out = Vec::new();
    for s in block.iter() {
        match s {
            naga::Statement::Call { function, .. } => out.push(*function),
            naga::Statement::Block(b) => out.extend(calls(b)),
            naga::Statement::If { accept, reject, .. } => {
                out.extend(calls(accept));
                out.extend(calls(reject));
            }
            naga::Statement::Switch { cases, .. } => {
                cases.iter().for_each(|c| out.extend(calls(&c.body)))
            }
            naga::Statement::Loop {
                body, continuing, ..
            } => {
                out.extend(calls(body));
                out.extend(calls(continuing));
            }
            _ => {}
        }
    }
    out
}
