// A GPUImage-style filter: texture in, texture out. Luminance with the
// Rec. 601 weights, one thread per pixel.
#include <metal_stdlib>
#include "MyTypes.h"
using namespace metal;

kernel void grayscale(texture2d<float, access::read> inTexture [[texture(0)]],
                      texture2d<float, access::write> outTexture [[texture(1)]],
                      uint2 gid [[thread_position_in_grid]])
{
    if (gid.x >= outTexture.get_width() || gid.y >= outTexture.get_height()) {
        return;
    }
    float4 color = inTexture.read(gid);
    float gray = dot(color.rgb, kLuminanceWeights);
    outTexture.write(float4(gray, gray, gray, color.a), gid);
}
