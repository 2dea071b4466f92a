use super::ast::*;
use super::*;

fn parse_ok(src: &str) -> TranslationUnit {
    parse(src).unwrap_or_else(|e| panic!("{}: {:?}", e.message, &src[e.span.range()]))
}

#[test]
fn parses_add_arrays() {
    let tu = parse_ok(
        "#pragma x\n"
            .replace("#pragma x\n", "")
            .as_str()
            .to_owned()
            .as_str(),
    );
    assert!(tu.items.is_empty());
    let tu = parse_ok(
        "using namespace metal;\nkernel void add_arrays(device const float* inA [[buffer(0)]],\n device const float* inB [[buffer(1)]], device float* result [[buffer(2)]], uint index [[thread_position_in_grid]]) { result[index] = inA[index] + inB[index]; }",
    );
    let Item::Function(f) = &tu.items[1] else {
        panic!()
    };
    assert_eq!(f.stage.map(|s| s.0), Some(Stage::Kernel));
    assert_eq!(f.params.len(), 4);
    assert!(f.params[0].ty.is_const);
    assert_eq!(
        f.params[0].ty.space.map(|s| s.0),
        Some(AddressSpace::Device)
    );
    assert_eq!(f.params[0].attributes[0].name, "buffer");
}

#[test]
fn precedence_and_associativity() {
    let tu = parse_ok("void f() { x = a + b * c - d << 2 == e || f && g; }");
    let Item::Function(f) = &tu.items[0] else {
        panic!()
    };
    let StmtKind::Expr(e) = &f.body.as_ref().unwrap().stmts[0].kind else {
        panic!()
    };
    let ExprKind::Assign(None, _, rhs) = &e.kind else {
        panic!()
    };
    let ExprKind::Binary(BinaryOp::LogicalOr, l, _) = &rhs.kind else {
        panic!("{rhs:?}")
    };
    let ExprKind::Binary(BinaryOp::Eq, l, _) = &l.kind else {
        panic!()
    };
    let ExprKind::Binary(BinaryOp::Shl, l, _) = &l.kind else {
        panic!()
    };
    let ExprKind::Binary(BinaryOp::Sub, l, _) = &l.kind else {
        panic!()
    };
    assert!(matches!(&l.kind, ExprKind::Binary(BinaryOp::Add, _, _)));
}

#[test]
fn statements_and_casts() {
    parse_ok(
        "struct P { float3 a; float b[2]; };\nconstant float K[3] = {1.0f, 2.0h, 0x10u};\ntypedef float real;\nusing v4 = vec<float, 4>;\n\
         float h(float x) { return (float)x + static_cast<float>(1) + float(2) + as_type<float>(1u); }\n\
         kernel void k(uint i [[thread_position_in_grid]]) {\n int a = 0, b[2] = {1, 2};\n for (int j = 0; j < 4; ++j) { a += j; if (a > 3) break; else continue; }\n\
         while (a) a--; do { a++; } while (a < 10);\n switch (a) { case 1: case 2: a = 3; break; default: a = 0; }\n float4 v = float4(1); v.xy = v.zw; v *= 2.0f;\n a = a > 1 ? -a : ~a; P p = {}; p.b[0] = 1;\n return; }",
    );
}

#[test]
fn syntax_error_in_words() {
    let e = parse("kernel void f() { int x = ; }").unwrap_err();
    assert!(e.message.starts_with("expected "), "{}", e.message);
    assert!(e.message.contains("an expression"), "{}", e.message);
    assert!(e.message.ends_with("found `;`"), "{}", e.message);
    assert_eq!(e.span.start, 26);
}

#[test]
fn nesting_limit_is_a_diagnostic() {
    let nested = |n: usize| {
        format!(
            "void f() {{ int x = {}1{}; }}",
            "(".repeat(n),
            ")".repeat(n)
        )
    };
    let e = parse(&nested(super::MAX_NESTING_DEPTH)).unwrap_err();
    assert!(e.message.contains("nested too deeply"));
    // At the limit, on a stack as small as `parse` is documented to need.
    let within = nested(super::MAX_NESTING_DEPTH - 1);
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || parse(&within).map(|_| ()))
        .unwrap()
        .join()
        .unwrap()
        .unwrap();
}
