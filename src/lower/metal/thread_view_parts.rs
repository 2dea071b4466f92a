//! Bytes and 16-bit halves of the 32-bit integer words of a `thread`
//! object, through a view (`metal/thread_views.rs`): MLX's quantised
//! kernels load packed weights into `uint32_t w_local[n]` (or a struct
//! holding such an array) and decode them through
//! `(thread uint8_t*)&w_local`.
//!
//! Metal: byte `k` of the object is bits `(k % 4) * 8 ..` of its 32-bit
//! word `k / 4` (Apple's GPUs are little-endian); a 16-bit part `k` is
//! bits `(k % 2) * 16 ..` of word `k / 2`.
//!
//! WGSL: a `function` variable has no byte address; its words do.
//!
//! Mapping: the view's index counts parts from the object's start; an
//! element is [`Value::WordPart`]: read with `extractBits` of its word
//! (sign-extending for `char`/`short`), written with `insertBits` into
//! the word and the word stored back. Thread memory is the thread's own,
//! so the load-modify-store needs no atomics. Such a view is passed to a
//! helper as the whole object and the part index (`ArgKey::ThreadView`),
//! as the other views of thread memory are.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Arg, PtrRoot, PtrValue, Value};
use crate::lower::stdlib::math::Ir;
use crate::lower::{ArgKey, Error, Lowerer, Result};
use crate::source_map::Span;
use crate::types::{AddressSpace, Scalar, Type};
use naga::{Expression, Handle, MathFunction, ScalarKind, Statement};

impl Lowerer<'_, '_> {
    /// Reads the part `p` points to ([`Lowerer::views_word_part`]): its
    /// value, of its type.
    pub(in crate::lower) fn word_part_load(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        let ty = p.pointee.unpacked();
        let Type::Scalar(s) = ty else {
            unreachable!("parts are scalars");
        };
        let (pointer, word_scalar, shift) = self.thread_view_part(fx, p, span);
        let word = fx.add(Expression::Load { pointer }, span);
        let word = as_kind(fx, word, word_scalar, ScalarKind::Uint, span);
        let value = self.scalar_in_word(fx, word, s, |_| shift, span);
        Ok((value, ty))
    }

    /// Writes `value` (of type `ty`), converted to the part's type, into
    /// the part `p` points to: the word with the part's bits replaced is
    /// stored back. Returns the value stored.
    pub(in crate::lower) fn word_part_store(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        value: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if p.is_const {
            return Err(Error::coded(
                Code::NotAssignable,
                span,
                "cannot assign to a read-only location",
            )
            .note("the pointer this byte is reached through points to `const` memory"));
        }
        let part_ty = p.pointee.unpacked();
        let Type::Scalar(s) = part_ty else {
            unreachable!("parts are scalars");
        };
        let v = self.convert(fx, value, ty, &part_ty, false, span)?;
        let bits = self.stored_bits(fx, v, s, span)?;
        let (pointer, word_scalar, shift) = self.thread_view_part(fx, p, span);
        let word = fx.add(Expression::Load { pointer }, span);
        let word = as_kind(fx, word, word_scalar, ScalarKind::Uint, span);
        let count = self.u32_lit(fx, 8 * s.size(), span);
        let word = Ir { fx, span }.math(MathFunction::InsertBits, &[word, bits, shift, count]);
        let word = match word_scalar {
            Scalar::Int => as_kind(fx, word, Scalar::UInt, ScalarKind::Sint, span),
            _ => word,
        };
        fx.push(
            Statement::Store {
                pointer,
                value: word,
            },
            span,
        );
        Ok(v)
    }

    /// A `thread T*` parameter given a view of a `thread` object
    /// ([`PtrRoot::View`]) whose pointee is `T`: passed as a pointer to
    /// the whole object (a local variable or a parameter) and the view's
    /// index. `None` for any other argument.
    pub(in crate::lower) fn thread_view_argument(
        &mut self,
        fx: &FnCtx,
        pp: &crate::types::Pointer,
        a: &Arg,
    ) -> Option<(ArgKey, Vec<Handle<Expression>>)> {
        if pp.is_reference || pp.space != AddressSpace::Thread {
            return None;
        }
        let Value::Ptr(p) = &a.value else {
            return None;
        };
        let PtrRoot::View {
            base,
            array,
            ref object,
        } = p.root
        else {
            return None;
        };
        if p.pointee.unpacked() != pp.pointee.unpacked() || (p.is_const && !pp.is_const) {
            return None;
        }
        let ty = whole_object_type(self, fx, base)?;
        let key = ArgKey::ThreadView {
            object: (**object).clone(),
            array,
            ty,
        };
        Some((key, vec![base, p.index]))
    }
}

/// The naga type of the object `base` points to when it is a whole local
/// variable or a pointer parameter; `None` for a part of one (naga's
/// SPIR-V writer cannot take a call argument that is an access chain).
fn whole_object_type(
    l: &Lowerer<'_, '_>,
    fx: &FnCtx,
    base: Handle<Expression>,
) -> Option<Handle<naga::Type>> {
    match *fx.expr(base) {
        Expression::LocalVariable(v) => Some(fx.function.local_variables[v].ty),
        Expression::FunctionArgument(i) => {
            let ty = fx.function.arguments[i as usize].ty;
            match l.global.module.types[ty].inner {
                naga::TypeInner::Pointer { base, .. } => Some(base),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `h`, a 32-bit integer of scalar `from`, bit-cast to `kind` when it is
/// of the other kind.
fn as_kind(
    fx: &mut FnCtx,
    h: Handle<Expression>,
    from: Scalar,
    kind: ScalarKind,
    span: Span,
) -> Handle<Expression> {
    let same = matches!(
        (from, kind),
        (Scalar::UInt, ScalarKind::Uint) | (Scalar::Int, ScalarKind::Sint)
    );
    match same {
        true => h,
        false => Ir { fx, span }.bitcast(h, kind),
    }
}
