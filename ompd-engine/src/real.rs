//! Real targets: a live process (stopped under ptrace) or an ELF core file, served to the library
//! through the same callbacks as a simulated image, with the truth the checks judge against
//! lifted from what the fixture program recorded about itself (`fixture_protocol::truth`).
//!
//! A simulated target knows everything about itself; a real one knows only what its fixture
//! recorded through the OpenMP API and the OMPT tool. [`Known`] says which facts those are, and
//! [`applies`] lets a check run on a real target only when it is listed with the facts it
//! judges against and all of them are known. A check not listed stays simulated-only, so a new
//! check never judges a real process against a value nobody recorded.
//!
//! Submodules, along the seams: [`open`](open()) (opening a target and reading its fixture's
//! records), `lift` (the records lifted into a model), `ompt` (the OMPT view: tool data and
//! frames, cross-checked against the API view), `discover` (the OMPD libraries a target's runtime
//! names). This file keeps the table of the checks that run on real targets and its reader.

mod discover;
mod lift;
mod ompt;
mod open;

pub use discover::discover;
pub use lift::{lift, unknown_state, Lifted};
pub use ompd_checks::known::{Fact, Known};
pub use open::{open, recorded, start_environment, OpenedTarget, RealTarget, Recorded};

use ompd_serve::source::TargetKind;

/// The per-ICV checks whose truth a fixture records (its current task's data environment, its
/// region, the address-space-wide ICVs the fixture sets); nthreads-var and bind-var, which also
/// need the start environment, are in [`REAL`].
const RECORDED_ICVS: &[&str] = &[
    "dyn-var",
    "run-sched-var",
    "thread-limit-var",
    "max-active-levels-var",
    "active-levels-var",
    "levels-var",
    "cancel-var",
    "default-device-var",
    "max-task-priority-var",
    "debug-var",
    "num-procs-var",
    "ompd-num-procs-var",
    "thread-num-var",
    "ompd-thread-num-var",
    "final-task-var",
    "ompd-final-var",
    "ompd-final-task-var",
    "implicit-task-var",
    "ompd-implicit-var",
    "ompd-implicit-task-var",
    "team-size-var",
    "ompd-team-size-var",
];

/// The checks that run on real targets, by id or glob ([`ompd_report::glob`]), with the facts
/// each judges against; the other per-ICV value checks follow [`RECORDED_ICVS`]. Everything else is
/// simulated-only.
pub(crate) const REAL: &[(&str, &[Fact])] = {
    use Fact::*;
    &[
        ("aspace.process_initialize.compatible_target", &[]),
        ("aspace.omp_version.matches_model", &[OmpVersion]),
        ("aspace.omp_version_string.tool_owned", &[]),
        ("aspace.device_initialize.unsupported_device", &[]),
        ("aspace.release.ok", &[]),
        ("thread.*", &[Threads]),
        ("parallel.*", &[Threads, Regions]),
        ("task.curr.*", &[Threads, Regions, Tasks]),
        ("task.generating.*", &[Threads, Regions, Tasks]),
        ("task.scheduling.*", &[Threads, Regions, Tasks]),
        ("task.in_parallel.*", &[Threads, Regions, Tasks]),
        ("task.parallel.*", &[Threads, Regions, Tasks]),
        (
            "task.frame.matches_model",
            &[Threads, Regions, Tasks, Frames],
        ),
        ("task.frame.flags_*", &[Threads, Regions, Tasks]),
        ("task.function.*", &[Threads, Regions, Tasks, Functions]),
        ("state.enumerate.*", &[]),
        ("state.get.*", &[Threads, States]),
        ("icv.enumerate.*", &[]),
        ("icv.value.unknown_id", &[Threads, Regions, Tasks]),
        (
            "icv.value.nthreads-var",
            &[Threads, Regions, Tasks, IcvLists],
        ),
        ("icv.value.bind-var", &[Threads, Regions, Tasks, IcvLists]),
        ("icv.value.scope_mismatch", &[Threads, Regions, Tasks]),
        ("icv.string.unknown_id", &[Threads, Regions, Tasks]),
        ("icv.string.scope_mismatch", &[Threads, Regions, Tasks]),
        ("icv.string.integer_agrees", &[Threads, Regions, Tasks]),
        ("icv.string.run-sched-var", &[Threads, Regions, Tasks]),
        (
            "icv.string.nthreads-var",
            &[Threads, Regions, Tasks, IcvLists],
        ),
        ("icv.string.bind-var", &[Threads, Regions, Tasks, IcvLists]),
        (
            "icv.scope.every_pair_answerable",
            &[Threads, Regions, Tasks],
        ),
        ("tool_data.*", &[Threads, Regions, Tasks, ToolData]),
        ("dcv.get.well_formed", &[]),
        ("dcv.get.memory_owned", &[]),
        ("dcv.get.names_match_model", &[DisplayEnv]),
        ("dcv.get.values_match_model", &[DisplayEnv]),
        ("dcv.rel.*", &[]),
        ("compare.*", &[Threads, Regions, Tasks]),
        ("own.*", &[Threads, Regions, Tasks]),
        ("null.*", &[Threads, Regions, Tasks]),
        ("fault.*", &[Threads, Regions, Tasks]),
        ("corrupt.*", &[Image]),
        ("runtime.*", &[RuntimeInterface]),
        ("callbacks.contract.*", &[]),
    ]
};

/// Whether check `id` runs on a target that knows `known`: `Err` gives the skip reason.
pub fn applies(id: &str, known: &Known, kind: TargetKind) -> Result<(), String> {
    // The table first; then a per-ICV check by whether the fixture records its ICV.
    let needs = lookup(id).or_else(|| {
        let icv = id.strip_prefix("icv.value.")?;
        Some(if RECORDED_ICVS.contains(&icv) {
            &[Fact::Threads, Fact::Regions, Fact::Tasks][..]
        } else {
            &[Fact::UnrecordedGlobals][..]
        })
    });
    let Some(needs) = needs else {
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

fn lookup(id: &str) -> Option<&'static [Fact]> {
    REAL.iter()
        .find(|(pat, _)| ompd_report::glob(pat, id))
        .map(|(_, f)| *f)
}
