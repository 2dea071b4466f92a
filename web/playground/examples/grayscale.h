// Shared definitions, as a port keeps them in a header.
#pragma once
#include <metal_stdlib>

constant float3 kLuminanceWeights = float3(0.299, 0.587, 0.114);
