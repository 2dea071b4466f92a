//! MSL text for a [`Program`]: fully parenthesised expressions, one
//! statement a line.

use super::ast::*;
use std::fmt::Write;

/// The whole MSL source of `program` (one kernel named [`KERNEL`]).
pub fn msl(program: &Program) -> String {
    let mut out = String::new();
    writeln!(out, "// msl2wgsl differential test, seed {}", program.seed).unwrap();
    writeln!(
        out,
        "// {} threads, threadgroups of {}",
        program.threads, program.threadgroup
    )
    .unwrap();
    out.push_str("#include <metal_stdlib>\nusing namespace metal;\n\n");
    let mut e = Emitter {
        program,
        out,
        indent: 0,
    };
    for function in &program.functions {
        e.function(function);
    }
    e.kernel();
    e.out
}

struct Emitter<'p> {
    program: &'p Program,
    out: String,
    indent: usize,
}

impl Emitter<'_> {
    fn var(&self, id: VarId) -> &str {
        &self.program.vars[id].name
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn function(&mut self, f: &Function) {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|&(id, by_ref)| {
                let ty = self.program.vars[id].ty.msl();
                if by_ref {
                    format!("thread {ty}& {}", self.var(id))
                } else {
                    format!("{ty} {}", self.var(id))
                }
            })
            .collect();
        let ret = f.ret.map_or("void".to_string(), Ty::msl);
        self.line(&format!("{ret} {}({}) {{", f.name, params.join(", ")));
        self.block_body(&f.body);
        self.line("}\n");
    }

    fn kernel(&mut self) {
        let mut params: Vec<String> = Buffer::ALL
            .iter()
            .map(|b| {
                let access = if b.is_output() {
                    "device"
                } else {
                    "const device"
                };
                format!(
                    "{access} {}* {} [[buffer({})]]",
                    b.element().msl(),
                    b.name(),
                    b.index()
                )
            })
            .collect();
        params.push("uint tid [[thread_position_in_grid]]".into());
        self.line(&format!(
            "kernel void {KERNEL}({}) {{",
            params.join(",\n        ")
        ));
        self.block_body(&self.program.kernel.clone());
        self.line("}");
    }

    fn block_body(&mut self, body: &[Stmt]) {
        self.indent += 1;
        for s in body {
            self.stmt(s);
        }
        self.indent -= 1;
    }

    fn place(&self, p: &Place) -> String {
        match p {
            Place::Var(id) => self.var(*id).to_string(),
            Place::Swizzle(id, comps) => format!("{}.{}", self.var(*id), swizzle(comps, false)),
            Place::Element(id, index) => format!("{}[{}]", self.var(*id), self.expr(index)),
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Decl(id, init) => {
                let v = &self.program.vars[*id];
                let text = format!("{} {} = {};", v.ty.msl(), v.name, self.expr(init));
                self.line(&text);
            }
            Stmt::DeclArray(id, items) => {
                let v = &self.program.vars[*id];
                let items: Vec<String> = items.iter().map(|e| self.expr(e)).collect();
                let text = format!(
                    "{} {}[{}] = {{{}}};",
                    v.ty.msl(),
                    v.name,
                    v.array_len.unwrap(),
                    items.join(", ")
                );
                self.line(&text);
            }
            Stmt::Assign(place, op, value) => {
                let text = format!(
                    "{} {}= {};",
                    self.place(place),
                    op_token(*op),
                    self.expr(value)
                );
                self.line(&text);
            }
            Stmt::Store(buf, slot, op, value) => {
                let text = format!(
                    "{}[tid * {}u + {}] {}= {};",
                    buf.name(),
                    buf.stride(),
                    self.expr(slot),
                    op_token(*op),
                    self.expr(value)
                );
                self.line(&text);
            }
            Stmt::CallRefs(target, f, args) => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        Arg::Value(e) => self.expr(e),
                        Arg::Ref(id) => self.var(*id).to_string(),
                    })
                    .collect();
                let call = format!("{}({})", self.program.functions[*f].name, args.join(", "));
                let text = match target {
                    Some(p) => format!("{} = {call};", self.place(p)),
                    None => format!("{call};"),
                };
                self.line(&text);
            }
            Stmt::If(cond, then, otherwise) => {
                let text = format!("if ({}) {{", self.expr(cond));
                self.line(&text);
                self.block_body(then);
                if otherwise.is_empty() {
                    self.line("}");
                } else {
                    self.line("} else {");
                    self.block_body(otherwise);
                    self.line("}");
                }
            }
            Stmt::For(id, count, body) => {
                let i = self.var(*id).to_string();
                self.line(&format!("for (int {i} = 0; {i} < {count}; {i}++) {{"));
                self.block_body(body);
                self.line("}");
            }
            Stmt::Break => self.line("break;"),
            Stmt::Continue => self.line("continue;"),
            Stmt::Switch(value, cases) => self.switch(value, cases),
            Stmt::Return(value) => {
                let text = match value {
                    Some(e) => format!("return {};", self.expr(e)),
                    None => "return;".to_string(),
                };
                self.line(&text);
            }
        }
    }

    fn switch(&mut self, value: &Expr, cases: &[Case]) {
        let text = format!("switch ({}) {{", self.expr(value));
        self.line(&text);
        for case in cases {
            match case.label {
                Some(l) => self.line(&format!("case {l}: {{")),
                None => self.line("default: {"),
            }
            self.block_body(&case.body);
            if case.falls_through {
                self.line("}");
            } else {
                self.line("} break;");
            }
        }
        self.line("}");
    }

    fn expr(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::IntLit(v) => int_literal(*v, e.ty.scalar),
            ExprKind::FloatLit(v) => float_literal(*v),
            ExprKind::BoolLit(b) => b.to_string(),
            ExprKind::Tid => "tid".into(),
            ExprKind::Var(id) => self.var(*id).to_string(),
            ExprKind::Element(id, index) => format!("{}[{}]", self.var(*id), self.expr(index)),
            ExprKind::Load(buf, slot) => format!(
                "{}[tid * {}u + {}]",
                buf.name(),
                buf.stride(),
                self.expr(slot)
            ),
            ExprKind::Unary(op, a) => {
                let token = match op {
                    UnOp::Neg => "-",
                    UnOp::BitNot => "~",
                    UnOp::Not => "!",
                };
                format!("({token}{})", self.expr(a))
            }
            ExprKind::Binary(op, a, b) => {
                format!("({} {} {})", self.expr(a), op.token(), self.expr(b))
            }
            ExprKind::Ternary(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            ExprKind::Builtin(f, args) => format!("{}({})", f.name(), self.list(args)),
            ExprKind::Call(f, args) => {
                format!("{}({})", self.program.functions[*f].name, self.list(args))
            }
            ExprKind::Cast(a, spelling) => {
                let ty = e.ty.msl();
                match spelling % 3 {
                    0 => format!("{ty}({})", self.expr(a)),
                    1 if !e.ty.is_vector() => format!("static_cast<{ty}>({})", self.expr(a)),
                    2 if !e.ty.is_vector() => format!("(({ty}){})", self.expr(a)),
                    _ => format!("{ty}({})", self.expr(a)),
                }
            }
            ExprKind::Swizzle(a, comps) => {
                format!("{}.{}", self.expr(a), swizzle(comps, comps.len() == 2))
            }
            ExprKind::Construct(parts) => format!("{}({})", e.ty.msl(), self.list(parts)),
        }
    }

    fn list(&self, args: &[Expr]) -> String {
        args.iter()
            .map(|a| self.expr(a))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn op_token(op: Option<BinOp>) -> &'static str {
    op.map_or("", BinOp::token)
}

/// Component letters; `rgba` for variety where `colour` is set.
fn swizzle(comps: &[u8], colour: bool) -> String {
    let letters = if colour { b"rgba" } else { b"xyzw" };
    comps.iter().map(|&c| letters[c as usize] as char).collect()
}

/// An integer literal of type `s` (`int` or `uint`) that MSL types the same
/// way: no literal above `INT_MAX` without `u`, `INT_MIN` as an expression.
pub fn int_literal(v: i64, s: Scalar) -> String {
    match s {
        Scalar::Uint => format!("{}u", v as u32),
        _ if v == i32::MIN as i64 => "(-2147483647 - 1)".into(),
        _ if v < 0 => format!("(-{})", -v),
        _ => v.to_string(),
    }
}

/// A `float` literal that reads back as exactly `v`.
pub fn float_literal(v: f32) -> String {
    let text = format!("{:?}", v.abs());
    let text = if text.contains(['.', 'e']) {
        text
    } else {
        format!("{text}.0")
    };
    if v.is_sign_negative() {
        format!("(-{text}f)")
    } else {
        format!("{text}f")
    }
}
