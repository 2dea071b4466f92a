//! How the translating commands report diagnostics: `--error-format`,
//! `--color`, `-Werror` and `-w`.
//!
//! The choice is made once per process (each command calls [`init`] with
//! its arguments), so that every path that prints a diagnostic, deep in a
//! command, prints it the same way.

use super::{to_stderr, FAILURE};
use clap::{Args, ValueEnum};
use msl2wgsl::diagnostics::{Code, Diagnostic, Diagnostics, Format, Severity, Style};
use msl2wgsl::source_map::SourceMap;
use msl2wgsl::{ErrorLimit, Failure};
use std::io::IsTerminal as _;
use std::sync::OnceLock;

/// Diagnostic options every translating command takes.
#[derive(Args, Debug, Clone)]
pub(super) struct ReportArgs {
    /// How diagnostics are written to stderr: for people, or one JSON
    /// object per line (fields: docs/DIAGNOSTICS.md).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ErrorFormat::Human)]
    error_format: ErrorFormat,
    /// Colour human diagnostics (auto: when stderr is a terminal and
    /// NO_COLOR is unset).
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// `-Werror`: treat warnings as errors (exit 1, no output written).
    #[arg(short = 'W', value_name = "error", value_parser = ["error"])]
    warnings_as: Vec<String>,
    /// Silence warnings.
    #[arg(short = 'w')]
    no_warnings: bool,
    /// Report at most N errors of a file, then "too many errors emitted,
    /// stopping now" (clang's -ferror-limit); 0: no limit.
    #[arg(long, value_name = "N", default_value_t = 20)]
    error_limit: usize,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ErrorFormat {
    /// `FILE:LINE:COL: error: MESSAGE [CODE]`, the line and a caret.
    Human,
    /// One JSON object per diagnostic per line.
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ColorChoice {
    /// When stderr is a terminal and NO_COLOR is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The resolved reporting choices.
#[derive(Clone, Copy, Debug, Default)]
struct Reporter {
    format: Format,
    style: Style,
    warnings_are_errors: bool,
    silence_warnings: bool,
    error_limit: ErrorLimit,
}

static REPORTER: OnceLock<Reporter> = OnceLock::new();

/// Fixes how this process reports diagnostics.
pub(super) fn init(args: &ReportArgs) {
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let _ = REPORTER.set(Reporter {
        format: match args.error_format {
            ErrorFormat::Human => Format::Human,
            ErrorFormat::Json => Format::Json,
        },
        style: if color { Style::Color } else { Style::Plain },
        warnings_are_errors: !args.warnings_as.is_empty(),
        silence_warnings: args.no_warnings,
        error_limit: ErrorLimit::new(args.error_limit),
    });
}

impl ReportArgs {
    /// `--error-limit` as the library takes it.
    pub(super) fn error_limit(&self) -> ErrorLimit {
        ErrorLimit::new(self.error_limit)
    }
}

/// The `--error-limit` of this process, for the translation options.
pub(super) fn error_limit() -> ErrorLimit {
    reporter().error_limit
}

fn reporter() -> Reporter {
    REPORTER.get().copied().unwrap_or_default()
}

/// True when diagnostics are JSON (then other errors are JSON too).
pub(super) fn is_json() -> bool {
    reporter().format == Format::Json
}

/// Prints `diagnostics` as chosen, leaving out warnings under `-w`.
fn print(diagnostics: &Diagnostics, map: &SourceMap) {
    let r = reporter();
    let kept = Diagnostics(
        diagnostics
            .0
            .iter()
            .filter(|d| !(r.silence_warnings && d.severity == Severity::Warning))
            .cloned()
            .collect(),
    );
    to_stderr(&kept.render_as(map, r.format, r.style));
}

/// Prints a failed translation's diagnostics; returns the exit status.
pub(super) fn failure(failure: &Failure) -> u8 {
    if failure.diagnostics.0.is_empty() {
        return super::error(FAILURE, Code::Internal, "translation failed");
    }
    print(&failure.diagnostics, &failure.source_map);
    FAILURE
}

/// Prints a successful translation's warnings. Under `-Werror` they are
/// errors: printed as such, and the command fails (exit 1).
pub(super) fn warnings(warnings: &Diagnostics, map: &SourceMap) -> Result<(), u8> {
    let r = reporter();
    if r.warnings_are_errors && !warnings.0.is_empty() {
        let errors = warnings.0.iter().cloned().map(Diagnostic::promote_to_error);
        print(&Diagnostics(errors.collect()), map);
        return Err(FAILURE);
    }
    print(warnings, map);
    Ok(())
}

/// True when `args` ask for `--error-format json` (before any `--`): read
/// from the raw arguments, for usage errors found before they are parsed.
pub(super) fn json_requested(args: &[std::ffi::OsString]) -> bool {
    let args: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
    let options = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    let args = &args[..options];
    args.contains(&"--error-format=json")
        || args
            .windows(2)
            .any(|w| w[0] == "--error-format" && w[1] == "json")
}

/// A located-nowhere error as JSON (`msl2wgsl: error: ...` for people is
/// written by the caller).
pub(super) fn json_error(message: &str, code: Code) -> String {
    Diagnostic::unlocated(code, message).to_json(&SourceMap::new()) + "\n"
}
