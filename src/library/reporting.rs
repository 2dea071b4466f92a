//! How a failed translation's diagnostics are put together: every error
//! of the file in source order, within the error limit, with "expanded
//! from macro" notes, and without the cascades of the parser's recovery.

use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::source_map::SourceMap;

/// How many errors a failed translation reports at most: past it, the
/// translation stops with "too many errors emitted, stopping now" (E0008),
/// as clang does past `-ferror-limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorLimit(pub Option<std::num::NonZeroUsize>);

impl ErrorLimit {
    /// No limit (`--error-limit 0`).
    pub const NONE: ErrorLimit = ErrorLimit(None);

    /// At most `n` errors; 0 means no limit.
    pub fn new(n: usize) -> Self {
        ErrorLimit(std::num::NonZeroUsize::new(n))
    }

    /// The limit as a count, `None` for no limit.
    pub fn get(self) -> Option<usize> {
        self.0.map(|n| n.get())
    }
}

impl Default for ErrorLimit {
    /// clang's default: 20.
    fn default() -> Self {
        ErrorLimit::new(20)
    }
}

/// Whether semantic error `d` may be caused by a declaration that the
/// parser's recovery left out (it is about a name in `left_out`): then it
/// is not reported, since it is not the user's mistake (clang suppresses
/// such cascades too).
fn may_be_cascade(d: &Diagnostic, left_out: &[String]) -> bool {
    let names_left_out = d.message.split('`').skip(1).step_by(2).any(|quoted| {
        quoted
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| left_out.iter().any(|l| l == word))
    });
    names_left_out
        && matches!(
            d.code(),
            Code::UndeclaredIdentifier
                | Code::UnknownType
                | Code::UndeclaredFunction
                | Code::NoMatchingOverload
                | Code::UnknownMember
                | Code::WrongKind
                | Code::FunctionNotDefined
                | Code::UnknownEntryPoint
        )
}

/// Adds "expanded from macro" notes to the diagnostics found after
/// preprocessing whose text came from a macro expansion.
pub(super) fn add_macro_notes(diagnostics: &mut [Diagnostic], map: &SourceMap) {
    for d in diagnostics {
        let crate::diagnostics::Place::Unit(span) = d.place else {
            continue;
        };
        if let Some(expansion) = map.expansion_at(span.start as usize) {
            let note = expansion.note();
            if !d.notes.contains(&note) {
                d.notes.push(note);
            }
        }
    }
}

/// The diagnostics of a failed translation, within `limit`: errors past
/// the limit (and the warnings after them) are dropped and one fatal
/// "too many errors" error says so, as clang's `-ferror-limit` does.
pub(super) fn limit_errors(diagnostics: Vec<Diagnostic>, limit: ErrorLimit) -> Vec<Diagnostic> {
    let Some(limit) = limit.get() else {
        return diagnostics;
    };
    let mut errors = 0;
    let mut kept = Vec::new();
    for d in diagnostics {
        if d.severity == Severity::Error {
            errors += 1;
            if errors > limit {
                kept.push(Diagnostic::unlocated(
                    Code::TooManyErrors,
                    "too many errors emitted, stopping now",
                ).with_note(format!(
                    "at most {limit} errors are reported; `--error-limit 0` (`Options::error_limit`) reports all"
                )));
                break;
            }
        }
        kept.push(d);
    }
    kept
}

/// The syntax errors the parser recovered from, kept until the semantic
/// errors of the rest of the file are known.
pub(super) struct Recovered {
    /// The syntax errors.
    pub syntax_errors: Vec<Diagnostic>,
    /// The names the declarations left out would have declared (see
    /// [`may_be_cascade`]).
    pub left_out_names: Vec<String>,
}

impl Recovered {
    /// `warnings`, then the syntax errors and the `later` errors of the
    /// stages after parsing, in source order.
    pub fn with(
        self,
        mut later: Vec<Diagnostic>,
        mut warnings: Vec<Diagnostic>,
    ) -> Vec<Diagnostic> {
        if self.syntax_errors.is_empty() {
            warnings.extend(later);
            return warnings;
        }
        later.retain(|d| !may_be_cascade(d, &self.left_out_names));
        later.retain(|d| d.severity == Severity::Error);
        let mut errors = self.syntax_errors;
        errors.extend(later);
        in_source_order(&mut errors);
        warnings.extend(errors);
        warnings
    }
}

/// The diagnostics of the stages after preprocessing in source order
/// (the parser's and the semantic errors interleave, as clang reports them),
/// located ones by position, unlocated ones last.
fn in_source_order(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| match d.place {
        crate::diagnostics::Place::Unit(span) => (0, span.start),
        _ => (1, 0),
    });
}
