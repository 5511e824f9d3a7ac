//! `ompd-conform merge`: joins the reports of a sharded run (`run --shard K/N`) into the report
//! of the whole run, judges it against the expectations (stale entries included, which no shard
//! can judge alone) and renders it as a run does: the same report, gate, JUnit and HTML an
//! unsharded run writes.

use super::review::{expectation_files, read_reports, run_gate, write_html};
use super::run::{emit, ending};
use super::{usage, ReviewArgs};
use std::path::PathBuf;

/// Merges the shard reports at `paths`; the exit code is a run's.
pub(super) fn merge(paths: &[PathBuf], review: &ReviewArgs, quiet: bool) -> i32 {
    let shards = match read_reports(paths) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let mut report = match ompd_report::shard::merge(shards) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    let files = match expectation_files(review, false, &[]) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let ev = ompd_review::gate::Evaluation::new(&report, files, review.allow_improvements)
        .allowing_warnings(review.allow_warnings);
    ev.mark(&mut report);
    if let Err(code) = emit(
        &report,
        &ompd_review::output::human(&report, &ev, &review.view()),
        review,
    ) {
        return code;
    }
    if let Some(path) = &review.html {
        if let Err(code) = write_html(std::slice::from_ref(&report), Some(&ev), path) {
            return code;
        }
    }
    let gate = match run_gate(&report, &ev, review, (quiet, false), report.incomplete) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let stopped = report
        .incomplete
        .then(|| "a shard's run was stopped".to_string());
    ending(&report, stopped, gate)
}
