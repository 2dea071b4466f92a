//! `a = b` on a struct that declares `operator=` ([over.ass]): the user's
//! assignment operator where overload resolution would choose it, the
//! implicit copy assignment otherwise.
//!
//! A struct's implicit copy assignment copies each member, which is the
//! built-in assignment here; `S& operator=(const S&) = default;` declares
//! that same function (the parser drops it). The user's other assignment
//! operators (`operator=(const thread float3x2&)`, SPIRV-Cross's
//! `spvStorageMatrix`) are called as member functions; an argument of the
//! struct's own type takes the copy assignment, an exact match, unless the
//! struct provides one of its own.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::syntax::members::member_name;
use crate::types::{StructId, Type};

impl Lowerer<'_, '_> {
    /// `lhs = rhs` through a user's `operator=`; `None` where the built-in
    /// assignment (the implicit copy assignment, for a struct) applies.
    pub(in crate::lower) fn user_assignment(
        &mut self,
        fx: &mut FnCtx,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Result<Option<Value>> {
        if !self.has_operator("operator=") {
            return Ok(None);
        }
        let Type::Struct(id) = self.type_of(fx, lhs)? else {
            return Ok(None);
        };
        let own = self.user_functions(&member_name(self.program.struct_name(id), "operator="));
        if own.is_empty() {
            return Ok(None);
        }
        if self.type_of(fx, rhs)?.unpacked() == Type::Struct(id) && !self.copy_assigns(id, &own) {
            return Ok(None);
        }
        self.user_operator(fx, "=", &[lhs, rhs], span)
    }

    /// Whether one of the functions `own` (struct `id`'s `operator=`s) is a
    /// user-provided copy assignment: its parameter is `S` or a reference
    /// to `S`.
    fn copy_assigns(&self, id: StructId, own: &[usize]) -> bool {
        own.iter().any(|&i| {
            let f = self.program.functions[i];
            // The object is the first parameter.
            f.params.len() == 2
                && self
                    .program
                    .resolve_type(&f.params[1].ty)
                    .is_ok_and(|t| match t {
                        Type::Pointer(p) => p.is_reference && p.pointee == Type::Struct(id),
                        t => t == Type::Struct(id),
                    })
        })
    }
}
