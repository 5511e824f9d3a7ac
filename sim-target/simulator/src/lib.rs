//! A simulated OpenMP target for testing OMPD libraries.
//!
//! One logical [`model`] of runtime state is lowered by [`image`] into the memory an LLVM-family
//! OMPD library expects, for any architecture variant (32/64-bit × little/big-endian,
//! `ompd_serve::arch`) and [`layout`] policy, and served to the library as an `ompd_serve` source
//! through its callback table.
//!
//! Map of the crate:
//! - [`model`]: threads, regions, tasks, ICVs; the builder and the default scenarios.
//! - [`layout`]: struct layouts under a policy, and the layout symbols a runtime exports.
//! - [`image`]: lowering a model into target memory, reading it back, tearing it, serving it.
//! - [`strategy`]: proptest strategies for whole runtime states.

pub mod image;
pub mod layout;
pub mod model;
pub mod strategy;
