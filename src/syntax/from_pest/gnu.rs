//! GCC/clang attributes, `__attribute__((always_inline, aligned(16)))`.
//!
//! Clang accepts them in most places of a declaration (before, among and
//! after the decl-specifiers, after a declarator, after a function's
//! parameter list, after `struct` and after a struct's closing brace), and
//! the grammar accepts them in those places. Most of them (`always_inline`,
//! `const`, `unused`, `visibility`, ...) only advise the compiler or the
//! linker and are ignored here. Those that would change a type are not:
//! - `packed` and `aligned(N)` change layout; they are kept in the tree as
//!   [`LayoutAttribute`]s where they can apply (structs, data members,
//!   typedefs), and semantic analysis accepts them only when Metal's layout
//!   stays what this translator reproduces (`sema::gnu_layout`); on
//!   variables, parameters and functions they change no type and are
//!   ignored;
//! - attributes that make another type (`vector_size`, `ext_vector_type`,
//!   `matrix_type`, `mode`, `address_space`) are refused.

use super::*;
use crate::diagnostics::Code;

/// The attribute's name without the `__` that GCC allows around it.
fn normalised(name: &str) -> &str {
    let n = name.strip_prefix("__").unwrap_or(name);
    n.strip_suffix("__").unwrap_or(n)
}

/// Attributes that turn a declaration's type into another type.
const TYPE_CHANGING: &[&str] = &[
    "vector_size",
    "ext_vector_type",
    "matrix_type",
    "mode",
    "address_space",
];

/// The layout attributes of one `gnu_attribute` pair; refuses the
/// attributes that change a type.
pub(super) fn attribute(pair: Pair<Rule>) -> Result<Vec<LayoutAttribute>> {
    let mut out = Vec::new();
    for attr in pair.into_inner().filter(|p| p.as_rule() == Rule::gnu_attr) {
        let span = span_of(&attr);
        let mut inner = attr.into_inner();
        let written = inner.next().expect("gnu_attr_name").as_str();
        let args: Vec<Pair<Rule>> = inner.collect();
        let name = normalised(written);
        if TYPE_CHANGING.contains(&name) {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                format!(
                    "`__attribute__(({written}))` changes the declared type; it is not supported"
                ),
            ));
        }
        match name {
            "packed" => out.push(LayoutAttribute::Packed(span)),
            "aligned" => {
                let value = match args.as_slice() {
                    [] => None,
                    [arg] => {
                        let e = arg.clone().into_inner().next().expect("an argument");
                        if e.as_rule() != Rule::cond_expr {
                            return Err(Error::coded(
                                Code::InvalidAttributeArgument,
                                span_of(arg),
                                "expected an alignment in bytes, `aligned(16)`",
                            ));
                        }
                        Some(expr(e)?)
                    }
                    _ => {
                        return Err(Error::coded(
                            Code::InvalidAttributeArgument,
                            span,
                            "`aligned` takes one argument, the alignment in bytes",
                        ))
                    }
                };
                out.push(LayoutAttribute::Aligned(value, span));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The layout attributes among `pairs` (children of a declaration: the
/// `gnu_attribute` ones are read, the others skipped).
pub(super) fn among<'i>(
    pairs: impl IntoIterator<Item = Pair<'i, Rule>>,
) -> Result<Vec<LayoutAttribute>> {
    let mut out = Vec::new();
    for p in pairs {
        if p.as_rule() == Rule::gnu_attribute {
            out.extend(attribute(p)?);
        }
    }
    Ok(out)
}

/// The layout attributes written among a `type_spec`'s qualifiers
/// (`typedef __attribute__((aligned(16))) float F;`), where they apply to
/// the declaration.
pub(super) fn in_type(type_spec: &Pair<Rule>) -> Result<Vec<LayoutAttribute>> {
    let mut out = among(type_spec.clone().into_inner())?;
    for op in type_spec
        .clone()
        .into_inner()
        .filter(|p| p.as_rule() == Rule::ptr_op)
    {
        for ptr in op.into_inner() {
            out.extend(among(ptr.into_inner())?);
        }
    }
    Ok(out)
}

/// Refuses layout attributes on a declaration whose layout they cannot
/// change in a way this translator models (an enum's size, a function).
pub(super) fn refuse_layout(attrs: &[LayoutAttribute], what: &str) -> Result<()> {
    match attrs.first() {
        None => Ok(()),
        Some(a) => Err(Error::coded(
            Code::Unsupported,
            a.span(),
            format!("`{}` on {what} is not supported", a.name()),
        )),
    }
}
