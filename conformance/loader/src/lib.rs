//! Loading a vendor OMPD library and calling its entry points, and the static facts about a
//! library file read before any of its code runs.
//!
//! - [`library`]: loading a library and its typed entry-point calls; the only crate with
//!   `unsafe` calls into a vendor library.
//! - [`inspect`]: static facts about a library file (exported symbols, dependencies, ELF class).

pub mod inspect;
pub mod library;
