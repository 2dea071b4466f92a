//! A vertex stage to pair with a fragment entry point when a checker makes
//! its render pipeline: it writes a zero to every `@location` the fragment
//! reads, with the fragment's own types and interpolation, so the two stages
//! link (WebGPU requires the vertex outputs to match the fragment inputs).

use naga::{Binding, Expression, Module, Span, StructMember, Type, TypeInner};

/// The name of the stub's entry point.
pub const STUB_ENTRY: &str = "stub_vertex";

/// WGSL of a module with one `@vertex fn stub_vertex`, or `None` if the
/// fragment's inputs cannot be mirrored (a type other than a scalar or
/// vector at a location).
pub fn wgsl(module: &Module, fragment: &naga::EntryPoint) -> Option<String> {
    let mut stub = Module::default();
    let f32x4 = stub.types.insert(
        Type {
            name: None,
            inner: TypeInner::Vector {
                size: naga::VectorSize::Quad,
                scalar: naga::Scalar::F32,
            },
        },
        Span::UNDEFINED,
    );
    let mut members = vec![StructMember {
        name: Some("position".into()),
        ty: f32x4,
        binding: Some(Binding::BuiltIn(naga::BuiltIn::Position {
            invariant: false,
        })),
        offset: 0,
    }];
    for (ty, binding) in fragment_locations(module, fragment) {
        let inner = &module.types[ty].inner;
        if !matches!(inner, TypeInner::Scalar(_) | TypeInner::Vector { .. }) {
            return None;
        }
        let ty = stub.types.insert(
            Type {
                name: None,
                inner: inner.clone(),
            },
            Span::UNDEFINED,
        );
        let Binding::Location { location, .. } = &binding else {
            continue;
        };
        members.push(StructMember {
            name: Some(format!("location{location}")),
            ty,
            binding: Some(binding),
            // Every member in its own 16-byte slot: always a valid layout.
            offset: members.len() as u32 * 16,
        });
    }
    let span = members.len() as u32 * 16;
    let output = stub.types.insert(
        Type {
            name: Some("StubVertexOutput".into()),
            inner: TypeInner::Struct { members, span },
        },
        Span::UNDEFINED,
    );
    let mut function = naga::Function {
        name: Some(STUB_ENTRY.into()),
        result: Some(naga::FunctionResult {
            ty: output,
            binding: None,
        }),
        ..Default::default()
    };
    let zero = function
        .expressions
        .append(Expression::ZeroValue(output), Span::UNDEFINED);
    function.body.push(
        naga::Statement::Return { value: Some(zero) },
        Span::UNDEFINED,
    );
    stub.entry_points.push(naga::EntryPoint {
        name: STUB_ENTRY.into(),
        stage: naga::ShaderStage::Vertex,
        early_depth_test: None,
        workgroup_size: [0; 3],
        workgroup_size_overrides: None,
        function,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&stub)
    .ok()?;
    naga::back::wgsl::write_string(&stub, &info, naga::back::wgsl::WriterFlags::empty()).ok()
}

/// Every `@location` input of the fragment (arguments and members of
/// struct arguments), with its type.
fn fragment_locations(
    module: &Module,
    fragment: &naga::EntryPoint,
) -> Vec<(naga::Handle<Type>, Binding)> {
    let mut out = Vec::new();
    for arg in &fragment.function.arguments {
        match (&arg.binding, &module.types[arg.ty].inner) {
            (Some(b @ Binding::Location { .. }), _) => out.push((arg.ty, b.clone())),
            (None, TypeInner::Struct { members, .. }) => {
                for m in members {
                    if let Some(b @ Binding::Location { .. }) = &m.binding {
                        out.push((m.ty, b.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    out
}
