// What Satin (github.com/Hi-Rez/Satin) puts in front of a pipeline's own
// source before it hands the text to `MTLDevice.makeLibrary(source:)`; the
// corpus files under Hi-Rez__Satin are written against it and do not
// compile without it. Applied by tests/corpus/options.tsv with `-include`.
//
// From Satin's Swift sources (not in the corpus):
// - Shaders/SourceShader.swift `setupSource()`: the compiled text is
//   Pipelines/Satin/Includes.metal, its `// inject ...` marker comments
//   replaced, followed by the pipeline's own Shaders.metal. The compute
//   systems (BufferComputeSystem, TextureComputeSystem) do the same with
//   their own subset of the injections.
// - Utilities/Injections.swift says what replaces each marker; most are
//   the framework's own files in Pipelines/Satin/ (read by the *Source
//   classes of Utilities/Sources.swift), which are in the corpus and are
//   included from there rather than restated here (the MANIFEST gives
//   Satin's rows `-I Sources/Satin/Pipelines`).
//
// Only the injections that declare something are here, each with the
// setting Satin uses by default (no instancing, no lights, no shadows,
// the default SatinVertexDescriptor); injections that insert arguments,
// statements or whole functions at a marker inside the pipeline's source
// (instancing/lighting/shadow arguments, the pass-through vertex function)
// have no prelude equivalent and are left out.

// Includes.metal itself.
#include <metal_stdlib>
#include <simd/simd.h>
using namespace metal;

// `// inject defines`: SourceShader.defines sets `<attribute.shaderDefine>`
// to `true` for every attribute the vertex descriptor has; the default
// SatinVertexDescriptor has position, normal and texcoord (VertexAttribute
// shaderDefine: HAS_POSITION, HAS_NORMAL, HAS_UV). MOBILE (iOS only),
// INSTANCING and LIGHTING are off by default.
#define HAS_POSITION true
#define HAS_NORMAL true
#define HAS_UV true

// `// inject constants`: the buffer, texture, sampler and attribute index
// enumerations (VertexAttributePosition, VertexBufferVertexUniforms,
// FragmentBufferMaterialUniforms, ComputeBufferCustom0, PBRTextureBaseColor, ...).
#include "Satin/VertexConstants.metal"
#include "Satin/FragmentConstants.metal"
#include "Satin/ComputeConstants.metal"
#include "Satin/MeshConstants.metal"
#include "Satin/PBRConstants.metal"

// `// inject lighting` (LightType, LightData) and `// inject shadow data`
// (ShadowData): injected when lighting or shadows are on; declared here
// unconditionally, as types only (the arguments that use them are not).
#include "Satin/LightData.metal"
#include "Satin/ShadowData.metal"

// `// inject vertex`: for the default SatinVertexDescriptor,
// injectVertex() uses Vertex.metal (`Vertex`: position, normal, uv). For a
// material given another vertex descriptor, injectVertex() generates
// `Vertex` instead, one member per attribute of the descriptor (named by
// Satin's VertexAttribute enum: position, normal, uv, tangent, bitangent,
// color, custom0...); a pipeline drawn with one defines
// SATIN_GENERATED_VERTEX and -includes the struct after this file
// (preludes/satin-vertex-*.metal, named in tests/corpus/options.tsv).
#ifndef SATIN_GENERATED_VERTEX
#include "Satin/Vertex.metal"
#endif

// `// inject vertex data` (`VertexData`), `// inject vertex uniforms`
// (`VertexUniforms`), `// inject instance matrix uniforms`
// (`InstanceMatrixUniforms`).
#include "Satin/VertexData.metal"
#include "Satin/VertexUniforms.metal"
#include "Satin/InstanceMatrixUniforms.metal"
