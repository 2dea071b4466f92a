//! What a WGSL entry point actually binds, found by compiling the WGSL with
//! naga: the runner builds its pipeline layout from this rather than from
//! the reflection alone, because the WGSL it runs may be another
//! translation than the reflection's (the runner translates for wgpu, whose
//! dialect keeps `constant` buffers to WGSL's uniform rules even where
//! `--uniform-layout standard` made uniforms: the reflection's `bindingType`
//! describes the library's own WGSL), and the reflection does not say
//! whether the entry point reads the synthetic dispatch uniform at all; for
//! textures and samplers the WGSL types give the binding types wgpu checks
//! against.

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

/// How a texture is declared in the WGSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextureClass {
    /// `texture_*<f32|i32|u32>`, `texture_multisampled_2d<T>`.
    Sampled {
        /// The sampled type's kind.
        kind: naga::ScalarKind,
        /// Multisampled.
        multi: bool,
    },
    /// `texture_depth_*`.
    Depth {
        /// Multisampled.
        multi: bool,
    },
    /// `texture_storage_*<format, access>`.
    Storage {
        /// The declared access.
        access: wgpu::StorageTextureAccess,
    },
}

/// What kind of resource a binding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BindingKind {
    /// A uniform or storage buffer.
    Buffer(BufferBinding),
    /// A texture.
    Texture {
        /// Sampled, depth or storage.
        class: TextureClass,
        /// The view dimension the type needs.
        view_dimension: wgpu::TextureViewDimension,
    },
    /// `sampler` or `sampler_comparison`.
    Sampler {
        /// `sampler_comparison`.
        comparison: bool,
    },
}

/// One resource the entry point uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UsedBinding {
    /// `@group`
    pub group: u32,
    /// `@binding`
    pub binding: u32,
    /// Buffer, texture or sampler.
    pub kind: BindingKind,
    /// The smallest size a bound buffer may have: the type's size, or one
    /// element of a runtime-sized array (0 for textures and samplers).
    pub min_size: u64,
}

/// A user-defined `@location` input or output of a render entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StageIo {
    /// `@location`
    pub location: u32,
    /// `@blend_src`, for dual-source fragment outputs.
    pub blend_src: Option<u32>,
    /// The scalar kind (f32 and f16 are both `Float`).
    pub kind: naga::ScalarKind,
    /// The scalar's width in bytes.
    pub width: u8,
}

/// The entry point's interface.
#[derive(Clone, Debug)]
pub(crate) struct Interface {
    /// `@workgroup_size` (zeros for render entry points).
    pub workgroup_size: [u32; 3],
    /// Every binding the entry point (or a function it calls) uses, sorted
    /// by group and binding.
    pub bindings: Vec<UsedBinding>,
    /// Its `@location` arguments (vertex attributes, fragment varyings).
    pub inputs: Vec<StageIo>,
    /// Its `@location` results (varyings, colour outputs).
    pub outputs: Vec<StageIo>,
    /// Its `@builtin` results (`position`, `frag_depth`, ...).
    pub output_builtins: Vec<naga::BuiltIn>,
    /// The module's `override` names: a pipeline may set only these.
    pub overrides: Vec<String>,
}

impl Interface {
    /// Compiles `wgsl` and describes compute entry point `entry`.
    pub fn of(wgsl: &str, entry: &str) -> Result<Interface, RunError> {
        let mut found = Self::of_entries(wgsl, &[(entry, naga::ShaderStage::Compute)])?;
        Ok(found.remove(0))
    }

    /// Compiles `wgsl` once and describes each `(entry, stage)` of `wanted`,
    /// in that order; each entry point must exist with that stage.
    pub fn of_entries(
        wgsl: &str,
        wanted: &[(&str, naga::ShaderStage)],
    ) -> Result<Vec<Interface>, RunError> {
        let module = naga::front::wgsl::parse_str(wgsl)
            .map_err(|e| RunError::Shader(e.emit_to_string(wgsl)))?;
        // Everything the device might support is allowed here: wgpu checks
        // the module against the real device when it creates the pipeline.
        let info = Validator::new(ValidationFlags::all(), Capabilities::all())
            .validate(&module)
            .map_err(|e| RunError::Shader(e.emit_to_string(wgsl)))?;
        wanted
            .iter()
            .map(|&(entry, stage)| describe(&module, &info, entry, stage))
            .collect()
    }
}

/// The interface of entry point `entry`, which must have `stage`.
fn describe(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: &str,
    stage: naga::ShaderStage,
) -> Result<Interface, RunError> {
    let (ep_index, ep) = module
        .entry_points
        .iter()
        .enumerate()
        .find(|(_, ep)| ep.name == entry)
        .ok_or_else(|| RunError::Shader(format!("the WGSL has no entry point `{entry}`")))?;
    if ep.stage != stage {
        let attribute = match stage {
            naga::ShaderStage::Vertex => "@vertex",
            naga::ShaderStage::Fragment => "@fragment",
            _ => "@compute",
        };
        return Err(RunError::Shader(format!(
            "entry point `{entry}` is not {attribute}"
        )));
    }
    let bindings = used_bindings(module, info.get_entry_point(ep_index))?;
    let mut inputs = Io::default();
    for arg in &ep.function.arguments {
        inputs.collect(module, arg.ty, arg.binding.as_ref());
    }
    let mut outputs = Io::default();
    if let Some(result) = &ep.function.result {
        outputs.collect(module, result.ty, result.binding.as_ref());
    }
    Ok(Interface {
        workgroup_size: ep.workgroup_size,
        bindings,
        inputs: inputs.locations,
        outputs: outputs.locations,
        output_builtins: outputs.builtins,
        overrides: module
            .overrides
            .iter()
            .filter_map(|(_, o)| o.name.clone())
            .collect(),
    })
}

/// Every global with a binding that the entry point (or a function it
/// calls) uses, sorted by group and binding.
fn used_bindings(
    module: &naga::Module,
    uses: &naga::valid::FunctionInfo,
) -> Result<Vec<UsedBinding>, RunError> {
    let mut bindings = Vec::new();
    for (handle, var) in module.global_variables.iter() {
        let Some(rb) = &var.binding else { continue };
        if uses[handle].is_empty() {
            continue;
        }
        let kind = binding_kind(module, var)?;
        let min_size = match kind {
            BindingKind::Buffer(_) => module.types[var.ty]
                .inner
                .try_size(module.to_ctx())
                .unwrap_or(0)
                .max(4),
            _ => 0,
        };
        bindings.push(UsedBinding {
            group: rb.group,
            binding: rb.binding,
            kind,
            min_size: u64::from(min_size),
        });
    }
    bindings.sort_by_key(|b| (b.group, b.binding));
    Ok(bindings)
}

/// The inputs or the outputs of an entry point.
#[derive(Default)]
struct Io {
    locations: Vec<StageIo>,
    builtins: Vec<naga::BuiltIn>,
}

impl Io {
    /// Collects what a value of type `ty` bound as `binding` carries: the
    /// value itself, or the members of a struct.
    fn collect(
        &mut self,
        module: &naga::Module,
        ty: naga::Handle<naga::Type>,
        binding: Option<&naga::Binding>,
    ) {
        let inner = &module.types[ty].inner;
        match binding {
            Some(naga::Binding::Location {
                location,
                blend_src,
                ..
            }) => {
                if let Some(scalar) = inner.scalar() {
                    self.locations.push(StageIo {
                        location: *location,
                        blend_src: *blend_src,
                        kind: scalar.kind,
                        width: scalar.width,
                    });
                }
            }
            Some(naga::Binding::BuiltIn(builtin)) => self.builtins.push(*builtin),
            None => {
                if let naga::TypeInner::Struct { members, .. } = inner {
                    for member in members {
                        self.collect(module, member.ty, member.binding.as_ref());
                    }
                }
            }
        }
    }
}

/// What a global with a binding is: a buffer by its address space, a
/// texture or sampler by its type.
fn binding_kind(
    module: &naga::Module,
    var: &naga::GlobalVariable,
) -> Result<BindingKind, RunError> {
    let unsupported = |what: &str| {
        let name = var.name.as_deref().unwrap_or("?");
        RunError::Unsupported(format!("binding `{name}` ({what}) in the runner"))
    };
    match var.space {
        naga::AddressSpace::Uniform => return Ok(BindingKind::Buffer(BufferBinding::Uniform)),
        naga::AddressSpace::Storage { access } => {
            return Ok(BindingKind::Buffer(BufferBinding::Storage {
                read_only: !access.contains(naga::StorageAccess::STORE),
            }))
        }
        naga::AddressSpace::Handle => {}
        _ => return Err(unsupported("an unexpected address space")),
    }
    match module.types[var.ty].inner {
        naga::TypeInner::Sampler { comparison } => Ok(BindingKind::Sampler { comparison }),
        naga::TypeInner::Image {
            dim,
            arrayed,
            class,
        } => {
            let class = match class {
                naga::ImageClass::Sampled { kind, multi } => TextureClass::Sampled { kind, multi },
                naga::ImageClass::Depth { multi } => TextureClass::Depth { multi },
                naga::ImageClass::Storage { access, .. } => TextureClass::Storage {
                    access: storage_access(access),
                },
                naga::ImageClass::External => return Err(unsupported("an external texture")),
            };
            Ok(BindingKind::Texture {
                class,
                view_dimension: view_dimension(dim, arrayed),
            })
        }
        _ => Err(unsupported("a binding array")),
    }
}

fn view_dimension(dim: naga::ImageDimension, arrayed: bool) -> wgpu::TextureViewDimension {
    use wgpu::TextureViewDimension as V;
    match (dim, arrayed) {
        (naga::ImageDimension::D1, _) => V::D1,
        (naga::ImageDimension::D2, false) => V::D2,
        (naga::ImageDimension::D2, true) => V::D2Array,
        (naga::ImageDimension::D3, _) => V::D3,
        (naga::ImageDimension::Cube, false) => V::Cube,
        (naga::ImageDimension::Cube, true) => V::CubeArray,
    }
}

fn storage_access(access: naga::StorageAccess) -> wgpu::StorageTextureAccess {
    use naga::StorageAccess as A;
    if access.contains(A::ATOMIC) {
        wgpu::StorageTextureAccess::Atomic
    } else if access.contains(A::LOAD | A::STORE) {
        wgpu::StorageTextureAccess::ReadWrite
    } else if access.contains(A::STORE) {
        wgpu::StorageTextureAccess::WriteOnly
    } else {
        wgpu::StorageTextureAccess::ReadOnly
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
                (0, 0, buffer(BufferBinding::Storage { read_only: true }), 4),
                (
                    0,
                    1,
                    buffer(BufferBinding::Storage { read_only: false }),
                    16
                ),
                (0, 2, buffer(BufferBinding::Uniform), 8),
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

    #[test]
    fn render_stages() {
        let wgsl = "
            struct V { @builtin(position) p: vec4<f32>, @location(3) @interpolate(flat) c: u32 }
            struct F { @location(0) a: vec4<f32>, @location(1) b: vec4<i32>,
                       @builtin(frag_depth) d: f32 }
            @group(1) @binding(0) var<uniform> tint: vec4<f32>;
            @vertex fn v(@location(2) x: vec2<f32>, @location(0) k: vec4<u32>) -> V {
                return V(vec4(x, 0.0, 1.0), k.x);
            }
            @fragment fn f(v: V) -> F { return F(tint, vec4(i32(v.c)), 0.5); }";
        use naga::ShaderStage as S;
        let both = Interface::of_entries(wgsl, &[("v", S::Vertex), ("f", S::Fragment)]).unwrap();
        let io = |ios: &[StageIo]| -> Vec<_> { ios.iter().map(|i| (i.location, i.kind)).collect() };
        use naga::ScalarKind as K;
        assert_eq!(io(&both[0].inputs), [(2, K::Float), (0, K::Uint)]);
        assert_eq!(io(&both[0].outputs), [(3, K::Uint)]);
        assert!(both[0].bindings.is_empty());
        assert_eq!(io(&both[1].inputs), [(3, K::Uint)]);
        assert_eq!(io(&both[1].outputs), [(0, K::Float), (1, K::Sint)]);
        assert_eq!(both[1].output_builtins, [naga::BuiltIn::FragDepth]);
        assert_eq!(
            (both[1].bindings[0].group, both[1].bindings[0].binding),
            (1, 0)
        );
        assert!(Interface::of_entries(wgsl, &[("v", S::Fragment)]).is_err());
    }

    fn buffer(kind: BufferBinding) -> BindingKind {
        BindingKind::Buffer(kind)
    }

    #[test]
    fn textures_and_samplers() {
        let wgsl = "
            @group(0) @binding(64) var a: texture_2d_array<f32>;
            @group(0) @binding(65) var d: texture_depth_cube;
            @group(0) @binding(66) var w: texture_storage_2d<r32float, write>;
            @group(0) @binding(67) var u: texture_3d<u32>;
            @group(0) @binding(128) var s: sampler;
            @group(0) @binding(129) var c: sampler_comparison;
            @compute @workgroup_size(1)
            fn k() {
                let v = textureSampleLevel(a, s, vec2(0.5), 0, 0.0).x
                    + textureSampleCompareLevel(d, c, vec3(1.0), 0.5)
                    + f32(textureLoad(u, vec3(0), 0).x);
                textureStore(w, vec2(0), vec4(v));
            }";
        let i = Interface::of(wgsl, "k").unwrap();
        let kinds: Vec<_> = i.bindings.iter().map(|b| (b.binding, b.kind)).collect();
        use wgpu::TextureViewDimension as V;
        let texture = |class, view_dimension| BindingKind::Texture {
            class,
            view_dimension,
        };
        let sampled = |kind| TextureClass::Sampled { kind, multi: false };
        let write = wgpu::StorageTextureAccess::WriteOnly;
        assert_eq!(
            kinds,
            vec![
                (64, texture(sampled(naga::ScalarKind::Float), V::D2Array)),
                (65, texture(TextureClass::Depth { multi: false }, V::Cube)),
                (66, texture(TextureClass::Storage { access: write }, V::D2)),
                (67, texture(sampled(naga::ScalarKind::Uint), V::D3)),
                (128, BindingKind::Sampler { comparison: false }),
                (129, BindingKind::Sampler { comparison: true }),
            ]
        );
    }
}
