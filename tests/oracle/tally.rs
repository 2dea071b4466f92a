//! Counting outcomes by category, with a few examples of each.

use std::collections::BTreeMap;

/// Examples kept per category.
const EXAMPLES: usize = 5;

/// Examples kept per category with `MSL2WGSL_ORACLE_ALL=1`.
const ALL_EXAMPLES: usize = 100_000;

/// Counts by category, with the first few examples.
#[derive(Default, Debug)]
pub struct Tally {
    counts: BTreeMap<String, (usize, Vec<String>)>,
}

impl Tally {
    /// Counts one case of `category`; `example` is kept if few are.
    pub fn add(&mut self, category: &str, example: String) {
        let slot = self.counts.entry(category.to_string()).or_default();
        slot.0 += 1;
        let all = std::env::var("MSL2WGSL_ORACLE_ALL").is_ok_and(|v| v == "1");
        if slot.1.len() < if all { ALL_EXAMPLES } else { EXAMPLES } {
            slot.1.push(example);
        }
    }

    /// How many cases of `category`.
    pub fn count(&self, category: &str) -> usize {
        self.counts.get(category).map_or(0, |c| c.0)
    }

    /// All cases.
    pub fn total(&self) -> usize {
        self.counts.values().map(|c| c.0).sum()
    }

    /// One line per category, with examples when `examples`.
    pub fn report(&self, examples: bool) -> String {
        let mut out = String::new();
        for (category, (n, list)) in &self.counts {
            out += &format!("{n:6}  {category}\n");
            if examples {
                for e in list {
                    out += &format!("          {e}\n");
                }
            }
        }
        out
    }
}
