//! "did you mean" suggestions for misspelt names.
//!
//! A candidate is suggested when its edit distance to the name is small
//! for the name's length (about one edit per three characters, as rustc
//! does), so `postion` finds `position` but `x` does not find `y`.

/// Edits (insertions, deletions, substitutions, and transpositions of
/// two neighbours) that turn `a` into `b`, counted on characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the optimal-string-alignment table.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let substitution = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + substitution);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The candidate closest to `name`, if one is close enough to be a likely
/// misspelling (one differing only in case always is); ties go to the first candidate, so callers list the most
/// likely (innermost scope) first.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    // One- and two-letter names are too short to tell a typo from another
    // name: only a case-only difference is suggested for them.
    let length = name.chars().count();
    let limit = length / 3;
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        if candidate == name {
            continue;
        }
        let distance = if candidate.eq_ignore_ascii_case(name) {
            0
        } else if candidate.chars().count().abs_diff(length) > limit {
            // At least that many insertions or deletions: too far. Most
            // names of a large program are, and the table is the cost
            // (MLX's kernels ask once per instantiation).
            continue;
        } else {
            edit_distance(name, candidate)
        };
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The note `did you mean `x`?` for the closest candidate, if any.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// Attribute names MSL defines, for suggestions on unknown attributes.
pub const ATTRIBUTES: &[&str] = &[
    "buffer",
    "texture",
    "sampler",
    "threadgroup",
    "stage_in",
    "position",
    "color",
    "thread_position_in_grid",
    "thread_position_in_threadgroup",
    "threadgroup_position_in_grid",
    "threads_per_threadgroup",
    "threads_per_grid",
    "threadgroups_per_grid",
    "thread_index_in_threadgroup",
    "thread_index_in_simdgroup",
    "simdgroup_index_in_threadgroup",
    "threads_per_simdgroup",
    "simdgroups_per_threadgroup",
    "thread_index_in_quadgroup",
    "quadgroup_index_in_threadgroup",
    "vertex_id",
    "instance_id",
    "base_vertex",
    "base_instance",
    "front_facing",
    "point_coord",
    "sample_id",
    "sample_mask",
    "attribute",
    "user",
    "flat",
    "center_perspective",
    "center_no_perspective",
    "centroid_perspective",
    "centroid_no_perspective",
    "sample_perspective",
    "sample_no_perspective",
    "point_size",
    "clip_distance",
    "depth",
    "function_constant",
    "host_name",
    "max_total_threads_per_threadgroup",
    "early_fragment_tests",
    "id",
    "render_target_array_index",
    "viewport_array_index",
    "primitive_id",
    "invariant",
    "stencil",
    "barycentric_coord",
    "amplification_count",
    "amplification_id",
    "patch_id",
    "position_in_patch",
    "payload",
    "primitive_culled",
    "raster_order_group",
    "visible",
    "stitchable",
    "vertex",
    "fragment",
    "kernel",
    "dispatch_threads_per_threadgroup",
    "dispatch_quadgroups_per_threadgroup",
    "dispatch_simdgroups_per_threadgroup",
    "quadgroups_per_threadgroup",
    "threads_per_quadgroup",
    "grid_origin",
    "grid_size",
    "thread_execution_width",
    "stage_in_grid_origin",
    "stage_in_grid_size",
    "shared",
    "indirect_argument",
    "object_data",
];

/// For each attribute that is not an MSL attribute but is close to one
/// (a likely typo, which would otherwise be silently ignored): its span,
/// a warning message and a "did you mean" note.
pub fn misspelt_attributes<'a>(
    attributes: impl IntoIterator<Item = (&'a str, crate::source_map::Span)>,
) -> Vec<(crate::source_map::Span, String, String)> {
    attributes
        .into_iter()
        .filter(|(name, _)| !ATTRIBUTES.contains(name))
        .filter_map(|(name, span)| {
            let note = did_you_mean(name, ATTRIBUTES.iter().copied())?;
            Some((
                span,
                format!("unknown attribute `[[{name}]]` is ignored"),
                note,
            ))
        })
        .collect()
}

/// Metal standard library functions, for suggestions on unknown calls.
pub const STDLIB_FUNCTIONS: &[&str] = &[
    "abs",
    "acos",
    "acosh",
    "all",
    "any",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "clamp",
    "cos",
    "cosh",
    "cospi",
    "cross",
    "degrees",
    "distance",
    "dot",
    "exp",
    "exp10",
    "exp2",
    "fabs",
    "faceforward",
    "fdim",
    "floor",
    "fma",
    "fmax",
    "fmax3",
    "fmin",
    "fmin3",
    "fmod",
    "fract",
    "frexp",
    "isfinite",
    "isinf",
    "isnan",
    "ldexp",
    "length",
    "length_squared",
    "log",
    "log10",
    "log2",
    "max",
    "max3",
    "median3",
    "min",
    "min3",
    "mix",
    "modf",
    "normalize",
    "pow",
    "powr",
    "radians",
    "reflect",
    "refract",
    "rint",
    "round",
    "rsqrt",
    "saturate",
    "select",
    "sign",
    "signbit",
    "sin",
    "sincos",
    "sinh",
    "sinpi",
    "smoothstep",
    "sqrt",
    "step",
    "tan",
    "tanh",
    "tanpi",
    "trunc",
    "absdiff",
    "addsat",
    "clz",
    "ctz",
    "extract_bits",
    "hadd",
    "insert_bits",
    "mad24",
    "madhi",
    "madsat",
    "mul24",
    "mulhi",
    "popcount",
    "reverse_bits",
    "rhadd",
    "rotate",
    "subsat",
    "determinant",
    "transpose",
    "as_type",
    "static_cast",
    "threadgroup_barrier",
    "simdgroup_barrier",
    "atomic_load_explicit",
    "atomic_store_explicit",
    "atomic_exchange_explicit",
    "atomic_fetch_add_explicit",
    "atomic_fetch_sub_explicit",
    "atomic_fetch_and_explicit",
    "atomic_fetch_or_explicit",
    "atomic_fetch_xor_explicit",
    "atomic_fetch_min_explicit",
    "atomic_fetch_max_explicit",
    "atomic_compare_exchange_weak_explicit",
    "simd_sum",
    "simd_product",
    "simd_min",
    "simd_max",
    "simd_and",
    "simd_or",
    "simd_xor",
    "simd_broadcast",
    "simd_broadcast_first",
    "simd_shuffle",
    "simd_shuffle_up",
    "simd_shuffle_down",
    "simd_shuffle_xor",
    "simd_prefix_inclusive_sum",
    "simd_prefix_exclusive_sum",
    "simd_all",
    "simd_any",
    "simd_ballot",
    "simd_is_first",
    "quad_sum",
    "quad_broadcast",
    "quad_shuffle",
    "quad_shuffle_xor",
    "dfdx",
    "dfdy",
    "fwidth",
    "discard_fragment",
    "pack_float_to_unorm4x8",
    "unpack_unorm4x8_to_float",
    "pack_half_to_unorm2x16",
];

/// Metal's built-in type names, for suggestions on unknown types:
/// scalars, their vectors (`float4`) and packed vectors, matrices
/// (`float4x4`), textures, samplers and atomics.
pub fn builtin_type_names() -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let scalars = [
            "bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half",
            "float", "bfloat",
        ];
        let mut names: Vec<String> = Vec::new();
        for s in scalars {
            names.push(s.to_string());
            for n in 2..=4 {
                names.push(format!("{s}{n}"));
                names.push(format!("packed_{s}{n}"));
            }
        }
        for s in ["half", "float"] {
            for c in 2..=4 {
                for r in 2..=4 {
                    names.push(format!("{s}{c}x{r}"));
                }
            }
        }
        let others = [
            "void",
            "size_t",
            "ptrdiff_t",
            "uint8_t",
            "int8_t",
            "uint16_t",
            "int16_t",
            "uint32_t",
            "int32_t",
            "texture1d",
            "texture2d",
            "texture3d",
            "texturecube",
            "texture2d_array",
            "texturecube_array",
            "texture2d_ms",
            "depth2d",
            "depthcube",
            "depth2d_array",
            "depthcube_array",
            "depth2d_ms",
            "sampler",
            "atomic_int",
            "atomic_uint",
            "atomic_bool",
            "atomic_float",
            "array",
            "vec",
            "matrix",
        ];
        names.extend(others.iter().map(|s| s.to_string()));
        names
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("postion", "position"), 1);
        assert_eq!(edit_distance("flaot", "float"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }

    #[test]
    fn suggestions_are_close_and_not_the_name_itself() {
        let names = ["position", "index", "float4"];
        assert_eq!(closest("postion", names), Some("position"));
        assert_eq!(closest("flaot4", names), Some("float4"));
        assert_eq!(closest("Index", names), Some("index"));
        assert_eq!(closest("x", ["y", "xyz"]), None);
        assert_eq!(closest("x", ["X"]), Some("X"));
        assert_eq!(closest("index", names), None);
        assert_eq!(closest("thread", names), None);
        assert_eq!(
            did_you_mean("bufer", ATTRIBUTES.iter().copied()).as_deref(),
            Some("did you mean `buffer`?")
        );
        let types = builtin_type_names().iter().map(String::as_str);
        assert_eq!(closest("flaot4", types), Some("float4"));
        assert_eq!(
            closest("lenght", STDLIB_FUNCTIONS.iter().copied()),
            Some("length")
        );
    }
}
