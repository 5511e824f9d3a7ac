//! A simulated OpenMP target for testing OMPD libraries.
//!
//! One logical [`model`] of runtime state is lowered by [`image`] into the memory an LLVM-family
//! OMPD library expects, for any [`arch`] variant (32/64-bit × little/big-endian) and [`layout`]
//! policy, and served to the library through the callback table in [`callbacks`], which records
//! every allocation, read and lookup in its [`ledger`].
//!
//! Map of the crate:
//! - [`arch`]: pointer width and byte order; every encode and decode of target values.
//! - [`model`]: threads, regions, tasks, ICVs; the builder and the default scenarios.
//! - [`layout`]: struct layouts under a policy, and the layout symbols a runtime exports.
//! - [`image`]: target memory, lowering a model into it and reading it back.
//! - [`callbacks`]: the `extern "C"` callback table served from an image (the only `unsafe` here).
//! - [`source`]: the one interface every target (simulated, live, core) serves the callbacks from.
//! - [`ledger`]: allocations, frees, reads and lookups made through the callbacks.
//! - [`faults`]: the fault plan that makes callbacks fail in controlled ways, and its census.
//! - [`strategy`]: proptest strategies for whole runtime states.

pub mod arch;
pub mod callbacks;
pub mod faults;
pub mod image;
pub mod layout;
pub mod ledger;
pub mod model;
pub mod source;
pub mod strategy;
