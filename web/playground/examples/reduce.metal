// Tree reductions in threadgroup memory: a fixed-size threadgroup array, and
// one whose length the host sets ([[threadgroup(0)]], setThreadgroupMemoryLength).
#include <metal_stdlib>
using namespace metal;

constant uint TG = 64;

kernel void reduce_fixed(device const float* in [[buffer(0)]],
                         device float* partial_sums [[buffer(1)]],
                         constant uint& n [[buffer(2)]],
                         uint gid [[thread_position_in_grid]],
                         uint lid [[thread_position_in_threadgroup]],
                         uint group [[threadgroup_position_in_grid]])
{
    threadgroup float scratch[TG];
    scratch[lid] = gid < n ? in[gid] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = TG / 2; stride > 0; stride >>= 1) {
        if (lid < stride) {
            scratch[lid] += scratch[lid + stride];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) {
        partial_sums[group] = scratch[0];
    }
}

kernel void reduce_dynamic(device const uint* in [[buffer(0)]],
                           device uint* partial_sums [[buffer(1)]],
                           threadgroup uint* scratch [[threadgroup(0)]],
                           uint gid [[thread_position_in_grid]],
                           uint lid [[thread_index_in_threadgroup]],
                           uint size [[threads_per_threadgroup]],
                           uint group [[threadgroup_position_in_grid]])
{
    scratch[lid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = size / 2; stride > 0; stride /= 2) {
        if (lid < stride) {
            scratch[lid] = scratch[lid] + scratch[lid + stride];
        }
        threadgroup_barrier(mem_flags::mem_none);
    }
    if (lid == 0) {
        partial_sums[group] = scratch[0];
    }
}
