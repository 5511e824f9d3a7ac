//! The typed parameter a family's table row gives its check function ([`Arg`]): what one
//! function, shared by several rows, needs to know of its row. Values, never text a function
//! parses back.

use ompd_abi::{EntryPoint, HandleKind};
use sim_target::image::corrupt;

/// What a row tells its check function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// Nothing: the function is the row's own.
    None,
    /// An ICV, by its name in the specification (`icv.value.*`, `icv.string.*`).
    Icv(&'static str),
    /// A symbol of the runtime (`runtime.*`).
    Symbol(&'static str),
    /// The kind of handle compared (`compare.*`).
    Handle(HandleKind),
    /// A callback fault injected into the calls of one routine (`fault.<routine>.*`).
    Fault(FaultKind, EntryPoint),
    /// A callback fault injected into the calls of every routine (`fault.code.*`).
    FaultEverywhere(FaultKind),
    /// A NULL pointer argument of a routine (`null.*`).
    Null(NullArg),
    /// A corruption of the target's image (`corrupt.*`).
    Corruption(corrupt::Kind),
}

/// A kind of callback fault the fault-injection families inject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// A memory read fails.
    Read,
    /// A memory read returns fewer bytes than asked.
    ShortRead,
    /// A symbol lookup fails.
    Symbol,
    /// An allocation fails.
    Alloc,
    /// A byte-order conversion fails.
    Conversion,
    /// A thread-context lookup fails.
    ThreadContext,
    /// A target access says the context is stale.
    StaleHandle,
}

impl FaultKind {
    /// Every kind, in table order.
    pub const ALL: [FaultKind; 7] = [
        FaultKind::Read,
        FaultKind::ShortRead,
        FaultKind::Symbol,
        FaultKind::Alloc,
        FaultKind::Conversion,
        FaultKind::ThreadContext,
        FaultKind::StaleHandle,
    ];

    /// Its name in check ids (`fault.get_thread_handle.short_read`).
    pub const fn id(self) -> &'static str {
        match self {
            FaultKind::Read => "read",
            FaultKind::ShortRead => "short_read",
            FaultKind::Symbol => "symbol",
            FaultKind::Alloc => "alloc",
            FaultKind::Conversion => "conversion",
            FaultKind::ThreadContext => "thread_context",
            FaultKind::StaleHandle => "stale_handle",
        }
    }

    /// The kind whose id is `id`; usable in constants, where an unknown id stops the build.
    pub const fn by_id(id: &str) -> FaultKind {
        let mut i = 0;
        while i < FaultKind::ALL.len() {
            if ompd_abi::str_eq(FaultKind::ALL[i].id(), id) {
                return FaultKind::ALL[i];
            }
            i += 1;
        }
        panic!("not a fault kind")
    }
}

/// What a NULL pointer argument is, which decides the code required.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullClass {
    /// An out-parameter: `bad_input` (OMPD-RC-003).
    Out,
    /// A handle: `stale_handle`, `bad_input` warns (OMPD-RC-004).
    Handle,
    /// Another input pointer: `bad_input`.
    Input,
}

/// One pointer argument of a routine, passed as NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NullArg {
    /// What the argument is.
    pub class: NullClass,
    /// The routine.
    pub entry: EntryPoint,
    /// The argument's name, as in `omp-tools.h`.
    pub name: &'static str,
}
