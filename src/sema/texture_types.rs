//! Metal's texture types (MSL §2.9): `texture2d<T, access>`, `depth2d<T>`
//! and the other shapes, their component type and access, and the shapes
//! WGSL has no equivalent of.

use super::{Error, Program, Result};
use crate::diagnostics::Code;
use crate::syntax::ast::{self, TemplateArg};
use crate::types::{self, Type};

impl Program<'_> {
    /// `texture2d<T, access::A>`, `depth2d<float>` ... (MSL §2.9).
    pub(super) fn texture_type(&self, name: &str, ts: &ast::TypeSpec) -> Result<Type> {
        let shape = self.texture_shape(name, ts)?;
        let (elem, access) = match ts.args.as_slice() {
            [TemplateArg::Type(t)] => (t, None),
            [TemplateArg::Type(t), a] => (t, Some(a)),
            // MSL 3.2's `memory_coherence c`: only what device-scope fences
            // order differs, and those are narrowed already (W0409).
            [TemplateArg::Type(t), a, c] => {
                memory_coherence(c)?;
                (t, Some(a))
            }
            _ => {
                return Err(Error::coded(
                    Code::InvalidType,
                    ts.span,
                    format!("`{name}` needs a component type: `{name}<float>`"),
                ))
            }
        };
        let scalar = self.texture_component(elem)?;
        if shape.is_depth() && scalar != types::Scalar::Float {
            return Err(Error::coded(
                Code::InvalidType,
                elem.span,
                "depth textures have `float` components",
            ));
        }
        let access = match (shape, texture_access(access)?) {
            // `texture_buffer<T, access a = access::read>`.
            (types::TextureShape::Buffer, types::TextureAccess::Sample) => match access {
                None => types::TextureAccess::Read,
                Some(_) => {
                    return Err(Error::coded(
                        Code::TextureUsage,
                        ts.span,
                        "a `texture_buffer` cannot be sampled: its access is `read`, `write` or `read_write`",
                    ))
                }
            },
            (_, access) => access,
        };
        if shape.is_depth()
            && matches!(
                access,
                types::TextureAccess::Write | types::TextureAccess::ReadWrite
            )
        {
            return Err(Error::coded(
                Code::TextureUsage,
                ts.span,
                "depth textures cannot be written in a kernel",
            ));
        }
        Ok(Type::Texture(types::Texture {
            shape,
            scalar,
            access,
            format: None,
        }))
    }

    /// The shape of texture type `name` (`texture2d`, `depthcube`...).
    fn texture_shape(&self, name: &str, ts: &ast::TypeSpec) -> Result<types::TextureShape> {
        use types::TextureShape as S;
        Ok(match name {
            "texture1d" => S::D1,
            "texture2d" => S::D2,
            "texture2d_array" => S::D2Array,
            "texture2d_ms" => S::D2Ms,
            "texture3d" => S::D3,
            "texturecube" => S::Cube,
            "texturecube_array" => S::CubeArray,
            "depth2d" => S::Depth2D,
            "depth2d_array" => S::Depth2DArray,
            "depthcube" => S::DepthCube,
            "depthcube_array" => S::DepthCubeArray,
            "depth2d_ms" => S::Depth2DMs,
            "texture1d_array" => S::D1Array,
            "texture2d_ms_array" | "depth2d_ms_array" => {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    ts.name_span,
                    format!("`{name}` has no WebGPU equivalent: WebGPU cannot bind multisampled array textures"),
                )
                .note("a multisampled texture view in WebGPU is 2-D with one array layer (`texture_multisampled_2d`, `texture_depth_multisampled_2d`)")
                .note(format!(
                    "bind each layer as a `{}` of its own (a view of one array layer), or resolve the samples into a `{}` and read that",
                    if name.starts_with("depth") { "depth2d_ms<float>" } else { "texture2d_ms<T>" },
                    if name.starts_with("depth") { "depth2d_array<float>" } else { "texture2d_array<T>" },
                )));
            }
            "texture_buffer" => S::Buffer,
            _ => return Err(Error::unknown_type(ts.name_span, name)),
        })
    }

    /// The component type of a texture: a 32- or 16-bit scalar.
    fn texture_component(&self, elem: &ast::TypeSpec) -> Result<types::Scalar> {
        match self.resolve_value_type(elem)? {
            Type::Scalar(
                s @ (types::Scalar::Float
                | types::Scalar::Half
                | types::Scalar::Int
                | types::Scalar::UInt
                | types::Scalar::Short
                | types::Scalar::UShort),
            ) => Ok(s),
            other => Err(Error::coded(
                Code::InvalidType,
                elem.span,
                format!(
                    "`{}` is not a texture component type (float, half, int, uint, short, ushort)",
                    self.display(&other)
                ),
            )),
        }
    }
}

/// A texture's `access::` argument (`sample` when there is none).
/// `memory_coherence_threadgroup` (the default) or
/// `memory_coherence_device` (MSL 3.2 §2.9): whether a texture's writes are
/// coherent across the device or within a threadgroup. WGSL has no
/// device-scope fence to make the difference visible, and Metal's device
/// fences translate to workgroup barriers with a warning (W0409), so both
/// translate the same.
fn memory_coherence(arg: &TemplateArg) -> Result<()> {
    let (path, span) = match arg {
        TemplateArg::Type(t) => (t.path.clone(), t.span),
        TemplateArg::Expr(ast::Expr {
            kind: ast::ExprKind::Name(p),
            span,
        }) => (p.clone(), *span),
        TemplateArg::Expr(e) => (Vec::new(), e.span),
    };
    match path.last().map(String::as_str) {
        Some("memory_coherence_threadgroup" | "memory_coherence_device") => Ok(()),
        _ => Err(Error::coded(
            Code::InvalidType,
            span,
            "expected `memory_coherence_threadgroup` or `memory_coherence_device`",
        )),
    }
}

fn texture_access(access: Option<&TemplateArg>) -> Result<types::TextureAccess> {
    Ok(match access {
        None => types::TextureAccess::Sample,
        Some(arg) => {
            let (path, span) = match arg {
                TemplateArg::Type(t) => (t.path.clone(), t.span),
                TemplateArg::Expr(ast::Expr {
                    kind: ast::ExprKind::Name(p),
                    span,
                }) => (p.clone(), *span),
                TemplateArg::Expr(e) => (Vec::new(), e.span),
            };
            match path.last().map(String::as_str) {
                Some("sample") => types::TextureAccess::Sample,
                Some("read") => types::TextureAccess::Read,
                Some("write") => types::TextureAccess::Write,
                Some("read_write") => types::TextureAccess::ReadWrite,
                _ => return Err(Error::coded(Code::InvalidType, span, "expected `access::sample`, `access::read`, `access::write` or `access::read_write`")),
            }
        }
    })
}
