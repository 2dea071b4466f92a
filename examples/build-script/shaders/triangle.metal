#include "include/colour.h"

struct VertexOut {
    float4 position [[position]];
    float3 colour;
};

vertex VertexOut triangle_vertex(uint vid [[vertex_id]]) {
    const float2 corners[3] = { float2(-1, -1), float2(3, -1), float2(-1, 3) };
    VertexOut out;
    out.position = float4(corners[vid], 0, 1);
    out.colour = float3(corners[vid] * 0.5 + 0.5, 1);
    return out;
}

fragment float4 triangle_fragment(VertexOut in [[stage_in]]) {
    return float4(float3(luminance(in.colour)), 1);
}
