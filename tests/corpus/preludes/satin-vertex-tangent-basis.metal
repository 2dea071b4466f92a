// The `Vertex` that Satin's injectVertex() (Utilities/Injections.swift)
// generates at `// inject vertex` for a mesh whose vertex descriptor adds a
// tangent basis to the default attributes: the descriptor Satin's examples
// build for ModelIO's `addTangentBasis` (position `.float4`, normal
// `.float3`, texcoord `.float2` in the vertices buffer; tangent and
// bitangent `.float3` in the generics buffer). Each member is named and
// indexed by Satin's VertexAttribute enum (Satin/VertexConstants.metal), the
// type is the attribute's format, as injectVertex() writes them.
// Used after preludes/satin.metal, with -D SATIN_GENERATED_VERTEX.
typedef struct {
    float4 position [[attribute(VertexAttributePosition)]];
    float3 normal [[attribute(VertexAttributeNormal)]];
    float2 uv [[attribute(VertexAttributeTexcoord)]];
    float3 tangent [[attribute(VertexAttributeTangent)]];
    float3 bitangent [[attribute(VertexAttributeBitangent)]];
} Vertex;
