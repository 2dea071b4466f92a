//! The enumerated values of command-line options (`--simd`, `--half`,
//! `--target`, ...) and the library settings each stands for.

use clap::ValueEnum;
use msl2wgsl::Target;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum SimdArg {
    /// The emulation where it applies, native subgroups elsewhere.
    Auto,
    /// 32-lane SIMD groups in threadgroup memory.
    Emulated32,
    /// The adapter's subgroups.
    Native,
}

impl From<SimdArg> for msl2wgsl::SimdGroups {
    fn from(s: SimdArg) -> Self {
        match s {
            SimdArg::Auto => Self::Auto,
            SimdArg::Emulated32 => Self::Emulated32,
            SimdArg::Native => Self::Native,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum ByteStoresArg {
    /// Combined where SIMD groups are native (`--simd native`), atomic
    /// elsewhere.
    Auto,
    /// One atomic clear-and-set pair per element.
    Atomic,
    /// Combined into whole words through quad operations where a kernel's
    /// store allows it (needs subgroups).
    Subgroups,
}

impl From<ByteStoresArg> for msl2wgsl::ByteStores {
    fn from(s: ByteStoresArg) -> Self {
        match s {
            ByteStoresArg::Auto => Self::Auto,
            ByteStoresArg::Atomic => Self::Atomic,
            ByteStoresArg::Subgroups => Self::Subgroups,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum UniformLayoutArg {
    /// Uniforms where WGSL's uniform layout rules allow Metal's layout.
    Wgsl,
    /// Uniforms under the `uniform_buffer_standard_layout` extension.
    Standard,
    /// No uniforms: every buffer is `var<storage>`.
    None,
}

impl From<UniformLayoutArg> for msl2wgsl::UniformLayout {
    fn from(u: UniformLayoutArg) -> Self {
        match u {
            UniformLayoutArg::Wgsl => Self::Wgsl,
            UniformLayoutArg::Standard => Self::Standard,
            UniformLayoutArg::None => Self::None,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum HalfArg {
    /// WGSL `f16` (`enable f16;`).
    F16,
    /// `f32` values rounded to half precision.
    F32,
}

impl From<HalfArg> for msl2wgsl::library::HalfMode {
    fn from(h: HalfArg) -> Self {
        match h {
            HalfArg::F16 => Self::F16,
            HalfArg::F32 => Self::F32,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum PlatformArg {
    /// `__METAL_MACOS__`
    Macos,
    /// `__METAL_IOS__`
    Ios,
}

impl From<PlatformArg> for msl2wgsl::preprocess::Platform {
    fn from(p: PlatformArg) -> Self {
        match p {
            PlatformArg::Macos => Self::MacOs,
            PlatformArg::Ios => Self::Ios,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum TargetArg {
    /// Only WGSL that browsers accept.
    Webgpu,
    /// May use wgpu's native extensions.
    Wgpu,
}

impl From<TargetArg> for Target {
    fn from(t: TargetArg) -> Target {
        match t {
            TargetArg::Webgpu => Target::WebGpu,
            TargetArg::Wgpu => Target::Wgpu,
        }
    }
}

/// Which of wgpu's backends runs the work (`--backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum BackendArg {
    /// Vulkan (lavapipe on a machine without a GPU).
    Vulkan,
    /// OpenGL / OpenGL ES (Mesa's llvmpipe without a GPU).
    Gl,
    /// Metal (macOS, iOS).
    Metal,
    /// Direct3D 12 (Windows).
    Dx12,
}

#[cfg(feature = "runner")]
impl From<BackendArg> for wgpu::Backends {
    fn from(b: BackendArg) -> wgpu::Backends {
        match b {
            BackendArg::Vulkan => wgpu::Backends::VULKAN,
            BackendArg::Gl => wgpu::Backends::GL,
            BackendArg::Metal => wgpu::Backends::METAL,
            BackendArg::Dx12 => wgpu::Backends::DX12,
        }
    }
}
