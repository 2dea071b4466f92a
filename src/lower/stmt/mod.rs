//! Statements and local declarations.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, PtrValue, Value};
use crate::lower::metal::resource_choice::Initialiser;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval;
use crate::source_map::Span;
use crate::syntax::ast::{self, Init, Stmt, StmtKind, SwitchItem, VarDecl};
use crate::types::{AddressSpace, Scalar, Type};
use naga::{Block, Expression, Handle, Statement};

mod function_names;
mod local_types;
pub(in crate::lower) use local_types::value_expr;
mod range_for;

impl Lowerer<'_, '_> {
    /// Lowers one statement into the current block.
    pub(in crate::lower) fn stmt(&mut self, fx: &mut FnCtx, s: &Stmt) -> Result<()> {
        match self.predicated_stmt(fx, s) {
            Some(lowered) => lowered,
            None => self.plain_stmt(fx, s),
        }
    }

    /// Lowers one statement as it is (see [`Lowerer::predicated_stmt`]).
    pub(in crate::lower) fn plain_stmt(&mut self, fx: &mut FnCtx, s: &Stmt) -> Result<()> {
        let span = s.span;
        match &s.kind {
            StmtKind::Empty => {}
            StmtKind::StaticAssert(a) => crate::sema::static_assert::check(self.program, a)?,
            // Where a statement stands alone (`if (c) using T = int;`)
            // its name reaches nothing.
            StmtKind::Alias(a) => {
                self.local_alias_replacement(fx, a)?;
            }
            StmtKind::LocalType(t) => {
                self.local_type(fx, t)?;
            }
            StmtKind::Block(b) => {
                fx.open();
                let r = self.stmts(fx, &b.stmts);
                let block = fx.close();
                r?;
                fx.push(Statement::Block(block), span);
            }
            StmtKind::Expr(e) => {
                fx.discarded = Some(e.span);
                let r = self.with_combined_store(fx, span, |this, fx| {
                    this.choosing_statement(fx, e.span, &|l, fx| l.expr(fx, e))
                });
                fx.discarded = None;
                r?;
            }
            StmtKind::Decl(d) => self.declaration(fx, d)?,
            StmtKind::If {
                cond,
                then,
                otherwise,
                is_constexpr: true,
            } if self
                .program
                .constexpr_branch(cond, then, otherwise)
                .is_some() =>
            {
                let taken = self
                    .program
                    .constexpr_branch(cond, then, otherwise)
                    .flatten();
                if let Some(taken) = taken {
                    self.stmt(fx, taken)?;
                }
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
                ..
            } => self.if_stmt(fx, cond, then, otherwise.as_deref(), span)?,
            StmtKind::RangeFor {
                ty,
                name,
                range,
                body,
            } => self.range_for(fx, ty, name, range, body, span)?,
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => self.for_loop(
                fx,
                init.as_deref(),
                cond.as_ref(),
                step.as_ref(),
                body,
                span,
            )?,
            StmtKind::While { cond, body } => {
                let body = self.loop_body(fx, Some(cond), body)?;
                fx.push(
                    Statement::Loop {
                        body,
                        continuing: Block::new(),
                        break_if: None,
                    },
                    span,
                );
            }
            StmtKind::DoWhile { body, cond } => self.do_while(fx, body, cond, span)?,
            StmtKind::Switch { selector, items } => self.switch(fx, selector, items, span)?,
            StmtKind::Break => {
                if fx.breakables == 0 {
                    return Err(Error::coded(
                        Code::ControlFlow,
                        span,
                        "`break` statement not in loop or switch statement",
                    ));
                }
                fx.push(Statement::Break, span);
            }
            StmtKind::Continue => {
                if fx.loops == 0 {
                    return Err(Error::coded(
                        Code::ControlFlow,
                        span,
                        "`continue` statement not in loop statement",
                    ));
                }
                fx.push(Statement::Continue, span);
            }
            StmtKind::Return(value) => self.return_stmt(fx, value.as_ref(), span)?,
        }
        Ok(())
    }

    /// `if (cond) then else otherwise`
    fn if_stmt(
        &mut self,
        fx: &mut FnCtx,
        cond: &ast::Expr,
        then: &Stmt,
        otherwise: Option<&Stmt>,
        span: Span,
    ) -> Result<()> {
        let condition = self.scalar_condition(fx, cond)?;
        // A condition known at translation time (`if (p)` of a pointer
        // known to be null, `if (kFlag)` of a constant): the branch not
        // taken never runs, so it is not translated, and a use there of a
        // null pointer is no error (C++ only forbids evaluating one).
        if let Some(taken) = self.known_truth(fx, condition) {
            let taken = if taken { Some(then) } else { otherwise };
            if let Some(taken) = taken {
                let block = self.nested(fx, taken)?;
                fx.push(Statement::Block(block), span);
            }
            return Ok(());
        }
        let accept = self.nested(fx, then)?;
        let reject = match otherwise {
            Some(o) => self.nested(fx, o)?,
            None => Block::new(),
        };
        fx.push(
            Statement::If {
                condition,
                accept,
                reject,
            },
            span,
        );
        Ok(())
    }

    /// `for (init; cond; step) body`: a block holding `init` and a loop whose
    /// continuing block runs `step`.
    fn for_loop(
        &mut self,
        fx: &mut FnCtx,
        init: Option<&Stmt>,
        cond: Option<&ast::Expr>,
        step: Option<&ast::Expr>,
        body: &Stmt,
        span: Span,
    ) -> Result<()> {
        fx.open();
        if let Some(init) = init {
            self.stmt(fx, init)?;
        }
        let body = self.loop_body(fx, cond, body)?;
        fx.open();
        if let Some(step) = step {
            self.expr(fx, step)?;
        }
        let continuing = fx.close();
        fx.push(
            Statement::Loop {
                body,
                continuing,
                break_if: None,
            },
            span,
        );
        let outer = fx.close();
        fx.push(Statement::Block(outer), span);
        Ok(())
    }

    /// `do body while (cond);`: a loop that breaks, after the body, when
    /// `cond` is false.
    fn do_while(
        &mut self,
        fx: &mut FnCtx,
        body: &Stmt,
        cond: &ast::Expr,
        span: Span,
    ) -> Result<()> {
        fx.loops += 1;
        fx.breakables += 1;
        let body = self.nested(fx, body);
        fx.loops -= 1;
        fx.breakables -= 1;
        let body = body?;
        fx.open();
        let c = self.scalar_condition(fx, cond)?;
        let stop = fx.add(
            Expression::Unary {
                op: naga::UnaryOperator::LogicalNot,
                expr: c,
            },
            cond.span,
        );
        let continuing = fx.close();
        fx.push(
            Statement::Loop {
                body,
                continuing,
                break_if: Some(stop),
            },
            span,
        );
        Ok(())
    }

    /// The statements of a block. A local alias (`using T = float;`,
    /// `typedef float T;`) or local struct (`struct S {..};`) names its
    /// type to the end of the block (C++ [basic.scope.block]): it is
    /// substituted into the statements after it.
    pub(in crate::lower) fn stmts(&mut self, fx: &mut FnCtx, stmts: &[Stmt]) -> Result<()> {
        // What the block's local types (and locals holding a function,
        // `function_names`) named so far stand for. Each later
        // statement is copied and substituted once with all of them (not
        // the rest of the block once per alias: MLX's kernels declare a
        // dozen aliases at the top of long bodies); all at once, so that an
        // earlier alias's type keeps meaning what its names meant where it
        // was written.
        let mut local_types = std::collections::HashMap::new();
        for (i, s) in stmts.iter().enumerate() {
            let substituted;
            let s = if local_types.is_empty() {
                s
            } else {
                let mut copy = s.clone();
                crate::sema::subst::Subst::new(&local_types).stmt(&mut copy);
                substituted = copy;
                &substituted
            };
            match &s.kind {
                StmtKind::Alias(a) => local_types.extend(self.local_alias_replacement(fx, a)?),
                StmtKind::LocalType(t) => local_types.extend(self.local_type(fx, t)?),
                StmtKind::Decl(v) => match self.function_name_local(fx, v, &stmts[i + 1..])? {
                    Some(function) => local_types.extend(function),
                    None => self.stmt(fx, s)?,
                },
                _ => self.stmt(fx, s)?,
            }
        }
        Ok(())
    }

    /// What a local alias's name stands for, once its type is checked.
    fn local_alias_replacement(
        &mut self,
        fx: &mut FnCtx,
        a: &ast::Alias,
    ) -> Result<std::collections::HashMap<String, crate::sema::subst::Replacement>> {
        if !a.array.is_empty() || !a.layout.is_empty() {
            return Err(Error::coded(
                Code::Unsupported,
                a.span,
                "local typedefs of arrays or with attributes are not supported; declare it at program scope",
            ));
        }
        // `using T = decltype(local);`: the local's type, written out.
        let mut written = self.written_local_type(fx, &a.ty)?;
        let ty = self.program.resolve_type(&written)?;
        // An alias of a struct template instance (`using K = Kernel<T, 4>;`)
        // names the instance, so that `K::acc_type` and `K::size` are its
        // members (as for a type parameter bound to an instance).
        if let (Type::Struct(id), false) = (&ty, written.args.is_empty()) {
            if written.ptr_ops.is_empty() {
                written.path = vec![self.program.struct_name(*id).to_string()];
                written.args.clear();
            }
        }
        let replacement = crate::sema::subst::Replacement::Type(written);
        Ok([(a.name.name.clone(), replacement)].into_iter().collect())
    }

    /// A statement in its own block (branches, loop bodies).
    fn nested(&mut self, fx: &mut FnCtx, s: &Stmt) -> Result<Block> {
        fx.open();
        let r = match &s.kind {
            StmtKind::Block(b) => self.stmts(fx, &b.stmts),
            _ => self.stmt(fx, s),
        };
        let block = fx.close();
        r.map(|_| block)
    }

    /// `if (!cond) break;` followed by the body.
    fn loop_body(
        &mut self,
        fx: &mut FnCtx,
        cond: Option<&ast::Expr>,
        body: &Stmt,
    ) -> Result<Block> {
        fx.open();
        if let Some(cond) = cond {
            let c = self.scalar_condition(fx, cond)?;
            let mut stop = Block::new();
            stop.push(Statement::Break, Self::span(cond.span));
            fx.push(
                Statement::If {
                    condition: c,
                    accept: Block::new(),
                    reject: stop,
                },
                cond.span,
            );
        }
        fx.loops += 1;
        fx.breakables += 1;
        let inner = self.nested(fx, body);
        fx.loops -= 1;
        fx.breakables -= 1;
        let inner = inner?;
        fx.push(Statement::Block(inner), body.span);
        Ok(fx.close())
    }

    fn return_stmt(&mut self, fx: &mut FnCtx, value: Option<&ast::Expr>, span: Span) -> Result<()> {
        // `f(..); return;` after a tail call lowered as a jump
        // (`cxx/tail_calls.rs`): nothing runs after it.
        if value.is_none() && fx.terminated() {
            return Ok(());
        }
        if fx.inlined > 0 {
            return Err(Error::coded(
                Code::PointerMember,
                span,
                "a `return` before the end of a constructor of a struct holding pointers is not supported",
            )
            .note("such a constructor is translated in place, as no WGSL function can return pointers; let its body end without returning early"));
        }
        // `return a;` of the reference parameter the call stands for.
        if let (Some(p), Some(ast::ExprKind::Name(path))) =
            (&fx.returned_parameter, value.map(|e| &e.kind))
        {
            if path.len() == 1 && path[0] == *p {
                fx.push(Statement::Return { value: None }, span);
                return Ok(());
            }
        }
        let value = self.returned_value(fx, value, span)?;
        // `return f(..);` of a tail call lowered as a jump: its value is a
        // placeholder, and the jump ends the block.
        if fx.terminated() {
            return Ok(());
        }
        fx.push(Statement::Return { value }, span);
        Ok(())
    }

    /// The value `return value;` hands back, converted to the function's
    /// return type (`None` for a `void` function).
    pub(in crate::lower) fn returned_value(
        &mut self,
        fx: &mut FnCtx,
        value: Option<&ast::Expr>,
        span: Span,
    ) -> Result<Option<Handle<Expression>>> {
        // The first `return x;` of an `auto` function gives its type.
        if let (true, Some(e)) = (fx.deduce_return, value) {
            if matches!(e.kind, ast::ExprKind::InitList(_)) {
                return Err(Error::coded(
                    Code::InvalidInitializer,
                    e.span,
                    "cannot deduce an `auto` return type from a braced list",
                ));
            }
            let (h, t) = self.rvalue(fx, e)?;
            self.deduce_return(fx, &t, e.span)?;
            return Ok(Some(h));
        }
        fx.deduce_return = false;
        let ret = fx.return_type.clone();
        let value = match (value, &ret) {
            (None, Type::Void) => None,
            (Some(e), Type::Void) => {
                let v = self.expr(fx, e)?;
                if !matches!(v, Value::Void) {
                    return Err(Error::coded(
                        Code::ControlFlow,
                        e.span,
                        "void function should not return a value",
                    ));
                }
                None
            }
            (None, _) => {
                return Err(Error::coded(
                    Code::ControlFlow,
                    span,
                    "non-void function should return a value",
                ))
            }
            (Some(e), ty) => {
                let h = if let ast::ExprKind::InitList(items) = &e.kind {
                    self.braced_list(fx, items, ty, e.span)?.0
                } else {
                    let (h, t) = self.rvalue(fx, e)?;
                    self.convert(fx, h, &t, ty, false, e.span)?
                };
                Some(h)
            }
        };
        Ok(match (value, fx.output.clone()) {
            (Some(v), Some(adapter)) => Some(self.adapt_output(fx, &adapter, v, span)?),
            (v, _) => v,
        })
    }

    fn switch(
        &mut self,
        fx: &mut FnCtx,
        selector: &ast::Expr,
        items: &[SwitchItem],
        span: Span,
    ) -> Result<()> {
        let (h, sel_ty) = self.switch_selector(fx, selector)?;
        let labels = switch_labels(items)?;
        let mut cases = Vec::new();
        let mut seen = Vec::new();
        fx.breakables += 1;
        let result = (|| {
            for (k, (value, lspan, at)) in labels.iter().enumerate() {
                let value = self.case_value(*value, *lspan, &sel_ty, &mut seen)?;
                let direct_empty = items
                    .get(at + 1)
                    .is_none_or(|i| matches!(i, SwitchItem::Label(..)));
                let is_last = k + 1 == labels.len();
                if direct_empty && !is_last {
                    cases.push(naga::SwitchCase {
                        value,
                        body: Block::new(),
                        fall_through: true,
                    });
                    continue;
                }
                let body = self.case_body(fx, &items[at + 1..])?;
                cases.push(naga::SwitchCase {
                    value,
                    body,
                    fall_through: false,
                });
            }
            Ok(())
        })();
        fx.breakables -= 1;
        result?;
        if !seen.contains(&None) {
            cases.push(naga::SwitchCase {
                value: naga::SwitchValue::Default,
                body: Block::new(),
                fall_through: false,
            });
        }
        fx.push(Statement::Switch { selector: h, cases }, span);
        Ok(())
    }

    /// The selector of a `switch`: an integer (or `bool`) as `i32`, or a
    /// `uint` as `u32`.
    fn switch_selector(
        &mut self,
        fx: &mut FnCtx,
        selector: &ast::Expr,
    ) -> Result<(naga::Handle<Expression>, Type)> {
        let (h, t) = self.rvalue(fx, selector)?;
        let sel_ty = match t {
            Type::Scalar(Scalar::UInt) => Type::UINT,
            Type::Scalar(s) if s.is_integer() || s == Scalar::Bool => Type::INT,
            _ => {
                return Err(Error::coded(
                    Code::TypeMismatch,
                    selector.span,
                    "statement requires expression of integer type",
                ))
            }
        };
        let h = self.convert(fx, h, &t, &sel_ty, false, selector.span)?;
        Ok((h, sel_ty))
    }

    /// The value of a `case` label (`default` for `None`), which must not
    /// be in `seen` yet.
    fn case_value(
        &self,
        value: Option<&ast::Expr>,
        lspan: Span,
        sel_ty: &Type,
        seen: &mut Vec<Option<i64>>,
    ) -> Result<naga::SwitchValue> {
        Ok(match value {
            Some(e) => {
                let v = consteval::eval(self.program, e)?.as_int().ok_or_else(|| {
                    Error::coded(
                        Code::NotConstant,
                        e.span,
                        "case value is not an integer constant",
                    )
                })?;
                if seen.contains(&Some(v)) {
                    return Err(Error::coded(
                        Code::ControlFlow,
                        lspan,
                        format!("duplicate case value `{v}`"),
                    ));
                }
                seen.push(Some(v));
                if *sel_ty == Type::UINT {
                    naga::SwitchValue::U32(v as u32)
                } else {
                    naga::SwitchValue::I32(v as i32)
                }
            }
            None => {
                if seen.contains(&None) {
                    return Err(Error::coded(
                        Code::ControlFlow,
                        lspan,
                        "multiple default labels in one switch",
                    ));
                }
                seen.push(None);
                naga::SwitchValue::Default
            }
        })
    }

    /// The body of a case: C++ falls through into the following statements
    /// until a terminator; WGSL cannot, so the code runs on here.
    fn case_body(&mut self, fx: &mut FnCtx, items: &[SwitchItem]) -> Result<Block> {
        fx.open();
        for item in items {
            if let SwitchItem::Stmt(st) = item {
                self.stmt(fx, st)?;
                if fx.terminated() {
                    break;
                }
            }
        }
        Ok(fx.close())
    }

    /// A local declaration with one or more declarators.
    pub(in crate::lower) fn declaration(&mut self, fx: &mut FnCtx, d: &VarDecl) -> Result<()> {
        // `auto x = e;`, `decltype(e) y;`: the type written out (deduce.rs).
        let deduced = self.deduced_declaration(fx, d)?;
        let d = deduced.as_ref().unwrap_or(d);
        if let Some((space, sspan)) = d.ty.space {
            if d.ty.ptr_ops.is_empty() {
                let msg = match space {
                    ast::AddressSpace::Threadgroup => {
                        return self.threadgroup_declaration(fx, d, sspan)
                    }
                    ast::AddressSpace::Constant => {
                        "`constant` variables must be declared at program scope"
                    }
                    ast::AddressSpace::Device => {
                        "variables cannot be declared in the `device` address space"
                    }
                    _ => "",
                };
                if !msg.is_empty() {
                    return Err(Error::coded(Code::AddressSpace, sspan, msg));
                }
            }
        }
        let base = self.program.resolve_type(&d.ty)?;
        for decl in &d.declarators {
            let ty = self.program.declarator_type(base.clone(), decl)?;
            let local = match &ty {
                Type::Pointer(p) => self.pointer_local(fx, decl, p, &ty)?,
                // `sampler s = args.smp;`: a copy names the sampler it is
                // initialized with (an argument's, a member's).
                Type::Sampler { .. } if !d.ty.is_constexpr && sampler_copy(decl).is_some() => {
                    let e = sampler_copy(decl).expect("matched");
                    let (local, t) = self.resource_local(fx, e)?;
                    if !matches!(t, Type::Sampler { .. }) {
                        return Err(Error::coded(
                            Code::TypeMismatch,
                            e.span,
                            format!(
                                "cannot initialize `sampler` with `{}`",
                                self.program.display(&t)
                            ),
                        ));
                    }
                    local
                }
                Type::Sampler { .. } => {
                    // `sampler s;`: Metal's default-constructed sampler
                    // (every state at its default, MSL §2.10), which is
                    // what `constexpr sampler s;` makes.
                    let mut ty = d.ty.clone();
                    ty.is_constexpr |= decl.init.is_none();
                    let sampler = crate::sema::sampler_decl(&ty, decl)?;
                    let (g, comparison) = self.sampler_global(&sampler, decl.span)?;
                    let h = fx.add(Expression::GlobalVariable(g), decl.span);
                    Local::Value(h, Type::Sampler { comparison })
                }
                Type::Texture(_) => {
                    // A texture variable names the texture it is initialized with.
                    let Some(Init::Expr(e)) = &decl.init else {
                        return Err(Error::coded(
                            Code::InvalidInitializer,
                            decl.name.span,
                            "a texture variable must be initialized with a texture",
                        ));
                    };
                    let (local, t) = self.resource_local(fx, e)?;
                    if !matches!(t, Type::Texture(x) if Type::Texture(crate::types::Texture { format: None, ..x }) == ty)
                    {
                        return Err(Error::coded(
                            Code::TypeMismatch,
                            e.span,
                            format!(
                                "cannot initialize `{}` with `{}`",
                                self.program.display(&ty),
                                self.program.display(&t)
                            ),
                        ));
                    }
                    local
                }
                Type::Void => {
                    return Err(Error::coded(
                        Code::InvalidType,
                        decl.name.span,
                        format!("variable `{}` has type `void`", decl.name.name),
                    ))
                }
                Type::Struct(_) if self.is_place_struct(&ty) => {
                    self.aggregate_local(fx, decl, &ty)?
                }
                Type::Array(e, _) if matches!(**e, Type::Pointer(_)) => {
                    self.pointer_array_local(fx, decl, &ty)?
                }
                _ => self.value_local(fx, decl, &ty, d.ty.is_const)?,
            };
            match &decl.init {
                Some(Init::Expr(e)) if d.ty.is_constexpr || d.ty.is_const => {
                    let e = self.decltype_members_named(fx, e);
                    let named = ast::Declarator {
                        init: Some(Init::Expr(e)),
                        ..decl.clone()
                    };
                    fx.constants.declare(self.program, &d.ty, &ty, &named);
                }
                _ => fx.constants.declare(self.program, &d.ty, &ty, decl),
            }
            if !fx.declare(&decl.name.name, local) {
                return Err(Error::coded(
                    Code::Redefinition,
                    decl.name.span,
                    format!("redefinition of `{}`", decl.name.name),
                ));
            }
        }
        Ok(())
    }

    fn value_local(
        &mut self,
        fx: &mut FnCtx,
        decl: &ast::Declarator,
        ty: &Type,
        is_const: bool,
    ) -> Result<Local> {
        if self.holds_atomic(ty) {
            let what = format!("variable `{}`", decl.name.name);
            return Err(self.atomic_copy(&what, ty, decl.name.span));
        }
        let ty_h = self.naga_type(ty, decl.name.span)?;
        let var = fx.local(&decl.name.name, ty_h, decl.name.span);
        if let Some(init) = &decl.init {
            let (h, _) = self.initializer(fx, init, ty)?;
            let ptr = fx.add(Expression::LocalVariable(var), decl.span);
            fx.push(
                Statement::Store {
                    pointer: ptr,
                    value: h,
                },
                decl.span,
            );
        } else if is_const {
            return Err(Error::coded(
                Code::InvalidInitializer,
                decl.name.span,
                format!(
                    "default initialization of an object of const type `{}`",
                    self.program.display(ty)
                ),
            ));
        } else if let Some(h) = self.default_construction(fx, decl, ty)? {
            let ptr = fx.add(Expression::LocalVariable(var), decl.span);
            fx.push(
                Statement::Store {
                    pointer: ptr,
                    value: h,
                },
                decl.span,
            );
        }
        if self.holds_union(ty) {
            return self.union_local(fx, &decl.name.name, var, ty, is_const, decl.name.span);
        }
        Ok(Local::Var {
            var,
            ty: ty.clone(),
            is_const,
        })
    }

    /// The value `T x;` gives `x` when that runs code: the struct's
    /// constructor without parameters, else its default member
    /// initializers (the other members are zero, as every WGSL variable
    /// starts); `None` when it leaves the zero value.
    fn default_construction(
        &mut self,
        fx: &mut FnCtx,
        decl: &ast::Declarator,
        ty: &Type,
    ) -> Result<Option<naga::Handle<Expression>>> {
        // A constructor's own object (`this`) is what it initializes.
        if decl.name.name != "this" {
            if let Some(v) = self.default_constructor(fx, ty, decl.name.span)? {
                let (h, _) = self.load(fx, v, decl.name.span)?;
                return Ok(Some(h));
            }
        }
        if !self.program.has_member_defaults(ty) {
            return Ok(None);
        }
        let v = consteval::ConstValue::default_of(ty, self.program);
        let Value::Rv(h, _) = self.const_value(fx, &v, decl.name.span) else {
            unreachable!("constants are values")
        };
        Ok(Some(h))
    }

    fn pointer_local(
        &mut self,
        fx: &mut FnCtx,
        decl: &ast::Declarator,
        p: &crate::types::Pointer,
        ty: &Type,
    ) -> Result<Local> {
        let Some(init) = &decl.init else {
            if p.is_reference {
                return Err(Error::coded(
                    Code::InvalidInitializer,
                    decl.name.span,
                    format!("`{}` must be initialized", self.program.display(ty)),
                ));
            }
            // `const device T* row;`, assigned later (MLX's row reductions).
            let u32_h = self.naga_type(&Type::UINT, decl.name.span)?;
            let var = fx.local(&format!("{}_index", decl.name.name), u32_h, decl.name.span);
            return Ok(Local::PendingPtr {
                var,
                ty: (*p).clone(),
            });
        };
        let Init::Expr(e) = init else {
            return Err(Error::coded(
                Code::InvalidInitializer,
                init.span(),
                "expected an expression",
            ));
        };
        // `device T* b = bufs[i];`: an element chosen at run time.
        let v = match self.initialiser(fx, e, &|l, fx| l.expr(fx, e))? {
            Initialiser::Value(v) => v,
            Initialiser::Chosen(local, _) => return Ok(local),
        };
        if p.is_reference {
            let v = match v {
                Value::Bytes(b) => return self.bytes_reference(p, b, ty, e.span),
                // A read-only reference to a value that is no WGSL place
                // (an element of a program-scope `constant` array, which
                // WGSL holds as a `const`): nothing can change what it
                // refers to, so a copy reads the same.
                Value::Rv(h, t) if p.is_const || p.space == AddressSpace::Constant => {
                    return self.constant_reference_copy(fx, decl, p, (h, t), e.span)
                }
                v => v,
            };
            let Value::Place(place) = v else {
                return Err(Error::coded(
                    Code::NotAssignable,
                    e.span,
                    "a reference must be bound to an lvalue",
                ));
            };
            if place.ty != p.pointee {
                return Err(Error::coded(
                    Code::TypeMismatch,
                    e.span,
                    format!(
                        "cannot bind `{}` to a value of type `{}`",
                        self.program.display(ty),
                        self.program.display(&place.ty)
                    ),
                ));
            }
            if !place.writable && !p.is_const && p.space != AddressSpace::Constant {
                return Err(Error::coded(
                    Code::NotAssignable,
                    e.span,
                    "binding a non-const reference to read-only memory",
                ));
            }
            return Ok(Local::Ref(place));
        }
        // `T* p = nullptr;`, `T* p = kArg ? q : nullptr;` with `kArg` false:
        // a pointer known to be null, never reassigned (`expr/assign.rs`).
        if let Value::Null(_) = v {
            return Ok(Local::Null(p.clone()));
        }
        // `threadgroup T* Qs = Q_smem;`: an array decays to a pointer to
        // its first element ([conv.array]).
        let v = self.decayed_array(fx, v, e.span);
        let Value::Ptr(q) = v else {
            return Err(Error::coded(
                Code::InvalidInitializer,
                e.span,
                format!(
                    "cannot initialize `{}` with a non-pointer value",
                    self.program.display(ty)
                ),
            ));
        };
        // A read-only buffer is `const device` or `constant` alike in WGSL
        // (a read-only storage buffer): a const pointer may hold either.
        let read_only_buffer = p.is_const
            && matches!(p.space, AddressSpace::Device | AddressSpace::Constant)
            && matches!(q.space, AddressSpace::Device | AddressSpace::Constant);
        if q.pointee != p.pointee
            || (q.is_const && !p.is_const)
            || (q.space != p.space && q.space != AddressSpace::Thread && !read_only_buffer)
        {
            return Err(Error::coded(
                Code::InvalidInitializer,
                e.span,
                format!(
                    "cannot initialize `{}` with a pointer to `{}`",
                    self.program.display(ty),
                    self.program.display(&q.pointee)
                ),
            ));
        }
        let u32_h = self.naga_type(&Type::UINT, decl.name.span)?;
        let var = fx.local(&format!("{}_index", decl.name.name), u32_h, decl.name.span);
        let ptr = fx.add(Expression::LocalVariable(var), decl.span);
        fx.push(
            Statement::Store {
                pointer: ptr,
                value: q.index,
            },
            decl.span,
        );
        Ok(Local::PtrVar {
            var,
            ptr: PtrValue {
                is_const: p.is_const,
                ..q
            },
        })
    }

    /// `device T& r = buf[i];` where `buf` is a word view: the reference is
    /// the element's bytes.
    fn bytes_reference(
        &self,
        p: &crate::types::Pointer,
        b: crate::lower::ctx::value::BytePlace,
        ty: &Type,
        span: Span,
    ) -> Result<Local> {
        if b.ty != p.pointee {
            return Err(Error::coded(
                Code::TypeMismatch,
                span,
                format!(
                    "cannot bind `{}` to a value of type `{}`",
                    self.program.display(ty),
                    self.program.display(&b.ty)
                ),
            ));
        }
        // `constant` memory is read-only: a `constant T&` is implicitly const.
        if !b.writable && !p.is_const && p.space != AddressSpace::Constant {
            return Err(Error::coded(
                Code::NotAssignable,
                span,
                "binding a non-const reference to read-only memory",
            ));
        }
        Ok(Local::Bytes(b))
    }

    /// `constant G& g = table[j];`: a read-only local holding the value.
    fn constant_reference_copy(
        &mut self,
        fx: &mut FnCtx,
        decl: &ast::Declarator,
        p: &crate::types::Pointer,
        (h, t): (naga::Handle<Expression>, Type),
        span: Span,
    ) -> Result<Local> {
        let h = self.convert(fx, h, &t, &p.pointee, false, span)?;
        let ty_h = self.naga_type(&p.pointee, decl.name.span)?;
        let var = fx.local(&decl.name.name, ty_h, decl.name.span);
        let pointer = fx.add(Expression::LocalVariable(var), decl.span);
        fx.push(Statement::Store { pointer, value: h }, decl.span);
        Ok(Local::Var {
            var,
            ty: p.pointee.clone(),
            is_const: true,
        })
    }

    /// The `var<workgroup>` of type `ty` for the `threadgroup` variable
    /// `decl` of Metal type `metal`. Every entry point declaring it shares one: each entry point
    /// runs with its own workgroup memory, and one kernel cannot reach
    /// another's declaration twice (kernels are not called), so instances of
    /// a kernel template that declare the same variable of the same type
    /// can share it, and then the helpers specialised for the memory they
    /// are passed are lowered once for all of them (MLX instantiates one
    /// GEMM template hundreds of times).
    pub(in crate::lower) fn threadgroup_global(
        &mut self,
        decl: &ast::Declarator,
        metal: &Type,
        ty: Handle<naga::Type>,
    ) -> Handle<naga::GlobalVariable> {
        // The Metal size too: a `half` array held as `f32`s must not be
        // counted as the `float` array of its WGSL type.
        let bytes = crate::layout::metal_bytes(metal, &self.program.structs);
        let key = (
            decl.name.name.clone(),
            decl.name.span.start,
            decl.name.span.end,
            ty,
            bytes,
        );
        if let Some(g) = self.global.threadgroup_variables.get(&key) {
            return *g;
        }
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(decl.name.name.clone()),
                space: naga::AddressSpace::WorkGroup,
                binding: None,
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            Self::span(decl.span),
        );
        self.global.threadgroup_variables.insert(key, g);
        self.global.threadgroup_bytes.insert(g, bytes);
        g
    }

    /// `threadgroup T x[N];` in a kernel → a `var<workgroup>` (MSL §4.4).
    fn threadgroup_declaration(
        &mut self,
        fx: &mut FnCtx,
        d: &VarDecl,
        space_span: Span,
    ) -> Result<()> {
        if !fx.kernel {
            return Err(Error::coded(
                Code::AddressSpace,
                space_span,
                "`threadgroup` variables can only be declared in a kernel function",
            ));
        }
        let base = self.program.resolve_type(&d.ty)?;
        for decl in &d.declarators {
            let ty = self.program.declarator_type(base.clone(), decl)?;
            // `threadgroup float sums[32] = {0};`: WebGPU zero-initialises
            // workgroup memory when each workgroup starts, so an all-zero
            // initializer is what the variable already holds.
            let zero = decl.init.as_ref().is_some_and(|init| {
                consteval::eval_init(self.program, init, &ty)
                    .is_ok_and(|v| v == consteval::ConstValue::zero(&ty, self.program))
            });
            if let Some(init) = decl.init.as_ref().filter(|_| !zero) {
                return Err(Error::coded(
                    Code::InvalidInitializer,
                    init.span(),
                    "`threadgroup` variables cannot have an initializer",
                )
                .note("WGSL's `var<workgroup>` takes no initializer (only all zeros, which it starts with, are accepted here); initialise the variable in code (one thread stores, then `threadgroup_barrier(mem_flags::mem_threadgroup)`)"));
            }
            // Memory the kernel views as another type (`metal/pointer_views.rs`).
            let memory =
                crate::lower::metal::pointer_views::Memory::threadgroup_variable(decl.name.span);
            if self.holds_union(&ty) || self.viewed_as_words(memory) {
                self.threadgroup_variable_as_words(fx, decl, &ty, !d.ty.is_const)?;
                continue;
            }
            let ty_h = self.naga_type(&ty, decl.name.span)?;
            let g = self.threadgroup_global(decl, &ty, ty_h);
            self.note_memory(g, memory);
            let ptr = fx.add(Expression::GlobalVariable(g), decl.span);
            let place = crate::lower::ctx::value::Place {
                ptr,
                ty,
                writable: !d.ty.is_const,
            };
            if !fx.declare(&decl.name.name, Local::Ref(place)) {
                return Err(Error::coded(
                    Code::Redefinition,
                    decl.name.span,
                    format!("redefinition of `{}`", decl.name.name),
                ));
            }
        }
        Ok(())
    }
}

/// The labels of a switch body with the index of each in `items`: each
/// starts a run of statements; a statement before every label is an error.
fn switch_labels(items: &[SwitchItem]) -> Result<Vec<(Option<&ast::Expr>, Span, usize)>> {
    let mut labels: Vec<(Option<&ast::Expr>, Span, usize)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            SwitchItem::Label(v, s) => labels.push((v.as_ref(), *s, i)),
            SwitchItem::Stmt(st) if labels.is_empty() => {
                return Err(Error::coded(
                    Code::ControlFlow,
                    st.span,
                    "statement in switch body is not reachable (no label before it)",
                ));
            }
            SwitchItem::Stmt(_) => {}
        }
    }
    Ok(labels)
}

/// The initializer of `sampler s = e;` when `e` is not a constructor call
/// (`sampler(filter::linear)`, which makes a `constexpr` sampler).
fn sampler_copy(decl: &ast::Declarator) -> Option<&ast::Expr> {
    match &decl.init {
        Some(Init::Expr(e)) if !matches!(e.kind, ast::ExprKind::Call(..)) => Some(e),
        _ => None,
    }
}
