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
const COLUMNS: [&str; 11] = [
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
    let outcome = |o: &[Outcome]| {
        lg.judged
            .iter()
            .filter(|j| o.contains(&report.results[j.result].outcome))
            .count()
    };
    let gate = |g: &[Gate]| lg.judged.iter().filter(|j| g.contains(&j.gate)).count();
    let failed = [
        Outcome::Fail,
        Outcome::Crash,
        Outcome::Timeout,
        Outcome::HarnessError,
    ];
    let judged = [[Outcome::Pass, Outcome::Warn].as_slice(), &failed].concat();
    let profile = report
        .libraries
        .iter()
        .find(|l| l.name == lg.library)
        .and_then(|l| l.profile)
        .map_or("—", |p| p.name());
    let cells = [
        outcome(&judged),
        outcome(&[Outcome::Pass]),
        outcome(&[Outcome::Warn]),
        outcome(&failed),
        gate(&[Gate::ExpectedFail]),
        gate(&[Gate::Regression, Gate::Flake]),
        gate(&[Gate::NewWarning]),
        gate(&[Gate::Silenced]),
        gate(&[Gate::UnexpectedPass]),
        lg.stale.len(),
    ];
    std::iter::once(profile.to_string())
        .chain(cells.iter().map(|n| n.to_string()))
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
