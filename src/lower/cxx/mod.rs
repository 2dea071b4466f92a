//! The C++ of MSL: calls, overload resolution, template argument deduction,
//! `auto`/`decltype`, member functions, constructors and operator overloads.
//!
//! Each user function is specialised per the buffers its pointer arguments
//! point into (WGSL functions take no storage pointers: see
//! `metal::buffer_pointers`). Every argument of a call is lowered exactly
//! once (`args`), whatever the overloads and templates it is ranked against.

pub(in crate::lower) mod aggregate;
pub(in crate::lower) mod args;
pub(in crate::lower) mod assignment;
pub(in crate::lower) mod bases;
pub(in crate::lower) mod call;
pub(in crate::lower) mod construct;
pub(in crate::lower) mod conversion_operands;
pub(in crate::lower) mod deduce;
pub(in crate::lower) mod forwarding_index;
pub(in crate::lower) mod functions;
pub(in crate::lower) mod lambdas;
pub(in crate::lower) mod members;
pub(in crate::lower) mod overloads;
pub(in crate::lower) mod reference_calls;
pub(in crate::lower) mod tail_calls;
