//! Serving a target to an OMPD library through the callbacks.
//!
//! Any target (a simulated image from `sim-target`, a live process or core file from
//! `live-target`) answers the questions of one [`source::Source`] interface; [`callbacks`] serves
//! the library the `extern "C"` callback table from it, records every allocation, read and
//! lookup in its [`ledger`], and fails on purpose as a [`faults`] plan says.
//!
//! Map of the crate:
//! - [`arch`]: pointer width and byte order; every encode and decode of target values.
//! - [`memory`]: sparse target memory (address → bytes) with bounds-checked reads and writes.
//! - [`source`]: the one interface every target (simulated, live, core) serves the callbacks from.
//! - [`callbacks`]: the `extern "C"` callback table served from a source (the only `unsafe` here).
//! - [`ledger`]: allocations, frees, reads and lookups made through the callbacks.
//! - [`faults`]: the fault plan that makes callbacks fail in controlled ways, and its census.

pub mod arch;
pub mod callbacks;
pub mod faults;
pub mod ledger;
pub mod memory;
pub mod source;
