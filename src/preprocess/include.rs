//! `#include`: naming, finding and reading the file, and `__has_include`.

use super::directive::Dir;
use super::engine::Engine;
use super::expr::Env;
use super::lexer::Kind;
use super::macros::{join, Macros};
use crate::diagnostics::Diagnostic;
use crate::source_map::{Location, SourceMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The feature tests `#if` knows; `defined` says they exist, as clang does,
/// so `#ifdef __has_include` works.
pub(crate) const FEATURE_TESTS: &[&str] = &[
    "__has_include",
    "__has_include_next",
    "__has_attribute",
    "__has_cpp_attribute",
    "__has_feature",
    "__has_extension",
    "__has_builtin",
];

/// How deeply `#include` may nest (clang's limit); deeper is an error.
pub(crate) const MAX_INCLUDE_DEPTH: usize = 200;

/// The message for an `#include` without a usable file name.
const EXPECTED_FILENAME: &str = "expected \"FILENAME\" or <FILENAME>";

/// Whether `name` is a header of the Metal standard library (`metal_stdlib`,
/// `metal_math`, ..., `simd/simd.h`). The compiler knows the library, so these
/// include nothing.
pub(crate) fn is_metal_header(name: &str) -> bool {
    name.starts_with("metal_") || name == "simd/simd.h"
}

/// The folders searched for `name`: the including file's folder (quoted form
/// only), then every `-I` folder, in order.
pub(crate) fn search_dirs(angled: bool, dir: &Path, include_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let own = (!angled).then(|| dir.to_path_buf());
    own.into_iter()
        .chain(include_dirs.iter().cloned())
        .collect()
}

/// The first of `dirs` holding a file `name` (an absolute `name` is taken as is).
pub(crate) fn find(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    let path = Path::new(name);
    if path.is_absolute() {
        return path.is_file().then(|| path.to_path_buf());
    }
    dirs.iter().map(|d| d.join(name)).find(|c| c.is_file())
}

/// A note listing the folders searched.
fn searched_note(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "no include folders were searched (add one with -I)".into();
    }
    let shown: Vec<String> = dirs
        .iter()
        .map(|d| match d.as_os_str().is_empty() {
            true => ".".to_string(),
            false => d.display().to_string(),
        })
        .collect();
    format!("searched: {}", shown.join(", "))
}

/// What an `#include` names.
struct Target {
    name: String,
    angled: bool,
    loc: Location,
}

/// Splits `"name"` or `<name>` into the name and whether it is angled.
fn parse_spec(spec: &str) -> Option<(String, bool)> {
    let spec = spec.trim();
    let quoted = spec.strip_prefix('"').and_then(|s| s.strip_suffix('"'));
    let angled = spec.strip_prefix('<').and_then(|s| s.strip_suffix('>'));
    match (quoted, angled) {
        (Some(n), _) => Some((n.to_string(), false)),
        (_, Some(n)) => Some((n.to_string(), true)),
        _ => None,
    }
}

impl Engine<'_> {
    /// `#include "file"` or `#include <file>` (or a macro expanding to one).
    pub(crate) fn include(&mut self, map: &mut SourceMap, d: &Dir) {
        let Some(target) = self.include_target(map, d) else {
            return;
        };
        if target.name.is_empty() {
            self.error(target.loc, "empty filename");
            return;
        }
        if target.angled && is_metal_header(&target.name) {
            return;
        }
        let dirs = search_dirs(
            target.angled,
            &self.current().dir,
            &self.options.include_dirs,
        );
        match find(&target.name, &dirs) {
            Some(path) => self.enter(map, &path, target.loc),
            None if is_metal_header(&target.name) => {}
            None => {
                let msg = format!("'{}' file not found", target.name);
                let diag = Diagnostic::error_in_file(msg, target.loc)
                    .with_code(crate::diagnostics::Code::IncludeNotFound);
                self.diags.push(diag.with_note(searched_note(&dirs)));
            }
        }
    }

    /// Reads what `d` names; reports and returns `None` when it is malformed.
    fn include_target(&mut self, map: &SourceMap, d: &Dir) -> Option<Target> {
        let Some(first) = d.args.first() else {
            self.error(d.head_loc(), EXPECTED_FILENAME);
            return None;
        };
        // (spelling, its text range, how many argument tokens it used)
        let (spec, range, used) = match first.kind {
            Kind::Str => (d.text(first).to_string(), first.range.clone(), 1),
            Kind::Punct if d.text(first) == "<" => {
                // The name is raw text up to `>`: `simd/simd.h` is no token.
                let close = d.args.iter().position(|t| d.text(t) == ">");
                let last = &d.args[close.unwrap_or(d.args.len() - 1)];
                let range = first.range.start..last.range.end;
                let used = close.map_or(d.args.len(), |i| i + 1);
                (d.line.text[range.clone()].to_string(), range, used)
            }
            Kind::Ident => {
                let (expanded, _) = self.expand_args(map, d, d.args, false)?;
                (join(&expanded), d.args_range(), d.args.len())
            }
            _ => (String::new(), first.range.clone(), 1),
        };
        let loc = d.loc_of(range);
        let Some((name, angled)) = parse_spec(&spec) else {
            self.error(loc, EXPECTED_FILENAME);
            return None;
        };
        if used < d.args.len() {
            let extra = d.args[used].range.start..d.args_range().end;
            self.warn(d.loc_of(extra), "extra tokens at end of #include directive");
        }
        Some(Target { name, angled, loc })
    }

    /// Starts reading the file at `path`, unless `#pragma once` excludes it.
    fn enter(&mut self, map: &mut SourceMap, path: &Path, loc: Location) {
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            self.error_coded(
                crate::diagnostics::Code::IncludeTooDeep,
                loc,
                "#include nested too deeply",
            );
            return;
        }
        let canonical = std::fs::canonicalize(path).ok();
        if canonical.as_ref().is_some_and(|c| self.once.contains(c)) {
            return;
        }
        let parent = map.file(loc.file);
        let note = format!(
            "in file included from {}:{}",
            parent.name,
            parent.line_col(loc.range.start).0
        );
        let chain: Rc<[String]> = std::iter::once(note)
            .chain(self.current().included_from.iter().cloned())
            .collect();
        let name = path.display().to_string();
        // A file included again is read once and shares its id.
        let id = match map.find_file(&name) {
            Some(id) => id,
            None => match std::fs::read_to_string(path) {
                Ok(text) => map.add_file(name, text),
                Err(e) => {
                    self.error(loc, format!("cannot read '{name}': {e}"));
                    return;
                }
            },
        };
        map.set_included_from(id, loc);
        self.push_file(map, id, path, canonical, chain);
    }
}

/// What `#if` expressions see: the macros, and the include path for
/// `__has_include`.
pub(crate) struct IfEnv<'a> {
    /// The macro table.
    pub macros: &'a Macros,
    /// The current file's folder.
    pub dir: &'a Path,
    /// The `-I` folders.
    pub include_dirs: &'a [PathBuf],
}

impl Env for IfEnv<'_> {
    fn is_defined(&self, name: &str) -> bool {
        self.macros.is_defined(name) || FEATURE_TESTS.contains(&name)
    }

    fn has_include(&self, name: &str, angled: bool) -> bool {
        let dirs = search_dirs(angled, self.dir, self.include_dirs);
        is_metal_header(name) || find(name, &dirs).is_some()
    }
}
