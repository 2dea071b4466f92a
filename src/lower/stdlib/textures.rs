//! The texture member functions (MSL §6.12); the texture types and storage
//! formats are in `lower::texture_types`.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::Builtin;
use crate::lower::texture_types::{
    default_format, format_index, format_kind, sampled_kind, FORMATS, READ_WRITE_FORMATS,
};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::{Scalar, Texture, TextureAccess, Type};
use naga::{Expression, Handle};

/// The options a `sample` call may end with (MSL §6.12.3).
#[derive(Default)]
pub(in crate::lower) struct SampleOptions<'e> {
    pub level: Option<&'e Expr>,
    pub bias: Option<&'e Expr>,
    pub gradient: Option<(&'e Expr, &'e Expr)>,
    /// A gradient given as a value of a gradient type (`sample(s, p,
    /// project(p, dx, dy))` with a helper returning `gradientcube`).
    pub gradient_value: Option<&'e Expr>,
    pub offset: Option<&'e Expr>,
    pub component: Option<u8>,
    pub min_lod_clamp: Option<&'e Expr>,
}

impl Lowerer<'_, '_> {
    /// `is_null_texture(t)`: in Metal, whether an argument-buffer or
    /// argument-table slot holds no texture. Every texture binding of a
    /// WebGPU pipeline's bind groups must hold one (a bind group cannot be
    /// created without it), so a texture the shader can name is never null:
    /// `false`, once `t` is checked to be a texture.
    pub(in crate::lower) fn is_null_texture(
        &mut self,
        fx: &mut FnCtx,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [texture] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                "`is_null_texture` takes one texture",
            ));
        };
        if !matches!(self.type_of(fx, texture)?, Type::Texture(_)) {
            return Err(Error::coded(
                Code::InvalidBuiltinArgument,
                texture.span,
                "`is_null_texture` takes a texture",
            ));
        }
        let no = Expression::Literal(naga::Literal::Bool(false));
        Ok(Value::Rv(fx.add(no, span), Type::BOOL))
    }

    /// Chooses the format of a storage texture bound at `[[texture(index)]]`.
    pub(in crate::lower) fn storage_format(
        &self,
        t: &Texture,
        index: u32,
        span: Span,
    ) -> Result<u8> {
        let name = self
            .settings
            .texture_formats
            .get(&index)
            .map(String::as_str)
            .unwrap_or_else(|| default_format(t));
        let Some(i) = format_index(name) else {
            let known: Vec<&str> = FORMATS.iter().map(|f| f.0).collect();
            return Err(Error::coded(
                Code::InvalidOption,
                span,
                format!("unknown storage texture format `{name}`"),
            )
            .note(format!("known formats: {}", known.join(", "))));
        };
        if format_kind(name) != sampled_kind(t.scalar) {
            return Err(Error::coded(
                Code::TextureUsage,
                span,
                format!(
                    "format `{name}` does not hold `{}` components",
                    t.scalar.name()
                ),
            ));
        }
        if t.access == TextureAccess::ReadWrite
            && !READ_WRITE_FORMATS.contains(&name)
            && !self.settings.native_extensions
        {
            return Err(Error::coded(Code::NoWebGpuEquivalent, span, format!("`access::read_write` textures need a format WebGPU allows read-write access to, not `{name}`"))
                .note(format!("formats: {} (pass one with `--texture-format {index}=FORMAT`, `Options::texture_formats` in the library)", READ_WRITE_FORMATS.join(", "))));
        }
        Ok(i)
    }

    /// A texture member function call: `t.sample(s, uv)`, `t.read(gid)` ...
    pub(in crate::lower) fn texture_method(
        &mut self,
        fx: &mut FnCtx,
        image: Handle<Expression>,
        t: Texture,
        method: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        use Builtin as B;
        // MSL 2.2's LOD queries (§6.12.8): WGSL returns no level of detail.
        if matches!(method, "calculate_clamped_lod" | "calculate_unclamped_lod") {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                format!("`{method}` has no WGSL equivalent: WGSL has no level-of-detail query"),
            )
            .note("the LOD can be computed from the coordinate's derivatives (`dfdx`, `dfdy`) and the texture's size, as WebGPU's sampling rules describe it, where the shader needs an estimate"));
        }
        // Sparse textures (MSL §6.12.14): `sparse_sample`, `sparse_read`,
        // ... return a `sparse_color<T>` that says whether the texels were
        // resident; WebGPU textures are always fully resident.
        if method.starts_with("sparse_") {
            return Err(crate::sema::unported_features::sparse_refusal(method, span));
        }
        let Some(member) = Builtin::texture_member(method) else {
            return Err(Error::coded(
                Code::UnknownMember,
                span,
                format!("`{}` has no member function `{method}`", t.shape.name()),
            ));
        };
        if t.shape == crate::types::TextureShape::Buffer {
            return self.texel_buffer_method(fx, image, t, member, args, span);
        }
        match member {
            B::TextureSample => self.texture_sample(fx, image, t, args, false, span),
            B::TextureSampleCompare => self.texture_sample(fx, image, t, args, true, span),
            B::TextureGather => self.texture_gather(fx, image, t, args, false, span),
            B::TextureGatherCompare => self.texture_gather(fx, image, t, args, true, span),
            B::TextureRead => self.texture_read(fx, image, t, args, span),
            B::TextureWrite => self.texture_write(fx, image, t, args, span),
            B::TextureGetWidth | B::TextureGetHeight | B::TextureGetDepth => {
                self.texture_size(fx, image, t, member, args, span)
            }
            B::TextureGetNumMipLevels | B::TextureGetArraySize | B::TextureGetNumSamples => {
                self.texture_query(fx, image, t, member, span)
            }
            // Same-thread ordering of a texture's reads and writes holds in WGSL already.
            B::TextureFence => Ok(Value::Void),
            B::TextureAtomicLoad
            | B::TextureAtomicStore
            | B::TextureAtomicExchange
            | B::TextureAtomicCompareExchangeWeak
            | B::TextureAtomicFetchAdd
            | B::TextureAtomicFetchSub
            | B::TextureAtomicFetchAnd
            | B::TextureAtomicFetchOr
            | B::TextureAtomicFetchXor
            | B::TextureAtomicFetchMin
            | B::TextureAtomicFetchMax => self.texture_atomic(fx, image, t, member, args, span),
            _ => unreachable!("`{}` is not a texture member", member.name()),
        }
    }

    pub(in crate::lower) fn check_access(
        &self,
        t: &Texture,
        allowed: &[TextureAccess],
        what: &str,
        span: Span,
    ) -> Result<()> {
        if allowed.contains(&t.access) {
            return Ok(());
        }
        let access = match t.access {
            TextureAccess::Sample => "access::sample",
            TextureAccess::Read => "access::read",
            TextureAccess::Write => "access::write",
            TextureAccess::ReadWrite => "access::read_write",
        };
        Err(Error::coded(
            Code::TextureUsage,
            span,
            format!("cannot {what} a texture declared with `{access}`"),
        ))
    }

    /// Converts an argument to a `u32` scalar or vector of `n` lanes.
    pub(in crate::lower) fn integer_coordinate(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        n: u8,
    ) -> Result<Handle<Expression>> {
        self.coordinate(fx, e, n, Scalar::UInt)
    }

    /// Converts an argument to a `float` scalar or vector of `n` lanes.
    pub(in crate::lower) fn float_coordinate(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        n: u8,
    ) -> Result<Handle<Expression>> {
        self.coordinate(fx, e, n, Scalar::Float)
    }

    /// A coordinate of `n` lanes of `to` (`uint` or `float`): any integer
    /// (or floating-point) argument of that many lanes converts.
    fn coordinate(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        n: u8,
        to: Scalar,
    ) -> Result<Handle<Expression>> {
        let (h, t) = self.rvalue(fx, e)?;
        let kind_fits = match t.element_scalar() {
            Some(s) if to.is_float() => s.is_float(),
            Some(s) => s.is_integer(),
            None => false,
        };
        if !kind_fits || t.vector_size() != Some(n) {
            let name = if to.is_float() { "float" } else { "uint" };
            return Err(Error::coded(
                Code::TypeMismatch,
                e.span,
                format!(
                    "expected a coordinate of type `{name}{}`, found `{}`",
                    if n > 1 { n.to_string() } else { String::new() },
                    self.program.display(&t)
                ),
            ));
        }
        self.convert(fx, h, &t, &Type::vector(to, n), true, e.span)
    }

    pub(in crate::lower) fn scalar_arg(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        to: Scalar,
    ) -> Result<Handle<Expression>> {
        let (h, t) = self.rvalue(fx, e)?;
        if !matches!(t, Type::Scalar(_)) {
            return Err(Error::coded(
                Code::TypeMismatch,
                e.span,
                format!("expected a scalar, found `{}`", self.program.display(&t)),
            ));
        }
        self.convert(fx, h, &t, &Type::Scalar(to), true, e.span)
    }

    /// The sampler argument; `comparison` must match its use.
    pub(in crate::lower) fn sampler_arg(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        comparison: bool,
    ) -> Result<(Handle<Expression>, bool)> {
        let (h, t) = self.rvalue(fx, e)?;
        let Type::Sampler { comparison: is_cmp } = t else {
            return Err(Error::coded(
                Code::TypeMismatch,
                e.span,
                format!("expected a sampler, found `{}`", self.program.display(&t)),
            ));
        };
        // A sampler the host sets, or a parameter holding one, takes the
        // type its uses ask for (`passes::comparison_samplers`); a
        // `constexpr` one has the type its `compare_func` gives.
        let settable = match *fx.expr(h) {
            Expression::FunctionArgument(_) => true,
            Expression::GlobalVariable(g) => self.global.argument_samplers.contains(&g),
            _ => false,
        };
        if is_cmp != comparison && !settable {
            let msg = if comparison {
                "this sampler is not a comparison sampler (give it a `compare_func`)"
            } else {
                "a comparison sampler cannot be used with `sample`; use `sample_compare`"
            };
            return Err(Error::coded(Code::TextureUsage, e.span, msg));
        }
        let pixel = self.global.pixel_samplers.contains(&h_global(fx, h));
        Ok((h, pixel))
    }

    /// Splits trailing option calls (`level(..)`, `bias(..)`, ...) off the arguments.
    pub(in crate::lower) fn sample_options<'e>(
        &self,
        args: &'e [Expr],
    ) -> Result<(Vec<&'e Expr>, SampleOptions<'e>)> {
        let mut plain = Vec::new();
        let mut options = SampleOptions::default();
        for a in args {
            let option = match &a.kind {
                ExprKind::Call(callee, inner) => match &callee.kind {
                    ExprKind::Name(p) => Some((p.last().cloned().unwrap_or_default(), inner)),
                    _ => None,
                },
                ExprKind::Name(p) if p.len() >= 2 && p[p.len() - 2] == "component" => {
                    options.component = Some(match p.last().map(String::as_str) {
                        Some("x") => 0,
                        Some("y") => 1,
                        Some("z") => 2,
                        Some("w") => 3,
                        _ => {
                            return Err(Error::coded(
                                Code::InvalidBuiltinArgument,
                                a.span,
                                "expected `component::x`, `y`, `z` or `w`",
                            ))
                        }
                    });
                    continue;
                }
                _ => None,
            };
            match option {
                Some((name, inner)) if name == "level" && inner.len() == 1 => {
                    options.level = Some(&inner[0])
                }
                Some((name, inner)) if name == "bias" && inner.len() == 1 => {
                    options.bias = Some(&inner[0])
                }
                Some((name, inner)) if name.starts_with("gradient") && inner.len() == 2 => {
                    options.gradient = Some((&inner[0], &inner[1]))
                }
                Some((name, inner)) if name == "min_lod_clamp" && inner.len() == 1 => {
                    options.min_lod_clamp = Some(&inner[0])
                }
                _ if !plain.is_empty() && is_vector_literal(a) => options.offset = Some(a),
                _ => plain.push(a),
            }
        }
        Ok((plain, options))
    }

    /// The first of `plain` after the sampler and coordinate whose type is
    /// a gradient type (`gradientcube`, sema/gradients.rs): a gradient
    /// given as a value rather than as `gradientcube(dx, dy)` in the call.
    pub(in crate::lower) fn typed_gradient<'e>(
        &mut self,
        fx: &mut FnCtx,
        plain: &mut Vec<&'e Expr>,
        options: &mut SampleOptions<'e>,
    ) -> Result<()> {
        if options.gradient.is_some() {
            return Ok(());
        }
        for k in 2..plain.len() {
            if let Type::Struct(id) = self.type_of(fx, plain[k])? {
                if self.program.gradient_type(id).is_some() {
                    options.gradient_value = Some(plain.remove(k));
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The last of `plain`, when it is one argument too many and an
    /// integer vector, is the texel offset (`sample(s, uv, off)` with a
    /// variable `int2 off`; `int2(...)` literals are found by
    /// [`Self::sample_options`]).
    pub(in crate::lower) fn typed_offset<'e>(
        &mut self,
        fx: &mut FnCtx,
        plain: &mut Vec<&'e Expr>,
        options: &mut SampleOptions<'e>,
        arity: usize,
    ) -> Result<()> {
        if options.offset.is_some() || plain.len() != arity + 1 {
            return Ok(());
        }
        let last = plain[arity];
        let ty = self.type_of(fx, last)?;
        if matches!(ty, Type::Vector(s, 2 | 3) if s.is_integer()) {
            options.offset = plain.pop();
        }
        Ok(())
    }

    /// A texel offset that is a constant `int2`/`int3` (naga requires a
    /// const-expression); `None` when it is not constant
    /// (`lower::metal::texture_sampling` folds those into the coordinate).
    pub(in crate::lower) fn texel_offset(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        n: u8,
    ) -> Result<Option<Handle<Expression>>> {
        let Ok(v) = consteval::eval(self.program, e) else {
            return Ok(None);
        };
        let want = Type::vector(Scalar::Int, n);
        let v = consteval::convert(&v, &want, e.span, self.program)?;
        let init = self.global_const_expr(&v, e.span)?;
        let ty = self.naga_type(&want, e.span)?;
        let c = self.global.module.constants.append(
            naga::Constant {
                name: None,
                ty,
                init,
            },
            naga::Span::UNDEFINED,
        );
        Ok(Some(fx.add(Expression::Constant(c), e.span)))
    }

    /// The result of a sample/read/gather as an MSL value of `t`'s component type.
    pub(in crate::lower) fn texel(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        t: &Texture,
        scalar_result: bool,
        span: Span,
    ) -> Result<Value> {
        if scalar_result {
            return Ok(Value::Rv(h, Type::FLOAT));
        }
        let wide = Type::Vector(
            match sampled_kind(t.scalar) {
                naga::ScalarKind::Float => Scalar::Float,
                naga::ScalarKind::Sint => Scalar::Int,
                _ => Scalar::UInt,
            },
            4,
        );
        let want = Type::Vector(t.scalar, 4);
        let h = if want == wide {
            h
        } else {
            self.convert(fx, h, &wide, &want, true, span)?
        };
        Ok(Value::Rv(h, want))
    }
}

/// The global a handle expression names, if any (for sampler properties).
fn h_global(fx: &FnCtx, h: Handle<Expression>) -> Option<Handle<naga::GlobalVariable>> {
    match *fx.expr(h) {
        Expression::GlobalVariable(g) => Some(g),
        _ => None,
    }
}

/// `int2(1, -1)`-style arguments are texel offsets.
fn is_vector_literal(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(callee, _) if matches!(&callee.kind, ExprKind::Name(p) if p.last().is_some_and(|n| matches!(n.as_str(), "int2" | "int3"))))
}
