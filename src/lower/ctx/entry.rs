//! The entry-point context: what is true while one Metal stage function is
//! lowered into one WGSL entry point, and only then.
//!
//! It lives exactly as long as the entry point's lowering
//! ([`crate::lower::Lowerer::with_entry`] swaps it in and out), so no state
//! of one entry point leaks into the next.

use std::collections::BTreeSet;

/// A wgpu feature that the WGSL of an entry point needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(in crate::lower) enum Feature {
    /// `subgroup*` built-ins and operations (Metal's SIMD-group functions).
    Subgroup,
    /// `subgroupBarrier` (`simdgroup_barrier`).
    SubgroupBarrier,
    /// 64-bit integers (`--target wgpu`).
    ShaderInt64,
    /// `@builtin(primitive_index)`.
    PrimitiveIndex,
    /// `@builtin(clip_distances)`.
    ClipDistances,
    /// `@blend_src` (dual-source blending).
    DualSourceBlending,
    /// `textureAtomic*` on `atomic` storage textures (`--target wgpu`).
    TextureAtomic,
}

impl Feature {
    /// The feature as reflection and the runner name it (WebGPU's spelling).
    pub(in crate::lower) fn as_str(self) -> &'static str {
        match self {
            Feature::Subgroup => "subgroup",
            Feature::SubgroupBarrier => "subgroup-barrier",
            Feature::ShaderInt64 => "shader-int64",
            Feature::PrimitiveIndex => "primitive-index",
            Feature::ClipDistances => "clip-distances",
            Feature::DualSourceBlending => "dual-source-blending",
            Feature::TextureAtomic => "texture-atomic",
        }
    }
}

/// Which kind of Metal function the entry point is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::lower) enum EntryStage {
    /// No entry point: a helper lowered on its own (unreached helpers).
    #[default]
    None,
    /// A `kernel` function.
    Kernel,
    /// A `vertex` function.
    Vertex,
    /// A `fragment` function.
    Fragment,
}

/// The state of the entry point being lowered.
#[derive(Debug, Default)]
pub(in crate::lower) struct EntryCtx {
    /// The Metal function's name (the key of user binding overrides).
    pub name: String,
    /// Which stage it is.
    pub stage: EntryStage,
    /// The contains-a-barrier rule: threads outside a ragged grid run along
    /// (they must reach every barrier) with side effects disabled.
    pub predicated: bool,
    /// wgpu features its WGSL needs, collected while lowering.
    pub features: BTreeSet<Feature>,
    /// SIMD-group functions use the adapter's subgroups even where the
    /// settings emulate 32 lanes (the emulation's fallback for a kernel that
    /// calls them in non-uniform control flow).
    pub native_simd: bool,
    /// Branches that call SIMD-group functions run on every thread with
    /// narrowed activity (`lower::metal::simd_branches`): the emulation's
    /// second try at a kernel whose exchanges sat in non-uniform branches.
    pub simd_if_conversion: bool,
    /// With it, the loops (by span) that run on every thread until none
    /// iterates (`lower::metal::simd_loops`): those whose exchanges the
    /// earlier tries left in non-uniform control flow.
    pub predicated_loops: std::collections::HashSet<(usize, usize)>,
    /// With it, the kernel's body is a narrowed region
    /// (`lower::metal::simd_branches`), where `return` is a flag.
    pub narrow_body: bool,
    /// Memory held as words because a cast views it as another type, and
    /// the memory this lowering's casts met typed
    /// (`lower::metal::pointer_views`).
    pub viewed: crate::lower::metal::pointer_views::ViewedMemory,
    /// The kernel's store statements whose 8/16-bit elements a quad
    /// combines into words (`lower::metal::byte_stores`).
    pub combined_stores: Vec<crate::source_map::Span>,
    /// While one of those is lowered: the block depth its store is in.
    pub combine_store: Option<usize>,
    /// A vertex function's point-sprite entry point is being lowered
    /// (`lower::entry::point_sprites`).
    pub point_sprite: Option<crate::lower::entry::point_sprites::SpriteCtx>,
}

impl EntryCtx {
    /// A context for the stage function `name`.
    pub(in crate::lower) fn new(name: &str, stage: EntryStage) -> Self {
        EntryCtx {
            name: name.to_string(),
            stage,
            ..Default::default()
        }
    }

    /// `@group` of the entry point's resources: Metal's vertex and fragment
    /// functions each number their own buffers from 0, so a render pipeline
    /// needs them apart (kernel, vertex: 0; fragment: 1).
    pub(in crate::lower) fn group(&self) -> u32 {
        match self.stage {
            EntryStage::Fragment => 1,
            _ => 0,
        }
    }

    /// A vertex function is being lowered.
    pub(in crate::lower) fn is_vertex(&self) -> bool {
        self.stage == EntryStage::Vertex
    }

    /// Helpers follow a fragment function's rules (implicit-LOD sampling,
    /// derivatives, `discard_fragment`): those of a fragment function, and
    /// those no entry point reaches (checked on their own; Metal compiles
    /// them as they are).
    pub(in crate::lower) fn fragment_rules(&self) -> bool {
        matches!(self.stage, EntryStage::Fragment | EntryStage::None)
    }

    /// The features as reflection lists them.
    pub(in crate::lower) fn feature_names(&self) -> Vec<String> {
        self.features
            .iter()
            .map(|f| f.as_str().to_string())
            .collect()
    }
}
