//! The one table of the metal_stdlib functions this version knows: each
//! name, the [`Builtin`] it stands for, and its [`Family`].
//!
//! A call is resolved once. C++ name lookup comes first (the caller,
//! `cxx/call.rs`, tries local objects, user functions, user overloads and
//! templates, constructors); only a name that resolves to none of them is
//! looked up here, and from then on the lowering matches on the
//! [`Builtin`], never on its spelling. The call graph (`sema/callgraph.rs`)
//! asks the same question the same way: whether a kernel reaches a barrier
//! or a SIMD-group function is decided by [`Builtin::family`] of the
//! library calls it makes, so a user helper named `simd_foo`, `quad_area`
//! or even `simd_sum` is followed into, never taken for a builtin.
//!
//! Texture member functions (`t.sample(..)`) are in the table too, under
//! [`Family::Texture`]; they are found with [`Builtin::texture_member`] only,
//! since `sample(..)` alone is not a library function.

use std::collections::HashMap;

/// What kind of library function a [`Builtin`] is: what the call graph and
/// the entry points ask about, and how the lowering is organised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    /// Floating-point (and common numeric) math, MSL §6.2–6.4 (`math.rs`
    /// and the one-to-one `MathFunction`s in `mod.rs`).
    Math,
    /// Integer functions, MSL §6.3 Table 6.2 (`integer.rs`).
    Integer,
    /// Relational functions and classification, MSL §6.5.
    Relational,
    /// Geometric functions, MSL §6.6.
    Geometric,
    /// Matrix functions, MSL §6.7.
    Matrix,
    /// SIMD-group functions, MSL §6.9.2 (`simd.rs`).
    Simd,
    /// Quad-group functions, MSL §6.9.3 (`quad.rs`).
    Quad,
    /// SIMD-group matrix functions, MSL §6.7 (Metal 2.3;
    /// `metal/simdgroup_matrix.rs`).
    SimdMatrix,
    /// Execution barriers, MSL §6.9.1: `threadgroup_barrier` and
    /// `simdgroup_barrier`.
    Barrier,
    /// Atomic functions, MSL §6.15 (`atomics.rs`).
    Atomic,
    /// Fragment derivatives, MSL §6.10.1.
    Derivative,
    /// `discard_fragment`, MSL §6.10.
    Fragment,
    /// Texture member functions, MSL §6.12 (`textures.rs`, `texture_ops.rs`).
    Texture,
    /// Pack and unpack functions of `<metal_pack>` (`pack.rs`).
    Pack,
}

/// Declares [`Builtin`] and its table from one list, so that the enum, the
/// names and the families cannot disagree.
macro_rules! builtins {
    ($($variant:ident = $name:literal, $family:ident;)*) => {
        /// A metal_stdlib function (or texture member function), one
        /// variant per name: error messages name the function as written.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(crate) enum Builtin {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        /// Every builtin with its name and family, in the order of the
        /// enum's variants (so `TABLE[b as usize]` is `b`'s row).
        pub(crate) const TABLE: &[(&str, Builtin, Family)] = &[
            $(($name, Builtin::$variant, Family::$family),)*
        ];
    };
}

builtins! {
    // Math: one-to-one with naga's `MathFunction`s (see `mod.rs`).
    Abs = "abs", Math;
    Fabs = "fabs", Math;
    Min = "min", Math;
    Fmin = "fmin", Math;
    Max = "max", Math;
    Fmax = "fmax", Math;
    Clamp = "clamp", Math;
    Saturate = "saturate", Math;
    Mix = "mix", Math;
    Sign = "sign", Math;
    Step = "step", Math;
    Smoothstep = "smoothstep", Math;
    Fma = "fma", Math;
    Sqrt = "sqrt", Math;
    Rsqrt = "rsqrt", Math;
    Sin = "sin", Math;
    Cos = "cos", Math;
    Tan = "tan", Math;
    Asin = "asin", Math;
    Acos = "acos", Math;
    Atan = "atan", Math;
    Atan2 = "atan2", Math;
    Sinh = "sinh", Math;
    Cosh = "cosh", Math;
    Tanh = "tanh", Math;
    Asinh = "asinh", Math;
    Acosh = "acosh", Math;
    Atanh = "atanh", Math;
    Exp = "exp", Math;
    Exp2 = "exp2", Math;
    Log = "log", Math;
    Log2 = "log2", Math;
    Pow = "pow", Math;
    Powr = "powr", Math;
    Floor = "floor", Math;
    Ceil = "ceil", Math;
    Trunc = "trunc", Math;
    Rint = "rint", Math;
    // Math: polyfills (`mod.rs`, `math.rs`).
    Round = "round", Math;
    Fract = "fract", Math;
    Fmod = "fmod", Math;
    Copysign = "copysign", Math;
    Fdim = "fdim", Math;
    Divide = "divide", Math;
    Nextafter = "nextafter", Math;
    Ilogb = "ilogb", Math;
    Ldexp = "ldexp", Math;
    Frexp = "frexp", Math;
    Modf = "modf", Math;
    Sincos = "sincos", Math;
    Exp10 = "exp10", Math;
    Log10 = "log10", Math;
    Sinpi = "sinpi", Math;
    Cospi = "cospi", Math;
    Tanpi = "tanpi", Math;
    Min3 = "min3", Math;
    Max3 = "max3", Math;
    Median3 = "median3", Math;
    Fmin3 = "fmin3", Math;
    Fmax3 = "fmax3", Math;
    Fmedian3 = "fmedian3", Math;
    // Integer functions (`integer.rs`).
    Popcount = "popcount", Integer;
    Clz = "clz", Integer;
    Ctz = "ctz", Integer;
    ReverseBits = "reverse_bits", Integer;
    Absdiff = "absdiff", Integer;
    Addsat = "addsat", Integer;
    Subsat = "subsat", Integer;
    Madsat = "madsat", Integer;
    Hadd = "hadd", Integer;
    Rhadd = "rhadd", Integer;
    Mulhi = "mulhi", Integer;
    Madhi = "madhi", Integer;
    Mul24 = "mul24", Integer;
    Mad24 = "mad24", Integer;
    Rotate = "rotate", Integer;
    ExtractBits = "extract_bits", Integer;
    InsertBits = "insert_bits", Integer;
    // Relational functions.
    All = "all", Relational;
    Any = "any", Relational;
    Select = "select", Relational;
    Isnan = "isnan", Relational;
    Isinf = "isinf", Relational;
    Isfinite = "isfinite", Relational;
    Isnormal = "isnormal", Relational;
    Signbit = "signbit", Relational;
    Isordered = "isordered", Relational;
    Isunordered = "isunordered", Relational;
    // Geometric functions.
    Dot = "dot", Geometric;
    Length = "length", Geometric;
    Distance = "distance", Geometric;
    Normalize = "normalize", Geometric;
    Cross = "cross", Geometric;
    Reflect = "reflect", Geometric;
    Refract = "refract", Geometric;
    Faceforward = "faceforward", Geometric;
    LengthSquared = "length_squared", Geometric;
    DistanceSquared = "distance_squared", Geometric;
    // Matrix functions.
    Determinant = "determinant", Matrix;
    Transpose = "transpose", Matrix;
    // SIMD-group functions.
    SimdSum = "simd_sum", Simd;
    SimdProduct = "simd_product", Simd;
    SimdMin = "simd_min", Simd;
    SimdMax = "simd_max", Simd;
    SimdAnd = "simd_and", Simd;
    SimdOr = "simd_or", Simd;
    SimdXor = "simd_xor", Simd;
    SimdPrefixInclusiveSum = "simd_prefix_inclusive_sum", Simd;
    SimdPrefixInclusiveProduct = "simd_prefix_inclusive_product", Simd;
    SimdPrefixExclusiveSum = "simd_prefix_exclusive_sum", Simd;
    SimdPrefixExclusiveProduct = "simd_prefix_exclusive_product", Simd;
    SimdShuffle = "simd_shuffle", Simd;
    SimdBroadcast = "simd_broadcast", Simd;
    SimdShuffleXor = "simd_shuffle_xor", Simd;
    SimdShuffleUp = "simd_shuffle_up", Simd;
    SimdShuffleDown = "simd_shuffle_down", Simd;
    SimdShuffleRotateUp = "simd_shuffle_rotate_up", Simd;
    SimdShuffleRotateDown = "simd_shuffle_rotate_down", Simd;
    SimdShuffleAndFillUp = "simd_shuffle_and_fill_up", Simd;
    SimdShuffleAndFillDown = "simd_shuffle_and_fill_down", Simd;
    SimdBroadcastFirst = "simd_broadcast_first", Simd;
    SimdAll = "simd_all", Simd;
    SimdAny = "simd_any", Simd;
    SimdIsFirst = "simd_is_first", Simd;
    SimdIsHelperThread = "simd_is_helper_thread", Simd;
    SimdBallot = "simd_ballot", Simd;
    SimdActiveThreadsMask = "simd_active_threads_mask", Simd;
    // Quad-group functions.
    QuadSum = "quad_sum", Quad;
    QuadProduct = "quad_product", Quad;
    QuadMin = "quad_min", Quad;
    QuadMax = "quad_max", Quad;
    QuadAnd = "quad_and", Quad;
    QuadOr = "quad_or", Quad;
    QuadXor = "quad_xor", Quad;
    QuadPrefixInclusiveSum = "quad_prefix_inclusive_sum", Quad;
    QuadPrefixInclusiveProduct = "quad_prefix_inclusive_product", Quad;
    QuadPrefixExclusiveSum = "quad_prefix_exclusive_sum", Quad;
    QuadPrefixExclusiveProduct = "quad_prefix_exclusive_product", Quad;
    QuadAll = "quad_all", Quad;
    QuadAny = "quad_any", Quad;
    QuadShuffle = "quad_shuffle", Quad;
    QuadBroadcast = "quad_broadcast", Quad;
    QuadShuffleXor = "quad_shuffle_xor", Quad;
    QuadShuffleUp = "quad_shuffle_up", Quad;
    QuadShuffleDown = "quad_shuffle_down", Quad;
    QuadShuffleRotateUp = "quad_shuffle_rotate_up", Quad;
    QuadShuffleRotateDown = "quad_shuffle_rotate_down", Quad;
    QuadShuffleAndFillUp = "quad_shuffle_and_fill_up", Quad;
    QuadShuffleAndFillDown = "quad_shuffle_and_fill_down", Quad;
    QuadBroadcastFirst = "quad_broadcast_first", Quad;
    QuadIsFirst = "quad_is_first", Quad;
    QuadIsHelperThread = "quad_is_helper_thread", Quad;
    QuadBallot = "quad_ballot", Quad;
    QuadActiveThreadsMask = "quad_active_threads_mask", Quad;
    // SIMD-group matrix functions.
    SimdgroupLoad = "simdgroup_load", SimdMatrix;
    SimdgroupStore = "simdgroup_store", SimdMatrix;
    SimdgroupMultiply = "simdgroup_multiply", SimdMatrix;
    SimdgroupMultiplyAccumulate = "simdgroup_multiply_accumulate", SimdMatrix;
    MakeFilledSimdgroupMatrix = "make_filled_simdgroup_matrix", SimdMatrix;
    // Barriers.
    ThreadgroupBarrier = "threadgroup_barrier", Barrier;
    SimdgroupBarrier = "simdgroup_barrier", Barrier;
    // Atomic functions.
    AtomicLoad = "atomic_load_explicit", Atomic;
    AtomicStore = "atomic_store_explicit", Atomic;
    AtomicExchange = "atomic_exchange_explicit", Atomic;
    AtomicCompareExchangeWeak = "atomic_compare_exchange_weak_explicit", Atomic;
    AtomicFetchAdd = "atomic_fetch_add_explicit", Atomic;
    AtomicFetchSub = "atomic_fetch_sub_explicit", Atomic;
    AtomicFetchAnd = "atomic_fetch_and_explicit", Atomic;
    AtomicFetchOr = "atomic_fetch_or_explicit", Atomic;
    AtomicFetchXor = "atomic_fetch_xor_explicit", Atomic;
    AtomicFetchMin = "atomic_fetch_min_explicit", Atomic;
    AtomicFetchMax = "atomic_fetch_max_explicit", Atomic;
    AtomicThreadFence = "atomic_thread_fence", Atomic;
    // Pack and unpack functions.
    PackFloatToUnorm4x8 = "pack_float_to_unorm4x8", Pack;
    PackFloatToSnorm4x8 = "pack_float_to_snorm4x8", Pack;
    PackFloatToUnorm2x16 = "pack_float_to_unorm2x16", Pack;
    PackFloatToSnorm2x16 = "pack_float_to_snorm2x16", Pack;
    PackFloatToUnorm10a2 = "pack_float_to_unorm10a2", Pack;
    PackFloatToUnorm565 = "pack_float_to_unorm565", Pack;
    PackFloatToSrgbUnorm4x8 = "pack_float_to_srgb_unorm4x8", Pack;
    PackHalfToUnorm4x8 = "pack_half_to_unorm4x8", Pack;
    PackHalfToSnorm4x8 = "pack_half_to_snorm4x8", Pack;
    PackHalfToUnorm2x16 = "pack_half_to_unorm2x16", Pack;
    PackHalfToSnorm2x16 = "pack_half_to_snorm2x16", Pack;
    PackHalfToUnorm10a2 = "pack_half_to_unorm10a2", Pack;
    PackHalfToUnorm565 = "pack_half_to_unorm565", Pack;
    PackHalfToSrgbUnorm4x8 = "pack_half_to_srgb_unorm4x8", Pack;
    UnpackUnorm4x8ToFloat = "unpack_unorm4x8_to_float", Pack;
    UnpackSnorm4x8ToFloat = "unpack_snorm4x8_to_float", Pack;
    UnpackUnorm2x16ToFloat = "unpack_unorm2x16_to_float", Pack;
    UnpackSnorm2x16ToFloat = "unpack_snorm2x16_to_float", Pack;
    UnpackUnorm10a2ToFloat = "unpack_unorm10a2_to_float", Pack;
    UnpackUnorm565ToFloat = "unpack_unorm565_to_float", Pack;
    UnpackUnorm4x8SrgbToFloat = "unpack_unorm4x8_srgb_to_float", Pack;
    UnpackUnorm4x8ToHalf = "unpack_unorm4x8_to_half", Pack;
    UnpackSnorm4x8ToHalf = "unpack_snorm4x8_to_half", Pack;
    UnpackUnorm2x16ToHalf = "unpack_unorm2x16_to_half", Pack;
    UnpackSnorm2x16ToHalf = "unpack_snorm2x16_to_half", Pack;
    UnpackUnorm10a2ToHalf = "unpack_unorm10a2_to_half", Pack;
    UnpackUnorm565ToHalf = "unpack_unorm565_to_half", Pack;
    UnpackUnorm4x8SrgbToHalf = "unpack_unorm4x8_srgb_to_half", Pack;
    // Derivatives and fragment-only functions.
    Dfdx = "dfdx", Derivative;
    Dfdy = "dfdy", Derivative;
    Fwidth = "fwidth", Derivative;
    DiscardFragment = "discard_fragment", Fragment;
    GetSamplePosition = "get_sample_position", Fragment;
    GetNumSamples = "get_num_samples", Fragment;
    // Texture member functions.
    TextureSample = "sample", Texture;
    TextureSampleCompare = "sample_compare", Texture;
    TextureGather = "gather", Texture;
    TextureGatherCompare = "gather_compare", Texture;
    TextureRead = "read", Texture;
    TextureWrite = "write", Texture;
    TextureGetWidth = "get_width", Texture;
    TextureGetHeight = "get_height", Texture;
    TextureGetDepth = "get_depth", Texture;
    TextureGetNumMipLevels = "get_num_mip_levels", Texture;
    TextureGetArraySize = "get_array_size", Texture;
    TextureGetNumSamples = "get_num_samples", Texture;
    TextureFence = "fence", Texture;
    TextureAtomicLoad = "atomic_load", Texture;
    TextureAtomicStore = "atomic_store", Texture;
    TextureAtomicExchange = "atomic_exchange", Texture;
    TextureAtomicCompareExchangeWeak = "atomic_compare_exchange_weak", Texture;
    TextureAtomicFetchAdd = "atomic_fetch_add", Texture;
    TextureAtomicFetchSub = "atomic_fetch_sub", Texture;
    TextureAtomicFetchAnd = "atomic_fetch_and", Texture;
    TextureAtomicFetchOr = "atomic_fetch_or", Texture;
    TextureAtomicFetchXor = "atomic_fetch_xor", Texture;
    TextureAtomicFetchMin = "atomic_fetch_min", Texture;
    TextureAtomicFetchMax = "atomic_fetch_max", Texture;
    // `is_null_texture(t)` (MSL §6.12.15): a free function on a texture.
    IsNullTexture = "is_null_texture", Relational;
}

impl Builtin {
    /// The builtin spelt `name` (either kind), if any.
    /// The library function (`member` false) or texture member function
    /// (`member` true) named `name`: the two may share a name
    /// (`get_num_samples()` of the render target, `t.get_num_samples()`).
    fn lookup(name: &str, member: bool) -> Option<Builtin> {
        // Clang's bit-counting builtins, which Metal's compiler (a clang)
        // accepts: the 32-bit forms are MSL's functions (the result of
        // `__builtin_ctz(0)`, undefined in clang, is 32 here).
        let name = match (name, member) {
            ("__builtin_ctz", false) => "ctz",
            ("__builtin_clz", false) => "clz",
            ("__builtin_popcount", false) => "popcount",
            _ => name,
        };
        // Built once: every unresolved call asks.
        static BY_NAME: std::sync::OnceLock<HashMap<(&'static str, bool), Builtin>> =
            std::sync::OnceLock::new();
        BY_NAME
            .get_or_init(|| {
                TABLE
                    .iter()
                    .map(|&(name, b, family)| ((name, family == Family::Texture), b))
                    .collect()
            })
            .get(&(name, member))
            .copied()
    }

    /// The name as MSL spells it.
    pub(crate) fn name(self) -> &'static str {
        TABLE[self as usize].0
    }

    /// The kind of function.
    pub(crate) fn family(self) -> Family {
        TABLE[self as usize].2
    }

    /// The library function a call `name(..)` (or `metal::name(..)`)
    /// names, once C++ lookup has found no user declaration of `name`.
    /// `<metal_stdlib>`'s intrinsic `__metal_NAME` is the function `NAME`
    /// (its math-mode argument is dropped by the caller: `mod.rs`).
    pub(crate) fn function(name: &str) -> Option<Builtin> {
        let name = name.strip_prefix("__metal_").unwrap_or(name);
        Builtin::lookup(name, false)
    }

    /// The texture member function `t.name(..)`, if any.
    pub(crate) fn texture_member(name: &str) -> Option<Builtin> {
        Builtin::lookup(name, true)
    }

    /// An execution barrier: every thread of its group must reach it, so a
    /// kernel that reaches one lets no thread of a ragged grid return early.
    pub(crate) fn is_barrier(self) -> bool {
        // A fence is translated to a barrier (`fence.rs`).
        self.family() == Family::Barrier || self == Builtin::AtomicThreadFence
    }

    /// Needs WGSL's subgroup operations or built-ins (the SIMD-group lane
    /// and width): every SIMD-group and quad-group function, and
    /// `simdgroup_barrier`.
    pub(crate) fn needs_subgroups(self) -> bool {
        matches!(self.family(), Family::Simd | Family::Quad) || self == Builtin::SimdgroupBarrier
    }

    /// The result is one of the (already rounded) operands, or an integer no
    /// larger than one: with `half` as `f32` there is nothing to round.
    pub(crate) fn returns_an_operand(self) -> bool {
        use Builtin::*;
        matches!(
            self,
            Abs | Fabs
                | Min
                | Max
                | Fmin
                | Fmax
                | Clamp
                | Saturate
                | Select
                | Floor
                | Ceil
                | Trunc
                | Rint
                | Round
                | Sign
                | Copysign
                | Step
                | SimdShuffle
                | SimdShuffleXor
                | SimdShuffleUp
                | SimdShuffleDown
                | SimdShuffleRotateUp
                | SimdShuffleRotateDown
                | SimdShuffleAndFillUp
                | SimdShuffleAndFillDown
                | SimdBroadcast
                | SimdBroadcastFirst
                | QuadShuffle
                | QuadShuffleXor
                | QuadShuffleUp
                | QuadShuffleDown
                | QuadShuffleRotateUp
                | QuadShuffleRotateDown
                | QuadShuffleAndFillUp
                | QuadShuffleAndFillDown
                | QuadBroadcast
                | QuadBroadcastFirst
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_listed_once_and_round_trips() {
        let mut seen = std::collections::HashSet::new();
        for (i, &(name, b, family)) in TABLE.iter().enumerate() {
            assert_eq!(b as usize, i, "`{name}` is out of order");
            let member = family == Family::Texture;
            assert!(seen.insert((name, member)), "`{name}` is listed twice");
            assert_eq!(b.name(), name);
            assert_eq!(b.family(), family);
            match member {
                true => assert_eq!(Builtin::texture_member(name), Some(b)),
                false => assert_eq!(Builtin::function(name), Some(b)),
            }
        }
        // A free function and a texture member may share a name.
        assert_eq!(
            Builtin::function("get_num_samples"),
            Some(Builtin::GetNumSamples)
        );
        assert_eq!(
            Builtin::texture_member("get_num_samples"),
            Some(Builtin::TextureGetNumSamples)
        );
        assert_eq!(Builtin::function("sample"), None);
        assert_eq!(Builtin::texture_member("simd_sum"), None);
    }

    #[test]
    fn families_decide_barriers_and_subgroups() {
        assert!(Builtin::ThreadgroupBarrier.is_barrier());
        assert!(Builtin::SimdgroupBarrier.is_barrier());
        assert!(Builtin::SimdgroupBarrier.needs_subgroups());
        assert!(!Builtin::ThreadgroupBarrier.needs_subgroups());
        assert!(Builtin::QuadSum.needs_subgroups());
        assert!(Builtin::SimdIsHelperThread.needs_subgroups());
        assert!(!Builtin::Dfdx.needs_subgroups());
        // Names that only look like library functions are not in the table.
        for name in [
            "simd_foo",
            "quad_area",
            "simdgroup_matrix",
            "subgroupBallot",
        ] {
            assert_eq!(Builtin::function(name), None, "{name}");
        }
    }
}
