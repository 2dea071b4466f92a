//! Trailing one-element arrays of buffer structs (`struct SSBO { uint n;
//! float data[1]; }` behind `device SSBO& b [[buffer(0)]]`), the way
//! SPIR-V Cross declares runtime-sized arrays: Metal indexes past the
//! declared length into whatever the host bound, while WGSL clamps every
//! index of an `array<T, 1>` to 0. The binding's type is therefore a copy
//! of the struct whose last member is a runtime-sized `array<T>`, which
//! reaches the bound buffer's bytes. That copy cannot be a value (WGSL has
//! no runtime-sized values), so it is used only where the argument is read
//! member by member and the array element by element; otherwise the
//! struct keeps `array<T, 1>` and a warning (W0408) says indexes past 0 are
//! clamped. Reflection's `dataSize` stays Metal's `sizeof`.

use crate::diagnostics::Code;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{StructId, Type};
use naga::{Handle, TypeInner};
use std::cell::Cell;

impl Lowerer<'_, '_> {
    /// The binding type of `device`/`constant` reference argument `param`
    /// whose pointee `ptr` lowers to `ty`: a runtime-sized view of the
    /// struct when its last member is a one-element array the function
    /// only indexes, else `ty` (with W0408 when such a member is clamped).
    pub(in crate::lower) fn trailing_array_view(
        &mut self,
        param: &ast::Param,
        ptr: &crate::types::Pointer,
        ty: Handle<naga::Type>,
        span: Span,
    ) -> Result<Handle<naga::Type>> {
        let Type::Struct(id) = ptr.pointee else {
            return Ok(ty);
        };
        let def = self.program.structs.get(id);
        let Some(last) = def.members.last().filter(|_| !def.is_union) else {
            return Ok(ty);
        };
        let Type::Array(elem, 1) = &last.ty else {
            return Ok(ty);
        };
        let (elem, member) = ((**elem).clone(), last.name.clone());
        if !self.indexes_member_only(param, &member) {
            let name = param.name.as_ref().map_or("", |n| n.name.as_str());
            self.global.warnings.push(
                Error::coded(
                    Code::TrailingArrayClamped,
                    param.span,
                    format!(
                        "buffer argument `{name}`: member `{member}` of `{}` is a one-element array, which WGSL clamps: indexes past 0 read and write element 0",
                        self.program.struct_name(id)
                    ),
                )
                .note("it becomes a runtime-sized array only where the argument is used member by member and the array element by element (not copied, passed on or taken whole)"),
            );
            return Ok(ty);
        }
        self.runtime_view(id, ty, &elem, span)
    }

    /// A copy of struct `id`'s naga type `ty` whose last MSL member is a
    /// runtime-sized `array<elem>` (padding after it dropped: a runtime
    /// array ends a WGSL struct).
    fn runtime_view(
        &mut self,
        id: StructId,
        ty: Handle<naga::Type>,
        elem: &Type,
        span: Span,
    ) -> Result<Handle<naga::Type>> {
        let last = self.program.structs.get(id).members.len() - 1;
        let index = self.member_index(id, last) as usize;
        let TypeInner::Struct {
            mut members,
            span: size,
        } = self.global.module.types[ty].inner.clone()
        else {
            return Ok(ty);
        };
        members.truncate(index + 1);
        members[index].ty = self.runtime_array(elem, span)?;
        let name = format!("{}_runtime", self.program.struct_name(id));
        Ok(self.global.module.types.insert(
            naga::Type {
                name: Some(name),
                inner: TypeInner::Struct {
                    members,
                    span: size,
                },
            },
            naga::Span::UNDEFINED,
        ))
    }

    /// True if every use of `param` in its function's body is a member
    /// access (`b.n`) or a reference argument of a helper that uses it so
    /// too, and every access of member `member` is indexed (`b.data[i]`):
    /// the buffer is never taken whole, nor the array. (Helpers reach the
    /// binding itself, so their accesses follow its type.)
    fn indexes_member_only(&self, param: &ast::Param, member: &str) -> bool {
        let Some(body) = self.function_of(param).and_then(|f| f.body.as_ref()) else {
            return false;
        };
        self.indexed_in(body, param, member, 0)
    }

    /// [`Self::indexes_member_only`] for `param` of a function whose body
    /// is `body`, `depth` helpers down.
    fn indexed_in(&self, body: &ast::Block, param: &ast::Param, member: &str, depth: u32) -> bool {
        // Deeper helper chains (and recursion) keep the one-element form.
        const MAX_DEPTH: u32 = 8;
        let Some(name) = param.name.as_ref().map(|n| n.name.as_str()) else {
            return true;
        };
        let is_param = |e: &ast::Expr| matches!(&e.kind, ast::ExprKind::Name(p) if p.len() == 1 && p[0] == name);
        let is_member = |e: &ast::Expr| matches!(&e.kind, ast::ExprKind::Member(a, m, false) if is_param(a) && m.name == member);
        // Uses, member accesses and passes to helpers; accesses of
        // `member`, and indexed ones.
        let counts = [(); 5].map(|_| Cell::new(0u32));
        let bump = |c: &Cell<u32>| c.set(c.get() + 1);
        crate::sema::callgraph::any_expr(body, &|e| {
            match &e.kind {
                _ if is_param(e) => bump(&counts[0]),
                ast::ExprKind::Member(a, _, false) if is_param(a) => {
                    bump(&counts[1]);
                    if is_member(e) {
                        bump(&counts[3]);
                    }
                }
                ast::ExprKind::Index(a, _) if is_member(a) => bump(&counts[4]),
                ast::ExprKind::Call(callee, args) if depth < MAX_DEPTH => {
                    for (k, _) in args.iter().enumerate().filter(|(_, a)| is_param(a)) {
                        if self.helper_indexes(callee, k, member, depth) {
                            bump(&counts[2]);
                        }
                    }
                }
                _ => {}
            }
            false
        });
        let [uses, members, passed, accesses, indexed] = counts.map(Cell::into_inner);
        uses == members + passed && accesses == indexed
    }

    /// True if every function `callee` names takes a reference as argument
    /// `k` and uses it member by member ([`Self::indexed_in`]).
    fn helper_indexes(&self, callee: &ast::Expr, k: usize, member: &str, depth: u32) -> bool {
        let ast::ExprKind::Name(path) = &callee.kind else {
            return false;
        };
        let Some(crate::sema::Symbol::Functions(overloads)) =
            path.last().and_then(|n| self.program.symbols.get(n))
        else {
            return false;
        };
        let candidates: Vec<_> = overloads
            .iter()
            .map(|i| self.program.functions[*i])
            .filter(|f| f.params.len() > k)
            .collect();
        !candidates.is_empty() && candidates.iter().all(|f| {
            let q = &f.params[k];
            let by_reference =
                matches!(self.program.resolve_type(&q.ty), Ok(Type::Pointer(p)) if p.is_reference);
            by_reference
                && f.body
                    .as_ref()
                    .is_some_and(|b| self.indexed_in(b, q, member, depth + 1))
        })
    }
}
