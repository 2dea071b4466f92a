//! What a WGSL entry point actually binds, found by compiling the WGSL with
//! naga: the runner builds its pipeline layout from this rather than from
//! the reflection alone, because the reflection does not say whether a
//! buffer became a `uniform` or a `storage` binding, nor whether the
//! entry point reads the synthetic dispatch uniform at all.

use super::RunError;
use naga::valid::{Capabilities, ValidationFlags, Validator};

/// How a buffer is bound in the WGSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BufferBinding {
    /// `var<uniform>`
    Uniform,
    /// `var<storage, read>` (`read_only`) or `var<storage, read_write>`.
    Storage {
        /// True for `read`.
        read_only: bool,
    },
}

/// One resource the entry point uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UsedBinding {
    /// `@group`
    pub group: u32,
    /// `@binding`
    pub binding: u32,
    /// Uniform or storage.
    pub kind: BufferBinding,
    /// The smallest size a bound buffer may have: the type's size, or one
    /// element of a runtime-sized array.
    pub min_size: u64,
}

/// The entry point's interface.
#[derive(Clone, Debug)]
pub(crate) struct Interface {
    /// `@workgroup_size`
    pub workgroup_size: [u32; 3],
    /// Every buffer binding the entry point (or a function it calls) uses,
    /// sorted by group and binding.
    pub bindings: Vec<UsedBinding>,
}

impl Interface {
    /// Compiles `wgsl` and describes compute entry point `entry`.
    pub fn of(wgsl: &str, entry: &str) -> Result<Interface, RunError> {
        let module = naga::front::wgsl::parse_str(wgsl)
            .map_err(|e| RunError::Shader(e.emit_to_string(wgsl)))?;
        // Everything the device might support is allowed here: wgpu checks
        // the module against the real device when it creates the pipeline.
        let info = Validator::new(ValidationFlags::all(), Capabilities::all())
            .validate(&module)
            .map_err(|e| RunError::Shader(e.emit_to_string(wgsl)))?;
        let (ep_index, ep) = module
            .entry_points
            .iter()
            .enumerate()
            .find(|(_, ep)| ep.name == entry)
            .ok_or_else(|| RunError::Shader(format!("the WGSL has no entry point `{entry}`")))?;
        if ep.stage != naga::ShaderStage::Compute {
            return Err(RunError::Shader(format!(
                "entry point `{entry}` is not @compute"
            )));
        }
        let uses = info.get_entry_point(ep_index);
        let mut bindings = Vec::new();
        for (handle, var) in module.global_variables.iter() {
            let Some(rb) = &var.binding else { continue };
            if uses[handle].is_empty() {
                continue;
            }
            let kind = match var.space {
                naga::AddressSpace::Uniform => BufferBinding::Uniform,
                naga::AddressSpace::Storage { access } => BufferBinding::Storage {
                    read_only: !access.contains(naga::StorageAccess::STORE),
                },
                _ => {
                    let name = var.name.as_deref().unwrap_or("?");
                    return Err(RunError::Unsupported(format!(
                        "binding `{name}` (@group({}) @binding({})): textures and samplers \
                         in the runner",
                        rb.group, rb.binding
                    )));
                }
            };
            let min_size = module.types[var.ty]
                .inner
                .try_size(module.to_ctx())
                .unwrap_or(0)
                .max(4);
            bindings.push(UsedBinding {
                group: rb.group,
                binding: rb.binding,
                kind,
                min_size: u64::from(min_size),
            });
        }
        bindings.sort_by_key(|b| (b.group, b.binding));
        Ok(Interface {
            workgroup_size: ep.workgroup_size,
            bindings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_used_bindings_only() {
        let wgsl = "
            struct P { n: u32, s: f32 }
            @group(0) @binding(0) var<storage, read> a: array<f32>;
            @group(0) @binding(1) var<storage, read_write> b: array<vec4<f32>>;
            @group(0) @binding(2) var<uniform> p: P;
            @group(1) @binding(0) var<storage, read_write> unused: array<f32>;
            fn helper() -> f32 { return p.s; }
            @compute @workgroup_size(8, 2)
            fn k(@builtin(global_invocation_id) g: vec3<u32>) {
                b[g.x] = vec4(a[g.x] * helper());
            }";
        let i = Interface::of(wgsl, "k").unwrap();
        assert_eq!(i.workgroup_size, [8, 2, 1]);
        let got: Vec<_> = i
            .bindings
            .iter()
            .map(|b| (b.group, b.binding, b.kind, b.min_size))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 0, BufferBinding::Storage { read_only: true }, 4),
                (0, 1, BufferBinding::Storage { read_only: false }, 16),
                (0, 2, BufferBinding::Uniform, 8),
            ]
        );
        assert!(matches!(
            Interface::of(wgsl, "nope"),
            Err(RunError::Shader(_))
        ));
        assert!(matches!(
            Interface::of("fn (", "k"),
            Err(RunError::Shader(_))
        ));
    }
}
