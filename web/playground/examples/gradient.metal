// A full-screen triangle generated from vertex_id, a UV gradient, and a
// `constant` tint buffer in the fragment function
// (from fixtures/render/fullscreen.metal). Render: 3 vertices.
#include <metal_stdlib>
using namespace metal;

struct Varyings {
    float4 position [[position]];
    float2 uv;
};

vertex Varyings fullscreen_vertex(uint vid [[vertex_id]]) {
    // (0,0), (2,0), (0,2) in UV: one triangle covering the viewport.
    float2 uv = float2(float((vid << 1) & 2), float(vid & 2));
    Varyings out;
    out.position = float4(uv * float2(2.0f, -2.0f) + float2(-1.0f, 1.0f), 0.0f, 1.0f);
    out.uv = uv;
    return out;
}

fragment float4 gradient_fragment(Varyings in [[stage_in]],
                                  constant float4& tint [[buffer(0)]]) {
    return float4(in.uv.x, in.uv.y, 0.25f, 1.0f) * tint;
}
