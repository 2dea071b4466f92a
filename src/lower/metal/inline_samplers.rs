//! `constexpr sampler`s (MSL §2.10, Table 2.7): WGSL has no in-shader
//! samplers, so each becomes a sampler binding whose descriptor reflection
//! reports and the runner creates (mapping doc §5.4).

use crate::diagnostics::Code;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{ConstexprSampler, SamplerDescriptor, WgslBinding};
use crate::sema::{consteval, SamplerDecl};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::Type;

/// First `@binding` of constexpr samplers (after the dispatch uniform).
pub const FIRST_CONSTEXPR_SAMPLER_BINDING: u32 = crate::lower::DISPATCH_BINDING + 1;

/// A descriptor being built, with the Metal facts that shape the shader.
struct Parsed {
    descriptor: SamplerDescriptor,
    pixel: bool,
}

fn default_descriptor() -> SamplerDescriptor {
    SamplerDescriptor {
        address_mode_u: "clamp-to-edge".into(),
        address_mode_v: "clamp-to-edge".into(),
        address_mode_w: "clamp-to-edge".into(),
        mag_filter: "nearest".into(),
        min_filter: "nearest".into(),
        // Metal's default `mip_filter::none` samples as if there were one level.
        mipmap_filter: "nearest".into(),
        lod_min_clamp: 0.0,
        lod_max_clamp: 0.0,
        compare: None,
        anisotropy_clamp: 1,
        border_color: None,
    }
}

impl Lowerer<'_, '_> {
    /// The global of program-scope `constexpr sampler` number `index`.
    pub(in crate::lower) fn program_sampler(
        &mut self,
        index: usize,
        span: Span,
    ) -> Result<(naga::Handle<naga::GlobalVariable>, bool)> {
        if let Some(g) = self.global.program_samplers.get(&index) {
            let comparison = matches!(
                self.global.module.types[self.global.module.global_variables[*g].ty].inner,
                naga::TypeInner::Sampler { comparison: true }
            );
            return Ok((*g, comparison));
        }
        let decl = self.program.samplers[index].clone();
        let (g, comparison) = self.sampler_global(&decl, span)?;
        self.global.program_samplers.insert(index, g);
        Ok((g, comparison))
    }

    /// A sampler binding for a `constexpr sampler` declaration.
    pub(in crate::lower) fn sampler_global(
        &mut self,
        decl: &SamplerDecl,
        _span: Span,
    ) -> Result<(naga::Handle<naga::GlobalVariable>, bool)> {
        let parsed = self.parse_sampler(decl)?;
        let comparison = parsed.descriptor.compare.is_some();
        let ty = self.naga_type(&Type::Sampler { comparison }, decl.span)?;
        let binding = FIRST_CONSTEXPR_SAMPLER_BINDING + self.global.constexpr_samplers.len() as u32;
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(decl.name.clone()),
                space: naga::AddressSpace::Handle,
                binding: Some(naga::ResourceBinding { group: 0, binding }),
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            Self::span(decl.span),
        );
        if parsed.pixel {
            self.global.pixel_samplers.insert(Some(g));
        }
        let reflection = ConstexprSampler {
            name: decl.name.clone(),
            binding: WgslBinding { group: 0, binding },
            descriptor: parsed.descriptor,
        };
        self.global.constexpr_samplers.push((g, reflection));
        Ok((g, comparison))
    }

    fn parse_sampler(&self, decl: &SamplerDecl) -> Result<Parsed> {
        let mut p = Parsed {
            descriptor: default_descriptor(),
            pixel: false,
        };
        let mut mip_none = true;
        for arg in &decl.args {
            match &arg.kind {
                ExprKind::Name(path) if path.len() >= 2 => {
                    let (group, value) =
                        (path[path.len() - 2].as_str(), path[path.len() - 1].as_str());
                    self.sampler_enum(&mut p, &mut mip_none, group, value, arg.span)?;
                }
                ExprKind::Call(callee, args) => {
                    self.sampler_call(&mut p, callee, args, arg.span)?
                }
                _ => {
                    return Err(Error::coded(
                        Code::InvalidSampler,
                        arg.span,
                        "expected a sampler property such as `filter::linear`",
                    ))
                }
            }
        }
        let d = &mut p.descriptor;
        if !mip_none && d.lod_max_clamp == 0.0 {
            d.lod_max_clamp = 32.0;
        }
        if p.pixel && (d.mag_filter != d.min_filter || !mip_none) {
            return Err(Error::coded(Code::InvalidSampler, decl.span, "`coord::pixel` samplers need equal min and mag filters and `mip_filter::none` (MSL §2.10)"));
        }
        Ok(p)
    }

    fn sampler_enum(
        &self,
        p: &mut Parsed,
        mip_none: &mut bool,
        group: &str,
        value: &str,
        span: Span,
    ) -> Result<()> {
        let d = &mut p.descriptor;
        let bad = || {
            Error::coded(
                Code::InvalidSampler,
                span,
                format!("unknown sampler property `{group}::{value}`"),
            )
        };
        match group {
            "coord" => {
                p.pixel = match value {
                    "pixel" => true,
                    "normalized" => false,
                    _ => return Err(bad()),
                }
            }
            "address" | "s_address" | "t_address" | "r_address" => {
                let mode = match value {
                    "clamp_to_edge" => "clamp-to-edge",
                    "repeat" => "repeat",
                    "mirrored_repeat" => "mirror-repeat",
                    "clamp_to_border" => "clamp-to-border",
                    // "clamp_to_border with transparent black, alpha from the texture"
                    "clamp_to_zero" => {
                        d.border_color = Some("zero".into());
                        "clamp-to-border"
                    }
                    _ => return Err(bad()),
                };
                for (axis, field) in [
                    ("s", &mut d.address_mode_u),
                    ("t", &mut d.address_mode_v),
                    ("r", &mut d.address_mode_w),
                ] {
                    if group == "address" || group.starts_with(axis) {
                        *field = mode.into();
                    }
                }
                if mode == "clamp-to-border" && d.border_color.is_none() {
                    d.border_color = Some("transparent-black".into());
                }
            }
            "filter" | "mag_filter" | "min_filter" => {
                let f = match value {
                    "nearest" => "nearest",
                    "linear" => "linear",
                    _ => return Err(bad()),
                };
                if group != "min_filter" {
                    d.mag_filter = f.into();
                }
                if group != "mag_filter" {
                    d.min_filter = f.into();
                }
            }
            "mip_filter" => match value {
                "none" => *mip_none = true,
                "nearest" | "linear" => {
                    *mip_none = false;
                    d.mipmap_filter = value.into();
                }
                _ => return Err(bad()),
            },
            "compare_func" => {
                d.compare = match value {
                    "never" => None,
                    "less" => Some("less"),
                    "less_equal" => Some("less-equal"),
                    "greater" => Some("greater"),
                    "greater_equal" => Some("greater-equal"),
                    "equal" => Some("equal"),
                    "not_equal" => Some("not-equal"),
                    "always" => Some("always"),
                    _ => return Err(bad()),
                }
                .map(String::from)
            }
            "border_color" => {
                d.border_color = Some(
                    match value {
                        "transparent_black" => "transparent-black",
                        "opaque_black" => "opaque-black",
                        "opaque_white" => "opaque-white",
                        _ => return Err(bad()),
                    }
                    .into(),
                )
            }
            "reduction" => {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    span,
                    "sampler reduction modes have no WebGPU equivalent",
                )
                .note("neither WebGPU nor wgpu (30) has min/max filtering: `wgpu::SamplerDescriptor` has no reduction mode")
                .note("take the `min` or `max` of the four texels `gather` returns instead"))
            }
            _ => return Err(bad()),
        }
        Ok(())
    }

    fn sampler_call(&self, p: &mut Parsed, callee: &Expr, args: &[Expr], span: Span) -> Result<()> {
        let ExprKind::Name(path) = &callee.kind else {
            return Err(Error::coded(
                Code::InvalidSampler,
                span,
                "expected a sampler property",
            ));
        };
        let number = |e: &Expr| -> Result<f64> {
            match consteval::eval(self.program, e)? {
                consteval::ConstValue::Int(v, _) => Ok(v as f64),
                consteval::ConstValue::Float(v, _) => Ok(v),
                _ => Err(Error::coded(
                    Code::InvalidSampler,
                    e.span,
                    "expected a number",
                )),
            }
        };
        match (path.last().map(String::as_str), args) {
            (Some("max_anisotropy"), [n]) => {
                p.descriptor.anisotropy_clamp = number(n)?.clamp(1.0, 16.0) as u16
            }
            (Some("lod_clamp"), [lo, hi]) => {
                p.descriptor.lod_min_clamp = number(lo)? as f32;
                p.descriptor.lod_max_clamp = number(hi)? as f32;
            }
            (Some("bias"), _) => {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    span,
                    "sampler LOD bias has no WebGPU equivalent; pass `bias(...)` to `sample`",
                )
                .note("neither WebGPU nor wgpu (30) has a sampler LOD bias: `wgpu::SamplerDescriptor` has no bias field"))
            }
            _ => {
                return Err(Error::coded(
                    Code::InvalidSampler,
                    span,
                    "unknown sampler property",
                ))
            }
        }
        Ok(())
    }

    /// `sampler(filter::linear, ...)` (or `metal::sampler(...)`) in an
    /// expression: a temporary `constexpr sampler` (MSL §2.10 allows one
    /// wherever a sampler is passed), a binding of its own like a named
    /// one; `Ok(None)` when `path` does not name `sampler`.
    pub(in crate::lower) fn sampler_temporary(
        &mut self,
        fx: &mut crate::lower::ctx::function::FnCtx,
        path: &[String],
        args: &[Expr],
        span: Span,
    ) -> Result<Option<crate::lower::ctx::value::Value>> {
        if !matches!(path, [s] if s == "sampler")
            && !matches!(path, [m, s] if m == "metal" && s == "sampler")
        {
            return Ok(None);
        }
        let decl = SamplerDecl {
            name: format!("sampler_{}", self.global.constexpr_samplers.len()),
            args: args.to_vec(),
            span,
        };
        let (g, comparison) = self.sampler_global(&decl, span)?;
        let h = fx.add(naga::Expression::GlobalVariable(g), span);
        Ok(Some(crate::lower::ctx::value::Value::Rv(
            h,
            Type::Sampler { comparison },
        )))
    }

    /// The constexpr samplers an entry point that `reached` them uses.
    pub(in crate::lower) fn used_constexpr_samplers(
        &self,
        reached: &crate::lower::entry::reached::Reached,
    ) -> Vec<ConstexprSampler> {
        self.global
            .constexpr_samplers
            .iter()
            .filter(|(_, s)| reached.binding(s.binding))
            .map(|(_, s)| s.clone())
            .collect()
    }
}
