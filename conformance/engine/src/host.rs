//! The contract between the engine and the binary that hosts it. The engine starts its worker
//! and zygote processes by executing that binary again with a hidden first argument
//! ([`Entry::arg`]); the binary honours it by calling [`crate::route`] first thing in `main`,
//! before it reads its own command line. `ompd-conform` does, and its `host_entries` test starts each
//! entry through the built binary and reads that entry's own protocol back.

use std::ffi::OsString;

/// A process the engine starts by executing its host binary again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A worker: runs one unit read from stdin ([`crate::worker::main`]).
    Worker,
    /// A fork server of workers ([`crate::zygote::serve`]).
    Zygote,
}

impl Entry {
    /// Every entry a host binary must route.
    pub const ALL: [Entry; 2] = [Entry::Worker, Entry::Zygote];

    /// The first argument that starts it (hidden from the binary's own command line).
    pub fn arg(self) -> &'static str {
        match self {
            Entry::Worker => "__worker",
            Entry::Zygote => "__zygote",
        }
    }

    /// The entry a command line (program name first) starts, if it starts one.
    pub fn of_args(mut args: impl Iterator<Item = OsString>) -> Option<Entry> {
        let first = args.nth(1)?;
        Entry::ALL.into_iter().find(|e| first == e.arg())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> impl Iterator<Item = OsString> {
        a.iter().map(OsString::from).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn only_the_first_argument_starts_an_entry() {
        for e in Entry::ALL {
            assert_eq!(Entry::of_args(args(&["ompd-conform", e.arg()])), Some(e));
            assert_eq!(Entry::of_args(args(&["x", "run", e.arg()])), None);
        }
        assert_eq!(Entry::of_args(args(&["ompd-conform"])), None);
        assert_eq!(Entry::of_args(args(&["ompd-conform", "run"])), None);
    }
}
