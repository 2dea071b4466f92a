// Shared by the shaders: included with a path relative to the includer.
#pragma once
#include <metal_stdlib>
using namespace metal;

constant float3 LUMA = float3(0.2126, 0.7152, 0.0722);

inline float luminance(float3 rgb) { return dot(rgb, LUMA); }
