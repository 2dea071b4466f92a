//! Constexpr functions and constructors with statement bodies, evaluated at
//! translation time (C++14 relaxed constexpr, [dcl.constexpr]/3): local
//! declarations, assignments to locals and their members or elements
//! (`++`/`--` too), `if`, `for`/`while`/`do` loops with `break` and
//! `continue`, and `return`. Struct-valued arguments, constructors (which the
//! parser turns into `S S::S(params) { S this; this.m = ..; return this; }`)
//! and user `operator` overloads, templates included, are evaluated this way,
//! so that a `static_assert` over a struct's arithmetic is checked.
//!
//! The locals of the innermost call live in a thread-local frame that
//! [`consteval::eval`] consults before program-scope names; a callee sees
//! only its own frame, as C++ scoping has it.

use super::consteval::{self, ConstValue};
use super::{Error, Program, Result, Symbol};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, Expr, ExprKind, FunctionDecl, Init, Stmt, StmtKind};
use crate::types::Type;
use std::cell::RefCell;
use std::collections::HashMap;

/// Deepest nesting of calls evaluated this way (as `constexpr_fn`'s limit).
const MAX_DEPTH: usize = 64;

/// Most statements one evaluation executes (loops included): it bounds a
/// loop that never ends, as clang's `-fconstexpr-steps` does.
const MAX_STEPS: usize = 100_000;

thread_local! {
    static FRAMES: RefCell<Vec<HashMap<String, ConstValue>>> = const { RefCell::new(Vec::new()) };
}

/// The value of local `name` of the constexpr call being evaluated, if any.
pub fn local(name: &str) -> Option<ConstValue> {
    FRAMES.with(|f| f.borrow().last().and_then(|top| top.get(name).cloned()))
}

fn set_local(name: &str, value: ConstValue) {
    FRAMES.with(|f| {
        if let Some(top) = f.borrow_mut().last_mut() {
            top.insert(name.to_string(), value);
        }
    })
}

/// The constants a function being lowered declares (`constexpr int N = 4;`),
/// visible to the constant evaluator while the guard lives, so that they
/// size arrays and serve as template arguments in that function: a frame of
/// its own, which a constexpr call evaluated meanwhile does not see.
pub struct LocalConstants {
    depth: usize,
}

impl LocalConstants {
    /// Opens the frame of a function's constants.
    pub fn open() -> Self {
        let depth = FRAMES.with(|f| {
            let mut f = f.borrow_mut();
            f.push(HashMap::new());
            f.len() - 1
        });
        LocalConstants { depth }
    }

    /// Makes `name` stand for `value` in this frame (a static constant of
    /// the struct whose member function is lowered: class scope comes
    /// before namespace scope, and a local declared later hides it).
    pub fn define(&self, name: &str, value: ConstValue) {
        FRAMES.with(|f| {
            if let Some(frame) = f.borrow_mut().get_mut(self.depth) {
                frame.insert(name.to_string(), value);
            }
        })
    }

    /// Records local `d` of declaration type `ts`: a `const` or `constexpr`
    /// scalar, or a `constexpr` struct, with a constant initializer is a
    /// constant, any other local of that name hides an earlier one.
    pub fn declare(&self, program: &Program, ts: &ast::TypeSpec, ty: &Type, d: &ast::Declarator) {
        let value = match (&d.init, ty) {
            (Some(Init::Expr(e)), Type::Scalar(_)) if ts.is_constexpr || ts.is_const => {
                consteval::eval(program, e)
                    .and_then(|v| consteval::convert(&v, ty, e.span, program))
                    .ok()
            }
            // `constexpr auto desc = matmul2d_descriptor(16, 32, 16);`: a
            // struct constant, which a template argument may be.
            (Some(init), Type::Struct(_)) if ts.is_constexpr => {
                consteval::eval_init(program, init, ty).ok()
            }
            _ => None,
        };
        FRAMES.with(|f| {
            if let Some(frame) = f.borrow_mut().get_mut(self.depth) {
                match value {
                    Some(v) => frame.insert(d.name.name.clone(), v),
                    None => frame.remove(&d.name.name),
                };
            }
        })
    }
}

impl Drop for LocalConstants {
    fn drop(&mut self) {
        FRAMES.with(|f| f.borrow_mut().truncate(self.depth));
    }
}

fn not_constant(span: Span, what: impl Into<String>) -> Error {
    Error::coded(Code::NotConstant, span, what.into())
}

/// Runs `f` on argument values `args`: its parameters bound to them, its
/// statements executed in a fresh frame; the returned value converted to
/// its return type.
pub fn call(
    program: &Program,
    f: &FunctionDecl,
    args: Vec<ConstValue>,
    span: Span,
) -> Result<ConstValue> {
    if FRAMES.with(|f| f.borrow().len()) >= MAX_DEPTH {
        return Err(Error::coded(
            Code::LimitExceeded,
            span,
            format!("constexpr evaluation nested deeper than {MAX_DEPTH} calls"),
        ));
    }
    let mut frame = HashMap::new();
    let mut args = args.into_iter();
    for p in &f.params {
        let value = match (args.next(), &p.default) {
            (Some(v), _) => v,
            (None, Some(d)) => consteval::eval(program, d)?,
            (None, None) => {
                return Err(not_constant(span, "too few arguments for a constexpr call"))
            }
        };
        let value = bind(program, &p.ty, value, span)?;
        if let Some(name) = &p.name {
            frame.insert(name.name.clone(), value);
        }
    }
    let ret = super::constexpr_fn::declared_return(program, f)?;
    FRAMES.with(|fr| fr.borrow_mut().push(frame));
    let mut run = Run {
        program,
        ret: ret.as_ref(),
        steps: 0,
    };
    let body = f.body.as_ref().map(|b| b.stmts.as_slice()).unwrap_or(&[]);
    let result = run.stmts(body);
    FRAMES.with(|fr| fr.borrow_mut().pop());
    match result? {
        Flow::Return(v) => Ok(v),
        Flow::Next | Flow::Break | Flow::Continue => Err(not_constant(
            f.name.span,
            format!("constexpr function `{}` returns no value", f.name.name),
        )),
    }
}

/// An argument converted to its parameter's type (a reference binds the
/// value as it is).
fn bind(
    program: &Program,
    ts: &ast::TypeSpec,
    value: ConstValue,
    span: Span,
) -> Result<ConstValue> {
    match program.resolve_type(ts)? {
        Type::Pointer(_) => Ok(value),
        ty => consteval::convert(&value, &ty, span, program),
    }
}

/// How a statement ends.
enum Flow {
    /// Falls through to the next statement.
    Next,
    /// `return v;`
    Return(ConstValue),
    /// `break;`
    Break,
    /// `continue;`
    Continue,
}

struct Run<'p, 'a> {
    program: &'p Program<'a>,
    /// The declared return type; `None` for `auto` (the value's own).
    ret: Option<&'p Type>,
    steps: usize,
}

impl Run<'_, '_> {
    /// Executes `stmts` up to a `return`, `break` or `continue`.
    fn stmts(&mut self, stmts: &[Stmt]) -> Result<Flow> {
        for s in stmts {
            match self.stmt(s)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    /// Whether loop condition `cond` (none: true) holds.
    fn holds(&mut self, cond: Option<&Expr>) -> Result<bool> {
        match cond {
            Some(c) => Ok(truth(&consteval::eval(self.program, c)?)),
            None => Ok(true),
        }
    }

    /// Runs a loop: `cond` before each iteration (after the first when
    /// `test_first` is false), `body`, then `step`.
    fn run_loop(
        &mut self,
        cond: Option<&Expr>,
        body: &Stmt,
        step: Option<&Expr>,
        test_first: bool,
    ) -> Result<Flow> {
        let mut first = true;
        loop {
            if (test_first || !first) && !self.holds(cond)? {
                return Ok(Flow::Next);
            }
            first = false;
            match self.stmt(body)? {
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Break => return Ok(Flow::Next),
                Flow::Next | Flow::Continue => {}
            }
            if let Some(step) = step {
                self.expr_stmt(step)?;
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Flow> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(Error::coded(
                Code::LimitExceeded,
                s.span,
                "constexpr evaluation takes too many steps",
            ));
        }
        match &s.kind {
            StmtKind::Block(b) => self.stmts(&b.stmts),
            StmtKind::Decl(d) => self.decl(d).map(|()| Flow::Next),
            StmtKind::Expr(e) => self.expr_stmt(e).map(|()| Flow::Next),
            StmtKind::Return(Some(e)) => value_of(self.program, e, self.ret).map(Flow::Return),
            StmtKind::Empty => Ok(Flow::Next),
            StmtKind::Break => Ok(Flow::Break),
            StmtKind::Continue => Ok(Flow::Continue),
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                if let Some(i) = init {
                    self.stmt(i)?;
                }
                self.run_loop(cond.as_ref(), body, step.as_ref(), true)
            }
            StmtKind::While { cond, body } => self.run_loop(Some(cond), body, None, true),
            StmtKind::DoWhile { body, cond } => self.run_loop(Some(cond), body, None, false),
            StmtKind::If {
                cond,
                then,
                otherwise,
                ..
            } => {
                let c = consteval::eval(self.program, cond)?;
                if truth(&c) {
                    self.stmt(then)
                } else if let Some(o) = otherwise {
                    self.stmt(o)
                } else {
                    Ok(Flow::Next)
                }
            }
            StmtKind::StaticAssert(a) => {
                super::static_assert::check(self.program, a).map(|()| Flow::Next)
            }
            _ => Err(not_constant(
                s.span,
                "this statement is not evaluated in a constexpr function at translation time",
            )),
        }
    }

    fn decl(&mut self, d: &ast::VarDecl) -> Result<()> {
        let is_auto = d.ty.path.len() == 1 && d.ty.path[0] == "auto";
        for declarator in &d.declarators {
            let value = match (&declarator.init, is_auto) {
                (Some(Init::Expr(e)), true) => consteval::eval(self.program, e)?,
                (Some(_), true) | (None, true) => {
                    return Err(not_constant(declarator.span, "`auto` needs an initializer"))
                }
                (init, false) => {
                    let base = self.program.resolve_type(&d.ty)?;
                    let ty = self.program.declarator_type(base, declarator)?;
                    match init {
                        Some(Init::Expr(e)) => value_of(self.program, e, Some(&ty))?,
                        Some(i) => consteval::eval_init(self.program, i, &ty)?,
                        None => ConstValue::default_of(&ty, self.program),
                    }
                }
            };
            set_local(&declarator.name.name, value);
        }
        Ok(())
    }

    /// `target = value` or `target op= value`; other expressions are
    /// evaluated for their errors only.
    fn expr_stmt(&mut self, e: &Expr) -> Result<()> {
        // `i++`, `++i`, `--i`: `i += 1`, `i -= 1` (the value is unused).
        let one = super::templates::value_expr(1, crate::types::Scalar::Int, e.span);
        let step = |inc: bool| {
            Some(if inc {
                ast::BinaryOp::Add
            } else {
                ast::BinaryOp::Sub
            })
        };
        let (op, target, value) = match &e.kind {
            ExprKind::Assign(op, target, value) => (*op, &**target, &**value),
            ExprKind::PostIncDec(inc, target) => (step(*inc), &**target, &one),
            ExprKind::Unary(ast::UnaryOp::PreInc, target) => (step(true), &**target, &one),
            ExprKind::Unary(ast::UnaryOp::PreDec, target) => (step(false), &**target, &one),
            ExprKind::Comma(items) => {
                return items.iter().try_for_each(|x| self.expr_stmt(x));
            }
            _ => return consteval::eval(self.program, e).map(|_| ()),
        };
        let (root, path) = place(target)?;
        let mut whole = local(root).ok_or_else(|| {
            not_constant(
                target.span,
                "only the function's own locals are assigned in a constexpr evaluation",
            )
        })?;
        let slot = slot(self.program, &mut whole, &path, target.span)?;
        let ty = slot.ty();
        let new = match op {
            None => value_of(self.program, value, Some(&ty))?,
            Some(op) => {
                let rhs = consteval::eval(self.program, value)?;
                let combined = consteval::binary_values(self.program, op, slot, &rhs, e.span)?;
                consteval::convert(&combined, &ty, e.span, self.program)?
            }
        };
        *slot = new;
        set_local(root, whole);
        Ok(())
    }
}

/// One step from a value into one of its parts.
enum Step<'e> {
    Member(&'e str),
    Index(&'e Expr),
}

/// The local an assignment target starts from and the steps into it.
fn place(target: &Expr) -> Result<(&str, Vec<Step<'_>>)> {
    let mut steps = Vec::new();
    let mut e = target;
    loop {
        match &e.kind {
            ExprKind::Name(path) if path.len() == 1 => {
                steps.reverse();
                return Ok((&path[0], steps));
            }
            ExprKind::Member(base, m, false) => {
                steps.push(Step::Member(&m.name));
                e = base;
            }
            ExprKind::Index(base, i) => {
                steps.push(Step::Index(i));
                e = base;
            }
            _ => {
                return Err(not_constant(
                    e.span,
                    "this assignment target is not evaluated at translation time",
                ))
            }
        }
    }
}

fn slot<'v>(
    program: &Program,
    mut value: &'v mut ConstValue,
    path: &[Step],
    span: Span,
) -> Result<&'v mut ConstValue> {
    for step in path {
        let index = match step {
            Step::Member(m) => member_index(program, &value.ty(), m),
            Step::Index(i) => consteval::eval(program, i)?
                .as_int()
                .and_then(|i| usize::try_from(i).ok()),
        };
        value = match (value, index) {
            (ConstValue::Composite(_, items), Some(i)) if i < items.len() => &mut items[i],
            _ => {
                return Err(not_constant(
                    span,
                    "this part of a value is not found at translation time",
                ))
            }
        };
    }
    Ok(value)
}

/// The position of data member `name` of struct type `ty`.
pub fn member_index(program: &Program, ty: &Type, name: &str) -> Option<usize> {
    let Type::Struct(id) = ty else {
        return None;
    };
    program
        .structs
        .get(*id)
        .members
        .iter()
        .position(|m| m.name == name)
}

/// `e` as a value of type `ty`: a braced list `{a, b}` initializes it, any
/// other expression converts to it.
fn value_of(program: &Program, e: &Expr, ty: Option<&Type>) -> Result<ConstValue> {
    match (&e.kind, ty) {
        (ExprKind::InitList(items), Some(ty)) => {
            consteval::eval_init(program, &Init::List(items.clone(), e.span), ty)
        }
        (_, Some(ty)) => consteval::convert(&consteval::eval(program, e)?, ty, e.span, program),
        (_, None) => consteval::eval(program, e),
    }
}

fn truth(v: &ConstValue) -> bool {
    v.as_f64().map(|x| x != 0.0).unwrap_or(true)
}

/// `S(args)` or `S{args}` for a struct `S` that declares constructors: the
/// one taking these arguments (the one whose parameter types are exactly the
/// arguments' when several take as many), evaluated. `None` when `S` has no
/// constructor.
pub fn construct(
    program: &Program,
    ty: &Type,
    args: Vec<ConstValue>,
    span: Span,
) -> Option<Result<ConstValue>> {
    let Type::Struct(id) = ty else {
        return None;
    };
    let name = program.struct_name(*id);
    let Some(Symbol::Functions(list)) = program
        .symbols
        .get(&crate::syntax::members::member_name(name, name))
    else {
        return None;
    };
    let takes = |f: &FunctionDecl| {
        args.len() <= f.params.len() && f.params[args.len()..].iter().all(|p| p.default.is_some())
    };
    let candidates: Vec<&FunctionDecl> = list
        .iter()
        .map(|&i| program.functions[i])
        .filter(|f| takes(f))
        .collect();
    let exact = candidates.iter().find(|f| {
        f.params.iter().zip(&args).all(|(p, a)| {
            program
                .resolve_type(&p.ty)
                .map(|t| t == a.ty())
                .unwrap_or(false)
        })
    });
    let f = exact.or(candidates.first())?;
    Some(call(program, f, args, span))
}

/// `a op b` where an operand is a struct: its `operator op`, a free function
/// (template or not) or a member of the left operand's struct, evaluated.
/// `None` when none is declared.
pub fn user_operator(
    program: &Program,
    op: ast::BinaryOp,
    a: ConstValue,
    b: ConstValue,
    span: Span,
) -> Option<Result<ConstValue>> {
    let name = format!("operator{}", op.symbol());
    let types = [
        super::templates::CallArg::value(a.ty(), span),
        super::templates::CallArg::value(b.ty(), span),
    ];
    if let Type::Struct(id) = a.ty() {
        let member = crate::syntax::members::member_name(program.struct_name(id), &name);
        if let Some(Symbol::Functions(list)) = program.symbols.get(&member) {
            let f = list
                .iter()
                .map(|&i| program.functions[i])
                .find(|f| f.params.len() == 2)?;
            return Some(call(program, f, vec![a, b], span));
        }
    }
    if let Some(Symbol::Functions(list)) = program.symbols.get(&name) {
        let f = list.iter().map(|&i| program.functions[i]).find(|f| {
            f.params.len() == 2
                && f.params.iter().zip(&types).all(|(p, arg)| {
                    program
                        .resolve_type(&p.ty)
                        .map(|pt| deref(pt) == arg.ty)
                        .unwrap_or(false)
                })
        });
        if let Some(f) = f {
            return Some(call(program, f, vec![a, b], span));
        }
    }
    for &t in program.function_templates(&name) {
        let t = program.templates[t];
        let Ok(values) = program.template_arguments(t, &[], &types, span) else {
            continue;
        };
        let ident = ast::Ident {
            name: name.clone(),
            span,
        };
        return Some(
            program
                .instantiate(t, &values, ident)
                .and_then(|f| call(program, &f, vec![a, b], span)),
        );
    }
    None
}

/// A reference parameter's type as the type of the value it binds.
fn deref(t: Type) -> Type {
    match t {
        Type::Pointer(p) if p.is_reference => p.pointee,
        t => t,
    }
}
