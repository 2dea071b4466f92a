//! Which store statements of a kernel may be combined (`byte_stores.rs`):
//! `buffer[index] = value;` where
//!
//! - `buffer` is a `device` pointer to 1- or 2-byte elements (`uchar`,
//!   `char`, `bool`, `ushort`, `short`, or 2-byte vectors of bytes) and
//!   this is the only place the kernel names it, so no other access of the
//!   thread is ordered against a store that another invocation performs;
//! - the statement is at the top level of the kernel body and only
//!   declarations and expression statements come before it: every
//!   invocation of the workgroup reaches it, in uniform control flow as
//!   WGSL's quad operations require;
//! - `value` stores nothing itself;
//! - `index` steps by exactly 1 along the threadgroup's x axis (affine in
//!   the thread position, other terms the same for the whole row): only
//!   then do the four invocations of a quad usually write one word, and the
//!   exchange pays for itself. The check on the GPU decides, so this is a
//!   heuristic, not what makes the result right.

use crate::lower::entry::compute::KernelParam;
use crate::lower::metal::dispatch_grid::Builtin;
use crate::sema::callgraph::visit_expr;
use crate::source_map::Span;
use crate::syntax::ast::{self, BinaryOp, ExprKind, Init, StmtKind, UnaryOp};
use crate::types::{AddressSpace, Scalar, Type};
use std::collections::HashMap;

/// The spans of the combinable store statements of kernel `body`.
pub(super) fn statements(body: &ast::Block, params: &[KernelParam]) -> Vec<Span> {
    let mut scope = Scope {
        params,
        locals: HashMap::new(),
    };
    let mut found = Vec::new();
    for s in &body.stmts {
        match &s.kind {
            StmtKind::Expr(e) => {
                if scope.is_combinable(body, e) {
                    found.push(s.span);
                }
                scope.forget_changed(e);
            }
            StmtKind::Decl(d) => {
                for declarator in &d.declarators {
                    match &declarator.init {
                        Some(Init::Expr(init)) if declarator.array.is_empty() => {
                            scope.forget_changed(init);
                            scope
                                .locals
                                .insert(declarator.name.name.clone(), Some(init));
                        }
                        _ => {
                            scope.locals.insert(declarator.name.name.clone(), None);
                        }
                    }
                }
            }
            StmtKind::Empty => {}
            // Anything else may branch or return: later statements may not
            // be reached by the whole workgroup.
            _ => break,
        }
    }
    found
}

/// What the statements before the one examined tell about names.
struct Scope<'a> {
    params: &'a [KernelParam<'a>],
    /// Top-level locals: their initializer while nothing changed them since.
    locals: HashMap<String, Option<&'a ast::Expr>>,
}

/// A single unqualified name.
fn name_of(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(path) if path.len() == 1 => Some(&path[0]),
        _ => None,
    }
}

/// The variable an assignment target or address-of operand names.
fn root_name(mut e: &ast::Expr) -> Option<&str> {
    loop {
        match &e.kind {
            ExprKind::Member(base, _, false) | ExprKind::Index(base, _) => e = base,
            _ => return name_of(e),
        }
    }
}

/// Whether `name` is a Metal scalar or vector type (a conversion's callee).
fn is_value_type(name: &str) -> bool {
    const SCALARS: &[&str] = &[
        "bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half",
        "float", "bfloat", "size_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t",
        "uint32_t", "int64_t", "uint64_t",
    ];
    let scalar = name.trim_end_matches(['2', '3', '4']);
    SCALARS.contains(&name) || (scalar.len() + 1 == name.len() && SCALARS.contains(&scalar))
}

/// Integer conversions written as calls, which keep an index affine.
const INTEGER_TYPES: &[&str] = &[
    "uint", "int", "ushort", "short", "uint32_t", "int32_t", "uint16_t", "int16_t", "size_t",
    "ulong", "long",
];

impl<'a> Scope<'a> {
    /// Whether `e` is `buffer[index] = value` as the module docs require.
    fn is_combinable(&self, body: &ast::Block, e: &ast::Expr) -> bool {
        let ExprKind::Assign(None, target, value) = &e.kind else {
            return false;
        };
        let ExprKind::Index(buffer, index) = &target.kind else {
            return false;
        };
        let Some(name) = name_of(buffer) else {
            return false;
        };
        self.small_element_buffer(name)
            && names_in(body, name) == 1
            && !stores_anything(value)
            && self.x_step(index, 0) == Some(1)
    }

    /// `name` is a kernel's `device` pointer to 1- or 2-byte elements.
    fn small_element_buffer(&self, name: &str) -> bool {
        self.params.iter().any(|p| match p {
            KernelParam::Buffer { param, ptr, .. } => {
                param.name.as_ref().is_some_and(|n| n.name == name)
                    && ptr.space == AddressSpace::Device
                    && !ptr.is_const
                    && !ptr.is_reference
                    && matches!(
                        ptr.pointee,
                        Type::Scalar(
                            Scalar::UChar
                                | Scalar::Char
                                | Scalar::Bool
                                | Scalar::UShort
                                | Scalar::Short
                        ) | Type::Vector(Scalar::UChar | Scalar::Char | Scalar::Bool, 2)
                    )
            }
            _ => false,
        })
    }

    /// Forgets the initializers of locals that `e` may change: assigned,
    /// incremented, address taken, or passed to a function (which may take
    /// a reference).
    fn forget_changed(&mut self, e: &ast::Expr) {
        let mut changed = Vec::new();
        visit_expr(e, &mut |x| match &x.kind {
            ExprKind::Assign(_, target, _)
            | ExprKind::PostIncDec(_, target)
            | ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::AddrOf, target) => {
                changed.extend(root_name(target).map(str::to_string))
            }
            // A conversion (`uint(x)`, `uchar2(a, b)`) takes values; any
            // other function may take a `thread` reference.
            ExprKind::Call(callee, args) if !name_of(callee).is_some_and(is_value_type) => {
                changed.extend(args.iter().filter_map(root_name).map(str::to_string))
            }
            _ => {}
        });
        for name in changed {
            self.locals.insert(name, None);
        }
    }

    /// How much `e` grows from one thread to the next along the
    /// threadgroup's x axis, when it is affine in that position; `None`
    /// when unknown. `depth` bounds the locals followed.
    fn x_step(&self, e: &ast::Expr, depth: u32) -> Option<i64> {
        if depth > 16 {
            return None;
        }
        let next = depth + 1;
        match &e.kind {
            ExprKind::Int { .. } => Some(0),
            ExprKind::Name(_) => self.name_step(name_of(e)?, None, next),
            ExprKind::Member(base, member, arrow) => match name_of(base) {
                Some(n) if !arrow => self.name_step(n, Some(&member.name), next),
                Some(n) if self.buffer(n).is_some() => Some(0),
                _ => None,
            },
            ExprKind::Index(base, index) => {
                let invariant = name_of(base).is_some_and(|n| self.buffer(n).is_some())
                    && self.x_step(index, next)? == 0;
                invariant.then_some(0)
            }
            ExprKind::Cast(_, _, inner) => self.x_step(inner, next),
            ExprKind::Call(callee, args) if args.len() == 1 => {
                let conversion = name_of(callee).is_some_and(|n| INTEGER_TYPES.contains(&n));
                conversion.then(|| self.x_step(&args[0], next)).flatten()
            }
            ExprKind::Binary(op, a, b) => self.binary_step(*op, a, b, next),
            _ => None,
        }
    }

    fn binary_step(&self, op: BinaryOp, a: &ast::Expr, b: &ast::Expr, depth: u32) -> Option<i64> {
        let (sa, sb) = (self.x_step(a, depth)?, self.x_step(b, depth)?);
        let literal = |e: &ast::Expr| match e.kind {
            ExprKind::Int { value, .. } => i64::try_from(value).ok(),
            _ => None,
        };
        match op {
            BinaryOp::Add => sa.checked_add(sb),
            BinaryOp::Sub => sa.checked_sub(sb),
            _ if sa == 0 && sb == 0 => Some(0),
            BinaryOp::Mul if sb == 0 => literal(b).and_then(|k| sa.checked_mul(k)),
            BinaryOp::Mul if sa == 0 => literal(a).and_then(|k| sb.checked_mul(k)),
            BinaryOp::Shl if sb == 0 => literal(b)
                .filter(|k| (0..32).contains(k))
                .and_then(|k| sa.checked_mul(1 << k)),
            _ => None,
        }
    }

    /// The step of a name (`member` of it, when given).
    fn name_step(&self, name: &str, member: Option<&str>, depth: u32) -> Option<i64> {
        if let Some(local) = self.locals.get(name) {
            let init = (*local)?;
            return match member {
                None => self.x_step(init, depth),
                Some(_) => None,
            };
        }
        if self.buffer(name).is_some() {
            // A `constant`/`device` reference, or a member of one: one
            // value for every thread.
            return Some(0);
        }
        let builtin = self.params.iter().find_map(|p| match p {
            KernelParam::Builtin { param, builtin, .. }
                if param.name.as_ref().is_some_and(|n| n.name == name) =>
            {
                Some(*builtin)
            }
            _ => None,
        })?;
        builtin_step(builtin, member)
    }

    /// The buffer parameter named `name`.
    fn buffer(&self, name: &str) -> Option<&'a ast::Param> {
        self.params.iter().find_map(|p| match p {
            KernelParam::Buffer { param, .. }
                if param.name.as_ref().is_some_and(|n| n.name == name) =>
            {
                Some(*param)
            }
            _ => None,
        })
    }
}

/// The step along x of a compute attribute (`member` of a vector one).
fn builtin_step(b: Builtin, member: Option<&str>) -> Option<i64> {
    let x = match member {
        None | Some("x") => true,
        Some("y" | "z") => false,
        Some(_) => return None,
    };
    match b {
        Builtin::ThreadPositionInGrid | Builtin::ThreadPositionInThreadgroup => Some(i64::from(x)),
        Builtin::ThreadIndexInThreadgroup => Some(1),
        Builtin::ThreadgroupPositionInGrid
        | Builtin::ThreadsPerThreadgroup
        | Builtin::DispatchThreadsPerThreadgroup
        | Builtin::ThreadgroupsPerGrid
        | Builtin::ThreadsPerGrid => Some(0),
        _ => None,
    }
}

/// How many times `body` names `name`; `usize::MAX` when the body has a
/// range-based `for`, whose loop variable may alias elements unnamed
/// ([`crate::sema::callgraph::has_range_for`]).
fn names_in(body: &ast::Block, name: &str) -> usize {
    if body.stmts.iter().any(crate::sema::callgraph::has_range_for) {
        return usize::MAX;
    }
    let mut n = 0;
    crate::sema::callgraph::visit_block(body, &mut |e| {
        n += usize::from(name_of(e) == Some(name));
    });
    n
}

/// Whether `e` assigns, increments or decrements anything.
fn stores_anything(e: &ast::Expr) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| {
        found |= matches!(
            x.kind,
            ExprKind::Assign(..)
                | ExprKind::PostIncDec(..)
                | ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PreDec, _)
        );
    });
    found
}
