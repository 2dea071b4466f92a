//! "did you mean" hints for names that resolve to nothing.

use super::{Program, Symbol};
use crate::diagnostics::suggest;

impl Program<'_> {
    /// Adds the notes `errors` were to get once reported ([`super::Hint`]).
    pub fn complete_hints(&self, errors: Vec<super::Error>) -> Vec<super::Error> {
        errors
            .into_iter()
            .map(|mut e| {
                if let Some(super::Hint::TypeName(name)) = e.hint.take() {
                    e.notes.extend(self.type_name_hint(&name));
                }
                e
            })
            .collect()
    }

    /// A hint naming the declared or built-in type closest to `name`.
    pub(crate) fn type_name_hint(&self, name: &str) -> Option<String> {
        let mut declared: Vec<&str> = self
            .symbols
            .iter()
            .filter(|(_, s)| matches!(s, Symbol::Type(_)))
            .map(|(n, _)| n.as_str())
            .collect();
        // Sorted, so that the hint does not depend on hash order.
        declared.sort_unstable();
        let builtin = suggest::builtin_type_names().iter().map(String::as_str);
        suggest::did_you_mean(name, declared.into_iter().chain(builtin))
    }

    /// Names of program-scope values (constants, function constants,
    /// samplers), sorted.
    pub(crate) fn value_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .symbols
            .iter()
            .filter(|(_, s)| !matches!(s, Symbol::Type(_) | Symbol::Functions(_)))
            .map(|(n, _)| n.as_str())
            .collect();
        names.sort_unstable();
        names
    }

    /// A hint naming the user or standard-library function closest to `name`.
    pub(crate) fn function_name_hint(&self, name: &str) -> Option<String> {
        let mut user: Vec<&str> = self
            .symbols
            .iter()
            .filter(|(_, s)| matches!(s, Symbol::Functions(_)))
            .map(|(n, _)| n.as_str())
            .collect();
        user.sort_unstable();
        let library = suggest::STDLIB_FUNCTIONS.iter().copied();
        suggest::did_you_mean(name, user.into_iter().chain(library))
    }
}
