//! Expressions: pest's Pratt parser for binary operators, then unary,
//! postfix and primary forms, and literals.

use super::*;
use crate::diagnostics::Code;

pub(super) fn pratt() -> &'static PrattParser<Rule> {
    static PRATT: OnceLock<PrattParser<Rule>> = OnceLock::new();
    PRATT.get_or_init(|| {
        PrattParser::new()
            .op(Op::infix(Rule::op_lor, Assoc::Left))
            .op(Op::infix(Rule::op_land, Assoc::Left))
            .op(Op::infix(Rule::op_bor, Assoc::Left))
            .op(Op::infix(Rule::op_bxor, Assoc::Left))
            .op(Op::infix(Rule::op_band, Assoc::Left))
            .op(Op::infix(Rule::op_eq, Assoc::Left) | Op::infix(Rule::op_ne, Assoc::Left))
            .op(Op::infix(Rule::op_lt, Assoc::Left)
                | Op::infix(Rule::op_gt, Assoc::Left)
                | Op::infix(Rule::op_le, Assoc::Left)
                | Op::infix(Rule::op_ge, Assoc::Left))
            .op(Op::infix(Rule::op_shl, Assoc::Left) | Op::infix(Rule::op_shr, Assoc::Left))
            .op(Op::infix(Rule::op_add, Assoc::Left) | Op::infix(Rule::op_sub, Assoc::Left))
            .op(Op::infix(Rule::op_mul, Assoc::Left)
                | Op::infix(Rule::op_div, Assoc::Left)
                | Op::infix(Rule::op_mod, Assoc::Left))
    })
}

pub(super) fn binary_op(rule: Rule) -> BinaryOp {
    use BinaryOp::*;
    match rule {
        Rule::op_lor => LogicalOr,
        Rule::op_land => LogicalAnd,
        Rule::op_bor => BitOr,
        Rule::op_bxor => BitXor,
        Rule::op_band => BitAnd,
        Rule::op_eq => Eq,
        Rule::op_ne => Ne,
        Rule::op_lt => Lt,
        Rule::op_gt => Gt,
        Rule::op_le => Le,
        Rule::op_ge => Ge,
        Rule::op_shl => Shl,
        Rule::op_shr => Shr,
        Rule::op_add => Add,
        Rule::op_sub => Sub,
        Rule::op_mul => Mul,
        Rule::op_div => Div,
        Rule::op_mod => Rem,
        r => unreachable!("binary operator {r:?}"),
    }
}

pub(super) fn compound_op(text: &str) -> Option<BinaryOp> {
    use BinaryOp::*;
    Some(match text {
        "+=" => Add,
        "-=" => Sub,
        "*=" => Mul,
        "/=" => Div,
        "%=" => Rem,
        "&=" => BitAnd,
        "|=" => BitOr,
        "^=" => BitXor,
        "<<=" => Shl,
        ">>=" => Shr,
        _ => return None,
    })
}

pub(super) fn mk(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

/// Builds any expression rule.
pub(super) fn expr(pair: Pair<Rule>) -> Result<Expr> {
    let span = span_of(&pair);
    match pair.as_rule() {
        Rule::expr => {
            let mut items: Vec<Expr> = pair.into_inner().map(expr).collect::<Result<_>>()?;
            Ok(if items.len() == 1 {
                items.pop().unwrap()
            } else {
                mk(ExprKind::Comma(items), span)
            })
        }
        Rule::assign_expr => {
            let mut inner = pair.into_inner();
            let lhs = expr(inner.next().unwrap())?;
            let Some(op) = inner.next() else {
                return Ok(lhs);
            };
            let rhs_pair = inner.next().unwrap();
            let rhs = match rhs_pair.as_rule() {
                Rule::init_list => {
                    let s = span_of(&rhs_pair);
                    match init_list(rhs_pair)? {
                        Init::List(items, _) => mk(ExprKind::InitList(items), s),
                        _ => unreachable!(),
                    }
                }
                _ => expr(rhs_pair)?,
            };
            let compound = compound_op(op.as_str());
            Ok(mk(
                ExprKind::Assign(compound, Box::new(lhs), Box::new(rhs)),
                span,
            ))
        }
        Rule::cond_expr | Rule::template_cond => {
            let mut inner = pair.into_inner();
            let cond = expr(inner.next().unwrap())?;
            match (inner.next(), inner.next()) {
                (Some(a), Some(b)) => Ok(mk(
                    ExprKind::Ternary(Box::new(cond), Box::new(expr(a)?), Box::new(expr(b)?)),
                    span,
                )),
                _ => Ok(cond),
            }
        }
        // `return {a, b};`, `f({a, b})`: a braced list where a value is
        // copy-initialized from it.
        Rule::init_list => match init_list(pair)? {
            Init::List(items, _) => Ok(mk(ExprKind::InitList(items), span)),
            _ => unreachable!("an init_list is a braced list"),
        },
        Rule::binary_expr | Rule::shift_expr | Rule::arith_expr => binary(pair.into_inner()),
        Rule::unary_expr => unary(pair),
        Rule::postfix_expr => postfix(pair),
        _ => primary(pair),
    }
}

pub(super) fn binary(pairs: Pairs<Rule>) -> Result<Expr> {
    pratt()
        .map_primary(expr)
        .map_infix(|lhs, op, rhs| {
            let (lhs, rhs) = (lhs?, rhs?);
            let span = lhs.span.join(rhs.span);
            Ok(mk(
                ExprKind::Binary(binary_op(op.as_rule()), Box::new(lhs), Box::new(rhs)),
                span,
            ))
        })
        .parse(pairs)
}

pub(super) fn unary(pair: Pair<Rule>) -> Result<Expr> {
    let mut prefixes: Vec<Pair<Rule>> = pair.into_inner().collect();
    let operand = prefixes.pop().unwrap();
    let mut e = expr(operand)?;
    for p in prefixes.into_iter().rev() {
        let op = p.into_inner().next().unwrap();
        let span = span_of(&op).join(e.span);
        let kind = match op.as_rule() {
            Rule::c_cast => {
                let ty = type_spec(op.into_inner().next().unwrap())?;
                ExprKind::Cast(CastKind::CStyle, ty, Box::new(e))
            }
            r => {
                let u = match r {
                    Rule::pre_inc => UnaryOp::PreInc,
                    Rule::pre_dec => UnaryOp::PreDec,
                    Rule::neg => UnaryOp::Neg,
                    Rule::plus => UnaryOp::Plus,
                    Rule::not => UnaryOp::Not,
                    Rule::bit_not => UnaryOp::BitNot,
                    Rule::deref => UnaryOp::Deref,
                    Rule::addr_of => UnaryOp::AddrOf,
                    r => unreachable!("prefix {r:?}"),
                };
                ExprKind::Unary(u, Box::new(e))
            }
        };
        e = mk(kind, span);
    }
    Ok(e)
}

pub(super) fn postfix(pair: Pair<Rule>) -> Result<Expr> {
    let mut inner = pair.into_inner();
    let mut e = expr(inner.next().unwrap())?;
    for op in inner {
        let span = e.span.join(span_of(&op));
        let kind = match op.as_rule() {
            Rule::call_args => ExprKind::Call(
                Box::new(e),
                super::with_expansions(op.into_inner(), expr, |e, dots| {
                    Ok(super::pack_expansion(e, dots))
                })?,
            ),
            Rule::index => ExprKind::Index(
                Box::new(e),
                Box::new(expr(op.into_inner().next().unwrap())?),
            ),
            Rule::member | Rule::arrow => {
                let arrow = op.as_rule() == Rule::arrow;
                let name = op.into_inner().next().unwrap();
                if name.as_rule() == Rule::member_template_id {
                    let mut inner = name
                        .into_inner()
                        .skip_while(|p| p.as_rule() == Rule::template_kw);
                    let method = super::ident(inner.next().unwrap());
                    let args = template_args(inner.next().unwrap())?;
                    let member = mk(ExprKind::Member(Box::new(e), method, arrow), span);
                    ExprKind::MemberTemplate(Box::new(member), args)
                } else {
                    ExprKind::Member(Box::new(e), member_name(name), arrow)
                }
            }
            Rule::post_inc => ExprKind::PostIncDec(true, Box::new(e)),
            Rule::post_dec => ExprKind::PostIncDec(false, Box::new(e)),
            r => unreachable!("postfix {r:?}"),
        };
        e = mk(kind, span);
    }
    Ok(e)
}

/// The member after `.` or `->`: a name, or `operator float` of a
/// conversion function called by name (`this->operator float()`).
fn member_name(p: Pair<Rule>) -> Ident {
    match p.as_rule() {
        Rule::conversion_id => {
            let ty = p.into_inner().nth(1).expect("the conversion's type");
            members::conversion_name(&ty)
        }
        _ => ident(p),
    }
}

pub(super) fn primary(pair: Pair<Rule>) -> Result<Expr> {
    let span = span_of(&pair);
    let kind = match pair.as_rule() {
        Rule::int_lit => int_literal(pair.as_str(), span)?,
        Rule::char_lit => char_literal(pair.as_str(), span)?,
        Rule::float_lit => float_literal(pair.as_str(), span)?,
        Rule::bool_lit => ExprKind::Bool(pair.as_str() == "true"),
        Rule::string_expr => ExprKind::Str(
            pair.into_inner()
                .map(|lit| lit.as_str().trim_matches('"').to_owned())
                .collect(),
        ),
        Rule::unsupported_expr => return Err(unsupported(&pair)),
        Rule::sizeof_pack => {
            let mut inner = pair.into_inner();
            let kw = inner.next().unwrap();
            if kw.as_str() != "sizeof" {
                return Err(Error::coded(
                    Code::Syntax,
                    span_of(&kw),
                    format!("expected `sizeof` before `...`, found `{}`", kw.as_str()),
                ));
            }
            ExprKind::SizeofPack(ident(inner.nth(1).unwrap()))
        }
        Rule::fold_expr => fold(pair)?,
        Rule::sizeof_expr => {
            let mut inner = pair.into_inner();
            let query = match inner.next().unwrap().as_str() {
                "alignof" => TypeQuery::Align,
                "__is_empty" => TypeQuery::IsEmpty,
                _ => TypeQuery::Size,
            };
            let operand = inner.next().unwrap();
            let operand = match operand.as_rule() {
                Rule::type_spec => SizeOperand::Type(type_spec(operand)?),
                _ => SizeOperand::Expr(Box::new(expr(operand)?)),
            };
            ExprKind::SizeOf { query, operand }
        }
        Rule::lambda_expr => ExprKind::Lambda(Box::new(lambda(pair)?)),
        Rule::paren_expr => {
            return expr(pair.into_inner().next().unwrap()).map(|mut e| {
                e.span = span;
                e
            })
        }
        Rule::name => ExprKind::Name(path(pair.into_inner().next().unwrap())),
        Rule::operator_call_name => {
            let name: String = pair.as_str().split_whitespace().collect();
            ExprKind::Name(vec![name])
        }
        // `operator float()` in a member function: the member, on `this`.
        Rule::conversion_id => ExprKind::Name(vec![member_name(pair).name]),
        // `unsigned(x)` calls the type's name, as `uint(x)` does; the words
        // are joined as a type spelled so is (`unsigned int`).
        Rule::multiword_cast => {
            let words: Vec<&str> = pair.as_str().split_whitespace().collect();
            ExprKind::Name(vec![words.join(" ")])
        }
        Rule::cast_call => {
            let mut inner = pair.into_inner();
            let kind = match inner.next().unwrap().as_str() {
                "static_cast" => CastKind::Static,
                "reinterpret_cast" => CastKind::Reinterpret,
                "const_cast" => CastKind::Const,
                _ => CastKind::AsType,
            };
            let mut ty = type_spec(inner.next().unwrap())?;
            let mut operand = inner.next().unwrap();
            if operand.as_rule() == Rule::abstract_array_ref {
                let dims = operand
                    .into_inner()
                    .map(super::array_suffix)
                    .collect::<Result<Vec<_>>>()?;
                ty = super::declarators::array_reference(ty, dims, PtrOp::Reference);
                operand = inner.next().unwrap();
            }
            ExprKind::Cast(kind, ty, Box::new(expr(operand)?))
        }
        Rule::templated_name | Rule::template_call | Rule::trait_value | Rule::template_id => {
            let mut inner = pair.into_inner();
            let name = path(inner.next().unwrap());
            ExprKind::Templated(name, template_args(inner.next().unwrap())?)
        }
        Rule::typename_expr => return primary(pair.into_inner().nth(1).unwrap()),
        // `decltype(e)::m` is the path `decltype::m` with the operand as
        // argument, as `decltype(e)` is as a type.
        Rule::decltype_member => {
            let mut inner = pair.into_inner();
            let operand = inner.next().unwrap().into_inner().nth(1).unwrap();
            let mut name = vec!["decltype".to_string()];
            name.extend(inner.map(|s| s.into_inner().next().unwrap().as_str().to_string()));
            ExprKind::Templated(name, vec![TemplateArg::Expr(expr(operand)?)])
        }
        // `Traits<T>::value`: the member names follow the template's path
        // (sema splits them off again, see `sema::struct_templates`).
        Rule::scoped_template => {
            let mut inner = pair.into_inner();
            let mut name = path(inner.next().unwrap());
            let args = template_args(inner.next().unwrap())?;
            name.extend(inner.map(|s| s.into_inner().next().unwrap().as_str().to_string()));
            ExprKind::Templated(name, args)
        }
        // `P<float>{a, b}` is built as `(P<float>){a, b}`: a cast of the
        // list, which lowering constructs like `T{a, b}`.
        Rule::templated_brace => {
            let mut inner = pair.into_inner();
            let name_pair = inner.next().unwrap();
            let name_span = span_of(&name_pair);
            let ty = TypeSpec {
                is_const: false,
                is_constexpr: false,
                space: None,
                path: path(name_pair),
                args: template_args(inner.next().unwrap())?,
                ptr_ops: Vec::new(),
                name_span,
                span: name_span,
            };
            let list = init_list(inner.next().unwrap())?;
            let Init::List(items, list_span) = list else {
                unreachable!()
            };
            let list = mk(ExprKind::InitList(items), list_span);
            ExprKind::Cast(CastKind::CStyle, ty, Box::new(list))
        }
        Rule::compound_literal => {
            let mut inner = pair.into_inner();
            let ty = type_spec(inner.next().unwrap())?;
            let Init::List(items, list_span) = init_list(inner.next().unwrap())? else {
                unreachable!("an init_list is a braced list")
            };
            let list = mk(ExprKind::InitList(items), list_span);
            ExprKind::Cast(CastKind::CStyle, ty, Box::new(list))
        }
        Rule::brace_construct => {
            let mut inner = pair.into_inner();
            let name = path(inner.next().unwrap());
            match init_list(inner.next().unwrap())? {
                Init::List(items, _) => ExprKind::BraceConstruct(name, items),
                _ => unreachable!(),
            }
        }
        r => unreachable!("primary {r:?}"),
    };
    Ok(mk(kind, span))
}

pub(super) fn int_literal(text: &str, span: Span) -> Result<ExprKind> {
    let lower = text.to_ascii_lowercase();
    let digits_end = lower.trim_end_matches(['u', 'l']).len();
    let (digits, suffix_text) = lower.split_at(digits_end);
    let suffix = match (suffix_text.contains('u'), suffix_text.contains('l')) {
        (false, false) => LiteralSuffix::None,
        (true, false) => LiteralSuffix::Unsigned,
        (false, true) => LiteralSuffix::Long,
        (true, true) => LiteralSuffix::UnsignedLong,
    };
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = digits.strip_prefix("0b") {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    let value = u64::from_str_radix(body, radix).map_err(|_| {
        Error::coded(
            Code::LiteralOutOfRange,
            span,
            format!("integer literal `{text}` is too large"),
        )
    })?;
    Ok(ExprKind::Int {
        value,
        suffix,
        non_decimal: radix != 10,
    })
}

/// `'a'`: a `char` of the character's value (C++ [lex.ccon]), written as
/// `static_cast<char>(97)`; the simple escapes, octal and hexadecimal.
fn char_literal(text: &str, span: Span) -> Result<ExprKind> {
    let body = &text[1..text.len() - 1];
    let value = match body.strip_prefix('\\') {
        None => body.chars().next().map_or(0, u32::from),
        Some(esc) => match esc {
            "n" => 10,
            "t" => 9,
            "r" => 13,
            "a" => 7,
            "b" => 8,
            "f" => 12,
            "v" => 11,
            "\\" | "'" | "\"" | "?" => u32::from(esc.as_bytes()[0]),
            _ if esc.starts_with('x') => u32::from_str_radix(&esc[1..], 16).unwrap_or(u32::MAX),
            _ if esc.bytes().all(|b| b.is_ascii_digit()) => {
                u32::from_str_radix(esc, 8).unwrap_or(u32::MAX)
            }
            _ => {
                return Err(Error::coded(
                    Code::Syntax,
                    span,
                    format!("unknown escape sequence `\\{esc}` in a character literal"),
                ))
            }
        },
    };
    // clang: a character outside the basic range is a multi-character
    // literal of type `int`, or does not fit `char`.
    if value > 0xFF || (value > 0x7F && !body.starts_with('\\')) {
        return Err(Error::coded(
            Code::LiteralOutOfRange,
            span,
            format!("character literal {text} does not fit in `char`"),
        ));
    }
    let char_type = TypeSpec {
        path: vec!["char".into()],
        name_span: span,
        span,
        ..Default::default()
    };
    let int = Expr {
        kind: ExprKind::Int {
            value: u64::from(value),
            suffix: LiteralSuffix::None,
            non_decimal: false,
        },
        span,
    };
    Ok(ExprKind::Cast(CastKind::Static, char_type, Box::new(int)))
}

pub(super) fn float_literal(text: &str, span: Span) -> Result<ExprKind> {
    let lower = text.to_ascii_lowercase();
    let (body, suffix) = if let Some(b) = lower.strip_suffix("bf") {
        (b, LiteralSuffix::BFloat)
    } else if let Some(b) = lower.strip_suffix('f') {
        (b, LiteralSuffix::Float)
    } else if let Some(b) = lower.strip_suffix('h') {
        (b, LiteralSuffix::Half)
    } else if let Some(b) = lower.strip_suffix('l') {
        (b, LiteralSuffix::Long)
    } else {
        (lower.as_str(), LiteralSuffix::None)
    };
    let value: f64 = body.parse().map_err(|_| {
        Error::coded(
            Code::Syntax,
            span,
            format!("invalid floating-point literal `{text}`"),
        )
    })?;
    // Metal has no `double`: every literal is a `float` (or a `half`), and
    // one that rounds to infinity there is an error, not an `inf`.
    let (ty, overflows, max) = match suffix {
        LiteralSuffix::Half => ("half", half::f16::from_f64(value).is_infinite(), "65504"),
        _ => ("float", (value as f32).is_infinite(), "3.40282347e38"),
    };
    if overflows {
        return Err(Error::coded(
            Code::LiteralOutOfRange,
            span,
            format!(
                "floating-point literal `{text}` is out of range for `{ty}` (the largest is {max})"
            ),
        ));
    }
    Ok(ExprKind::Float { value, suffix })
}

/// `(xs op ...)`, `(... op xs)`, `(a op ... op b)`. Of the binary form the
/// parser cannot tell which operand is the pack: it is kept as a right
/// fold over `a` and instantiation swaps it where `b` is the pack
/// (`sema::subst`).
fn fold(pair: Pair<Rule>) -> Result<ExprKind> {
    let parts: Vec<Pair<Rule>> = pair.into_inner().collect();
    let op_of = |p: &Pair<Rule>| -> Option<BinaryOp> {
        let op = p.clone().into_inner().next().unwrap();
        match op.as_rule() {
            Rule::fold_comma => None,
            _ => Some(binary_op(op.as_rule())),
        }
    };
    Ok(match parts.as_slice() {
        [dots, op, e] if dots.as_rule() == Rule::pack_ellipsis => ExprKind::Fold {
            op: op_of(op),
            pattern: Box::new(expr(e.clone())?),
            init: None,
            left: true,
        },
        [e, op, _dots] => ExprKind::Fold {
            op: op_of(op),
            pattern: Box::new(expr(e.clone())?),
            init: None,
            left: false,
        },
        [e, op, _dots, op2, init] => {
            if op_of(op) != op_of(op2) {
                return Err(Error::coded(
                    Code::Syntax,
                    span_of(op2),
                    "the operators of a binary fold expression must be the same",
                ));
            }
            ExprKind::Fold {
                op: op_of(op),
                pattern: Box::new(expr(e.clone())?),
                init: Some(Box::new(expr(init.clone())?)),
                left: false,
            }
        }
        _ => unreachable!("fold expression shape"),
    })
}

/// `[captures](params) specifiers -> ret { body }`.
fn lambda(pair: Pair<Rule>) -> Result<Lambda> {
    let mut l = Lambda {
        default_by_reference: None,
        captures: Vec::new(),
        unsupported_capture: None,
        params: Vec::new(),
        ret: None,
        body: Block::default(),
        mutable: false,
    };
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::lambda_captures => {
                for c in p.into_inner() {
                    match c.as_rule() {
                        Rule::capture_default => {
                            l.default_by_reference = Some(c.as_str().trim() == "&")
                        }
                        _ => {
                            let span = span_of(&c);
                            let parts: Vec<Pair<Rule>> = c.into_inner().collect();
                            match parts.as_slice() {
                                [r, name] if r.as_rule() == Rule::by_reference => {
                                    l.captures.push((super::ident(name.clone()), true))
                                }
                                [name] if name.as_rule() == Rule::ident => {
                                    l.captures.push((super::ident(name.clone()), false))
                                }
                                _ => {
                                    l.unsupported_capture.get_or_insert(span);
                                }
                            }
                        }
                    }
                }
            }
            Rule::param_list => {
                for param in p.into_inner().filter(|x| x.as_rule() == Rule::param) {
                    l.params.push(super::param_of(param)?);
                }
            }
            Rule::lambda_specifier => l.mutable |= p.as_str() == "mutable",
            Rule::type_spec => l.ret = Some(super::type_spec(p)?),
            Rule::block => l.body = super::block(p)?,
            r => unreachable!("lambda part {r:?}"),
        }
    }
    Ok(l)
}
