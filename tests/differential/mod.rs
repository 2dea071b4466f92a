//! Differential testing: random typed MSL programs, translated and run on
//! the GPU, compared with a CPU evaluation with Metal's semantics.
//! TESTING.md ("Differential testing") describes the design.

pub mod ast;
pub mod emit;
pub mod evaluate;
pub mod expressions;
pub mod generate;
pub mod interval;
pub mod rng;
pub mod run;
