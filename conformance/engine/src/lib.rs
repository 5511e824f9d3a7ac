//! Runs the checks: plans units, runs each in a fresh worker process, attributes crashes and
//! timeouts, the property phase over generated cases, real targets (live processes, core files)
//! and the fixtures that make them, answer snapshot probes, and throughput figures.
//!
//! Modules, each depending only on the ones listed before it (no module cycles):
//! - [`parallel`]: independent work on a few threads, answers in order.
//! - [`phases`]: where a run's time goes, per phase, summed over its threads and workers.
//! - [`real`]: live processes and core files as targets (opening them, lifting the truth their
//!   fixtures recorded into the model, the OMPT view, discovery of their OMPD libraries), and
//!   which checks apply to them.
//! - [`snapshot`]: the answer snapshot probes of a library's observable answers, their file
//!   format and their diff.
//! - [`timing`]: the scaling probes a bench worker times against targets of growing size.
//! - [`watchdog`]: the worker's guards on calls into the library: a per-call deadline and a
//!   fatal-signal handler, each naming the call on the result stream before the worker dies.
//! - [`cshared`]: the small shared objects compiled from C at run time (the heap watch's shim,
//!   the bench's empty library).
//! - [`heapwatch`]: the heap watch's C shim, built on first need and preloaded into workers,
//!   which counts the heap-manager calls the library's own code makes (OMPD-MEM-001).
//! - [`host`]: the contract with the binary that hosts the engine: the hidden first arguments
//!   that start a worker or a zygote (which the binary hands to [`route`] first in `main`).
//! - [`worker`]: the units (each with its typed target and scenario), the events a worker
//!   streams, and the worker itself: runs the checks of one unit, or of a batch of units each
//!   against a library instance of its own, in this fresh process.
//! - [`zygote`]: the fork server: a zygote process that forks fresh workers, and the
//!   supervisor's pool of zygotes.
//! - [`process`]: worker processes, executed or forked (how they start, their unit and result
//!   stream, stopping and waiting for them).
//! - [`quarantine`]: entry points that hung or crashed in enough checks of a library, not
//!   called again in its run.
//! - [`supervisor`]: runs one unit in fresh worker processes and turns their events into results;
//!   a crash or timeout is attributed to the check in flight.
//! - [`batch`]: up to 8 units of one library run one after the other in one worker, each
//!   against a library instance of its own, judged as lone units are.
//! - [`collect`]: records the snapshot probes of a library in workers.
//! - [`real_runs`]: the real targets of a run (fixtures on each runtime, live and from core
//!   files; `--pid`; `--core`) and running every library's units against each.
//! - [`property`]: the property phase: every check over generated cases, failures shrunk.
//! - [`run`]: a whole run: options, the plan of units, every library, real target and the
//!   property phase, gathered into the report.
//! - [`bench`]: throughput figures (instances per second, checks per second with and without
//!   isolation).

pub mod batch;
pub mod bench;
pub mod collect;
pub mod cshared;
pub mod heapwatch;
pub mod host;
pub(crate) mod outbox;
pub mod parallel;
pub mod phases;
pub mod process;
pub mod property;
pub mod quarantine;
pub mod real;
pub mod real_runs;
pub mod run;
pub mod snapshot;
pub mod supervisor;
pub mod timing;
pub mod tour;
pub mod watchdog;
pub mod worker;
pub mod zygote;

/// What a binary hosting the engine calls first in `main`: runs the worker or zygote this
/// process was started as ([`host::Entry`]) and returns its exit code, or `None` for any other
/// command line (the binary's own).
pub fn route() -> Option<i32> {
    match host::Entry::of_args(std::env::args_os())? {
        host::Entry::Worker => Some(worker::main()),
        host::Entry::Zygote => Some(zygote::serve()),
    }
}
