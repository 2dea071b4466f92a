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
                id: None,
            })
            .collect(),
        span: Span::default(),
        is_union: false,
        bases: Vec::new(),
        pod: true,
        min_align: 1,
        packed: false,
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

/// Sizes and alignments from MSL Tables 2.1–2.5 (3-component vectors take
/// the size of 4; packed vectors have the element's alignment).
#[test]
fn metal_size_and_alignment_table() {
    use crate::types::builtin_type;
    let s = Structs::default();
    let rows: &[(&str, u32, u32)] = &[
        ("bool", 1, 1),
        ("char", 1, 1),
        ("uchar", 1, 1),
        ("short", 2, 2),
        ("ushort", 2, 2),
        ("int", 4, 4),
        ("uint", 4, 4),
        ("half", 2, 2),
        ("float", 4, 4),
        ("bool2", 2, 2),
        ("bool3", 4, 4),
        ("bool4", 4, 4),
        ("char2", 2, 2),
        ("char3", 4, 4),
        ("char4", 4, 4),
        ("uchar3", 4, 4),
        ("short2", 4, 4),
        ("short3", 8, 8),
        ("short4", 8, 8),
        ("ushort3", 8, 8),
        ("int2", 8, 8),
        ("int3", 16, 16),
        ("int4", 16, 16),
        ("uint3", 16, 16),
        ("half2", 4, 4),
        ("half3", 8, 8),
        ("half4", 8, 8),
        ("float2", 8, 8),
        ("float3", 16, 16),
        ("float4", 16, 16),
        ("packed_float2", 8, 4),
        ("packed_float3", 12, 4),
        ("packed_float4", 16, 4),
        ("packed_half3", 6, 2),
        ("packed_char3", 3, 1),
        ("packed_short4", 8, 2),
        ("packed_int3", 12, 4),
        ("packed_uchar2", 2, 1),
        ("float2x2", 16, 8),
        ("float2x3", 32, 16),
        ("float2x4", 32, 16),
        ("float3x2", 24, 8),
        ("float3x3", 48, 16),
        ("float3x4", 48, 16),
        ("float4x2", 32, 8),
        ("float4x3", 64, 16),
        ("float4x4", 64, 16),
        ("half2x2", 8, 4),
        ("half3x3", 24, 8),
        ("half4x4", 32, 8),
        ("half2x3", 16, 8),
    ];
    for (name, size, align) in rows {
        let ty = builtin_type(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            metal(&ty, &s),
            SizeAlign {
                size: *size,
                align: *align
            },
            "{name}"
        );
    }
    let arrays: &[(&str, u32, u32, u32)] = &[
        ("float", 5, 20, 4),
        ("float3", 2, 32, 16),
        ("char3", 3, 12, 4),
        ("packed_float3", 2, 24, 4),
    ];
    for (name, n, size, align) in arrays {
        let ty = Type::Array(Box::new(builtin_type(name).unwrap()), *n);
        assert_eq!(
            metal(&ty, &s),
            SizeAlign {
                size: *size,
                align: *align
            },
            "{name}[{n}]"
        );
    }
}

/// Struct member offsets by C++ standard layout with Metal's type sizes (MSL §2.5).
#[test]
fn metal_struct_offset_table() {
    use crate::types::builtin_type;
    let t = |n: &str| builtin_type(n).unwrap();
    let cases: Vec<(Vec<Type>, Vec<u32>, u32, u32)> = vec![
        (vec![t("char"), t("int")], vec![0, 4], 8, 4),
        (vec![t("char"), t("short"), t("char")], vec![0, 2, 4], 6, 2),
        (vec![t("float3"), t("float")], vec![0, 16], 32, 16),
        (vec![t("packed_float3"), t("float")], vec![0, 12], 16, 4),
        (
            vec![t("half"), t("half3"), t("half")],
            vec![0, 8, 16],
            24,
            8,
        ),
        (vec![t("float2"), t("float3x3")], vec![0, 16], 64, 16),
        (
            vec![
                Type::Array(Box::new(t("float")), 3),
                Type::Array(Box::new(t("int")), 2),
            ],
            vec![0, 12],
            20,
            4,
        ),
        (
            vec![
                t("float3"),
                t("float"),
                t("packed_float3"),
                t("char"),
                t("float3x3"),
                t("half2"),
            ],
            vec![0, 16, 20, 32, 48, 96],
            112,
            16,
        ),
        (vec![t("bool"), t("bool3")], vec![0, 4], 8, 4),
        (
            vec![t("uchar"), t("packed_half3"), t("uchar2")],
            vec![0, 2, 8],
            10,
            2,
        ),
    ];
    for (members, offsets, size, align) in cases {
        let (s, id) = structs_with(&members);
        let l = struct_layout(id, &s);
        assert_eq!(l.offsets, offsets, "{members:?}");
        assert_eq!(l.size_align, SizeAlign { size, align }, "{members:?}");
    }
    // Nested: struct { char c; struct { uchar t; ushort n; } i; } → c@0, i@2, size 6.
    let (mut s, inner) = structs_with(&[t("uchar"), t("ushort")]);
    let outer = s.push(StructDef {
        name: "Outer".into(),
        members: vec![
            MemberDef {
                name: "c".into(),
                ty: t("char"),
                span: Span::default(),
                id: None,
            },
            MemberDef {
                name: "i".into(),
                ty: Type::Struct(inner),
                span: Span::default(),
                id: None,
            },
        ],
        span: Span::default(),
        is_union: false,
        bases: Vec::new(),
        pod: true,
        min_align: 1,
        packed: false,
    });
    assert_eq!(struct_layout(outer, &s).offsets, vec![0, 2]);
    assert_eq!(
        struct_layout(outer, &s).size_align,
        SizeAlign { size: 6, align: 2 }
    );
}

/// The WGSL declaration of `ty` (structs by name), for the test below.
fn wgsl_type_name(ty: &Type, structs: &Structs) -> String {
    let scalar = |s: &Scalar| match s {
        Scalar::Float => "f32",
        Scalar::Half => "f16",
        Scalar::Int => "i32",
        Scalar::UInt => "u32",
        other => panic!("{other:?} has no WGSL type"),
    };
    match ty {
        Type::Scalar(s) => scalar(s).into(),
        Type::Vector(s, n) => format!("vec{n}<{}>", scalar(s)),
        Type::Matrix {
            scalar: s,
            columns,
            rows,
        } => format!("mat{columns}x{rows}<{}>", scalar(s)),
        Type::Array(e, n) => format!("array<{}, {n}>", wgsl_type_name(e, structs)),
        Type::Struct(id) => structs.get(*id).name.clone(),
        other => panic!("{other:?} has no WGSL type"),
    }
}

/// WGSL struct declarations for struct `id` (and the structs it holds)
/// with the members its padding plan lists.
fn wgsl_structs(id: StructId, structs: &Structs, out: &mut String) {
    let def = structs.get(id);
    for m in &def.members {
        if let Type::Struct(inner) = m.ty {
            wgsl_structs(inner, structs, out);
        }
    }
    let plan = padding_plan(id, structs).unwrap();
    out.push_str(&format!("struct {} {{\n", def.name));
    for (k, (member, _)) in plan.members.iter().enumerate() {
        let (name, ty) = match member {
            PlannedMember::Member(i) => (
                def.members[*i].name.clone(),
                wgsl_type_name(&def.members[*i].ty, structs),
            ),
            PlannedMember::Padding(4) => (format!("pad{k}"), "u32".into()),
            PlannedMember::Padding(2) => (format!("pad{k}"), "f16".into()),
            PlannedMember::Padding(n) => panic!("padding of {n} bytes"),
        };
        out.push_str(&format!("    {name}: {ty},\n"));
    }
    out.push_str("}\n");
}

fn member(name: &str, ty: Type) -> MemberDef {
    MemberDef {
        name: name.into(),
        ty,
        span: Span::default(),
        id: None,
    }
}

/// The padding plan reproduces Metal's layout under WGSL's default layout
/// rules, as naga's WGSL front end applies them: the offsets and sizes
/// expected are Metal's, from the MSL specification's tables (§2.1–2.5).
#[test]
fn padding_plans_give_metal_offsets_under_wgsl_layout_rules() {
    use crate::types::builtin_type;
    let t = |n: &str| builtin_type(n).unwrap();
    let arr = |n: &str, len: u32| Type::Array(Box::new(builtin_type(n).unwrap()), len);
    let mut structs = Structs::default();
    let inner = structs.push(StructDef {
        name: "Inner".into(),
        members: vec![member("v", t("float3")), member("h", t("half"))],
        span: Span::default(),
        is_union: false,
        bases: Vec::new(),
        pod: true,
        min_align: 1,
        packed: false,
    });
    // (members, Metal offsets, Metal size)
    let cases: Vec<(Vec<Type>, Vec<u32>, u32)> = vec![
        (vec![t("float3"), t("float")], vec![0, 16], 32),
        (vec![t("float"), t("float3")], vec![0, 16], 32),
        (
            vec![
                t("float3"),
                t("float"),
                t("float2"),
                t("float3"),
                t("float"),
            ],
            vec![0, 16, 24, 32, 48],
            64,
        ),
        (vec![t("half"), t("half3"), t("half")], vec![0, 8, 16], 24),
        (vec![t("half3"), t("half")], vec![0, 8], 16),
        (vec![t("half"), t("float")], vec![0, 4], 8),
        (
            vec![t("half2"), t("float3"), t("half")],
            vec![0, 16, 32],
            48,
        ),
        (vec![t("float2"), t("float3x3")], vec![0, 16], 64),
        (vec![t("float3x2"), t("float")], vec![0, 24], 32),
        (vec![t("half3x3"), t("half")], vec![0, 24], 32),
        (vec![arr("float", 3), arr("int", 2)], vec![0, 12], 20),
        (
            vec![t("float"), arr("float3", 2), t("float")],
            vec![0, 16, 48],
            64,
        ),
        (
            vec![t("half"), Type::Struct(inner), t("float2")],
            vec![0, 16, 48],
            64,
        ),
        (vec![t("uint"), t("half"), t("half2")], vec![0, 4, 8], 12),
    ];
    for (members, offsets, size) in cases {
        let id = structs.push(StructDef {
            name: "S".into(),
            members: members
                .iter()
                .enumerate()
                .map(|(i, ty)| member(&format!("m{i}"), ty.clone()))
                .collect(),
            span: Span::default(),
            is_union: false,
            bases: Vec::new(),
            pod: true,
            min_align: 1,
            packed: false,
        });
        assert_eq!(struct_layout(id, &structs).offsets, offsets, "{members:?}");
        let mut text = String::from("enable f16;\n");
        wgsl_structs(id, &structs, &mut text);
        let module = naga::front::wgsl::parse_str(&text)
            .unwrap_or_else(|e| panic!("{}\n{text}", e.emit_to_string(&text)));
        let (_, ty) = module
            .types
            .iter()
            .find(|(_, ty)| ty.name.as_deref() == Some("S"))
            .expect("struct S");
        let naga::TypeInner::Struct {
            members: wgsl_members,
            span,
        } = &ty.inner
        else {
            panic!("S is a struct")
        };
        let wgsl_offsets: Vec<u32> = (0..members.len())
            .map(|i| {
                let name = format!("m{i}");
                wgsl_members
                    .iter()
                    .find(|m| m.name.as_deref() == Some(name.as_str()))
                    .expect("every member is declared")
                    .offset
            })
            .collect();
        assert_eq!(wgsl_offsets, offsets, "{members:?}\n{text}");
        assert_eq!(*span, size, "{members:?}\n{text}");
        structs.0.pop();
    }
}

/// Types WGSL's default layout cannot give Metal's layout are refused, with
/// the member that needs a word view.
#[test]
fn packed_and_narrow_members_have_no_padding_plan() {
    use crate::types::builtin_type;
    let t = |n: &str| builtin_type(n).unwrap();
    for (members, member) in [
        (vec![t("packed_float3"), t("float")], Some(0)),
        (vec![t("float"), t("packed_half2")], Some(1)),
        (vec![t("char"), t("int")], Some(0)),
        (vec![t("int"), t("ushort")], Some(1)),
        (vec![t("float"), t("bool")], Some(1)),
        (vec![t("float4"), t("uchar4")], Some(1)),
    ] {
        let (s, id) = structs_with(&members);
        assert_eq!(
            padding_plan(id, &s),
            Err(Unrepresentable { member }),
            "{members:?}"
        );
    }
}

/// A union of `members` and a struct `{ uchar; union; ushort }` holding it.
fn union_in_struct(members: &[Type]) -> (Structs, StructId, StructId) {
    let (mut s, u) = structs_with(members);
    s.0[u.0 as usize].is_union = true;
    let outer = s.push(StructDef {
        name: "Outer".into(),
        members: vec![
            member("c", Type::Scalar(Scalar::UChar)),
            member("u", Type::Struct(u)),
            member("n", Type::Scalar(Scalar::UShort)),
        ],
        span: Span::default(),
        is_union: false,
        bases: Vec::new(),
        pod: true,
        min_align: 1,
        packed: false,
    });
    (s, u, outer)
}

#[test]
fn a_union_is_its_largest_member_at_the_largest_alignment() {
    let uchar5 = Type::Array(Box::new(Type::Scalar(Scalar::UChar)), 5);
    // (members, union size and alignment, Outer's offsets and size)
    let cases: Vec<(Vec<Type>, SizeAlign, Vec<u32>, u32)> = vec![
        // float and uint: 4 bytes; Outer: c@0, u@4, n@8, size 12.
        (
            vec![Type::FLOAT, Type::UINT],
            SizeAlign { size: 4, align: 4 },
            vec![0, 4, 8],
            12,
        ),
        // uchar[5] and ushort: 5 bytes rounded up to the alignment 2.
        (
            vec![uchar5, Type::Scalar(Scalar::UShort)],
            SizeAlign { size: 6, align: 2 },
            vec![0, 2, 8],
            10,
        ),
        // float3 (16, 16-aligned) beside half: Outer: u@16, n@32, size 48.
        (
            vec![Type::Scalar(H), Type::Vector(F, 3)],
            SizeAlign {
                size: 16,
                align: 16,
            },
            vec![0, 16, 32],
            48,
        ),
    ];
    for (members, sa, offsets, size) in cases {
        let (s, u, outer) = union_in_struct(&members);
        let l = struct_layout(u, &s);
        assert_eq!(l.size_align, sa, "{members:?}");
        assert!(l.offsets.iter().all(|o| *o == 0), "{members:?}");
        let o = struct_layout(outer, &s);
        assert_eq!(
            (o.offsets, o.size_align.size),
            (offsets, size),
            "{members:?}"
        );
        // WGSL cannot declare overlapping members: word views hold them.
        assert!(wgsl(&Type::Struct(u), &s).is_err());
        assert!(padding_plan(outer, &s).is_err());
    }
}
