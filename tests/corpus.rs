//! The real-world corpus ratchet (issues #16, #18): every shader file of
//! the public MSL corpus (`../shared/corpus` beside the checkout, with its
//! `MANIFEST.tsv`) is translated in-process, exactly as
//! `shared/tools/corpus-rate` translates it with the binary, and every file
//! named in `tests/corpus/pass.txt` must still translate.
//!
//! - Options: `-I <file's folder> -I <repository folder>`, the row's
//!   `options` column (paths after `-I`/`-include` relative to the
//!   repository), then those of every `tests/corpus/options.tsv` pattern the
//!   file matches (paths relative to the project, `{repo}` the repository
//!   folder), mapped to `library::Options` as `src/bin/msl2wgsl.rs` maps
//!   the command line. An option this file does not map fails the test.
//! - A file translates when the library returns a `Library`, with at least
//!   one function where the MANIFEST counts entry points (corpus-rate's
//!   entry-point check; its naga+wgpu and Tint checks of the WGSL are not
//!   repeated here).
//! - Each translation runs under `catch_unwind` on a few threads; one that
//!   translates but takes longer than its CPU limit (`budget.rs`:
//!   [`budget::LIMIT`] or the file's budget in `tests/corpus/budgets.tsv`,
//!   scaled by this machine's speed), or any file that looks hung (four
//!   times that in wall-clock time), fails the test, whatever the list
//!   says.
//! - Fails when a listed file no longer translates (or panics), when a
//!   listed file is not a shader row of the MANIFEST or is triaged, and
//!   when a triage or options entry names nothing.
//! - Internal compiler errors (E0900) are counted and listed; they fail the
//!   test only for listed files (others are being fixed elsewhere).
//! - Files that translate but are not listed are printed;
//!   `MSL2WGSL_CORPUS_BLESS=1 cargo test --test corpus` rewrites
//!   `tests/corpus/pass.txt` as the old list plus them (the list only
//!   grows: removing a file is a hand edit, and a reason for it).
//!
//! Without the corpus the test prints a note and passes, unless
//! `MSL2WGSL_REQUIRE_CORPUS=1`. `MSL2WGSL_CORPUS=DIR` reads another copy,
//! `MSL2WGSL_CORPUS_THREADS=N` sets the threads, `MSL2WGSL_CORPUS_RESULTS=FILE`
//! writes every file's outcome as TSV. More in TESTING.md.

use msl2wgsl::diagnostics::Code;
use msl2wgsl::library::{HalfMode, Library, Options, Target};
use msl2wgsl::preprocess::Platform;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "corpus/budget.rs"]
mod budget;

use budget::Budgets;

/// At most this share of the shader rows may be triaged (corpus-rate: "keep
/// the list short").
const TRIAGE_SHARE: f64 = 0.05;

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn pass_list_path() -> PathBuf {
    project().join("tests/corpus/pass.txt")
}

/// One shader row of MANIFEST.tsv, with the options corpus-rate would give
/// the binary after the file name.
#[derive(Clone, Debug)]
struct Job {
    /// Relative to the corpus root, as MANIFEST.tsv and pass.txt name it.
    file: String,
    origin: String,
    path: PathBuf,
    /// What corpus-rate passes after the file name.
    args: Vec<String>,
    /// `args` as library options.
    options: Options,
    /// The MANIFEST counts a kernel, vertex, fragment or `[[stitchable]]`
    /// function: the translation must have a function (corpus-rate's
    /// "entry-points" check).
    has_entry_points: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Translated,
    /// The first error's code and rendered first line.
    Failed {
        code: String,
        first: String,
    },
    /// An error with code E0900.
    Internal(String),
    /// A panic that escaped the library.
    Panicked(String),
    /// Translated, but to no function although the source declares some.
    NoEntryPoints,
    TimedOut,
}

impl Outcome {
    fn describe(&self) -> String {
        match self {
            Outcome::Translated => "translates".into(),
            Outcome::Failed { first, .. } => first.clone(),
            Outcome::Internal(first) => first.clone(),
            Outcome::Panicked(what) => format!("panicked: {what}"),
            Outcome::TimedOut => "took longer than its CPU limit".into(),
            Outcome::NoEntryPoints => {
                "translates to no function, but the source declares entry points".into()
            }
        }
    }
}

/// Python's `fnmatch.fnmatch` on POSIX (what corpus-rate uses for
/// options.tsv): `*` matches any run of characters, `/` included, `?` one
/// character, `[abc]`, `[a-z]`, `[!abc]` one of (or none of) a set.
fn fnmatch(name: &str, pattern: &str) -> bool {
    fn go(n: &[char], p: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|i| go(&n[i..], &p[1..])),
            Some('?') => !n.is_empty() && go(&n[1..], &p[1..]),
            Some('[') => {
                let Some(close) = set_end(p) else {
                    return n.first() == Some(&'[') && go(&n[1..], &p[1..]);
                };
                let Some(&c) = n.first() else { return false };
                let mut set = &p[1..close];
                let negated = set.first() == Some(&'!');
                if negated {
                    set = &set[1..];
                }
                let mut found = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == '-' {
                        found |= set[i] <= c && c <= set[i + 2];
                        i += 3;
                    } else {
                        found |= set[i] == c;
                        i += 1;
                    }
                }
                found != negated && go(&n[1..], &p[close + 1..])
            }
            Some(&c) => n.first() == Some(&c) && go(&n[1..], &p[1..]),
        }
    }
    /// The index of the `]` closing the set that opens `p` (a `]` right
    /// after `[` or `[!` is a member, as in fnmatch).
    fn set_end(p: &[char]) -> Option<usize> {
        let mut i = 1;
        if p.get(i) == Some(&'!') {
            i += 1;
        }
        if p.get(i) == Some(&']') {
            i += 1;
        }
        (i..p.len()).find(|&j| p[j] == ']')
    }
    let n: Vec<char> = name.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    go(&n, &p)
}

/// Python's `shlex.split` (POSIX mode) for the option strings of
/// MANIFEST.tsv and options.tsv: words split at blanks, `'...'` literal,
/// `"..."` with `\"`, `\\`, `\$`, `` \` `` escapes, `\` outside quotes
/// escaping the next character.
fn shlex_split(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("no closing quotation in `{s}`")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err(format!("no closing quotation in `{s}`")),
                        },
                        Some(c) => w.push(c),
                        None => return Err(format!("no closing quotation in `{s}`")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err(format!("no escaped character in `{s}`")),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// `PATTERN<TAB>REST` lines of a tests/corpus file; `#` lines and lines
/// without a tab are skipped, as corpus-rate skips them.
fn tab_lines(path: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Paths after `-I`/`-include` joined to `base` (unless absolute), as
/// corpus-rate resolves them.
fn resolve_paths(words: Vec<String>, base: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for w in words {
        let after_path_flag = out.last().is_some_and(|p| p == "-I" || p == "-include");
        if after_path_flag && !Path::new(&w).is_absolute() {
            out.push(base.join(&w).display().to_string());
        } else {
            out.push(w);
        }
    }
    out
}

/// The shader rows of MANIFEST.tsv (role `shader`, not a byte-identical
/// copy), each with its full option list.
fn jobs(corpus: &Path, extra: &[(String, String)]) -> Vec<Job> {
    let manifest = corpus.join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("MANIFEST.tsv has no `{name}` column"))
    };
    let (file_c, origin_c, role_c, dup_c, options_c) = (
        column("file"),
        column("origin"),
        column("role"),
        column("dup_of"),
        column("options"),
    );
    let stage_c = [column("kernel"), column("vertex"), column("fragment")];
    let other_c = column("other_stages");
    let mut jobs = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let cells: Vec<&str> = line.split('\t').collect();
        let cell = |i: usize| cells.get(i).copied().unwrap_or("");
        if cell(role_c) != "shader" || !cell(dup_c).is_empty() {
            continue;
        }
        let file = cell(file_c).to_string();
        let path = corpus.join(&file);
        let repo = corpus.join(file.split('/').next().unwrap_or_default());
        let folder = path.parent().unwrap_or(corpus).to_path_buf();
        let mut args = vec![
            "-I".to_string(),
            folder.display().to_string(),
            "-I".to_string(),
            repo.display().to_string(),
        ];
        let row = shlex_split(cell(options_c)).unwrap_or_else(|e| panic!("{file}: {e}"));
        args.extend(resolve_paths(row, &repo));
        for (pattern, more) in extra {
            if fnmatch(&file, pattern) {
                let more = more.replace("{repo}", &repo.display().to_string());
                let more = shlex_split(&more).unwrap_or_else(|e| panic!("options.tsv: {e}"));
                args.extend(resolve_paths(more, &project()));
            }
        }
        // An option this file cannot map would make the in-process
        // translation differ from corpus-rate's: fail here, not per file.
        let options = options_for(&args).unwrap_or_else(|e| panic!("{file}: {e}"));
        let has_entry_points = stage_c
            .iter()
            .any(|&c| cell(c).parse::<u32>().unwrap_or(0) > 0)
            || cell(other_c).contains("stitchable");
        jobs.push(Job {
            file,
            origin: cell(origin_c).to_string(),
            path,
            args,
            options,
            has_entry_points,
        });
    }
    jobs
}

/// The library options for command-line options, as `CompileArgs::options`
/// in src/bin/msl2wgsl.rs builds them.
fn options_for(args: &[String]) -> Result<Options, String> {
    // Only whether a file translates matters here: stop at its first error
    // instead of recovering to report up to 20 (each one re-parses the
    // file, seconds for a failing MLX kernel in a debug build).
    let mut options = Options {
        error_limit: msl2wgsl::ErrorLimit::new(1),
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("`{flag}` needs a value"))
        };
        match a.as_str() {
            "-I" => options.preprocess.include_dirs.push(value("-I")?.into()),
            s if s.starts_with("-I") => options.preprocess.include_dirs.push(s[2..].into()),
            "-include" => options
                .preprocess
                .forced_includes
                .push(value("-include")?.into()),
            "-D" => options.preprocess.defines.push(define(&value("-D")?)),
            s if s.starts_with("-D") => options.preprocess.defines.push(define(&s[2..])),
            "--platform" => {
                options.preprocess.platform = match value("--platform")?.as_str() {
                    "macos" => Platform::MacOs,
                    "ios" => Platform::Ios,
                    v => return Err(format!("`--platform {v}`")),
                }
            }
            "--half" => {
                options.half = match value("--half")?.as_str() {
                    "f16" => HalfMode::F16,
                    "f32" => HalfMode::F32,
                    v => return Err(format!("`--half {v}`")),
                }
            }
            "--target" => {
                options.target = match value("--target")?.as_str() {
                    "webgpu" => Target::WebGpu,
                    "wgpu" => Target::Wgpu,
                    v => return Err(format!("`--target {v}`")),
                }
            }
            "--entry" => options.entries.push(value("--entry")?),
            "--threadgroup-memory" => {
                let v = value("--threadgroup-memory")?;
                let parsed = v
                    .split_once('=')
                    .and_then(|(n, b)| Some((n.parse().ok()?, b.parse().ok()?)));
                let pair = parsed.ok_or_else(|| format!("`--threadgroup-memory {v}`"))?;
                options.threadgroup_memory.push(pair);
            }
            other => {
                return Err(format!(
                    "option `{other}` is not mapped to library::Options by tests/corpus.rs"
                ))
            }
        }
    }
    Ok(options)
}

fn define(s: &str) -> (String, Option<String>) {
    match s.split_once('=') {
        Some((n, v)) => (n.to_string(), Some(v.to_string())),
        None => (s.to_string(), None),
    }
}

/// Translates one file as `msl2wgsl FILE ARGS...` would.
fn translate(job: &Job) -> Outcome {
    match Library::from_file(&job.path, &job.options) {
        Ok(library) if job.has_entry_points && library.functions().is_empty() => {
            Outcome::NoEntryPoints
        }
        Ok(_) => Outcome::Translated,
        Err(failure) => {
            let errors: Vec<_> = failure.diagnostics.errors().collect();
            // Paths relative to the corpus root, as the lists name files.
            let root = job.path.display().to_string();
            let root = root.strip_suffix(&job.file).unwrap_or_default().to_string();
            let first_line = |d: &msl2wgsl::diagnostics::Diagnostic| {
                let rendered = d.render(&failure.source_map);
                let line = rendered.lines().next().unwrap_or_default();
                let line = if root.is_empty() {
                    line.to_string()
                } else {
                    line.replace(&root, "")
                };
                // `FILE:LINE:COL: error: ...`: the file is the row's own unless a header is named.
                let line = match line.strip_prefix(&format!("{}:", job.file)) {
                    Some(rest) => format!("line {rest}"),
                    None => line,
                };
                let code = d.code().as_str();
                if line.contains(code) {
                    line
                } else {
                    format!("{line} [{code}]")
                }
            };
            if let Some(ice) = errors.iter().find(|d| d.code() == Code::Internal) {
                return Outcome::Internal(first_line(ice));
            }
            match errors.first() {
                Some(d) => Outcome::Failed {
                    code: d.code().as_str().to_string(),
                    first: first_line(d),
                },
                None => Outcome::Failed {
                    code: String::new(),
                    first: "failed without an error".into(),
                },
            }
        }
    }
}

/// What a panic carried.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

/// CPU time the calling thread has used, where the system says
/// (`/proc/thread-self/stat` on Linux: user and system time in clock ticks,
/// which Linux reports to user space at 100 per second on every
/// architecture), or `None` elsewhere.
///
/// A translation is judged by its own CPU time, not by wall-clock time: on
/// a loaded machine (CI's two cores running two tests at once, or builds
/// beside the test) the wall clock of a slow file doubles or triples, and
/// the ratchet must not fail for that.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The command name, in parentheses, may hold spaces: count from after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of proc(5) (utime, stime) are the 12th and 13th
    // after the name.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// A translation's cost: its thread's CPU time where the system reports
/// it, else the wall-clock time since `start`.
fn cost_since(start: Instant, cpu_start: Option<Duration>) -> Duration {
    match (cpu_start, thread_cpu_time()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => start.elapsed(),
    }
}

/// Translates every job on `threads` threads; a job that uses more than
/// its CPU limit is recorded as timed out, and one still running after its
/// hang limit of wall-clock time too, a fresh thread taking its place.
fn run_all(jobs: &[Job], threads: usize, budgets: &Budgets) -> Vec<(Outcome, Duration)> {
    let jobs = Arc::new(jobs.to_vec());
    let next = Arc::new(AtomicUsize::new(0));
    let running: Arc<Mutex<HashMap<usize, Instant>>> = Arc::default();
    let (tx, rx) = mpsc::channel::<(usize, Outcome, Duration)>();
    let spawn = || {
        let (jobs, next, running, tx) = (jobs.clone(), next.clone(), running.clone(), tx.clone());
        // With the library's stack (and a margin for this frame) each
        // translation runs on this thread, where its CPU time is measured.
        let worker =
            std::thread::Builder::new().stack_size(msl2wgsl::TRANSLATION_STACK + (16 << 20));
        worker
            .spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(job) = jobs.get(i) else { break };
                let start = Instant::now();
                let cpu_start = thread_cpu_time();
                running.lock().unwrap().insert(i, start);
                let outcome = match catch_unwind(AssertUnwindSafe(|| translate(job))) {
                    Ok(outcome) => outcome,
                    Err(panic) => Outcome::Panicked(panic_text(&*panic)),
                };
                running.lock().unwrap().remove(&i);
                if tx.send((i, outcome, cost_since(start, cpu_start))).is_err() {
                    break;
                }
            })
            .expect("a corpus worker thread");
    };
    for _ in 0..threads {
        spawn();
    }
    let mut results: Vec<Option<(Outcome, Duration)>> = vec![None; jobs.len()];
    let mut left = jobs.len();
    while left > 0 {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok((i, outcome, took)) => {
                if results[i].is_none() {
                    // The CPU limit guards what translates; a file refused
                    // with an error is held to the hang limit only (MLX's
                    // steel GEMMs now lower their loaders before stopping
                    // at an unsupported form, which takes longer: the
                    // closing note of 2026-12-06, third session).
                    let limit = budgets.cpu_limit(&jobs[i].file);
                    let outcome = if took > limit && outcome == Outcome::Translated {
                        Outcome::TimedOut
                    } else {
                        outcome
                    };
                    results[i] = Some((outcome, took));
                    left -= 1;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => unreachable!("the sender is held here"),
        }
        let stuck: Vec<(usize, Duration)> = running
            .lock()
            .unwrap()
            .iter()
            .map(|(&i, start)| (i, start.elapsed()))
            .filter(|&(i, took)| took > budgets.hang_limit(&jobs[i].file) && results[i].is_none())
            .collect();
        for (i, took) in stuck {
            results[i] = Some((Outcome::TimedOut, took));
            left -= 1;
            spawn();
        }
    }
    results.into_iter().map(|r| r.expect("every job")).collect()
}

fn read_pass_list() -> BTreeSet<String> {
    std::fs::read_to_string(pass_list_path())
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

fn corpus_root() -> Option<PathBuf> {
    let dir = match std::env::var_os("MSL2WGSL_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => project().join("../shared/corpus"),
    };
    let dir = dir.canonicalize().ok()?;
    dir.join("MANIFEST.tsv").is_file().then_some(dir)
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// `  file: detail` lines, at most `max` of them.
fn listing<'a>(items: impl IntoIterator<Item = (&'a str, String)>, max: usize) -> String {
    let items: Vec<_> = items.into_iter().collect();
    let mut out: String = items
        .iter()
        .take(max)
        .map(|(f, d)| {
            if d.is_empty() {
                format!("  {f}\n")
            } else {
                format!("  {f}: {d}\n")
            }
        })
        .collect();
    if items.len() > max {
        out += &format!("  ... and {} more\n", items.len() - max);
    }
    out
}

#[test]
fn listed_corpus_files_still_translate() {
    // Third-party WGSL is checked by ../shared/tools/corpus-rate (naga, wgpu,
    // Tint); the suite's own dump (`MSL2WGSL_DUMP_WGSL`, checked by Tint and
    // the driver in .ci/run) is for the project's tests, whose output must
    // all pass. No other test in this binary translates.
    std::env::remove_var(msl2wgsl::library::dump::DUMP_VAR);
    let Some(corpus) = corpus_root() else {
        assert!(
            !env_flag("MSL2WGSL_REQUIRE_CORPUS"),
            "MSL2WGSL_REQUIRE_CORPUS=1 but there is no corpus at ../shared/corpus (or MSL2WGSL_CORPUS)"
        );
        eprintln!(
            "note: skipping the corpus ratchet: no ../shared/corpus/MANIFEST.tsv beside the checkout \
             (set MSL2WGSL_CORPUS=DIR, or MSL2WGSL_REQUIRE_CORPUS=1 to fail instead)"
        );
        return;
    };
    let extra = tab_lines(&project().join("tests/corpus/options.tsv"));
    let triage: BTreeMap<String, String> = tab_lines(&project().join("tests/corpus/triage.tsv"))
        .into_iter()
        .collect();
    let jobs = jobs(&corpus, &extra);
    let listed = read_pass_list();
    let mut problems = String::new();

    // The lists must name what is there.
    let files: BTreeSet<&str> = jobs.iter().map(|j| j.file.as_str()).collect();
    let stale: Vec<_> = listed
        .iter()
        .filter(|f| !files.contains(f.as_str()))
        .collect();
    if !stale.is_empty() {
        problems += &format!(
            "{} files of tests/corpus/pass.txt are not shader rows of MANIFEST.tsv:\n{}",
            stale.len(),
            listing(stale.iter().map(|f| (f.as_str(), String::new())), 50)
        );
    }
    for f in triage.keys().filter(|f| !files.contains(f.as_str())) {
        problems +=
            &format!("tests/corpus/triage.tsv names {f}, not a shader row of MANIFEST.tsv\n");
    }
    for f in triage.keys().filter(|f| listed.contains(*f)) {
        problems += &format!("{f} is both in pass.txt and triaged (triage.tsv)\n");
    }
    if triage.len() as f64 > TRIAGE_SHARE * jobs.len() as f64 {
        problems += &format!(
            "triage.tsv has {} entries, over {}% of the {} shader files\n",
            triage.len(),
            TRIAGE_SHARE * 100.0,
            jobs.len()
        );
    }
    for (pattern, _) in &extra {
        if !jobs.iter().any(|j| fnmatch(&j.file, pattern)) {
            problems += &format!("tests/corpus/options.tsv pattern `{pattern}` matches no file\n");
        }
    }

    let threads = std::env::var("MSL2WGSL_CORPUS_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get().min(4)))
        .max(1);
    let slowness = budget::slowness(threads, thread_cpu_time);
    let budgets = match Budgets::new(&project().join("tests/corpus/budgets.tsv"), slowness) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    eprintln!(
        "corpus: this machine takes {:.2}x the reference machine's time: a file may take {:.1} s of CPU",
        budgets.slowness,
        budgets.common_limit().as_secs_f64()
    );
    for f in budgets.files().filter(|f| !files.contains(f)) {
        problems +=
            &format!("tests/corpus/budgets.tsv names {f}, not a shader row of MANIFEST.tsv\n");
    }
    let start = Instant::now();
    let results = run_all(&jobs, threads, &budgets);
    let took = start.elapsed();

    // Tallies by origin: (files, translated).
    let mut tally: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (job, (outcome, _)) in jobs.iter().zip(&results) {
        let t = tally.entry(job.origin.as_str()).or_default();
        t.0 += 1;
        t.1 += usize::from(*outcome == Outcome::Translated);
    }
    let slowest = jobs
        .iter()
        .zip(&results)
        .max_by_key(|(_, (_, t))| *t)
        .map(|(j, (_, t))| format!("{} ({:.1} s)", j.file, t.as_secs_f64()))
        .unwrap_or_default();
    eprintln!(
        "corpus: {} shader files in {:.1} s on {threads} threads (slowest: {slowest}); translated: {}",
        jobs.len(),
        took.as_secs_f64(),
        tally
            .iter()
            .map(|(o, (n, t))| format!("{o} {t}/{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );

    // MSL2WGSL_CORPUS_RESULTS=FILE: every file's outcome, for comparing runs.
    if let Some(out) = std::env::var_os("MSL2WGSL_CORPUS_RESULTS") {
        let text: String = jobs
            .iter()
            .zip(&results)
            .map(|(j, (o, t))| {
                let status = match o {
                    Outcome::Translated => "translated".to_string(),
                    Outcome::Failed { code, .. } => format!("failed {code}"),
                    Outcome::Internal(_) => "internal E0900".into(),
                    Outcome::Panicked(_) => "panicked".into(),
                    Outcome::TimedOut => "timed-out".into(),
                    Outcome::NoEntryPoints => "no-entry-points".into(),
                };
                let detail = o.describe().replace(['\t', '\n'], " ");
                format!(
                    "{}\t{}\t{status}\t{:.3}\t{detail}\n",
                    j.file,
                    j.origin,
                    t.as_secs_f64()
                )
            })
            .collect();
        std::fs::write(&out, text).expect("write MSL2WGSL_CORPUS_RESULTS");
    }

    // Too slow anywhere is a regression.
    let slow: Vec<_> = jobs
        .iter()
        .zip(&results)
        .filter(|(_, (o, _))| *o == Outcome::TimedOut)
        .map(|(j, (_, t))| {
            let limit = budgets.cpu_limit(&j.file).as_secs_f64();
            let took = t.as_secs_f64();
            (
                j.file.as_str(),
                format!("{took:.1} s, over its {limit:.1} s"),
            )
        })
        .collect();
    if !slow.is_empty() {
        problems += &format!(
            "{} files took longer than their CPU limit to translate (or four times it in wall-clock time, taken for hung):\n{}",
            slow.len(),
            listing(slow.iter().cloned(), 50)
        );
    }
    // A budget of its own that the file no longer needs is said, not failed
    // (a file near the limit would fail one run in two).
    for (j, (o, t)) in jobs.iter().zip(&results) {
        if budgets.has_own(&j.file) && *o == Outcome::Translated && *t < budgets.common_limit() {
            eprintln!(
                "corpus: {} took {:.1} s, under the common limit: its line in tests/corpus/budgets.tsv may go",
                j.file,
                t.as_secs_f64()
            );
        }
    }

    // Internal compiler errors: listed everywhere, a failure for listed files.
    let ices: Vec<_> = jobs
        .iter()
        .zip(&results)
        .filter(|(_, (o, _))| matches!(o, Outcome::Internal(_) | Outcome::Panicked(_)))
        .map(|(j, (o, _))| (j, o))
        .collect();
    eprintln!(
        "corpus: {} translations end in an internal compiler error (E0900) or a panic{}",
        ices.len(),
        if ices.is_empty() { "" } else { ":" }
    );
    eprint!(
        "{}",
        listing(
            ices.iter().map(|(j, o)| (j.file.as_str(), o.describe())),
            200
        )
    );
    let listed_ices: Vec<_> = ices
        .iter()
        .filter(|(j, _)| listed.contains(&j.file))
        .map(|(j, o)| (j.file.as_str(), o.describe()))
        .collect();
    if !listed_ices.is_empty() {
        problems += &format!(
            "{} files of tests/corpus/pass.txt end in an internal compiler error (E0900) or a panic:\n{}",
            listed_ices.len(),
            listing(listed_ices.iter().cloned(), 50)
        );
    }

    // The ratchet: listed files must translate.
    let regressed: Vec<_> = jobs
        .iter()
        .zip(&results)
        .filter(|(j, (o, _))| {
            listed.contains(&j.file)
                && !matches!(
                    o,
                    Outcome::Translated
                        | Outcome::Internal(_)
                        | Outcome::Panicked(_)
                        | Outcome::TimedOut
                )
        })
        .map(|(j, (o, _))| (j.file.as_str(), o.describe()))
        .collect();
    if !regressed.is_empty() {
        problems += &format!(
            "{} files of tests/corpus/pass.txt no longer translate:\n{}",
            regressed.len(),
            listing(regressed.iter().cloned(), 100)
        );
    }
    // How to see the first failure (regression, ICE or timeout) whole.
    if let Some(job) = jobs.iter().find(|j| {
        [&regressed, &listed_ices, &slow]
            .iter()
            .any(|list| list.iter().any(|(f, _)| *f == j.file))
    }) {
        problems += &format!(
            "to see the first one: cargo run -- {} {}\n",
            job.path.display(),
            job.args.join(" ")
        );
    }

    // New passes: print them; with MSL2WGSL_CORPUS_BLESS=1 add them.
    let new: Vec<&str> = jobs
        .iter()
        .zip(&results)
        .filter(|(j, (o, _))| {
            *o == Outcome::Translated && !listed.contains(&j.file) && !triage.contains_key(&j.file)
        })
        .map(|(j, _)| j.file.as_str())
        .collect();
    for f in triage.keys() {
        if let Some((_, (Outcome::Translated, _))) =
            jobs.iter().zip(&results).find(|(j, _)| &j.file == f)
        {
            eprintln!("note: {f} is triaged (not valid MSL) but translates");
        }
    }
    if env_flag("MSL2WGSL_CORPUS_BLESS") {
        let mut grown = listed.clone();
        grown.extend(new.iter().map(|f| f.to_string()));
        let text: String = grown.iter().map(|f| format!("{f}\n")).collect();
        std::fs::write(pass_list_path(), text).expect("write tests/corpus/pass.txt");
        eprintln!(
            "corpus: MSL2WGSL_CORPUS_BLESS=1: tests/corpus/pass.txt now lists {} files ({} new)",
            grown.len(),
            new.len()
        );
    } else if !new.is_empty() {
        eprintln!(
            "corpus: {} files translate but are not in tests/corpus/pass.txt; \
             `MSL2WGSL_CORPUS_BLESS=1 cargo test --test corpus` adds them:",
            new.len()
        );
        eprint!(
            "{}",
            listing(new.iter().map(|f| (*f, "translates".to_string())), 200)
        );
    }

    assert!(problems.is_empty(), "corpus ratchet:\n{problems}");
}

/// The time limit can fire: a translation on a worker with the library's
/// stack runs on that thread, so the worker's CPU time counts it. (When
/// the library translated on a thread of its own, every file measured
/// about 0 s here and only the wall-clock hang limit held.)
#[test]
fn workers_measure_the_translations_cpu_time() {
    if thread_cpu_time().is_none() {
        return; // no per-thread CPU clock on this system: wall clock is used
    }
    let sum = vec!["o[0]"; 16_000].join(" + ");
    let source = format!(
        "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ o[i] = {sum}; }}"
    );
    let worker = std::thread::Builder::new().stack_size(msl2wgsl::TRANSLATION_STACK + (16 << 20));
    let (cpu, wall) = worker
        .spawn(move || {
            let (start, cpu_start) = (Instant::now(), thread_cpu_time());
            for _ in 0..3 {
                assert!(
                    msl2wgsl::Library::from_source("t.metal", &source, &Default::default()).is_ok()
                );
            }
            (cost_since(start, cpu_start), start.elapsed())
        })
        .unwrap()
        .join()
        .unwrap();
    // Three translations of a 16,000-term sum take a few hundred
    // milliseconds of CPU; a worker that only waited would show 0-10 ms.
    assert!(
        cpu >= Duration::from_millis(60),
        "worker CPU {cpu:?} of {wall:?} wall-clock"
    );
}

#[test]
fn fnmatch_is_pythons() {
    assert!(fnmatch(
        "Hi-Rez__Satin/Example/Assets/a/b.metal",
        "Hi-Rez__Satin/Example/*"
    ));
    assert!(fnmatch("a/b/c.metal", "*.metal"));
    assert!(!fnmatch("a/b/c.metal", "*.h"));
    assert!(fnmatch("P/Library/x.metal", "P/[!S]*"));
    assert!(!fnmatch("P/Satin/x.metal", "P/[!S]*"));
    assert!(fnmatch("x1", "x[0-9]") && !fnmatch("xa", "x[0-9]"));
    assert!(fnmatch("a?c", "a[?]c") && !fnmatch("abc", "a[?]c"));
    assert!(fnmatch("ab", "a?") && !fnmatch("a", "a?"));
    assert!(fnmatch("[x", "[x"));
}

#[test]
fn shlex_split_is_pythons() {
    let split = |s| shlex_split(s).unwrap();
    assert_eq!(
        split("-I Sources/Satin/Pipelines"),
        ["-I", "Sources/Satin/Pipelines"]
    );
    assert_eq!(
        split("  -D 'A=1 2'  -D\"B=\\\"x\\\"\" c\\ d"),
        ["-D", "A=1 2", "-DB=\"x\"", "c d"]
    );
    assert_eq!(split("''"), [""]);
    assert!(split("").is_empty());
    assert!(shlex_split("'open").is_err());
}

#[test]
fn options_map_like_the_command_line() {
    let args: Vec<String> =
        "-I a -Ib -D X -DY=2 -include p.metal --platform ios --half f32 --target wgpu --entry k"
            .split(' ')
            .map(String::from)
            .collect();
    let o = options_for(&args).unwrap();
    assert_eq!(
        o.preprocess.include_dirs,
        [PathBuf::from("a"), PathBuf::from("b")]
    );
    assert_eq!(
        o.preprocess.defines,
        [
            ("X".to_string(), None),
            ("Y".to_string(), Some("2".to_string()))
        ]
    );
    assert_eq!(o.preprocess.forced_includes, [PathBuf::from("p.metal")]);
    assert_eq!(o.preprocess.platform, Platform::Ios);
    assert_eq!((o.half, o.target), (HalfMode::F32, Target::Wgpu));
    assert_eq!(o.entries, ["k"]);
    assert!(options_for(&["--bogus".to_string()]).is_err());
    assert!(options_for(&["-I".to_string()]).is_err());
}

/// The limits scale with the machine's slowness; budgets.tsv gives a file
/// its own limit and says what it cannot parse; the measured slowness is
/// within its bounds.
#[test]
fn budgets_scale_with_the_machine() {
    let dir = std::env::temp_dir().join(format!("msl2wgsl-budgets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tsv = dir.join("budgets.tsv");
    let own = budget::LIMIT.as_secs() * 3;
    std::fs::write(
        &tsv,
        format!("# comment\na/slow.metal\t{own} thousands of kernels\n"),
    )
    .unwrap();
    let reference = Budgets::new(&tsv, 1.0).unwrap();
    assert_eq!(reference.cpu_limit("b.metal"), budget::LIMIT);
    assert_eq!(reference.common_limit(), budget::LIMIT);
    assert_eq!(
        reference.cpu_limit("a/slow.metal"),
        Duration::from_secs(own)
    );
    assert_eq!(reference.hang_limit("b.metal"), budget::LIMIT * 4);
    assert!(reference.has_own("a/slow.metal") && !reference.has_own("b.metal"));
    let twice = Budgets::new(&tsv, 2.0).unwrap();
    assert_eq!(twice.cpu_limit("b.metal"), budget::LIMIT * 2);
    assert_eq!(
        twice.cpu_limit("a/slow.metal"),
        Duration::from_secs(own * 2)
    );

    std::fs::write(&tsv, "a/slow.metal\tsoon\n").unwrap();
    let err = Budgets::new(&tsv, 1.0).err().expect("an unparsed budget");
    assert!(
        err.contains("`a/slow.metal` needs a budget in whole seconds"),
        "{err}"
    );
    std::fs::write(&tsv, "a/slow.metal\t1 under the limit\n").unwrap();
    assert!(Budgets::new(&tsv, 1.0).is_err(), "a budget under the limit");
    std::fs::remove_dir_all(&dir).unwrap();

    // Without a clock, the reference limits; with one, a bounded factor.
    assert_eq!(budget::slowness(2, || None), 1.0);
    let measured = budget::slowness(2, thread_cpu_time);
    assert!((0.25..=4.0).contains(&measured), "{measured}");
}

/// The calibration's CPU time here, on two threads at once as the ratchet
/// measures it (for REFERENCE_CALIBRATION on a new reference machine):
/// `cargo test --test corpus calibration -- --ignored --nocapture`.
#[test]
#[ignore = "prints a measurement"]
fn calibration_time() {
    for _ in 0..3 {
        let s = budget::slowness(2, thread_cpu_time);
        eprintln!(
            "calibration: {:.0} ms",
            s * budget::REFERENCE_CALIBRATION.as_secs_f64() * 1e3
        );
    }
}
