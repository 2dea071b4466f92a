//! Statements.

use super::*;

pub(super) fn block(pair: Pair<Rule>) -> Result<Block> {
    let span = span_of(&pair);
    let stmts = pair.into_inner().map(statement).collect::<Result<_>>()?;
    Ok(Block { stmts, span })
}

pub(super) fn boxed(pair: Pair<Rule>) -> Result<Box<Stmt>> {
    statement(pair).map(Box::new)
}

pub(super) fn statement(pair: Pair<Rule>) -> Result<Stmt> {
    let span = span_of(&pair);
    let rule = pair.as_rule();
    let mut inner = pair.clone().into_inner();
    let kind = match rule {
        Rule::block => StmtKind::Block(block(pair)?),
        Rule::empty_stmt => StmtKind::Empty,
        Rule::static_assert_decl => StmtKind::StaticAssert(static_assert_decl(pair)?),
        Rule::unsupported_decl | Rule::fn_pointer_decl | Rule::label_stmt => {
            return Err(unsupported(&pair))
        }
        Rule::expr_stmt => StmtKind::Expr(expr(inner.next().unwrap())?),
        Rule::decl_stmt => StmtKind::Decl(var_decl(pair)?),
        Rule::range_for => {
            inner.next();
            let ty = type_spec(inner.next().unwrap())?;
            let name = ident(inner.next().unwrap());
            let range = expr(inner.next().unwrap())?;
            let body = boxed(inner.next().unwrap())?;
            StmtKind::RangeFor {
                ty,
                name,
                range,
                body,
            }
        }
        Rule::local_alias => StmtKind::Alias(local_alias(inner.next().unwrap())?),
        Rule::local_type => StmtKind::LocalType(Box::new(super::local_types::local_type(pair)?)),
        Rule::using_namespace => {
            let name: String = inner.next().unwrap().as_str().split_whitespace().collect();
            namespaces::using_namespace(&name);
            StmtKind::Empty
        }
        Rule::if_stmt => {
            inner.next();
            let mut inner = inner.peekable();
            let is_constexpr = inner
                .next_if(|p| p.as_rule() == Rule::constexpr_kw)
                .is_some();
            let cond = expr(inner.next().unwrap())?;
            let then = boxed(inner.next().unwrap())?;
            let otherwise = inner.nth(1).map(boxed).transpose()?;
            StmtKind::If {
                cond,
                then,
                otherwise,
                is_constexpr,
            }
        }
        Rule::for_stmt => {
            inner.next();
            let init = inner
                .next()
                .unwrap()
                .into_inner()
                .next()
                .map(boxed)
                .transpose()?;
            let cond = inner
                .next()
                .unwrap()
                .into_inner()
                .next()
                .map(expr)
                .transpose()?;
            let step = inner
                .next()
                .unwrap()
                .into_inner()
                .next()
                .map(expr)
                .transpose()?;
            let body = boxed(inner.next().unwrap())?;
            StmtKind::For {
                init,
                cond,
                step,
                body,
            }
        }
        Rule::while_stmt => {
            inner.next();
            let cond = expr(inner.next().unwrap())?;
            StmtKind::While {
                cond,
                body: boxed(inner.next().unwrap())?,
            }
        }
        Rule::do_stmt => {
            inner.next();
            let body = boxed(inner.next().unwrap())?;
            inner.next();
            StmtKind::DoWhile {
                body,
                cond: expr(inner.next().unwrap())?,
            }
        }
        Rule::switch_stmt => {
            inner.next();
            let selector = expr(inner.next().unwrap())?;
            let items = inner.map(switch_item).collect::<Result<_>>()?;
            StmtKind::Switch { selector, items }
        }
        Rule::break_stmt => StmtKind::Break,
        Rule::continue_stmt => StmtKind::Continue,
        Rule::return_stmt => StmtKind::Return(inner.nth(1).map(expr).transpose()?),
        r => unreachable!("statement {r:?}"),
    };
    Ok(Stmt { kind, span })
}

pub(super) fn switch_item(pair: Pair<Rule>) -> Result<SwitchItem> {
    if pair.as_rule() != Rule::case_label {
        return Ok(SwitchItem::Stmt(statement(pair)?));
    }
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let first = inner.next().unwrap();
    let value = match first.as_rule() {
        Rule::case_kw => Some(expr(inner.next().unwrap())?),
        _ => None,
    };
    Ok(SwitchItem::Label(value, span))
}

/// `using T = U;` or `typedef U T;` inside a function.
fn local_alias(pair: Pair<Rule>) -> Result<Alias> {
    if pair.as_rule() == Rule::typedef_decl {
        return typedef_decl(pair, None);
    }
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let name = ident(inner.next().unwrap());
    let ty = type_spec(inner.next().unwrap())?;
    Ok(Alias {
        name,
        ty,
        array: Vec::new(),
        layout: Vec::new(),
        span,
    })
}
