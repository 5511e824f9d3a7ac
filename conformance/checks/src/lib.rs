//! The checks: every check is data (id, requirement ids, severity, entry points, stage) plus a
//! small function, defined in a table of its family and registered once in [`registry`].
//!
//! Checks judge what a library answers against the truth of the scenario's model. They never
//! panic on a library's answer and never return `Err`: every behaviour becomes a [`Verdict`].
//!
//! # Where a check lives
//!
//! A check's file is named after its id's first component: `thread.handle.by_pthread_id` is in
//! `src/checks/thread.rs`, `icv.string.*` in `src/checks/icv/` (a family of two parts or a big
//! one is a directory: `icv/`, `task/`, `corrupt/`). `static.*` lives in `checks/static.rs`
//! (the module is `r#static`). `CHECKS.tsv` gives the exact file and line of every id.
//!
//! # Run order
//!
//! Checks run in registry order ([`registry`]), stage by stage: the static checks (judged from
//! the file by the supervisor), then the library-stage version queries, the library-stage NULL
//! checks and the initialize/finalize checks, then in every target unit the families from
//! `aspace` to `runtime`, the target-stage NULL checks, the corrupted images, the injected
//! faults, and last the checks that close a unit (no direct output, the address-space release,
//! the callback contract).
//!
//! # Modules
//!
//! Outside `checks/` lives what every family shares: [`Check`] and [`Stage`] (`check`), the
//! typed parameter a table row gives its function ([`Arg`], `arg`),
//! [`Verdict`] and [`Severity`] (`verdict`), [`Ctx`] and its ICV table (`ctx`), the walks to the
//! handles the families judge (`handles`), [`Judge`] and the judging helpers (`judge`), the
//! registry (`registry`), the early-return macros (`macros`), [`known`], [`profile`] and
//! [`variants`] (which checks judge each runtime variant of the simulator).

mod arg;
mod check;
mod checks;
mod ctx;
mod handles;
mod judge;
pub mod known;
mod macros;
pub mod profile;
mod registry;
pub mod variants;
mod verdict;

pub use arg::{Arg, FaultKind, NullArg, NullClass};
pub use check::{Check, Input, Property, Run, Site, Stage};
pub use checks::compare::CompareTables;
pub use checks::lib::OWN_RUNTIME;
pub use checks::runtime::dll_locations_of;
pub use ctx::{
    canonical, innermost_region, is_implicit, knows_kind, native_id_bytes, Ctx, IcvEntry, Setup,
    ICV_SPELLINGS,
};
pub use handles::{TaskSubject, ThreadHandles};
pub use judge::{describe, expect_rc, refused, Judge};
pub(crate) use macros::{aspace_or_skip, entry_or_skip};
pub use profile::Profile;
pub use registry::{find, registry};
pub use verdict::{Severity, Verdict};
