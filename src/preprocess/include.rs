//! `#include`, `#import` and `#include_next`: naming, finding and reading
//! the file, and `__has_include`.

use super::directive::Dir;
use super::engine::Engine;
use super::expr::Env;
use super::lexer::Kind;
use super::macros::{join, Macros};
use super::Platform;
use super::{metal_stdlib, sdk};
use crate::diagnostics::Code;
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
/// `metal_math`, ...). The compiler knows the library, so these include
/// nothing.
pub(crate) fn is_metal_header(name: &str) -> bool {
    name.starts_with("metal_")
}

/// Which include directive is being handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IncludeKind {
    /// `#include`.
    Include,
    /// `#import`: like `#include`, but a file is read at most once per
    /// translation unit (clang's semantics: a file already included or
    /// imported is skipped, and a file once imported is skipped by later
    /// `#include`s too).
    Import,
    /// `#include_next`: the search goes on after the folder the current
    /// file was found in.
    Next,
}

impl IncludeKind {
    /// The directive as written, for messages.
    fn directive(self) -> &'static str {
        match self {
            IncludeKind::Include => "#include",
            IncludeKind::Import => "#import",
            IncludeKind::Next => "#include_next",
        }
    }
}

/// Where a file being read was found, which is where `#include_next`
/// goes on searching.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The main file, or the buffer of `-include` directives.
    Primary,
    /// Next to the file that included it, by an absolute path, or (for
    /// `-include`) in the current folder: in no `-I` folder.
    Relative,
    /// In `-I` folder number `n`.
    Dir(usize),
    /// A header the preprocessor provides (`sdk.rs`), found after every
    /// `-I` folder.
    Sdk,
}

/// A file that an include directive found.
pub(crate) enum Hit {
    /// A file on disk, and how it was found.
    File(PathBuf, Found),
    /// A provided SDK header: its name (as written) and its text.
    Sdk(String, String),
    /// One of `Options::virtual_files`: its name and its text.
    Virtual(String, String),
}

/// Where one lookup searches.
pub(crate) struct Search<'a> {
    /// The including file's folder (quoted names only).
    own: Option<&'a Path>,
    /// The `-I` folders.
    dirs: &'a [PathBuf],
    /// The first of `dirs` searched.
    start: usize,
    /// Whether the provided SDK headers come last.
    sdk: bool,
    /// The in-memory headers, searched after `dirs`.
    virtual_files: &'a [(String, String)],
    /// What they say.
    platform: Platform,
}

impl<'a> Search<'a> {
    /// The search for a `#include` (or, with `next`, an `#include_next`)
    /// in a file found as `found`, whose folder is `own` (`None` for a file
    /// that is no file on disk).
    pub fn new(
        angled: bool,
        next: bool,
        own: Option<&'a Path>,
        found: Found,
        options: &'a super::Options,
    ) -> Self {
        let mut search = Search {
            own: own.filter(|_| !angled),
            dirs: &options.include_dirs,
            start: 0,
            sdk: true,
            virtual_files: &options.virtual_files,
            platform: options.platform,
        };
        if next {
            match found {
                // As clang: a search from the start (and a warning).
                Found::Primary | Found::Relative => {}
                Found::Dir(i) => (search.own, search.start) = (None, i + 1),
                Found::Sdk => {
                    (search.own, search.start) = (None, search.dirs.len());
                    search.sdk = false;
                }
            }
        }
        search
    }

    /// The first place holding `name` (an absolute `name` is taken as is).
    pub fn find(&self, name: &str) -> Option<Hit> {
        let path = Path::new(name);
        if path.is_absolute() {
            return path
                .is_file()
                .then(|| Hit::File(path.to_path_buf(), Found::Relative));
        }
        if let Some(c) = self.own.map(|d| d.join(name)).filter(|c| c.is_file()) {
            return Some(Hit::File(c, Found::Relative));
        }
        let in_dirs = self.dirs.iter().enumerate().skip(self.start);
        if let Some((i, c)) = in_dirs
            .map(|(i, d)| (i, d.join(name)))
            .find(|(_, c)| c.is_file())
        {
            return Some(Hit::File(c, Found::Dir(i)));
        }
        if let Some((n, t)) = self.virtual_files.iter().find(|(n, _)| n == name) {
            return Some(Hit::Virtual(n.clone(), t.clone()));
        }
        let text = self.sdk.then(|| sdk::header(name, self.platform)).flatten();
        text.map(|t| Hit::Sdk(name.to_string(), t))
    }

    /// The folders searched, for "file not found" notes.
    fn searched(&self) -> Vec<PathBuf> {
        let own = self.own.map(Path::to_path_buf);
        let dirs = self.dirs.iter().skip(self.start).cloned();
        own.into_iter().chain(dirs).collect()
    }
}

/// A note listing the folders searched (by `#include_next` if `next`).
fn searched_note(dirs: &[PathBuf], next: bool) -> String {
    if dirs.is_empty() && next {
        return "no include folder comes after the current file's".into();
    }
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
    /// `#include`, `#import` or `#include_next` (`kind`) of `"file"` or
    /// `<file>` (or a macro expanding to one).
    pub(crate) fn include(&mut self, map: &mut SourceMap, d: &Dir, kind: IncludeKind) {
        let Some(target) = self.include_target(map, d, kind) else {
            return;
        };
        if target.name.is_empty() {
            self.error_coded(Code::MalformedDirective, target.loc, "empty filename");
            return;
        }
        if target.angled && is_metal_header(&target.name) {
            // The class templates of Metal's library, read once (as
            // `#import`) whichever `<metal_*>` header comes first.
            let hit = Hit::Sdk(metal_stdlib::NAME.into(), metal_stdlib::TEXT.into());
            self.enter(map, hit, target.loc, true);
            return;
        }
        let next = kind == IncludeKind::Next;
        let found = self.current().found;
        if next && matches!(found, Found::Primary | Found::Relative) {
            let msg = match found {
                Found::Primary => "#include_next in primary source file",
                _ => {
                    "#include_next in file found relative to primary source file or found by \
                     absolute path; will search from start of include path"
                }
            };
            self.warn_coded(Code::IncludeNextMisplaced, d.head_loc(), msg);
        }
        let options = self.options;
        let own = self.current().dir.clone();
        let search = Search::new(target.angled, next, own.as_deref(), found, options);
        match search.find(&target.name) {
            Some(hit) => self.enter(map, hit, target.loc, kind == IncludeKind::Import),
            None if is_metal_header(&target.name) => {
                let hit = Hit::Sdk(metal_stdlib::NAME.into(), metal_stdlib::TEXT.into());
                self.enter(map, hit, target.loc, true);
            }
            // An SDK framework that exists for Metal but has nothing WebGPU
            // could run: refused as such rather than "not found".
            None if sdk::refused_framework(&target.name).is_some() => {
                let why = sdk::refused_framework(&target.name).expect("checked");
                let diag = Diagnostic::error_in_file(Code::NoWebGpuEquivalent, why, target.loc);
                self.push_located(diag.with_note(
                    "the Metal SDK provides this header; msl2wgsl refuses it because nothing it declares can be translated",
                ));
            }
            None => {
                let msg = format!("'{}' file not found", target.name);
                let diag = Diagnostic::error_in_file(Code::IncludeNotFound, msg, target.loc);
                let note = searched_note(&search.searched(), next);
                self.push_located(diag.with_note(note));
            }
        }
    }

    /// Reads what `d` names; reports and returns `None` when it is malformed.
    fn include_target(&mut self, map: &SourceMap, d: &Dir, kind: IncludeKind) -> Option<Target> {
        let Some(first) = d.args.first() else {
            self.error_coded(Code::MalformedDirective, d.head_loc(), EXPECTED_FILENAME);
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
            self.error_coded(Code::MalformedDirective, loc, EXPECTED_FILENAME);
            return None;
        };
        if used < d.args.len() {
            let extra = d.args[used].range.start..d.args_range().end;
            let msg = format!("extra tokens at end of {} directive", kind.directive());
            self.warn_coded(Code::ExtraTokens, d.loc_of(extra), msg);
        }
        Some(Target { name, angled, loc })
    }

    /// Starts reading what `hit` names, unless `#pragma once` or `#import`
    /// excludes it; `import` for `#import`.
    pub(crate) fn enter(&mut self, map: &mut SourceMap, hit: Hit, loc: Location, import: bool) {
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            self.error_coded(
                crate::diagnostics::Code::IncludeTooDeep,
                loc,
                "#include nested too deeply",
            );
            return;
        }
        let (name, canonical, dir, found) = match &hit {
            Hit::File(path, found) => (
                path.display().to_string(),
                std::fs::canonicalize(path).ok(),
                Some(path.parent().map(Path::to_path_buf).unwrap_or_default()),
                *found,
            ),
            Hit::Sdk(name, _) => {
                let name = format!("{}/{name}", sdk::SDK_DIR);
                (name.clone(), Some(PathBuf::from(name)), None, Found::Sdk)
            }
            // Named as given, so diagnostics point into the header by its name.
            Hit::Virtual(name, _) => (
                name.clone(),
                Some(PathBuf::from(name)),
                None,
                Found::Relative,
            ),
        };
        if let Some(c) = &canonical {
            if self.once.contains(c) || (import && self.entered.contains(c)) {
                return;
            }
            if import {
                self.once.insert(c.clone());
            }
            self.entered.insert(c.clone());
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
        // A file included again is read once and shares its id.
        let known = map.find_file(&name);
        let id = match hit {
            Hit::File(path, _) => match known {
                Some(id) => id,
                None => match std::fs::read_to_string(&path) {
                    Ok(text) => map.add_file(name, text),
                    Err(e) => {
                        self.error_coded(
                            Code::Unreadable,
                            loc,
                            format!("cannot read '{name}': {e}"),
                        );
                        return;
                    }
                },
            },
            Hit::Sdk(_, text) | Hit::Virtual(_, text) => {
                match known.filter(|&id| map.file(id).text == text) {
                    Some(id) => id,
                    None => map.add_file(name, text),
                }
            }
        };
        map.set_included_from(id, loc);
        self.push_file(map, id, dir, canonical, chain, found);
    }
}

/// What `#if` expressions see: the macros, and the include path for
/// `__has_include`.
pub(crate) struct IfEnv<'a> {
    /// The macro table.
    pub macros: &'a Macros,
    /// The current file's folder (`None` for a provided header).
    pub dir: Option<&'a Path>,
    /// How the current file was found, for `__has_include_next`.
    pub found: Found,
    /// The `-I` folders and the platform.
    pub options: &'a super::Options,
}

impl Env for IfEnv<'_> {
    fn is_defined(&self, name: &str) -> bool {
        self.macros.is_defined(name) || FEATURE_TESTS.contains(&name)
    }

    fn has_include(&self, name: &str, angled: bool, next: bool) -> bool {
        let search = Search::new(angled, next, self.dir, self.found, self.options);
        is_metal_header(name) || search.find(name).is_some()
    }
}
