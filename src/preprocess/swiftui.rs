//! `<SwiftUI/SwiftUI_Metal.h>`: what SwiftUI's framework header declares
//! for Metal shaders, provided (like the SDK headers of `sdk`) where no file
//! of that name is found in the search folders.
//!
//! SwiftUI applies `[[stitchable]]` functions as view effects
//! (`colorEffect`, `distortionEffect`, `layerEffect`) and shape fills
//! (`Shader` as a `ShapeStyle`); a layer effect receives the rasterized
//! view as a `SwiftUI::Layer`, whose one member function `sample(float2
//! position)` returns the layer's premultiplied RGBA at a user-space
//! position as `half4`. Nothing else in the header concerns shaders.
//!
//! The `Layer` declared here holds no data: the layer is the one texture
//! the effect's entry point binds (`lower::entry::stitchable`), and
//! `sample` reaches it through the translator's intrinsic
//! [`LAYER_SAMPLE`], which samples that texture linearly at a position in
//! pixels (one point is one pixel), clamped to its edge. The Metal
//! compiler knows `[[stitchable]]` without a header; the attribute needs no
//! declaration here either.
//!
//! `<SwiftUI/SwiftUI.h>` gives Metal shaders the same declarations.

/// The names under which the header is found.
pub(crate) const NAMES: &[&str] = &["SwiftUI/SwiftUI_Metal.h", "SwiftUI/SwiftUI.h"];

/// The intrinsic `SwiftUI::Layer::sample` calls: `half4 f(float2 position)`,
/// the layer texture of the entry point sampled at `position` (pixels).
/// The double underscore keeps it out of user code's way (C++ reserves
/// such names for the implementation).
pub(crate) const LAYER_SAMPLE: &str = "__msl2wgsl_swiftui_layer_sample";

/// The header's text (the same for every platform).
pub(crate) fn header() -> String {
    format!(
        "// <SwiftUI/SwiftUI_Metal.h> as msl2wgsl provides it: the declarations\n\
         // SwiftUI gives [[stitchable]] effect functions.\n\
         #ifndef MSL2WGSL_SWIFTUI_METAL_H\n\
         #define MSL2WGSL_SWIFTUI_METAL_H\n\
         #include <metal_stdlib>\n\
         namespace SwiftUI {{\n\
         // The rasterized layer a layerEffect reads. sample(p) is its\n\
         // premultiplied RGBA at the user-space position p (one point per\n\
         // pixel), filtered linearly and clamped to the layer's edge.\n\
         struct Layer {{\n\
         \x20   half4 sample(float2 position) const {{\n\
         \x20       return {LAYER_SAMPLE}(position);\n\
         \x20   }}\n\
         }};\n\
         }} // namespace SwiftUI\n\
         #endif\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_declares_the_layer_and_calls_the_intrinsic() {
        let text = header();
        assert!(text.contains("namespace SwiftUI {"));
        assert!(text.contains("struct Layer {"));
        assert!(text.contains("half4 sample(float2 position) const {"));
        assert!(text.contains(&format!("return {LAYER_SAMPLE}(position);")));
        // Guarded, so including both names is harmless.
        assert!(text.starts_with("//") && text.contains("#ifndef MSL2WGSL_SWIFTUI_METAL_H"));
    }
}
