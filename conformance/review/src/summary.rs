//! The run's verdict on one screen: a table of one row per library (and the runtime row) with
//! its profile, the results it judged and how the gate classed them, then the report files the
//! run writes and the gate's line.

use crate::gate::{Evaluation, LibraryGate};
use ompd_report::{Gate, Outcome, Report};
use std::fmt::Write;
use std::path::PathBuf;

/// The files a run writes, named under the table.
#[derive(Clone, Debug, Default)]
pub struct Written {
    /// (what, path): the JSON report, JUnit, HTML, each when asked for.
    pub reports: Vec<(&'static str, PathBuf)>,
    /// The directory of each library's `LIB.unexpected.toml`.
    pub unexpected_dir: Option<PathBuf>,
}

/// The columns of the table, in order.
pub const COLUMNS: [&str; 11] = [
    "profile",
    "judged",
    "pass",
    "warn",
    "fail",
    "expected",
    "regress",
    "new-warn",
    "silenced",
    "unexp-pass",
    "stale",
];

/// The table, the files and nothing else (the gate's own line follows it in the human report).
pub fn table(report: &Report, ev: &Evaluation, written: &Written) -> String {
    let width = ev
        .libraries
        .iter()
        .map(|l| l.library.len())
        .chain(std::iter::once("library".len()))
        .max()
        .unwrap_or(7);
    let mut out = format!("{:<width$}", "library");
    for c in COLUMNS {
        let _ = write!(out, "  {c:>w$}", w = column_width(c));
    }
    out.push('\n');
    for lg in &ev.libraries {
        let _ = write!(out, "{:<width$}", lg.library);
        for (c, v) in COLUMNS.iter().zip(row(report, lg)) {
            let _ = write!(out, "  {v:>w$}", w = column_width(c));
        }
        out.push('\n');
    }
    out.push_str(&files(written));
    out
}

/// A column is as wide as its name, and the profile column as wide as "OpenMP 5.0".
fn column_width(c: &str) -> usize {
    if c == "profile" {
        "OpenMP 5.0".len()
    } else {
        c.len().max(5)
    }
}

/// One library's cells, in [`COLUMNS`] order.
fn row(report: &Report, lg: &LibraryGate) -> Vec<String> {
    let profile = report
        .libraries
        .iter()
        .find(|l| l.name == lg.library)
        .and_then(|l| l.profile)
        .map_or("—", |p| p.name());
    let judged = lg
        .judged
        .iter()
        .map(|j| (report.results[j.result].outcome, Some(j.gate)));
    cells(profile, judged, Some(lg.stale.len()))
}

/// The cells of a row, in [`COLUMNS`] order, from the profile, each result's outcome and gate
/// class, and the stale entries (`None`: not known here, shown as `—`).
pub fn cells(
    profile: &str,
    results: impl Iterator<Item = (Outcome, Option<Gate>)>,
    stale: Option<usize>,
) -> Vec<String> {
    let failed = [
        Outcome::Fail,
        Outcome::Crash,
        Outcome::Timeout,
        Outcome::HarnessError,
    ];
    let gates: [&[Gate]; 5] = [
        &[Gate::ExpectedFail],
        &[Gate::Regression, Gate::Flake],
        &[Gate::NewWarning],
        &[Gate::Silenced],
        &[Gate::UnexpectedPass],
    ];
    let mut n = [0usize; 4 + 5];
    for (o, g) in results {
        let counts = [
            o == Outcome::Pass || o == Outcome::Warn || failed.contains(&o),
            o == Outcome::Pass,
            o == Outcome::Warn,
            failed.contains(&o),
        ];
        let classes = gates.map(|gs| g.is_some_and(|g| gs.contains(&g)));
        for (k, hit) in counts.into_iter().chain(classes).enumerate() {
            n[k] += usize::from(hit);
        }
    }
    std::iter::once(profile.to_string())
        .chain(n.iter().map(|k| k.to_string()))
        .chain(std::iter::once(stale.map_or("—".into(), |s| s.to_string())))
        .collect()
}

/// The lines naming the files written.
fn files(written: &Written) -> String {
    let mut out = String::new();
    for (what, path) in &written.reports {
        let _ = writeln!(out, "{what}: {}", path.display());
    }
    if let Some(dir) = &written.unexpected_dir {
        let _ = writeln!(
            out,
            "unexpected results, in the expectations format: {}/LIB.unexpected.toml",
            dir.display()
        );
    }
    out
}
