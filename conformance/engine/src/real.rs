//! Real targets: a live process (stopped under ptrace) or an ELF core file, served to the library
//! through the same callbacks as a simulated image, with the truth the checks judge against
//! lifted from what the fixture program recorded about itself (`fixture_protocol::truth`).
//!
//! A simulated target knows everything about itself; a real one knows only what its fixture
//! recorded through the OpenMP API and the OMPT tool. [`Known`] says which facts those are, and
//! [`applies`] lets a check run on a real target only when its registry entry names the facts it
//! judges against (`Check::real`) and all of them are known.
//!
//! Submodules, along the seams: [`open`](open()) (opening a target and reading its fixture's
//! records), `lift` (the records lifted into a model), `ompt` (the OMPT view: tool data and
//! frames, cross-checked against the API view), `words` (the state word the runtime keeps for
//! each thread, read by the harness), `discover` (the OMPD libraries a target's runtime names).
//! This file keeps [`applies`].

mod discover;
mod lift;
mod ompt;
mod open;
mod words;

pub use discover::discover;
pub use lift::{lift, unknown_state, Lifted};
pub use ompd_checks::known::{Fact, Known};
pub use open::{open, recorded, start_environment, OpenedTarget, RealTarget, Recorded};
pub use words::{read_into as read_state_words, state_words};

use ompd_checks::Check;
use ompd_serve::source::TargetKind;

/// Whether `check` runs on a target that knows `known`: `Err` gives the skip reason.
pub fn applies(check: &Check, known: &Known, kind: TargetKind) -> Result<(), String> {
    let Some(needs) = check.real else {
        return Err(format!(
            "not judged on {} targets: the check reads model facts a fixture does not record",
            kind.name()
        ));
    };
    match needs.iter().find(|f| !known.has(**f)) {
        None => Ok(()),
        Some(f) => Err(known.reason(*f)),
    }
}
