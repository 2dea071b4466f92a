//! Names for the function type of a function template's specialisation,
//! `typedef decltype(f<float4, 1>) f_t;` (or `using f_t = decltype(...);`),
//! as llama.cpp's Metal kernels declare them to instantiate many
//! specialisations with one type: `template [[host_name("f_f32")]] kernel
//! f_t f<float, 1>;`.
//!
//! C++ requires the named type to be the specialisation's own function type
//! ([temp.explicit]/4: the declaration must match one), so an instantiation
//! through such a name is taken with the template's own parameters, as
//! `decltype(f<T>) f<T>` is; only the names are remembered, while the unit
//! is built, in source order (a name must be declared before it is used).

use std::cell::RefCell;
use std::collections::HashSet;

thread_local! {
    static ALIASES: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

/// Forgets every alias: called before each translation unit.
pub(super) fn reset() {
    ALIASES.with(|a| a.borrow_mut().clear());
}

/// Records `name` as the function type of a template specialisation.
pub(super) fn declare(name: &str) {
    ALIASES.with(|a| a.borrow_mut().insert(name.to_string()));
}

/// Whether `name` was declared by [`declare`].
pub(super) fn is_alias(name: &str) -> bool {
    ALIASES.with(|a| a.borrow().contains(name))
}
