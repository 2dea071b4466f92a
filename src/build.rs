//! Translating a folder of shaders in a build script.
//!
//! ```no_run
//! // In build.rs's `main`:
//! msl2wgsl::build::translate_dir("shaders", &msl2wgsl::Options::default())
//!     .expect("the shaders translate");
//! ```
//!
//! Each `shaders/NAME.metal` becomes `$OUT_DIR/NAME.wgsl` and
//! `$OUT_DIR/NAME.json` (the reflection document of `docs/REFLECTION.md`),
//! which the crate includes with
//! `include_str!(concat!(env!("OUT_DIR"), "/NAME.wgsl"))`. Cargo is told to
//! run the script again when the folder, a shader or any file a shader
//! `#include`s changes.

use crate::reflect::{ReflectionDocument, SCHEMA_VERSION};
use crate::source_map::SourceMap;
use crate::{Failure, Library, Options};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One translated shader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translated {
    /// The `.metal` file.
    pub source: PathBuf,
    /// The WGSL written for it.
    pub wgsl: PathBuf,
    /// Its reflection document (JSON).
    pub reflection: PathBuf,
    /// Every file the translation read: the source and what it includes.
    pub dependencies: Vec<PathBuf>,
}

/// Why [`translate_dir`] failed.
pub enum BuildError {
    /// `OUT_DIR` is not set: not run by Cargo as a build script.
    NoOutDir,
    /// A file or folder could not be read or written.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// Shaders that did not translate (every other one was written).
    Translation(Vec<(PathBuf, Failure)>),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::NoOutDir => f.write_str("OUT_DIR is not set: run from a build script"),
            BuildError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            BuildError::Translation(failures) => {
                let count = failures.len();
                let s = if count == 1 { "" } else { "s" };
                writeln!(f, "{count} shader{s} did not translate:")?;
                failures
                    .iter()
                    .try_for_each(|(_, failure)| f.write_str(&failure.render()))
            }
        }
    }
}

/// The rendered diagnostics, so that a build script's `expect` or `?` in
/// `main` shows them as the compiler writes them.
impl std::fmt::Debug for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {}

/// Translates every `.metal` file under `src_dir` (sub-folders included)
/// into `$OUT_DIR`, keeping the relative paths, and prints the
/// `cargo:rerun-if-changed` lines (and `cargo:warning` lines for warnings).
pub fn translate_dir(
    src_dir: impl AsRef<Path>,
    options: &Options,
) -> Result<Vec<Translated>, BuildError> {
    let out_dir = std::env::var_os("OUT_DIR").ok_or(BuildError::NoOutDir)?;
    translate_dir_to(src_dir, out_dir, options, &mut std::io::stdout().lock())
}

/// [`translate_dir`] into `out_dir`, writing Cargo's instructions to
/// `cargo` (a build script's stdout).
pub fn translate_dir_to(
    src_dir: impl AsRef<Path>,
    out_dir: impl AsRef<Path>,
    options: &Options,
    cargo: &mut dyn Write,
) -> Result<Vec<Translated>, BuildError> {
    let (src_dir, out_dir) = (src_dir.as_ref(), out_dir.as_ref());
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| BuildError::Io { path, error }
    };
    let mut sources = Vec::new();
    find_shaders(src_dir, &mut sources)?;
    sources.sort();
    // The folder itself: Cargo then notices a shader added to it.
    let mut rerun = vec![src_dir.to_path_buf()];
    let mut translated = Vec::new();
    let mut failures = Vec::new();
    for source in sources {
        match Library::from_file(&source, options) {
            Ok(library) => {
                let item = write_outputs(src_dir, out_dir, &source, &library)?;
                for line in library.warnings().lines().filter(|l| !l.is_empty()) {
                    writeln!(cargo, "cargo:warning={line}").map_err(io(out_dir))?;
                }
                rerun.extend(item.dependencies.iter().cloned());
                translated.push(item);
            }
            Err(failure) => {
                rerun.push(source.clone());
                rerun.extend(read_files(&failure.source_map));
                failures.push((source, failure));
            }
        }
    }
    rerun.sort();
    rerun.dedup();
    for path in &rerun {
        writeln!(cargo, "cargo:rerun-if-changed={}", path.display()).map_err(io(out_dir))?;
    }
    match failures.is_empty() {
        true => Ok(translated),
        false => Err(BuildError::Translation(failures)),
    }
}

/// Collects the `.metal` files under `dir`.
fn find_shaders(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), BuildError> {
    let error = |error| BuildError::Io {
        path: dir.to_path_buf(),
        error,
    };
    for entry in std::fs::read_dir(dir).map_err(error)? {
        let path = entry.map_err(error)?.path();
        if path.is_dir() {
            find_shaders(&path, found)?;
        } else if path.extension().is_some_and(|e| e == "metal") {
            found.push(path);
        }
    }
    Ok(())
}

/// The files on disk among those a translation read: the provided Metal
/// headers and the `-include` text have names like `<sdk>/...`.
fn read_files(map: &SourceMap) -> Vec<PathBuf> {
    map.files()
        .map(|(_, f)| PathBuf::from(&f.name))
        .filter(|p| p.is_file())
        .collect()
}

/// Writes `NAME.wgsl` and `NAME.json` for `source` under `out_dir`.
fn write_outputs(
    src_dir: &Path,
    out_dir: &Path,
    source: &Path,
    library: &Library,
) -> Result<Translated, BuildError> {
    let relative = source.strip_prefix(src_dir).unwrap_or(source);
    let stem = out_dir.join(relative);
    let (wgsl, reflection) = (stem.with_extension("wgsl"), stem.with_extension("json"));
    if let Some(parent) = wgsl.parent() {
        std::fs::create_dir_all(parent).map_err(|error| BuildError::Io {
            path: parent.to_path_buf(),
            error,
        })?;
    }
    let document = ReflectionDocument {
        schema_version: SCHEMA_VERSION,
        functions: library.functions().iter().collect(),
    };
    let json = serde_json::to_string_pretty(&document).map_err(|e| BuildError::Io {
        path: reflection.clone(),
        error: e.into(),
    })?;
    for (path, text) in [(&wgsl, library.wgsl()), (&reflection, json.as_str())] {
        std::fs::write(path, text).map_err(|error| BuildError::Io {
            path: path.clone(),
            error,
        })?;
    }
    let mut dependencies = read_files(library.source_map());
    if dependencies.is_empty() {
        dependencies.push(source.to_path_buf());
    }
    Ok(Translated {
        source: source.to_path_buf(),
        wgsl,
        reflection,
        dependencies,
    })
}
