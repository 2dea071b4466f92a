//! Loops that never exit, as Tint takes them.
//!
//! WGSL's statement behaviour analysis makes a `loop` whose body can neither
//! `break` out of it nor `return` a shader-creation error ("loop does not
//! exit"), while Metal, as C++, compiles `for (;;) { ... }` without an exit
//! and runs it forever when it is reached (or, without side effects, assumes
//! it is never reached). Such a loop gets `if false { break; }` as its first
//! statement: the analysis sees a way out, the loop still runs exactly as
//! before, and no value changes.

use naga::{Block, Expression, Function, Literal, Span, Statement};

/// Whether some loop of `f` has no exit.
pub(crate) fn has_loop_without_exit(f: &Function) -> bool {
    let mut found = false;
    visit_loops(&f.body, &mut |body, continuing, break_if| {
        found |= !loop_exits(body, continuing, break_if);
    });
    found
}

/// Gives every loop of `f` without an exit an unreachable `break`.
pub(crate) fn add_unreachable_breaks(f: &mut Function) {
    if !has_loop_without_exit(f) {
        return;
    }
    let never = f
        .expressions
        .append(Expression::Literal(Literal::Bool(false)), Span::UNDEFINED);
    add_breaks(&mut f.body, never);
}

fn add_breaks(block: &mut Block, never: naga::Handle<Expression>) {
    for statement in block.iter_mut() {
        match statement {
            Statement::Block(b) => add_breaks(b, never),
            Statement::If { accept, reject, .. } => {
                add_breaks(accept, never);
                add_breaks(reject, never);
            }
            Statement::Switch { cases, .. } => cases
                .iter_mut()
                .for_each(|c| add_breaks(&mut c.body, never)),
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                let exits = loop_exits(body, continuing, *break_if);
                add_breaks(body, never);
                add_breaks(continuing, never);
                if !exits {
                    let mut accept = Block::new();
                    accept.push(Statement::Break, Span::UNDEFINED);
                    let way_out = Statement::If {
                        condition: never,
                        accept,
                        reject: Block::new(),
                    };
                    let old = std::mem::take(body);
                    body.push(way_out, Span::UNDEFINED);
                    for (s, span) in old.span_into_iter() {
                        body.push(s, span);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Calls `f` with the parts of every loop of `block`, nested ones included.
fn visit_loops(
    block: &Block,
    f: &mut impl FnMut(&Block, &Block, Option<naga::Handle<Expression>>),
) {
    for statement in block.iter() {
        match statement {
            Statement::Block(b) => visit_loops(b, f),
            Statement::If { accept, reject, .. } => {
                visit_loops(accept, f);
                visit_loops(reject, f);
            }
            Statement::Switch { cases, .. } => cases.iter().for_each(|c| visit_loops(&c.body, f)),
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                f(body, continuing, *break_if);
                visit_loops(body, f);
                visit_loops(continuing, f);
            }
            _ => {}
        }
    }
}

/// Whether a loop with these parts can be left: a `break_if`, a `break`
/// that belongs to it (not to a nested loop or switch), or a `return`
/// anywhere inside.
fn loop_exits(
    body: &Block,
    continuing: &Block,
    break_if: Option<naga::Handle<Expression>>,
) -> bool {
    break_if.is_some() || leaves(body, true) || leaves(continuing, true)
}

/// Whether `block` returns, or (`own_break`) breaks out of the loop it is
/// directly in.
fn leaves(block: &Block, own_break: bool) -> bool {
    block.iter().any(|statement| match statement {
        Statement::Return { .. } => true,
        Statement::Break => own_break,
        Statement::Block(b) => leaves(b, own_break),
        Statement::If { accept, reject, .. } => {
            leaves(accept, own_break) || leaves(reject, own_break)
        }
        Statement::Switch { cases, .. } => cases.iter().any(|c| leaves(&c.body, false)),
        Statement::Loop {
            body, continuing, ..
        } => leaves(body, false) || leaves(continuing, false),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function_with(body: Block) -> Function {
        Function {
            body,
            ..Function::default()
        }
    }

    fn endless(inner: Block) -> Statement {
        Statement::Loop {
            body: inner,
            continuing: Block::new(),
            break_if: None,
        }
    }

    #[test]
    fn a_loop_with_only_a_break_of_a_nested_switch_has_no_exit() {
        let mut case_body = Block::new();
        case_body.push(Statement::Break, Span::UNDEFINED);
        let mut selector = naga::Arena::new();
        let selector = selector.append(Expression::Literal(Literal::I32(0)), Span::UNDEFINED);
        let mut body = Block::new();
        body.push(
            Statement::Switch {
                selector,
                cases: vec![naga::SwitchCase {
                    value: naga::SwitchValue::Default,
                    body: case_body,
                    fall_through: false,
                }],
            },
            Span::UNDEFINED,
        );
        let mut outer = Block::new();
        outer.push(endless(body), Span::UNDEFINED);
        let mut f = function_with(outer);
        assert!(has_loop_without_exit(&f));
        add_unreachable_breaks(&mut f);
        assert!(!has_loop_without_exit(&f));
    }

    #[test]
    fn a_return_in_a_nested_loop_is_an_exit() {
        let mut inner = Block::new();
        inner.push(Statement::Return { value: None }, Span::UNDEFINED);
        let mut body = Block::new();
        body.push(endless(inner), Span::UNDEFINED);
        let mut outer = Block::new();
        outer.push(endless(body), Span::UNDEFINED);
        assert!(!has_loop_without_exit(&function_with(outer)));
    }
}
