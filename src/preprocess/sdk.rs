//! The Apple SDK headers that Metal shader sources include and that a Metal
//! compile finds in the SDK: `<TargetConditionals.h>`, `<simd/simd.h>` and
//! two frameworks' shader headers.
//!
//! `#include` falls back to these when no file of that name is found in
//! the search folders (the SDK's folders come after every `-I` folder), so
//! a user's own header of the same name wins, as with clang. Of the
//! frameworks' headers only SwiftUI's shader header is provided
//! (`<SwiftUI/SwiftUI_Metal.h>`, `<SwiftUI/SwiftUI.h>`: `swiftui`); the
//! others are not: including `<Metal/Metal.h>` (a host API header) stays
//! a "file not found" error. Of MetalPerformancePrimitives (Metal 4's
//! tensor operations) the umbrella header is provided for `matmul2d` by
//! one SIMD group (`performance_primitives`); its other headers are
//! refused as having no WebGPU equivalent ([`refused_framework`]).

use super::Platform;

/// The folder the provided headers are said to be in: `__FILE__` and
/// diagnostics name them `<sdk>/TargetConditionals.h`.
pub(crate) const SDK_DIR: &str = "<sdk>";

/// What `TargetConditionals.h` defines for a Metal compile: the name and
/// its value for macOS and for iOS. The compile targets the GPU (`air64`),
/// none of the CPUs, so every `TARGET_CPU_*` is 0; the `TARGET_RT_*`
/// values are those of a 64-bit little-endian Mach-O target.
const TARGET_CONDITIONALS: &[(&str, u8, u8)] = &[
    ("TARGET_OS_MAC", 1, 1),
    ("TARGET_OS_OSX", 1, 0),
    ("TARGET_OS_IPHONE", 0, 1),
    ("TARGET_OS_IOS", 0, 1),
    ("TARGET_OS_MACCATALYST", 0, 0),
    ("TARGET_OS_UIKITFORMAC", 0, 0),
    ("TARGET_OS_TV", 0, 0),
    ("TARGET_OS_WATCH", 0, 0),
    ("TARGET_OS_VISION", 0, 0),
    ("TARGET_OS_BRIDGE", 0, 0),
    ("TARGET_OS_DRIVERKIT", 0, 0),
    ("TARGET_OS_SIMULATOR", 0, 0),
    ("TARGET_OS_EMBEDDED", 0, 1),
    ("TARGET_OS_RTKIT", 0, 0),
    ("TARGET_OS_UNIX", 0, 0),
    ("TARGET_OS_WIN32", 0, 0),
    ("TARGET_OS_WINDOWS", 0, 0),
    ("TARGET_OS_LINUX", 0, 0),
    ("TARGET_OS_NANO", 0, 0),
    ("TARGET_IPHONE_SIMULATOR", 0, 0),
    ("TARGET_CPU_PPC", 0, 0),
    ("TARGET_CPU_PPC64", 0, 0),
    ("TARGET_CPU_68K", 0, 0),
    ("TARGET_CPU_X86", 0, 0),
    ("TARGET_CPU_X86_64", 0, 0),
    ("TARGET_CPU_ARM", 0, 0),
    ("TARGET_CPU_ARM64", 0, 0),
    ("TARGET_CPU_MIPS", 0, 0),
    ("TARGET_CPU_SPARC", 0, 0),
    ("TARGET_CPU_ALPHA", 0, 0),
    ("TARGET_RT_LITTLE_ENDIAN", 1, 1),
    ("TARGET_RT_BIG_ENDIAN", 0, 0),
    ("TARGET_RT_64_BIT", 1, 1),
    ("TARGET_RT_MAC_CFM", 0, 0),
    ("TARGET_RT_MAC_MACHO", 1, 1),
    ("TARGET_ABI_USES_IOS_VALUES", 1, 1),
];

/// The text of the provided header `name` (as written between `<>` or
/// `""`) for `platform`, if msl2wgsl provides one.
pub(crate) fn header(name: &str, platform: Platform) -> Option<String> {
    match name {
        "TargetConditionals.h" => Some(target_conditionals(platform)),
        // A Metal compile of it declares the simd types (`vector_float4`,
        // `simd_float4x4`, `simd::float4`, ...) and no macro user code
        // relies on; msl2wgsl knows the types without any header, so it
        // is empty.
        "simd/simd.h" => Some(String::new()),
        // SwiftUI's declarations for `[[stitchable]]` effects (`swiftui`).
        n if super::swiftui::NAMES.contains(&n) => Some(super::swiftui::header()),
        // MetalPerformancePrimitives' matmul2d by one SIMD group.
        n if super::performance_primitives::NAMES.contains(&n) => {
            Some(super::performance_primitives::header().to_string())
        }
        _ => None,
    }
}

/// `TargetConditionals.h`: an include guard and every macro, each one only
/// where `-D` or an earlier header has not defined it yet.
fn target_conditionals(platform: Platform) -> String {
    let mut s = format!(
        "// <TargetConditionals.h> as a Metal compile for {} sees it.\n\
         #ifndef __TARGETCONDITIONALS__\n#define __TARGETCONDITIONALS__\n",
        match platform {
            Platform::MacOs => "macOS",
            Platform::Ios => "iOS",
        }
    );
    for &(name, mac, ios) in TARGET_CONDITIONALS {
        let value = match platform {
            Platform::MacOs => mac,
            Platform::Ios => ios,
        };
        s.push_str(&format!("#ifndef {name}\n#define {name} {value}\n#endif\n"));
    }
    s.push_str("#endif\n");
    s
}

/// Why including `name`, a header of an SDK framework whose shader API has
/// no WebGPU equivalent, is refused; `None` for any other name.
///
/// MetalPerformancePrimitives (Metal 4) declares tensor operations:
/// `mpp::tensor_ops::matmul2d` and `convolution2d` run by a whole
/// SIMD-group or threadgroup on `metal::tensor` operands, in the GPU's
/// matrix units. Its umbrella header and `MPPTensorOpsMatMul2d.h` are
/// provided for `matmul2d` by one SIMD group on cooperative tensors
/// (`performance_primitives`); the framework's other headers declare only
/// what WGSL cannot run (no tensors, no convolution on them), so including
/// one is refused at the `#include` instead of reported as a missing file.
pub(crate) fn refused_framework(name: &str) -> Option<String> {
    let framework = name.split('/').next()?;
    (framework == "MetalPerformancePrimitives" && name.contains('/')).then(|| {
        format!(
            "`<{name}>` declares MetalPerformancePrimitives' tensor operations on `metal::tensor` \
             operands (`convolution2d`, ...), which have no WebGPU equivalent: WGSL has no tensors; \
             `<MetalPerformancePrimitives/MetalPerformancePrimitives.h>` provides `matmul2d` by one \
             SIMD group on cooperative tensors"
        )
    })
}
