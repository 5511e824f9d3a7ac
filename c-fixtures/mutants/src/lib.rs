//! The mutation kit's forwarding OMPD library.
//!
//! Built once per API generation as a cdylib (`v5.2/`, `tr2.001/`), it is staged by `cargo xtask mutants` into one directory per mutant
//! beside a correct inner library (`libompd_inner.so`) and a file naming the mutant. Every OMPD
//! 5.2 routine forwards to the inner library; the one deviation of the mutant named (see
//! [`table::MUTANTS`]) acts on its entry point. Without a name it is the clean forwarding
//! baseline, which must judge exactly as the inner library does.

pub mod table;

mod forward;
mod hooks;
mod inner;
mod word;
mod wrap;

pub use inner::{INNER_FILE, MUTANT_FILE};
pub use ompd_abi as abi;

/// What [`forward!`]'s expansion calls; not an interface.
#[doc(hidden)]
pub mod __private {
    pub use crate::hooks::{after, before};

    /// Everything the forwarding needs on the heap, set up before any entry point runs.
    pub fn prepare() {
        crate::inner::prepare();
        crate::hooks::prepare();
    }
    pub use crate::inner::routine;
    pub use crate::word::Word;
}
