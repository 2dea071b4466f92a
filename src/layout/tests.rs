//! Sizes and offsets computed by hand from the MSL specification's tables.

use super::*;
use crate::source_map::Span;
use crate::types::{MemberDef, StructDef};

fn structs_with(members: &[Type]) -> (Structs, StructId) {
    let mut s = Structs::default();
    let id = s.push(StructDef {
        name: "S".into(),
        members: members
            .iter()
            .enumerate()
            .map(|(i, t)| MemberDef {
                name: format!("m{i}"),
                ty: t.clone(),
                span: Span::default(),
            })
            .collect(),
        span: Span::default(),
    });
    (s, id)
}

const F: Scalar = Scalar::Float;
const H: Scalar = Scalar::Half;

#[test]
fn scalar_vector_matrix_sizes() {
    let s = Structs::default();
    let cases = [
        (Type::FLOAT, 4, 4),
        (Type::Vector(F, 2), 8, 8),
        (Type::Vector(F, 3), 16, 16),
        (Type::Vector(F, 4), 16, 16),
        (Type::Vector(H, 3), 8, 8),
        (Type::Vector(Scalar::Int, 3), 16, 16),
        (
            Type::Matrix {
                scalar: F,
                columns: 3,
                rows: 3,
            },
            48,
            16,
        ),
        (
            Type::Matrix {
                scalar: F,
                columns: 2,
                rows: 3,
            },
            32,
            16,
        ),
        (
            Type::Matrix {
                scalar: H,
                columns: 3,
                rows: 3,
            },
            24,
            8,
        ),
        (
            Type::Matrix {
                scalar: F,
                columns: 4,
                rows: 2,
            },
            32,
            8,
        ),
        (Type::Array(Box::new(Type::Vector(F, 3)), 4), 64, 16),
    ];
    for (ty, size, align) in cases {
        assert_eq!(metal(&ty, &s), SizeAlign { size, align }, "{ty:?}");
    }
}

#[test]
fn float3_then_float_is_padded() {
    let (s, id) = structs_with(&[Type::Vector(F, 3), Type::FLOAT]);
    assert_eq!(struct_layout(id, &s).offsets, vec![0, 16]);
    let plan = padding_plan(id, &s).unwrap();
    assert_eq!(
        plan.members,
        vec![
            (PlannedMember::Member(0), 0),
            (PlannedMember::Padding(4), 12),
            (PlannedMember::Member(1), 16)
        ]
    );
    assert_eq!(
        plan.size_align,
        SizeAlign {
            size: 32,
            align: 16
        }
    );
}

#[test]
fn mapping_doc_worked_example() {
    // struct P { float3 a; float b; float2 c; float3 d; float e; }: a@0 b@16 c@24 d@32 e@48, size 64
    let (s, id) = structs_with(&[
        Type::Vector(F, 3),
        Type::FLOAT,
        Type::Vector(F, 2),
        Type::Vector(F, 3),
        Type::FLOAT,
    ]);
    assert_eq!(struct_layout(id, &s).offsets, vec![0, 16, 24, 32, 48]);
    let plan = padding_plan(id, &s).unwrap();
    let offsets: Vec<u32> = plan.members.iter().map(|m| m.1).collect();
    assert_eq!(offsets, vec![0, 12, 16, 24, 32, 44, 48]);
    assert_eq!(plan.size_align.size, 64);
}

#[test]
fn half_members_and_matrices() {
    // struct { half a; half3 b; half c; } → a@0, b@8, c@16, size 24
    let (s, id) = structs_with(&[Type::Scalar(H), Type::Vector(H, 3), Type::Scalar(H)]);
    assert_eq!(struct_layout(id, &s).offsets, vec![0, 8, 16]);
    assert_eq!(struct_layout(id, &s).size_align.size, 24);
    let plan = padding_plan(id, &s).unwrap();
    assert_eq!(plan.size_align.size, 24);
    // struct { float2 a; float3x3 m; } → a@0, m@16, size 64
    let (s, id) = structs_with(&[
        Type::Vector(F, 2),
        Type::Matrix {
            scalar: F,
            columns: 3,
            rows: 3,
        },
    ]);
    assert_eq!(struct_layout(id, &s).offsets, vec![0, 16]);
    assert_eq!(padding_plan(id, &s).unwrap().size_align.size, 64);
}

#[test]
fn spec_example_foo() {
    // struct Foo { float a[3]; int b[2]; }: size 20, offsets 0 and 12
    let (s, id) = structs_with(&[
        Type::Array(Box::new(Type::FLOAT), 3),
        Type::Array(Box::new(Type::INT), 2),
    ]);
    let l = struct_layout(id, &s);
    assert_eq!(l.offsets, vec![0, 12]);
    assert_eq!(l.size_align, SizeAlign { size: 20, align: 4 });
    assert_eq!(padding_plan(id, &s).unwrap().members.len(), 2);
}
