//! How much CPU time the ratchet gives one file's translation.
//!
//! The limits are written for a reference machine and scaled by how fast
//! this one is. Machines differ by more than any margin a fixed limit could
//! leave: the same release binary translated MLX's
//! `steel_gemm_masked.metal` in 18 s of CPU on one 2-core machine and in
//! 35 s on another a day later. A fixed limit then fails for the machine,
//! not for the translator. The speed is measured with a fixed workload that
//! does what a compiler does most (formatting names, hashing them into
//! maps, sorting), none of it the translator's, so that a slower translator
//! is still caught.
//!
//! A file known to take longer than the limit has a budget of its own in
//! `tests/corpus/budgets.tsv`: a file of thousands of kernel instances
//! (MLX's `quantized.metal`: 2,052 kernels) is slow for its size, not for a
//! defect, and it is still held to its budget.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// A file's CPU limit on the reference machine (a 2-core AMD EPYC virtual
/// machine, where MLX's `steel_gemm_masked.metal` takes 35 s in release):
/// corpus-rate gives the release binary 10 s on its own machine; the test
/// profile (opt-level 2 with debug assertions) is a little slower than a
/// release build, and files of hundreds of kernel instances come close.
pub const LIMIT: Duration = Duration::from_secs(if cfg!(debug_assertions) { 60 } else { 20 });

/// The calibration's CPU time on the reference machine, measured as
/// [`slowness`] measures it on two threads (400-500 ms there from run to
/// run). Measured in the test profile, whose opt-level 2 the release
/// profile shares for this code.
pub const REFERENCE_CALIBRATION: Duration = Duration::from_millis(450);

/// How far the limits scale with the machine, either way: a machine more
/// than this much slower or faster than the reference is taken for a
/// mismeasurement (another process took the core) rather than trusted.
const MOST_SCALING: f64 = 4.0;

/// The CPU limits of one run of the ratchet.
pub struct Budgets {
    /// This machine's time for the calibration over the reference's.
    pub slowness: f64,
    /// Files with a budget of their own (reference-machine time).
    files: HashMap<String, Duration>,
}

impl Budgets {
    /// Reads `budgets.tsv` (`FILE<TAB>SECONDS why`) for a machine of this
    /// `slowness` (see [`slowness`]): an error names a line that does not
    /// parse.
    pub fn new(budgets: &Path, slowness: f64) -> Result<Self, String> {
        let mut files = HashMap::new();
        for (file, rest) in super::tab_lines(budgets) {
            let seconds = rest
                .split_whitespace()
                .next()
                .and_then(|s| s.parse::<u64>().ok());
            match seconds {
                Some(s) if Duration::from_secs(s) > LIMIT => {
                    files.insert(file, Duration::from_secs(s));
                }
                _ => {
                    return Err(format!(
                    "{}: `{file}` needs a budget in whole seconds over the limit of {} s, then why",
                    budgets.display(),
                    LIMIT.as_secs()
                ))
                }
            }
        }
        Ok(Budgets { slowness, files })
    }

    /// Whether `file` has a budget of its own.
    pub fn has_own(&self, file: &str) -> bool {
        self.files.contains_key(file)
    }

    /// The files with a budget of their own.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// The CPU time a file without a budget of its own may take on this
    /// machine.
    pub fn common_limit(&self) -> Duration {
        LIMIT.mul_f64(self.slowness)
    }

    /// The CPU time `file` may take on this machine.
    pub fn cpu_limit(&self, file: &str) -> Duration {
        match self.files.get(file) {
            Some(own) => own.mul_f64(self.slowness),
            None => self.common_limit(),
        }
    }

    /// The wall-clock time after which `file` is taken for hung: four
    /// times its CPU limit, so that a loaded machine does not make a
    /// merely slow file look hung.
    pub fn hang_limit(&self, file: &str) -> Duration {
        self.cpu_limit(file) * 4
    }
}

/// This machine's calibration time over the reference's, within
/// [`MOST_SCALING`] either way; 1 where the thread's CPU time is unknown.
///
/// The calibration runs on `threads` threads at once, as the translations
/// do: cores that share caches and memory (or are one core's two hardware
/// threads) are slower together than alone, and a machine timed idle
/// seemed 20% faster than it translated. Each thread keeps the fastest of
/// three runs (a run can only be slowed by what else runs); the slowest
/// thread's time counts.
pub fn slowness(threads: usize, cpu_time: fn() -> Option<Duration>) -> f64 {
    let times: Vec<Option<Duration>> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..threads.max(1))
            .map(|_| scope.spawn(move || fastest_calibration(cpu_time)))
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("calibration"))
            .collect()
    });
    let Some(took) = times
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .and_then(|t| t.into_iter().max())
    else {
        return 1.0;
    };
    (took.as_secs_f64() / REFERENCE_CALIBRATION.as_secs_f64())
        .clamp(1.0 / MOST_SCALING, MOST_SCALING)
}

/// The fastest of three calibrations on this thread; `None` without a clock.
fn fastest_calibration(cpu_time: fn() -> Option<Duration>) -> Option<Duration> {
    let mut best: Option<Duration> = None;
    for _ in 0..3 {
        let before = cpu_time()?;
        let total = std::hint::black_box(calibration());
        let after = cpu_time()?;
        assert_ne!(total, 0);
        let took = after.saturating_sub(before);
        best = Some(best.map_or(took, |b| b.min(took)));
    }
    best
}

/// A fixed amount of compiler-like work: names formatted, hashed into a
/// map of lists, sorted and walked. Deterministic; its result is used so
/// that none of it is optimised away.
pub fn calibration() -> u64 {
    let mut names: HashMap<String, Vec<u32>> = HashMap::new();
    let mut total = 0u64;
    for i in 0..160_000u32 {
        let key = format!("instance<{}, {}>::member_{}", i % 997, i % 13, i % 4099);
        let list = names.entry(key).or_default();
        list.push(i);
        total = total.wrapping_add(list.len() as u64);
    }
    let mut keys: Vec<&String> = names.keys().collect();
    keys.sort();
    for (k, key) in keys.iter().enumerate() {
        total = total.wrapping_add((key.len() * k) as u64 ^ u64::from(names[*key][0]));
    }
    total
}
