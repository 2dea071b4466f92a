//! Struct operands of built-in operators and conditions, through their
//! conversion functions (C++ [over.match.oper]/7, [over.built],
//! [conv]/4): `i * stride` where `stride` is an `integral_constant<int, 4>`
//! with `operator value_type()` and no user `operator*` takes it, is
//! `i * int(stride)`; `if (mask)` for a struct with `operator bool()` is
//! `if (bool(mask))`.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{arg_type, Value};
use crate::lower::{Lowerer, Result};
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::types::{StructId, Type};
use std::collections::HashMap;

impl Lowerer<'_, '_> {
    /// `v` converted by its struct's conversion function when it is a
    /// struct object with exactly one conversion to an arithmetic type
    /// (scalar or vector; several functions returning that one type, one
    /// per address space, count once), as the built-in operators' operands
    /// are; otherwise `v` itself, which the operator then refuses as it did.
    pub(in crate::lower) fn arithmetic_operand(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Result<Value> {
        let Type::Struct(id) = arg_type(&v) else {
            return Ok(v);
        };
        let Some(to) = self.arithmetic_conversion(id) else {
            return Ok(v);
        };
        match self.conversion_function(fx, &v, &to, false, span)? {
            Some((h, ty)) => Ok(Value::Rv(h, ty)),
            None => Ok(v),
        }
    }

    /// Whether the struct of `v` converts to an arithmetic type (see
    /// [`Self::arithmetic_operand`]).
    pub(in crate::lower) fn converts_to_arithmetic(&self, v: &Value) -> bool {
        match arg_type(v) {
            Type::Struct(id) => self.arithmetic_conversion(id).is_some(),
            _ => false,
        }
    }

    /// The one scalar or vector type struct `id` has a (non-template)
    /// conversion function to; `None` when it has none or several.
    fn arithmetic_conversion(&self, id: StructId) -> Option<Type> {
        let mut found: Option<Type> = None;
        for name in self.conversion_function_names(id) {
            let Some(Symbol::Functions(list)) = self.program.symbols.get(name) else {
                continue;
            };
            for &i in list {
                let f = self.program.functions[i];
                if !f.params.iter().skip(1).all(|p| p.default.is_some()) {
                    continue;
                }
                let Ok(ret) = self.program.resolve_type(&f.ret) else {
                    continue;
                };
                if !matches!(ret, Type::Scalar(_) | Type::Vector(..)) {
                    continue;
                }
                match &found {
                    Some(t) if *t != ret => return None,
                    _ => found = Some(ret),
                }
            }
        }
        found
    }

    /// The symbol names of the conversion functions struct `id` declares
    /// (`S::operator float`), from an index of all structs' built once.
    pub(in crate::lower) fn conversion_function_names(&self, id: StructId) -> &[String] {
        const MARK: &str = "::operator ";
        let index = self.global.conversion_functions.get_or_init(|| {
            let mut index: HashMap<String, Vec<String>> = HashMap::new();
            for (name, symbol) in &self.program.symbols {
                if let (Symbol::Functions(_), Some(at)) = (symbol, name.find(MARK)) {
                    index
                        .entry(name[..at].to_string())
                        .or_default()
                        .push(name.clone());
                }
            }
            // Sorted, so that what callers find does not depend on hash order.
            index.values_mut().for_each(|names| names.sort());
            index
        });
        index
            .get(self.program.struct_name(id))
            .map_or(&[], Vec::as_slice)
    }
}
