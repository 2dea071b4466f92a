//! Structs with member functions, constructors and static constants.
//!
//! They are lowered to plain declarations here, so that the rest of the
//! pipeline only sees free functions and program-scope constants:
//! - a member function `m` of `S` becomes a free function named `S::m` whose
//!   first parameter is the object, called `this`: by value for a `const`
//!   member, else `thread S&`; a non-const member also gets a `device S&`
//!   twin named `S::m@device`, so that `buf[i].m()` writes the buffer;
//! - a constructor becomes `S S::S(params)`, which declares `S this`, runs the
//!   member initializers and the body, and returns `this`;
//! - `static constant T N = v;` becomes the program-scope constant `S::N`.
//!
//! Names containing `::` cannot be written by a user, so they never clash.
//! Inside a body `this->x` becomes `this.x` and `*this` becomes `this`;
//! unqualified member names are resolved by lowering (via `this`).

use super::*;

/// The suffix of the `device S&` twin of a non-const member function.
pub const DEVICE_TWIN: &str = "@device";

/// The name under which member `member` of struct `s` is declared.
pub fn member_name(s: &str, member: &str) -> String {
    format!("{s}::{member}")
}

/// `struct S { ... };`: the struct and the declarations its members become.
pub(super) fn struct_decl(pair: Pair<Rule>) -> Result<(StructDecl, Vec<Item>)> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    inner.next(); // struct_kw
    let name = ident(inner.next().unwrap());
    let mut members = Vec::new();
    let mut items = Vec::new();
    for p in inner {
        match p.as_rule() {
            Rule::member_decl => members.extend(member_decl(p)?),
            Rule::static_member => items.push(static_member(&name, p)?),
            Rule::member_fn => items.extend(member_fn(&name, p)?),
            Rule::ctor_def => items.push(Item::Function(constructor(&name, p)?)),
            Rule::access_spec | Rule::empty_decl => {}
            r => unreachable!("struct part {r:?}"),
        }
    }
    Ok((
        StructDecl {
            name,
            members,
            span,
        },
        items,
    ))
}

/// `static constant int N = 4;` → the program constant `S::N`.
fn static_member(s: &Ident, pair: Pair<Rule>) -> Result<Item> {
    let mut decl = var_decl(pair)?;
    for d in &mut decl.declarators {
        d.name.name = member_name(&s.name, &d.name.name);
    }
    Ok(Item::Global(decl))
}

fn unsupported(span: Span, message: &str) -> Error {
    Error {
        span,
        message: message.to_string(),
    }
}

/// A member function, as one or two free functions.
fn member_fn(s: &Ident, pair: Pair<Rule>) -> Result<Vec<Item>> {
    let span = span_of(&pair);
    let (mut ret, mut name, mut params, mut body, mut is_const) = (None, None, vec![], None, false);
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::virtual_kw | Rule::pure_spec => {
                return Err(unsupported(
                    span_of(&p),
                    "virtual functions are not supported: Metal has no virtual dispatch",
                ))
            }
            Rule::fn_specifier if p.as_str() == "static" => {
                return Err(unsupported(
                    span_of(&p),
                    "static member functions are not supported yet",
                ))
            }
            Rule::fn_specifier | Rule::fn_declaration_end => {}
            Rule::type_spec => ret = Some(type_spec(p)?),
            Rule::ident | Rule::operator_name => name = Some(fn_name(p)),
            Rule::param_list => {
                for param in p.into_inner().filter(|x| x.as_rule() == Rule::param) {
                    params.push(param_of(param)?);
                }
            }
            Rule::const_qual => is_const = true,
            Rule::block => body = Some(block(p)?),
            r => unreachable!("member function part {r:?}"),
        }
    }
    let name = name.unwrap();
    let Some(mut body) = body else {
        return Err(unsupported(
            name.span,
            "member functions defined outside their struct are not supported yet",
        ));
    };
    let mut ret = ret.unwrap();
    // `S& operator+=(..) { ...; return *this; }`: the result is the object
    // itself, which the caller already has; the helper returns nothing.
    let returns_self = ret.ptr_ops.contains(&PtrOp::Reference);
    if returns_self {
        ret = void_type(ret.span);
    }
    rewrite_block(&mut body, &mut |e| this_expr(e));
    if returns_self {
        drop_self_returns(&mut body);
    }
    let f = FunctionDecl {
        stage: None,
        attributes: Vec::new(),
        ret,
        name: Ident {
            name: member_name(&s.name, &name.name),
            span: name.span,
        },
        params,
        body: Some(body),
        span,
    };
    if is_const {
        return Ok(vec![Item::Function(with_this(f, this_type(s, None)))]);
    }
    let mut device = with_this(f.clone(), this_type(s, Some(AddressSpace::Device)));
    device.name.name.push_str(DEVICE_TWIN);
    Ok(vec![
        Item::Function(with_this(f, this_type(s, Some(AddressSpace::Thread)))),
        Item::Function(device),
    ])
}

/// A function name: an identifier or `operator+` (without blanks).
pub(super) fn fn_name(p: Pair<Rule>) -> Ident {
    let mut id = ident(p);
    id.name.retain(|c| !c.is_whitespace());
    id
}

/// `S(params) : a(x), b{y} { body }` → `S S::S(params)`.
fn constructor(s: &Ident, pair: Pair<Rule>) -> Result<FunctionDecl> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let name = ident(inner.next().unwrap());
    if name.name != s.name {
        return Err(unsupported(
            name.span,
            &format!(
                "expected a member declaration; a constructor of `{}` must be named `{}`",
                s.name, s.name
            ),
        ));
    }
    let this = || name_expr("this", name.span);
    let mut stmts = vec![Stmt {
        kind: StmtKind::Decl(VarDecl {
            ty: this_type(s, None),
            declarators: vec![Declarator {
                name: Ident {
                    name: "this".into(),
                    span: name.span,
                },
                array: Vec::new(),
                init: None,
                attributes: Vec::new(),
                span: name.span,
            }],
            span: name.span,
        }),
        span: name.span,
    }];
    let mut params = Vec::new();
    let mut body = None;
    for p in inner {
        match p.as_rule() {
            Rule::param_list => {
                for param in p.into_inner().filter(|x| x.as_rule() == Rule::param) {
                    params.push(param_of(param)?);
                }
            }
            Rule::ctor_inits => {
                for m in p.into_inner() {
                    stmts.extend(member_init(m, &this)?);
                }
            }
            Rule::block => body = Some(block(p)?),
            r => unreachable!("constructor part {r:?}"),
        }
    }
    let mut body = body.unwrap();
    rewrite_block(&mut body, &mut |e| this_expr(e));
    // `return;` in a constructor returns the object being built.
    rewrite_returns(&mut body, &mut |r| {
        if r.is_none() {
            *r = Some(this());
        }
    });
    stmts.append(&mut body.stmts);
    stmts.push(Stmt {
        kind: StmtKind::Return(Some(this())),
        span: body.span,
    });
    Ok(FunctionDecl {
        stage: None,
        attributes: Vec::new(),
        ret: this_type(s, None),
        name: Ident {
            name: member_name(&s.name, &s.name),
            span: name.span,
        },
        params,
        body: Some(Block {
            stmts,
            span: body.span,
        }),
        span,
    })
}

/// `a(x)` or `a{x, y}` in a constructor's initializer list: `this.a = ...;`.
fn member_init(pair: Pair<Rule>, this: &dyn Fn() -> Expr) -> Result<Option<Stmt>> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let member = ident(inner.next().unwrap());
    let rest: Vec<Pair<Rule>> = inner.collect();
    let value = match rest.as_slice() {
        [] => return Ok(None),
        [p] if p.as_rule() == Rule::init_list => {
            let Init::List(items, s) = init_list(p.clone())? else {
                unreachable!()
            };
            Expr {
                kind: ExprKind::InitList(items),
                span: s,
            }
        }
        [p] => expr(p.clone())?,
        _ => {
            return Err(unsupported(
                span,
                "member initializers with several arguments are not supported yet; use braces",
            ))
        }
    };
    let target = Expr {
        kind: ExprKind::Member(Box::new(this()), member, false),
        span,
    };
    Ok(Some(Stmt {
        kind: StmtKind::Expr(Expr {
            kind: ExprKind::Assign(None, Box::new(target), Box::new(value)),
            span,
        }),
        span,
    }))
}

fn name_expr(name: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(vec![name.to_string()]),
        span,
    }
}

fn void_type(span: Span) -> TypeSpec {
    TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: vec!["void".into()],
        args: Vec::new(),
        ptr_ops: Vec::new(),
        name_span: span,
        span,
    }
}

/// `S` (by value) or `space S&`.
fn this_type(s: &Ident, space: Option<AddressSpace>) -> TypeSpec {
    TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: space.map(|a| (a, s.span)),
        path: vec![s.name.clone()],
        args: Vec::new(),
        ptr_ops: if space.is_some() {
            vec![PtrOp::Reference]
        } else {
            Vec::new()
        },
        name_span: s.span,
        span: s.span,
    }
}

/// Prepends the object parameter `this`.
fn with_this(mut f: FunctionDecl, ty: TypeSpec) -> FunctionDecl {
    let span = f.name.span;
    f.params.insert(
        0,
        Param {
            ty,
            name: Some(Ident {
                name: "this".into(),
                span,
            }),
            array: Vec::new(),
            attributes: Vec::new(),
            default: None,
            span,
        },
    );
    f
}

fn is_this(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == "this")
}

/// `this->x` → `this.x`, `*this` → `this` (`this` is the object itself).
fn this_expr(e: &mut Expr) {
    match &mut e.kind {
        ExprKind::Member(base, _, arrow) if is_this(base) => *arrow = false,
        ExprKind::Unary(UnaryOp::Deref, inner) if is_this(inner) => {
            *e = name_expr("this", e.span);
        }
        _ => {}
    }
}

/// `return this;` (from `return *this;`) → `return;`.
fn drop_self_returns(b: &mut Block) {
    rewrite_returns(b, &mut |r| {
        if r.as_ref().is_some_and(is_this) {
            *r = None;
        }
    });
}

/// Applies `f` to every expression in `b`, children first.
fn rewrite_block(b: &mut Block, f: &mut dyn FnMut(&mut Expr)) {
    for s in &mut b.stmts {
        rewrite_stmt(s, f, &mut |_| {});
    }
}

/// Applies `f` to every `return` statement's value in `b`.
fn rewrite_returns(b: &mut Block, f: &mut dyn FnMut(&mut Option<Expr>)) {
    for s in &mut b.stmts {
        rewrite_stmt(s, &mut |_| {}, f);
    }
}

fn rewrite_stmt(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr), r: &mut dyn FnMut(&mut Option<Expr>)) {
    match &mut s.kind {
        StmtKind::Block(b) => b.stmts.iter_mut().for_each(|s| rewrite_stmt(s, f, r)),
        StmtKind::Decl(d) => d.declarators.iter_mut().for_each(|d| {
            d.init.iter_mut().for_each(|i| rewrite_init(i, f));
        }),
        StmtKind::Expr(e) => rewrite_expr(e, f),
        StmtKind::If {
            cond,
            then,
            otherwise,
        } => {
            rewrite_expr(cond, f);
            rewrite_stmt(then, f, r);
            otherwise.iter_mut().for_each(|o| rewrite_stmt(o, f, r));
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            init.iter_mut().for_each(|i| rewrite_stmt(i, f, r));
            cond.iter_mut().for_each(|c| rewrite_expr(c, f));
            step.iter_mut().for_each(|c| rewrite_expr(c, f));
            rewrite_stmt(body, f, r);
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
            rewrite_expr(cond, f);
            rewrite_stmt(body, f, r);
        }
        StmtKind::Switch { selector, items } => {
            rewrite_expr(selector, f);
            for item in items {
                if let SwitchItem::Stmt(s) = item {
                    rewrite_stmt(s, f, r);
                }
            }
        }
        StmtKind::Return(value) => {
            value.iter_mut().for_each(|v| rewrite_expr(v, f));
            r(value);
        }
        StmtKind::Break | StmtKind::Continue | StmtKind::Empty | StmtKind::StaticAssert(_) => {}
    }
}

fn rewrite_init(i: &mut Init, f: &mut dyn FnMut(&mut Expr)) {
    match i {
        Init::Expr(e) => rewrite_expr(e, f),
        Init::List(items, _) => items.iter_mut().for_each(|i| rewrite_init(i, f)),
        Init::Paren(args, _) => args.iter_mut().for_each(|e| rewrite_expr(e, f)),
    }
}

fn rewrite_expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    match &mut e.kind {
        ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Index(a, b) => {
            rewrite_expr(a, f);
            rewrite_expr(b, f);
        }
        ExprKind::Unary(_, a)
        | ExprKind::PostIncDec(_, a)
        | ExprKind::Member(a, _, _)
        | ExprKind::Cast(_, _, a) => rewrite_expr(a, f),
        ExprKind::Ternary(c, a, b) => {
            rewrite_expr(c, f);
            rewrite_expr(a, f);
            rewrite_expr(b, f);
        }
        ExprKind::Call(callee, args) => {
            rewrite_expr(callee, f);
            args.iter_mut().for_each(|a| rewrite_expr(a, f));
        }
        ExprKind::InitList(items) | ExprKind::BraceConstruct(_, items) => {
            items.iter_mut().for_each(|i| rewrite_init(i, f))
        }
        ExprKind::Comma(items) => items.iter_mut().for_each(|a| rewrite_expr(a, f)),
        _ => {}
    }
    f(e);
}
