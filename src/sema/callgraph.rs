//! Which library functions a kernel reaches, directly or through the user
//! functions it calls. Lowering decides some things about a kernel before
//! lowering its body (how to treat threads outside a ragged grid, which WGSL
//! built-ins the entry point needs), so it asks here first.

use super::{Program, Symbol};
use crate::syntax::ast::{Block, Expr, ExprKind, Init, Stmt, StmtKind, SwitchItem};
use std::collections::HashSet;

/// True if `body`, or a user function it calls (transitively), calls a
/// function whose unqualified name satisfies `wanted`.
pub fn reaches(program: &Program, body: &Block, wanted: &dyn Fn(&str) -> bool) -> bool {
    let mut walk = Walk {
        program,
        wanted,
        visited: HashSet::new(),
    };
    walk.block(body)
}

struct Walk<'p, 'a, 'w> {
    program: &'p Program<'a>,
    wanted: &'w dyn Fn(&str) -> bool,
    visited: HashSet<usize>,
}

impl Walk<'_, '_, '_> {
    fn block(&mut self, b: &Block) -> bool {
        b.stmts.iter().any(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Block(b) => self.block(b),
            StmtKind::Decl(d) => d
                .declarators
                .iter()
                .any(|d| d.init.as_ref().is_some_and(|i| self.init(i))),
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond)
                    || self.stmt(then)
                    || otherwise.as_ref().is_some_and(|o| self.stmt(o))
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                init.as_ref().is_some_and(|i| self.stmt(i))
                    || cond.as_ref().is_some_and(|c| self.expr(c))
                    || step.as_ref().is_some_and(|s| self.expr(s))
                    || self.stmt(body)
            }
            StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
                self.expr(cond) || self.stmt(body)
            }
            StmtKind::Switch { selector, items } => {
                self.expr(selector)
                    || items.iter().any(|i| match i {
                        SwitchItem::Stmt(s) => self.stmt(s),
                        SwitchItem::Label(..) => false,
                    })
            }
            StmtKind::Return(e) => e.as_ref().is_some_and(|e| self.expr(e)),
            StmtKind::Break | StmtKind::Continue | StmtKind::Empty => false,
        }
    }

    fn init(&mut self, i: &Init) -> bool {
        match i {
            Init::Expr(e) => self.expr(e),
            Init::List(items, _) => items.iter().any(|i| self.init(i)),
            Init::Paren(args, _) => args.iter().any(|e| self.expr(e)),
        }
    }

    fn expr(&mut self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call(callee, args) => self.call(callee) || args.iter().any(|a| self.expr(a)),
            ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Index(a, b) => {
                self.expr(a) || self.expr(b)
            }
            ExprKind::Unary(_, a)
            | ExprKind::PostIncDec(_, a)
            | ExprKind::Member(a, _, _)
            | ExprKind::Cast(_, _, a) => self.expr(a),
            ExprKind::Ternary(a, b, c) => self.expr(a) || self.expr(b) || self.expr(c),
            ExprKind::Comma(items) => items.iter().any(|e| self.expr(e)),
            ExprKind::InitList(items) | ExprKind::BraceConstruct(_, items) => {
                items.iter().any(|i| self.init(i))
            }
            _ => false,
        }
    }

    fn call(&mut self, callee: &Expr) -> bool {
        let ExprKind::Name(path) = &callee.kind else {
            return false;
        };
        let Some(name) = path.last() else {
            return false;
        };
        if (self.wanted)(name) {
            return true;
        }
        let Some(Symbol::Functions(list)) = self.program.symbols.get(name.as_str()) else {
            return false;
        };
        for &i in list {
            if self.visited.insert(i) {
                if let Some(body) = &self.program.functions[i].body {
                    if self.block(body) {
                        return true;
                    }
                }
            }
        }
        false
    }
}
