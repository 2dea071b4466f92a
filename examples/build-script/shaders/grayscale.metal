#include "include/colour.h"

kernel void grayscale(device const float4* input [[buffer(0)]],
                      device float4* output [[buffer(1)]],
                      uint id [[thread_position_in_grid]]) {
    float4 c = input[id];
    output[id] = float4(float3(luminance(c.rgb)), c.a);
}
