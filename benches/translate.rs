//! Placeholder replaced by the translation benchmark.
fn main() {}
