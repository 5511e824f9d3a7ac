//! Reviews a run's report: judges it against the per-vendor expectations (the gate), writes
//! the unexpected results back as expectations (bless), compares two reports, and renders the
//! human tree, JUnit XML, the HTML matrix, the coverage of the requirements and the timeline of
//! a vendor line's releases.
//!
//! Modules, each depending only on the ones listed before it (no module cycles):
//! - [`judged`]: the judged baseline beside each expectations file: where each library was
//!   judged when its expectations were blessed.
//! - [`expectations`]: per-vendor expected results with reasons, folded with a run.
//! - `cover`: which entries may cover a result: a library's entries by check id, its results by
//!   check id and by unit.
//! - [`gate`]: every result judged against the expectations (match, expected-fail,
//!   unexpected-pass, new-warning, silenced, flake, regression), stale entries, the gate's
//!   verdict.
//! - [`bless`]: a run's unexpected results in the expectations format, and `--bless`.
//! - [`summary`]: the run's verdict on one screen, one row per library.
//! - [`output`]: the gate-aware human tree and the JUnit XML rendering.
//! - [`regression`]: the comparison of two JSON reports (regressions, fixes, changed answers).
//! - [`html`]: the self-contained HTML conformance matrix of several libraries.
//! - [`coverage`]: which requirements of the specification the checks cover, and the gate that
//!   every MUST of every profile is judged by a check or listed with a reason.
//! - [`history`]: the timeline of every check over the releases of a vendor line (terminal and
//!   HTML).

pub mod bless;
mod cover;
pub mod coverage;
pub mod expectations;
pub mod gate;
pub mod history;
pub mod html;
pub mod judged;
pub mod output;
pub mod regression;
pub mod summary;
