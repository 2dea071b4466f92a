//! `<MetalPerformancePrimitives/MetalPerformancePrimitives.h>`: Metal 4's
//! tensor operations, provided (like the SDK headers of `sdk`) where no
//! file of that name is found in the search folders, for the one form
//! WebGPU can run: `mpp::tensor_ops::matmul2d` run by one SIMD group
//! (`metal::execution_simdgroup`) on cooperative tensors, which is how
//! ML kernels use the GPU's matrix units (MLX's `steel` NAX tiles).
//!
//! What the header declares:
//! - `matmul2d_descriptor(m, n, k, transpose_left, transpose_right,
//!   relaxed_precision, mode)`, a literal type that is the operation's
//!   template argument (a C++20 class-type template parameter);
//! - `matmul2d<descriptor, execution_simdgroup>` with
//!   `get_left_input_cooperative_tensor<L, R, D>()`,
//!   `get_right_input_cooperative_tensor<L, R, D>()`,
//!   `get_destination_cooperative_tensor<LeftTensor, RightTensor, D>()`
//!   and `run(left, right, destination)`;
//! - the cooperative tensor: `operator[]` and `get_capacity()`.
//!
//! Apple leaves a cooperative tensor's element order to the
//! implementation; code that fills one element by element relies on the
//! order of Apple's GPUs, which MLX writes down for its 16×16 fragments
//! (`BaseNAXFrag::get_coord`): in each 16×16 block, lane `l`'s element
//! `i` (0..8) is row `((l >> 2) & 4 | (l >> 1) & 3) + (i >> 2) * 8`,
//! column `((l >> 2) & 2 | l & 1) * 4 + i % 4`; a tensor larger than one
//! block holds its blocks one after another, row by row of blocks, each
//! block's 8 elements together. `run` exchanges the operands across the
//! SIMD group with `simd_shuffle` (so the 32-lane emulation serves it on
//! GPUs whose subgroups are not 32 wide) and multiplies in `float`, which
//! holds `half` and `bfloat` products exactly.
//!
//! Refused with a located `static_assert`: other execution scopes
//! (`execution_simdgroups<N>`, `execution_threadgroup`), dimensions that
//! are not multiples of 16 or not known at translation time, and the
//! `tensor` operands (`metal::tensor`) of Metal 4, which WebGPU has no
//! equivalent for. The other MetalPerformancePrimitives headers
//! (`convolution2d`) stay refused (`sdk::refused_framework`).

/// The names under which the header is found.
pub(crate) const NAMES: &[&str] = &[
    "MetalPerformancePrimitives/MetalPerformancePrimitives.h",
    "MetalPerformancePrimitives/MPPTensorOpsMatMul2d.h",
];

/// The header's text (the same for every platform).
pub(crate) fn header() -> &'static str {
    HEADER
}

const HEADER: &str = r#"// <MetalPerformancePrimitives/MetalPerformancePrimitives.h> as msl2wgsl
// provides it: matmul2d run by one SIMD group on cooperative tensors.
#ifndef MSL2WGSL_METAL_PERFORMANCE_PRIMITIVES_H
#define MSL2WGSL_METAL_PERFORMANCE_PRIMITIVES_H
#include <metal_stdlib>

namespace metal {
// The execution scopes of Metal 4's tensor operations.
struct execution_thread {};
struct execution_simdgroup {};
struct execution_threadgroup {};
template <int N> struct execution_simdgroups {};
} // namespace metal

namespace mpp {
namespace tensor_ops {

struct matmul2d_descriptor {
    enum class mode { multiply, multiply_accumulate };
    int m;
    int n;
    int k;
    bool transpose_left;
    bool transpose_right;
    bool relaxed_precision;
    mode matmul_mode;
    constexpr matmul2d_descriptor(int m_, int n_, int k_ = -1,
                                  bool transpose_left_ = false,
                                  bool transpose_right_ = false,
                                  bool relaxed_precision_ = false,
                                  mode matmul_mode_ = mode::multiply)
        : m(m_), n(n_), k(k_), transpose_left(transpose_left_),
          transpose_right(transpose_right_),
          relaxed_precision(relaxed_precision_), matmul_mode(matmul_mode_) {}
};

// A Rows x Cols operand held by the 32 lanes of a SIMD group: 16x16
// blocks row by row of blocks, 8 elements of each block per lane.
template <typename T, int Rows, int Cols>
struct __msl2wgsl_cooperative_tensor {
    T elements[Rows * Cols / 32];
    thread T& operator[](int i) { return elements[i]; }
    int get_capacity() const { return Rows * Cols / 32; }
};

// An input operand of Rows x Cols, held transposed (Cols x Rows) where
// the descriptor says so.
template <typename T, bool Transposed, int Rows, int Cols>
using __msl2wgsl_operand =
    __msl2wgsl_cooperative_tensor<T, Transposed ? Cols : Rows, Transposed ? Rows : Cols>;

// The lane holding row r, column c of a 16x16 block.
inline ushort __msl2wgsl_block_lane(int r, int c) {
    return ushort(((r & 4) << 2) | (c & 8) | ((r & 3) << 1) | ((c >> 2) & 1));
}

// Element i of this lane's part of block `block` of `src` (Rows x Cols,
// blocks row by row), as a float.
template <typename T, int Rows, int Cols>
inline float __msl2wgsl_block_element(thread __msl2wgsl_cooperative_tensor<T, Rows, Cols>& src,
                                      int block, int i) {
    return float(src.elements[block * 8 + i]);
}

// `dst` (Cols x Rows, as float) is the transpose of `src` (Rows x Cols):
// each lane's element is fetched from the lane holding its mirror image,
// whose index in that lane's part depends on the reading lane, so both
// halves of the part are fetched and the element picked from them.
template <typename T, int Rows, int Cols>
inline void __msl2wgsl_transpose(thread __msl2wgsl_cooperative_tensor<T, Rows, Cols>& src,
                                 thread float* dst) {
    const ushort lane = __metal_get_thread_index_in_simdgroup(ushort());
    const int row = ((lane >> 2) & 4) | ((lane >> 1) & 3);
    const int col = (((lane >> 2) & 2) | (lane & 1)) * 4;
    for (int br = 0; br < Cols / 16; br++) {
        for (int bc = 0; bc < Rows / 16; bc++) {
            const int from = bc * (Cols / 16) + br;
            for (int i = 0; i < 8; i++) {
                // dst (r, c) of block (br, bc) is src (c, r) of block (bc, br).
                const int r = row + (i >> 2) * 8;
                const int c = col + (i & 3);
                const float4 low = float4(
                    __msl2wgsl_block_element(src, from, 0), __msl2wgsl_block_element(src, from, 1),
                    __msl2wgsl_block_element(src, from, 2), __msl2wgsl_block_element(src, from, 3));
                const float4 high = float4(
                    __msl2wgsl_block_element(src, from, 4), __msl2wgsl_block_element(src, from, 5),
                    __msl2wgsl_block_element(src, from, 6), __msl2wgsl_block_element(src, from, 7));
                const ushort at = __msl2wgsl_block_lane(c, r);
                const float4 l = simd_shuffle(low, at);
                const float4 h = simd_shuffle(high, at);
                dst[(br * (Rows / 16) + bc) * 8 + i] = (c >> 3) != 0 ? h[r & 3] : l[r & 3];
            }
        }
    }
}

// `dst` (Rows x Cols, as float) is `src`.
template <typename T, int Rows, int Cols>
inline void __msl2wgsl_as_float(thread __msl2wgsl_cooperative_tensor<T, Rows, Cols>& src,
                                thread float* dst) {
    for (int i = 0; i < Rows * Cols / 32; i++) {
        dst[i] = float(src.elements[i]);
    }
}

template <matmul2d_descriptor Descriptor, typename Scope>
struct matmul2d {
    static_assert(metal::is_same_v<Scope, metal::execution_simdgroup>,
                  "msl2wgsl runs matmul2d by one SIMD group (execution_simdgroup) only");
    static_assert(Descriptor.m > 0 && Descriptor.n > 0 && Descriptor.k > 0 &&
                      Descriptor.m % 16 == 0 && Descriptor.n % 16 == 0 && Descriptor.k % 16 == 0,
                  "msl2wgsl runs matmul2d with m, n and k known multiples of 16 only");

    template <typename LeftElement, typename RightElement, typename DestinationElement>
    __msl2wgsl_operand<LeftElement, Descriptor.transpose_left, Descriptor.m, Descriptor.k>
    get_left_input_cooperative_tensor() const {
        __msl2wgsl_operand<LeftElement, Descriptor.transpose_left, Descriptor.m, Descriptor.k> t;
        return t;
    }

    template <typename LeftElement, typename RightElement, typename DestinationElement>
    __msl2wgsl_operand<RightElement, Descriptor.transpose_right, Descriptor.k, Descriptor.n>
    get_right_input_cooperative_tensor() const {
        __msl2wgsl_operand<RightElement, Descriptor.transpose_right, Descriptor.k, Descriptor.n> t;
        return t;
    }

    template <typename LeftTensor, typename RightTensor, typename DestinationElement>
    __msl2wgsl_cooperative_tensor<DestinationElement, Descriptor.m, Descriptor.n>
    get_destination_cooperative_tensor() const {
        __msl2wgsl_cooperative_tensor<DestinationElement, Descriptor.m, Descriptor.n> t;
        return t;
    }

    // destination = left x right (+ destination with multiply_accumulate),
    // the sums in float in k order. For each k, a lane takes its rows'
    // left elements of column k from the lane holding them (both rows of a
    // block from one lane, at part indices every lane asks alike) and its
    // columns' right elements of row k (four of a row from one lane).
    template <typename LeftTensor, typename RightTensor, typename DestinationTensor>
    void run(thread LeftTensor& left, thread RightTensor& right,
             thread DestinationTensor& destination) const {
        const int M = Descriptor.m;
        const int N = Descriptor.n;
        const int K = Descriptor.k;
        float a[M * K / 32];
        float b[K * N / 32];
        float c[M * N / 32];
        if constexpr (Descriptor.transpose_left) {
            __msl2wgsl_transpose(left, a);
        } else {
            __msl2wgsl_as_float(left, a);
        }
        if constexpr (Descriptor.transpose_right) {
            __msl2wgsl_transpose(right, b);
        } else {
            __msl2wgsl_as_float(right, b);
        }
        for (int i = 0; i < M * N / 32; i++) {
            c[i] = Descriptor.matmul_mode == matmul2d_descriptor::mode::multiply_accumulate
                       ? float(destination.elements[i])
                       : 0.0f;
        }
        const ushort lane = __metal_get_thread_index_in_simdgroup(ushort());
        const int row = ((lane >> 2) & 4) | ((lane >> 1) & 3);
        const int col = (((lane >> 2) & 2) | (lane & 1)) * 4;
        for (int kk = 0; kk < K; kk++) {
            const int kb = kk / 16;
            const int k = kk % 16;
            float4 bv[N / 16];
            for (int bn = 0; bn < N / 16; bn++) {
                const int bb = (kb * (N / 16) + bn) * 8 + (k >> 3) * 4;
                bv[bn] = simd_shuffle(float4(b[bb], b[bb + 1], b[bb + 2], b[bb + 3]),
                                      __msl2wgsl_block_lane(k, col));
            }
            for (int bm = 0; bm < M / 16; bm++) {
                const int ab = (bm * (K / 16) + kb) * 8;
                const float2 av = simd_shuffle(float2(a[ab + (k & 3)], a[ab + 4 + (k & 3)]),
                                               __msl2wgsl_block_lane(row, k));
                for (int bn = 0; bn < N / 16; bn++) {
                    const int cb = (bm * (N / 16) + bn) * 8;
                    for (int j = 0; j < 4; j++) {
                        c[cb + j] = fma(av.x, bv[bn][j], c[cb + j]);
                        c[cb + 4 + j] = fma(av.y, bv[bn][j], c[cb + 4 + j]);
                    }
                }
            }
        }
        for (int i = 0; i < M * N / 32; i++) {
            destination.elements[i] = c[i];
        }
    }
};

} // namespace tensor_ops
} // namespace mpp
#endif
"#;
