// A 3x3 box blur: texture in, texture out (edges clamp).
#include <metal_stdlib>
using namespace metal;

kernel void box_blur(texture2d<float, access::read> inTexture [[texture(0)]],
                     texture2d<float, access::write> outTexture [[texture(1)]],
                     uint2 gid [[thread_position_in_grid]])
{
    int w = int(inTexture.get_width());
    int h = int(inTexture.get_height());
    if (int(gid.x) >= w || int(gid.y) >= h) {
        return;
    }
    float4 sum = float4(0.0);
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int2 p = clamp(int2(gid) + int2(dx, dy), int2(0), int2(w - 1, h - 1));
            sum += inTexture.read(uint2(p));
        }
    }
    outTexture.write(sum / 9.0, gid);
}
