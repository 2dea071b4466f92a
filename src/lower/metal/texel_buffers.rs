//! `texture_buffer<T, access>` (MSL §2.9): a 1-D texture whose texels are
//! a buffer's bytes, in a pixel format the host gives.
//!
//! Metal: `read(uint coord)`, `write(vec<T, 4> color, uint coord)` and
//! `get_width()` decode and encode texels of the buffer's format (the
//! components a format lacks read as 0, alpha as 1).
//!
//! WGSL: there are no buffer textures.
//!
//! Mapping: the texel buffer is a storage buffer of `u32` words
//! (`var<storage, read|read_write> t: array<u32>` at the texture's binding,
//! 64 + n), each texel one, two or four whole words, decoded and encoded in
//! the shader: 32-bit components as they are (floats bit cast), rgba8unorm,
//! rgba8snorm and bgra8unorm with `unpack4x8unorm`/`pack4x8unorm` (and
//! snorm), rgba16float with `unpack2x16float`/`pack2x16float`. Formats whose
//! texels are narrower than a word (r8unorm, r16float, ...) are refused: a
//! write would have to modify bytes of a word other threads may write. The
//! format is `--texture-format n=FORMAT` (`Options::texture_formats`), by
//! default the storage textures' (docs/CLI.md). Reflection says
//! `textureType: typeTextureBuffer`, `viewDimension: buffer`, `bindingKind:
//! buffer`; the runner binds the texels of a 1D [`TextureData`] of that
//! format as the buffer.
//!
//! [`TextureData`]: crate::runner::TextureData

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Value};
use crate::lower::metal::texture_sampling::math1;
use crate::lower::stdlib::simd::bin;
use crate::lower::stdlib::Builtin;
use crate::lower::texture_types::{
    default_format, format_index, format_kind, sampled_kind, FORMATS,
};
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{Access, Argument, ArgumentKind, TextureBinding, TextureInfo, WgslBinding};
use crate::source_map::Span;
use crate::syntax::ast::{self, Expr};
use crate::types::{Scalar, StorageBinding, Texture, TextureAccess, Type};
use naga::{Expression, Handle, MathFunction, Statement};

/// The formats a texel buffer may have, with the words of one texel.
const TEXEL_FORMATS: &[(&str, u32)] = &[
    ("r32float", 1),
    ("rg32float", 2),
    ("rgba32float", 4),
    ("r32uint", 1),
    ("rg32uint", 2),
    ("rgba32uint", 4),
    ("r32sint", 1),
    ("rg32sint", 2),
    ("rgba32sint", 4),
    ("rgba8unorm", 1),
    ("rgba8snorm", 1),
    ("bgra8unorm", 1),
    ("rgba16float", 2),
];

/// The format name and words per texel of a bound texel buffer.
fn texel_format(t: &Texture) -> (&'static str, u32) {
    let b = t.format.expect("texel buffers get a format when bound");
    let name = FORMATS[b.format as usize].0;
    let words = TEXEL_FORMATS
        .iter()
        .find(|f| f.0 == name)
        .map_or(1, |f| f.1);
    (name, words)
}

impl Lowerer<'_, '_> {
    /// `[[texture(n)]]` of a `texture_buffer`: a storage buffer of words at
    /// binding 64 + n.
    pub(in crate::lower) fn bind_texel_buffer(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        mut texture: Texture,
        index: u32,
        binding: WgslBinding,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        let name = param
            .name
            .as_ref()
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_".into());
        let format = self.texel_buffer_format(&texture, index, param.span)?;
        texture.format = Some(StorageBinding {
            format: format_index(format).expect("texel formats are storage formats"),
            atomic: false,
        });
        let writable = texture.access != TextureAccess::Read;
        if writable && self.entry.is_vertex() {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                param.span,
                "a vertex function cannot write a `texture_buffer` in WebGPU",
            )
            .note("WebGPU vertex functions write no storage buffers, and texel buffers are storage buffers in WGSL; declare it `access::read`"));
        }
        let g = self.texel_buffer_global(&name, writable, binding, param.span)?;
        let h = fx.add(Expression::GlobalVariable(g), param.span);
        if let Some(n) = &param.name {
            fx.declare(&n.name, Local::Value(h, Type::Texture(texture)));
        }
        let sample_type = match sampled_kind(texture.scalar) {
            naga::ScalarKind::Float => "float",
            naga::ScalarKind::Sint => "sint",
            _ => "uint",
        };
        arguments.push(Argument {
            name,
            kind: ArgumentKind::Texture,
            index,
            access: match texture.access {
                TextureAccess::Write => Access::Write,
                TextureAccess::ReadWrite => Access::ReadWrite,
                _ => Access::Read,
            },
            active: true,
            binding: Some(binding),
            buffer: None,
            threadgroup: None,
            texture: Some(TextureInfo {
                texture_type: "typeTextureBuffer".into(),
                data_type: texture.scalar.name().into(),
                view_dimension: "buffer".into(),
                binding_kind: TextureBinding::Buffer,
                sample_type: sample_type.into(),
                multisampled: false,
                storage_format: Some(format.into()),
            }),
            sampler: None,
            members: Vec::new(),
        });
        Ok(())
    }

    /// The format of the texel buffer at `[[texture(index)]]`: given, or
    /// the storage textures' default; one WGSL can decode in whole words.
    fn texel_buffer_format(&self, t: &Texture, index: u32, span: Span) -> Result<&'static str> {
        let given = self.settings.texture_formats.get(&index);
        let name = given
            .map(String::as_str)
            .unwrap_or_else(|| default_format(t));
        let Some((format, _)) = TEXEL_FORMATS.iter().find(|f| f.0 == name) else {
            let known: Vec<&str> = TEXEL_FORMATS.iter().map(|f| f.0).collect();
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                format!("a texel buffer of `{name}` has no WGSL equivalent"),
            )
            .note("WGSL has no buffer textures: texel buffers are storage buffers of 32-bit words decoded in the shader, and a texel narrower than a word cannot be written without touching its neighbours")
            .note(format!("formats: {} (`--texture-format {index}=FORMAT`)", known.join(", "))));
        };
        if format_kind(format) != sampled_kind(t.scalar) {
            return Err(Error::coded(
                Code::TextureUsage,
                span,
                format!(
                    "format `{format}` does not hold `{}` components",
                    t.scalar.name()
                ),
            ));
        }
        Ok(format)
    }

    /// `var<storage, read|read_write> name: array<u32>` at `binding`.
    fn texel_buffer_global(
        &mut self,
        name: &str,
        writable: bool,
        binding: WgslBinding,
        span: Span,
    ) -> Result<Handle<naga::GlobalVariable>> {
        let word = self.naga_type(&Type::UINT, span)?;
        let ty = self.global.module.types.insert(
            naga::Type {
                name: None,
                inner: naga::TypeInner::Array {
                    base: word,
                    size: naga::ArraySize::Dynamic,
                    stride: 4,
                },
            },
            naga::Span::UNDEFINED,
        );
        let access = if writable {
            naga::StorageAccess::LOAD | naga::StorageAccess::STORE
        } else {
            naga::StorageAccess::LOAD
        };
        let space = naga::AddressSpace::Storage { access };
        let key = (binding.group, binding.binding, ty, writable);
        if let Some(g) = self.global.buffers.get(&key) {
            if self.global.module.global_variables[*g].space == space {
                return Ok(*g);
            }
        }
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(name.into()),
                space,
                binding: Some(naga::ResourceBinding {
                    group: binding.group,
                    binding: binding.binding,
                }),
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            Self::span(span),
        );
        self.global.buffers.insert(key, g);
        Ok(g)
    }

    /// A member function of a texel buffer: `read`, `write`, `get_width`.
    pub(in crate::lower) fn texel_buffer_method(
        &mut self,
        fx: &mut FnCtx,
        buffer: Handle<Expression>,
        t: Texture,
        member: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        match (member, args) {
            (Builtin::TextureRead, [coord]) => {
                self.check_access(&t, &[TextureAccess::Read, TextureAccess::ReadWrite], "read from", span)?;
                let coord = self.integer_coordinate(fx, coord, 1)?;
                let texel = self.load_texel(fx, buffer, &t, coord, span)?;
                self.texel(fx, texel, &t, false, span)
            }
            (Builtin::TextureWrite, [color, coord]) => {
                self.check_access(&t, &[TextureAccess::Write, TextureAccess::ReadWrite], "write to", span)?;
                let (h, ty) = self.rvalue(fx, color)?;
                if ty.vector_size() != Some(4) && !matches!(ty, Type::Scalar(_)) {
                    return Err(Error::coded(
                        Code::NoMatchingOverload,
                        color.span,
                        format!(
                            "`write` takes a 4-component value, found `{}`",
                            self.program.display(&ty)
                        ),
                    ));
                }
                let value = self.convert(fx, h, &ty, &wide(&t), true, color.span)?;
                let coord = self.integer_coordinate(fx, coord, 1)?;
                self.store_texel(fx, buffer, &t, coord, value, span)?;
                Ok(Value::Void)
            }
            (Builtin::TextureGetWidth, []) => {
                let words = fx.add(Expression::ArrayLength(buffer), span);
                let (_, per) = texel_format(&t);
                let per = self.u32_lit(fx, per, span);
                let width = bin(fx, naga::BinaryOperator::Divide, words, per, span);
                Ok(Value::Rv(width, Type::UINT))
            }
            // Same-thread ordering of reads and writes holds in WGSL already.
            (Builtin::TextureFence, []) => Ok(Value::Void),
            (Builtin::TextureRead | Builtin::TextureWrite | Builtin::TextureGetWidth, _) => {
                Err(Error::coded(
                    Code::NoMatchingOverload,
                    span,
                    format!(
                        "`texture_buffer` takes `read(uint coord)`, `write(color, uint coord)` and `get_width()`; no overload of `{}` takes {} arguments",
                        member.name(),
                        args.len()
                    ),
                ))
            }
            _ => Err(Error::coded(
                Code::UnknownMember,
                span,
                format!("`texture_buffer` has no `{}`", member.name()),
            )),
        }
    }

    /// Word `k` of texel `coord`: a pointer into the buffer.
    fn texel_word(
        &mut self,
        fx: &mut FnCtx,
        buffer: Handle<Expression>,
        per: u32,
        coord: Handle<Expression>,
        k: u32,
        span: Span,
    ) -> Handle<Expression> {
        let per = self.u32_lit(fx, per, span);
        let first = bin(fx, naga::BinaryOperator::Multiply, coord, per, span);
        let k = self.u32_lit(fx, k, span);
        let index = bin(fx, naga::BinaryOperator::Add, first, k, span);
        fx.add(
            Expression::Access {
                base: buffer,
                index,
            },
            span,
        )
    }

    /// Texel `coord` decoded to a 4-vector of its sampled kind.
    fn load_texel(
        &mut self,
        fx: &mut FnCtx,
        buffer: Handle<Expression>,
        t: &Texture,
        coord: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let (format, per) = texel_format(t);
        let words: Vec<_> = (0..per)
            .map(|k| {
                let pointer = self.texel_word(fx, buffer, per, coord, k, span);
                fx.add(Expression::Load { pointer }, span)
            })
            .collect();
        let vec4 = self.naga_type(&wide(t), span)?;
        let compose = |fx: &mut FnCtx, components| {
            fx.add(
                Expression::Compose {
                    ty: vec4,
                    components,
                },
                span,
            )
        };
        Ok(match format {
            "rgba8unorm" => math1(fx, MathFunction::Unpack4x8unorm, words[0], span),
            "rgba8snorm" => math1(fx, MathFunction::Unpack4x8snorm, words[0], span),
            "bgra8unorm" => {
                let rgba = math1(fx, MathFunction::Unpack4x8unorm, words[0], span);
                swizzle(fx, rgba, [2, 1, 0, 3], span)
            }
            "rgba16float" => {
                let xy = math1(fx, MathFunction::Unpack2x16float, words[0], span);
                let zw = math1(fx, MathFunction::Unpack2x16float, words[1], span);
                compose(fx, vec![xy, zw])
            }
            _ => {
                let kind = sampled_kind(t.scalar);
                let mut components: Vec<_> = words
                    .into_iter()
                    .map(|w| match kind {
                        naga::ScalarKind::Uint => w,
                        _ => fx.add(
                            Expression::As {
                                expr: w,
                                kind,
                                convert: None,
                            },
                            span,
                        ),
                    })
                    .collect();
                while components.len() < 3 {
                    components.push(literal(fx, kind, 0, span));
                }
                if components.len() < 4 {
                    components.push(literal(fx, kind, 1, span));
                }
                compose(fx, components)
            }
        })
    }

    /// `value` (a 4-vector of the sampled kind) encoded into texel `coord`.
    fn store_texel(
        &mut self,
        fx: &mut FnCtx,
        buffer: Handle<Expression>,
        t: &Texture,
        coord: Handle<Expression>,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<()> {
        let (format, per) = texel_format(t);
        let words: Vec<Handle<Expression>> = match format {
            "rgba8unorm" => vec![math1(fx, MathFunction::Pack4x8unorm, value, span)],
            "rgba8snorm" => vec![math1(fx, MathFunction::Pack4x8snorm, value, span)],
            "bgra8unorm" => {
                let bgra = swizzle(fx, value, [2, 1, 0, 3], span);
                vec![math1(fx, MathFunction::Pack4x8unorm, bgra, span)]
            }
            "rgba16float" => {
                let xy = swizzle2(fx, value, [0, 1], span);
                let zw = swizzle2(fx, value, [2, 3], span);
                vec![
                    math1(fx, MathFunction::Pack2x16float, xy, span),
                    math1(fx, MathFunction::Pack2x16float, zw, span),
                ]
            }
            _ => (0..per)
                .map(|k| {
                    let c = fx.add(
                        Expression::AccessIndex {
                            base: value,
                            index: k,
                        },
                        span,
                    );
                    match sampled_kind(t.scalar) {
                        naga::ScalarKind::Uint => c,
                        _ => fx.add(
                            Expression::As {
                                expr: c,
                                kind: naga::ScalarKind::Uint,
                                convert: None,
                            },
                            span,
                        ),
                    }
                })
                .collect(),
        };
        for (k, word) in words.into_iter().enumerate() {
            let pointer = self.texel_word(fx, buffer, per, coord, k as u32, span);
            self.push_effect(
                fx,
                Statement::Store {
                    pointer,
                    value: word,
                },
                Some(pointer),
                span,
            );
        }
        Ok(())
    }
}

/// The 4-vector of a texel's sampled kind (`float4`, `int4`, `uint4`).
fn wide(t: &Texture) -> Type {
    Type::Vector(
        match sampled_kind(t.scalar) {
            naga::ScalarKind::Float => Scalar::Float,
            naga::ScalarKind::Sint => Scalar::Int,
            _ => Scalar::UInt,
        },
        4,
    )
}

fn literal(fx: &mut FnCtx, kind: naga::ScalarKind, v: u8, span: Span) -> Handle<Expression> {
    let lit = match kind {
        naga::ScalarKind::Float => naga::Literal::F32(f32::from(v)),
        naga::ScalarKind::Sint => naga::Literal::I32(i32::from(v)),
        _ => naga::Literal::U32(u32::from(v)),
    };
    fx.add(Expression::Literal(lit), span)
}

fn swizzle(
    fx: &mut FnCtx,
    vector: Handle<Expression>,
    lanes: [usize; 4],
    span: Span,
) -> Handle<Expression> {
    let pattern = lanes.map(|l| naga::SwizzleComponent::XYZW[l]);
    fx.add(
        Expression::Swizzle {
            size: naga::VectorSize::Quad,
            vector,
            pattern,
        },
        span,
    )
}

fn swizzle2(
    fx: &mut FnCtx,
    vector: Handle<Expression>,
    lanes: [usize; 2],
    span: Span,
) -> Handle<Expression> {
    let c = naga::SwizzleComponent::XYZW;
    fx.add(
        Expression::Swizzle {
            size: naga::VectorSize::Bi,
            vector,
            pattern: [c[lanes[0]], c[lanes[1]], c[0], c[0]],
        },
        span,
    )
}
