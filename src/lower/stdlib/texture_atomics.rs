//! Texture atomics (MSL §6.12.15, Metal 3.1): `t.atomic_fetch_add(coord,
//! v)` ... on `texture1d/2d/2d_array/3d<int|uint, access::read_write>`.
//!
//! WebGPU has no texture atomics. wgpu has them (`Features::TEXTURE_ATOMIC`,
//! WGSL `texture_storage_*<r32uint|r32sint, atomic>` with
//! `textureAtomicAdd/And/Or/Xor/Min/Max`), so `--target wgpu` lowers the
//! fetch-and-modify functions to naga's `ImageAtomic` on a texture bound
//! with atomic access (`entry::bindings` binds a `read_write` texture that
//! way where its body uses atomics; reflection then requires the
//! `texture-atomic` feature). wgpu's functions return nothing, so a call
//! must be a statement of its own (its old value unused); `atomic_fetch_sub`
//! adds the two's complement negation (the same wrapping result);
//! `atomic_load`, `atomic_store`, `atomic_exchange` and
//! `atomic_compare_exchange_weak` have no wgpu form and are refused.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::Builtin;
use crate::lower::texture_types::{ATOMIC_FORMATS, FORMATS};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Texture, TextureAccess, Type};
use naga::{AtomicFunction, Expression, Handle, Statement};

impl Lowerer<'_, '_> {
    /// `t.atomic_fetch_OP(coord[, array], value)` and the other atomics.
    pub(in crate::lower) fn texture_atomic(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: Texture,
        member: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let method = member.name();
        if t.access != TextureAccess::ReadWrite || !matches!(t.scalar, Scalar::Int | Scalar::UInt) {
            return Err(Error::coded(
                Code::TextureUsage,
                span,
                format!("`{method}` needs a `read_write` texture of `int` or `uint`"),
            ));
        }
        if !self.settings.native_extensions {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                format!("texture atomics (`{method}`) have no WebGPU equivalent"),
            )
            .note("wgpu has them (`textureAtomic*`, feature `texture-atomic`) on r32uint and r32sint textures: translate with `--target wgpu`"));
        }
        let fun = match member {
            Builtin::TextureAtomicFetchAdd => AtomicFunction::Add,
            Builtin::TextureAtomicFetchSub => AtomicFunction::Add,
            Builtin::TextureAtomicFetchAnd => AtomicFunction::And,
            Builtin::TextureAtomicFetchOr => AtomicFunction::InclusiveOr,
            Builtin::TextureAtomicFetchXor => AtomicFunction::ExclusiveOr,
            Builtin::TextureAtomicFetchMin => AtomicFunction::Min,
            Builtin::TextureAtomicFetchMax => AtomicFunction::Max,
            _ => {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    span,
                    format!("texture `{method}` has no wgpu equivalent"),
                )
                .note("wgpu's texture atomics are add, and, or, xor, min and max (`atomic_fetch_*`), without a result"))
            }
        };
        self.check_atomic_binding(&t, method, span)?;
        if fx.discarded != Some(span) {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                format!("the old value `{method}` returns has no wgpu equivalent"),
            )
            .note("wgpu's `textureAtomic*` return nothing: call it as a statement of its own, its result unused"));
        }
        let Some((operand, address)) = args.split_last() else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{method}` needs a coordinate and a value"),
            ));
        };
        let mut rest = address.iter();
        let (coordinate, array_index) = self.texel_address(fx, &t, &mut rest, method, span)?;
        if let Some(extra) = rest.next() {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                extra.span,
                format!("too many arguments to `{method}`"),
            ));
        }
        let mut value = self.atomic_operand(fx, &t, operand)?;
        if member == Builtin::TextureAtomicFetchSub {
            value = self.wrapping_negation(fx, &t, value, operand.span);
        }
        self.push_effect(
            fx,
            Statement::ImageAtomic {
                image,
                coordinate,
                array_index,
                fun,
                value,
            },
            None,
            span,
        );
        Ok(Value::Void)
    }

    /// The texture was bound with atomic access: its format is one wgpu
    /// gives atomics to.
    fn check_atomic_binding(&self, t: &Texture, method: &str, span: Span) -> Result<()> {
        match t.format {
            Some(b) if b.atomic => Ok(()),
            Some(b) if ATOMIC_FORMATS.contains(&FORMATS[b.format as usize].0) => Err(Error::coded(
                Code::Unsupported,
                span,
                format!("`{method}` on a texture that is not bound for atomics"),
            )
            .note("a `[[texture(n)]]` argument of the stage function is bound with wgpu's atomic access when the function uses atomics on it; textures of argument buffers are not")),
            Some(b) => Err(Error::coded(
                Code::TextureUsage,
                span,
                format!(
                    "texture atomics need an {} texture, not `{}`",
                    ATOMIC_FORMATS.join(" or "),
                    FORMATS[b.format as usize].0
                ),
            )
            .note("pass the format with `--texture-format N=r32uint` (`Options::texture_formats` in the library)")),
            None => Err(Error::coded(
                Code::TextureUsage,
                span,
                format!("`{method}` needs a texture argument of the kernel (`[[texture(n)]]`)"),
            )),
        }
    }

    /// The operand: `vec<T, 4>` in Metal, of which the texel's one channel
    /// takes `x`; a scalar is taken as it is.
    fn atomic_operand(
        &mut self,
        fx: &mut FnCtx,
        t: &Texture,
        operand: &Expr,
    ) -> Result<Handle<Expression>> {
        let (h, ty) = self.rvalue(fx, operand)?;
        let (h, from) = match ty {
            Type::Vector(s, 4) => (
                fx.add(Expression::AccessIndex { base: h, index: 0 }, operand.span),
                Type::Scalar(s),
            ),
            Type::Scalar(_) => (h, ty),
            other => {
                return Err(Error::coded(
                    Code::TypeMismatch,
                    operand.span,
                    format!(
                        "expected a `{}4` operand, found `{}`",
                        t.scalar.name(),
                        self.program.display(&other)
                    ),
                ))
            }
        };
        self.convert(fx, h, &from, &Type::Scalar(t.scalar), true, operand.span)
    }

    /// `0 - v`: wrapping, as `atomic_fetch_sub` subtracts.
    fn wrapping_negation(
        &mut self,
        fx: &mut FnCtx,
        t: &Texture,
        v: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let zero = match t.scalar {
            Scalar::Int => naga::Literal::I32(0),
            _ => naga::Literal::U32(0),
        };
        let zero = fx.add(Expression::Literal(zero), span);
        fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::Subtract,
                left: zero,
                right: v,
            },
            span,
        )
    }
}
