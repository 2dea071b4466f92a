//! Deterministic MSL programs of a chosen size for the translation benchmark.

/// Lines in one generated unit (a struct, three helpers and a kernel).
const UNIT_LINES: usize = 40;

/// An MSL source of about `lines` lines: repeated units of a struct, helper
/// functions (scalar, vector, loops, struct by value and through a thread
/// reference) and a kernel that calls them, each unit's numbers differing.
pub fn program(lines: usize) -> String {
    let units = lines.div_ceil(UNIT_LINES).max(1);
    let mut s = String::with_capacity(lines * 48);
    s.push_str("#include <metal_stdlib>\nusing namespace metal;\n\n");
    for u in 0..units {
        let k = (u % 7) as f32 + 1.5;
        let n = u % 5 + 2;
        s.push_str(&format!(
            r#"struct Particle{u} {{
    float3 position;
    float3 velocity;
    float mass;
    uint id;
}};

static float falloff{u}(float d, float k) {{
    float x = clamp(d * k, 0.0f, 1.0f);
    return 1.0f - x * x * (3.0f - 2.0f * x);
}}

float3 integrate{u}(thread Particle{u}& p, float3 force, float dt) {{
    float3 accel = force / max(p.mass, 0.001f);
    p.velocity = p.velocity * 0.99f + accel * dt;
    p.position += p.velocity * dt;
    return p.position;
}}

float accumulate{u}(device const float* data, uint base, uint count) {{
    float total = 0.0f;
    for (uint j = 0; j < count; ++j) {{
        float v = data[base + j];
        total += v > 0.0f ? v * {k:.1}f : -v;
    }}
    return total;
}}

kernel void step{u}(device const float4* in [[buffer(0)]],
                   device float4* out [[buffer(1)]],
                   device const float* weights [[buffer(2)]],
                   uint i [[thread_position_in_grid]])
{{
    Particle{u} p;
    p.position = in[i].xyz;
    p.velocity = float3(in[i].w, 0.0f, 1.0f);
    p.mass = 1.0f + float(i % {n}u);
    p.id = i;
    float w = accumulate{u}(weights, i * {n}u, {n}u);
    float3 f = normalize(float3(1.0f, w, 0.5f)) * falloff{u}(length(p.position), {k:.1}f);
    float3 q = integrate{u}(p, f, 0.016f);
    out[i] = float4(q, dot(q, f) + float(p.id & 3u));
}}

"#
        ));
    }
    s
}

/// A kernel whose one statement is an expression of `terms` additions.
pub fn long_expression(terms: usize) -> String {
    let mut s = String::with_capacity(terms * 7 + 200);
    s.push_str("kernel void sum(device float* a [[buffer(0)]])\n{\n    a[0] = 1.0f");
    for _ in 1..terms {
        s.push_str(" + 1.0f");
    }
    s.push_str(";\n}\n");
    s
}
