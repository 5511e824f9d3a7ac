//! Loads vendor OMPD libraries and judges them against the simulated target and real ones (live
//! processes, core files).
//!
//! Map of the crate:
//! - [`vendors`]: the known vendor libraries, fetching them into a cache, resolving names.
//! - [`library`]: loading a library and calling its entry points (the only `unsafe` FFI here).
//! - [`inspect`]: static facts about a library file (exported symbols, dependencies) before any
//!   of its code runs.
//! - [`checks`]: the check registry and the check families.
//! - [`worker`]: runs the checks of one unit in a fresh process and streams results.
//! - [`supervisor`]: plans units, runs workers, attributes crashes and timeouts.
//! - [`report`]: outcomes, results and the report renderings.
//! - [`html`]: the self-contained HTML conformance matrix of several libraries.
//! - [`expectations`]: per-vendor expected results with reasons, folded with a run.
//! - [`gate`]: every result judged against the expectations (match, expected-fail,
//!   unexpected-pass, flake, regression), stale entries, the gate's verdict.
//! - [`bless`]: a run's unexpected results in the expectations format, and `--bless`.
//! - [`output`]: the gate-aware human tree and the JUnit XML rendering.
//! - [`cli`]: the `ompd-conform` command line and its exit codes.
//! - [`snapshot`]: golden snapshots of a library's observable answers, recorded and diffed.
//! - [`regression`]: the comparison of two JSON reports (regressions, fixes, changed answers).
//! - [`real`]: live processes and core files as targets, with the truth their fixtures recorded
//!   lifted into the model, and which checks apply to them.
//! - [`fixtures`]: running the OpenMP fixture programs on each runtime for live and core runs.
//! - [`bench`]: throughput figures (instances per second, checks per second with and without
//!   isolation).

pub mod bench;
pub mod bless;
pub mod checks;
pub mod cli;
pub mod coverage;
pub mod expectations;
pub mod fixtures;
pub mod gate;
pub mod html;
pub mod inspect;
pub mod library;
pub mod output;
pub mod property;
pub mod real;
pub mod regression;
pub mod report;
pub mod snapshot;
pub mod supervisor;
pub mod vendors;
pub mod worker;
