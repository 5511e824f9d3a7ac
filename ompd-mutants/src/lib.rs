//! The mutation kit's forwarding OMPD library.
//!
//! Built once as a cdylib, it is staged by `cargo xtask mutants` into one directory per mutant
//! beside a correct inner library (`libompd_inner.so`) and a file naming the mutant. Every OMPD
//! 5.2 routine forwards to the inner library; the one deviation of the mutant named (see
//! [`table::MUTANTS`]) acts on its entry point. Without a name it is the clean forwarding
//! baseline, which must judge exactly as the inner library does.

pub mod table;

mod exports;
mod hooks;
mod inner;
mod word;
mod wrap;

pub use inner::{INNER_FILE, MUTANT_FILE};
