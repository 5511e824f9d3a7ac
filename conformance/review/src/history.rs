//! Regression tracking across releases: the timeline of every check over the releases of one
//! vendor line. Reports (each holding one or several libraries) are split into lines by vendor
//! name (`intel-2020.0` and `intel-2026.2` are two releases of the line `intel`, `llvm-14` and
//! `llvm-22` of `llvm`), each line's releases are put in release order (the numbers of the
//! name), and each check gets one step per release: its worst outcome there and how many of its
//! results were findings. A finding *appears* in the first release of a streak where the check
//! has one and *is fixed* in the first release after it where it has none; each appearance
//! names its first bad result's replay command.
//!
//! Rendered as a terminal table ([`render`]) or a self-contained HTML page
//! ([`html::render`]).

pub mod html;

use crate::output::replay_command;
use ompd_report::{Outcome, Report, ResultRecord};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A result that is a finding: a MUST violation, a SHOULD miss, a crash or a timeout (the
/// harness's own errors say nothing about the library).
pub fn is_finding(o: Outcome) -> bool {
    o == Outcome::Warn || (o.is_failure() && o != Outcome::HarnessError)
}

/// One release of a line: a library of one of the reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Release {
    /// The library's name in its report (`intel-2024.2`).
    pub library: String,
    /// The package version the report records, if any (`2024.2.1`).
    pub version: Option<String>,
    /// The API version it reports, if any.
    pub api_version: Option<i64>,
}

/// What one check did in one release.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The worst outcome of its results.
    pub worst: Outcome,
    /// How many results it has.
    pub results: usize,
    /// How many of them are findings ([`is_finding`]).
    pub findings: usize,
}

/// What happened to a check at one release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// Findings where the previous release had none (or the line's first release has some).
    Appeared,
    /// No finding where the previous release had some.
    Fixed,
}

/// A finding appearing or being fixed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Event {
    /// Appeared or fixed.
    pub kind: EventKind,
    /// Index of the release in [`Timeline::releases`].
    pub release: usize,
    /// For an appearance: the command that replays the first bad result there.
    pub replay: Option<String>,
    /// For an appearance: that result's outcome and what it saw.
    pub first: Option<String>,
}

/// One check over every release.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    /// The check id.
    pub check: String,
    /// One step per release (`None`: the release has no result of the check).
    pub steps: Vec<Option<Step>>,
    /// Findings appearing and being fixed, in release order.
    pub events: Vec<Event>,
}

impl CheckLine {
    /// The check's outcome differs between releases, or it has a finding somewhere.
    pub fn notable(&self) -> bool {
        let first = self.steps.first().map(|s| s.as_ref().map(|s| s.worst));
        !self.events.is_empty()
            || self
                .steps
                .iter()
                .any(|s| Some(s.as_ref().map(|s| s.worst)) != first)
    }
}

/// The timeline of one vendor line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Timeline {
    /// The line's name (`intel`, `llvm`; a library of no known line is a line of its own).
    pub line: String,
    /// Its releases, oldest first.
    pub releases: Vec<Release>,
    /// Every check any release has, in id order.
    pub checks: Vec<CheckLine>,
}

impl Timeline {
    /// The checks shown: every one with `all`, otherwise the notable ones.
    pub fn shown(&self, all: bool) -> Vec<&CheckLine> {
        self.checks.iter().filter(|c| all || c.notable()).collect()
    }

    /// What the shown checks leave out, said after their count: nothing with `all`.
    pub fn left_out(&self, all: bool) -> String {
        if all {
            return String::new();
        }
        let n = self.checks.len() - self.shown(false).len();
        format!(", {n} with the same outcome and no finding in every release")
    }
}

/// The line a library name belongs to and its release numbers: `intel-2020.0` is
/// `("intel", [2020, 0])`; a name without a numbered tail is a line of its own.
pub fn line_of(library: &str) -> (&str, Vec<u64>) {
    if let Some((line, tail)) = library.rsplit_once('-') {
        let numbers: Option<Vec<u64>> = tail.split('.').map(|p| p.parse().ok()).collect();
        if let Some(n) = numbers.filter(|_| !line.is_empty()) {
            return (line, n);
        }
    }
    (library, Vec::new())
}

/// A release found in the reports: its numbers, library name and report.
type Found<'a> = (Vec<u64>, &'a str, &'a Report);

/// The timelines of every line the reports hold, by line name. A library that appears in
/// several reports keeps its first report's results. `Err` names a line whose two libraries
/// claim the same release.
pub fn timelines(reports: &[Report]) -> Result<Vec<Timeline>, String> {
    let mut lines: BTreeMap<&str, Vec<Found<'_>>> = BTreeMap::new();
    for report in reports {
        for lib in &report.libraries {
            let (line, numbers) = line_of(&lib.name);
            let releases = lines.entry(line).or_default();
            if !releases.iter().any(|(_, name, _)| *name == lib.name) {
                releases.push((numbers, &lib.name, report));
            }
        }
    }
    let mut out = Vec::new();
    for (line, mut releases) in lines {
        releases.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(w) = releases.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!(
                "libraries {} and {} are the same release of line {line}",
                w[0].1, w[1].1
            ));
        }
        out.push(timeline(line, &releases));
    }
    Ok(out)
}

fn timeline(line: &str, releases: &[Found<'_>]) -> Timeline {
    let mut by_check: BTreeMap<&str, Vec<Vec<&ResultRecord>>> = BTreeMap::new();
    for (i, (_, name, report)) in releases.iter().enumerate() {
        for r in report.results.iter().filter(|r| r.library == *name) {
            by_check
                .entry(&r.check)
                .or_insert_with(|| vec![Vec::new(); releases.len()])[i]
                .push(r);
        }
    }
    let checks = by_check
        .into_iter()
        .map(|(check, per_release)| check_line(check, &per_release, releases))
        .collect();
    Timeline {
        line: line.to_string(),
        releases: releases
            .iter()
            .map(|(_, name, report)| release(name, report))
            .collect(),
        checks,
    }
}

fn release(name: &str, report: &Report) -> Release {
    let info = report.libraries.iter().find(|l| l.name == name);
    Release {
        library: name.to_string(),
        version: info.and_then(|l| l.package_version.clone()),
        api_version: info.and_then(|l| l.api_version),
    }
}

fn check_line(
    check: &str,
    per_release: &[Vec<&ResultRecord>],
    releases: &[Found<'_>],
) -> CheckLine {
    let steps: Vec<Option<Step>> = per_release
        .iter()
        .map(|rs| {
            let worst = rs.iter().map(|r| r.outcome).max()?;
            Some(Step {
                worst,
                results: rs.len(),
                findings: rs.iter().filter(|r| is_finding(r.outcome)).count(),
            })
        })
        .collect();
    let mut events = Vec::new();
    let mut bad_before = false;
    for (i, step) in steps.iter().enumerate() {
        let Some(step) = step else { continue };
        let bad = step.findings > 0;
        if bad && !bad_before {
            // The first of the worst findings, from a named scenario rather than a generated case
            // if any (`max_by_key` keeps the last maximum: the results are walked backwards).
            let first = per_release[i]
                .iter()
                .rev()
                .filter(|r| is_finding(r.outcome))
                .max_by_key(|r| (r.outcome, !ompd_report::is_generated(&r.scenario)))
                .copied();
            events.push(Event {
                kind: EventKind::Appeared,
                release: i,
                replay: first.map(|r| replay_command(releases[i].2, r)),
                first: first.map(|r| format!("{}: {}", r.outcome.as_str(), first_line(r))),
            });
        } else if !bad && bad_before {
            events.push(Event {
                kind: EventKind::Fixed,
                release: i,
                replay: None,
                first: None,
            });
        }
        bad_before = bad;
    }
    CheckLine {
        check: check.to_string(),
        steps,
        events,
    }
}

/// What a result saw, on one line: its `actual`, else its detail's first line (without its
/// replay command, which the event carries).
fn first_line(r: &ResultRecord) -> String {
    let text = if r.actual.trim().is_empty() {
        &r.detail
    } else {
        &r.actual
    };
    let line = text.lines().next().unwrap_or("");
    line.split("; replay: ")
        .next()
        .unwrap_or(line)
        .trim()
        .to_string()
}

/// A release's column label: its name without the line's prefix (`2024.2` for `intel-2024.2`).
pub fn short_name<'a>(line: &str, library: &'a str) -> &'a str {
    library
        .strip_prefix(line)
        .and_then(|s| s.strip_prefix('-'))
        .filter(|s| !s.is_empty())
        .unwrap_or(library)
}

/// A step as a terminal cell: the worst outcome, with the number of findings when some of the
/// check's results are findings; `-` when the release has no result of the check.
pub fn cell_text(step: Option<&Step>) -> String {
    match step {
        None => "-".to_string(),
        Some(s) if s.findings > 0 => format!("{} {}", s.worst.as_str(), s.findings),
        Some(s) => s.worst.as_str().to_string(),
    }
}

/// The terminal table of a timeline: one row per notable check (every check with `all`), one
/// column per release, then each appearance and fix under its check.
pub fn render(t: &Timeline, all: bool) -> String {
    let mut s = String::new();
    let shown = t.shown(all);
    let names: Vec<&str> = t.releases.iter().map(|r| r.library.as_str()).collect();
    let _ = writeln!(
        s,
        "{} line: {} releases ({}), {} checks; {} shown{}",
        t.line,
        names.len(),
        names.join(" → "),
        t.checks.len(),
        shown.len(),
        t.left_out(all)
    );
    let check_w = shown
        .iter()
        .map(|c| c.check.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let widths: Vec<usize> = t
        .releases
        .iter()
        .enumerate()
        .map(|(i, r)| {
            shown
                .iter()
                .map(|c| cell_text(c.steps[i].as_ref()).len())
                .chain([short_name(&t.line, &r.library).len()])
                .max()
                .unwrap_or(1)
        })
        .collect();
    let _ = write!(s, "{:check_w$}", "check");
    for (r, w) in t.releases.iter().zip(&widths) {
        let _ = write!(s, "  {:>w$}", short_name(&t.line, &r.library));
    }
    s.push('\n');
    for c in shown {
        let _ = write!(s, "{:check_w$}", c.check);
        for (step, w) in c.steps.iter().zip(&widths) {
            let _ = write!(s, "  {:>w$}", cell_text(step.as_ref()));
        }
        s.push('\n');
        for e in &c.events {
            let name = &t.releases[e.release].library;
            match e.kind {
                EventKind::Appeared => {
                    let _ = writeln!(
                        s,
                        "    appeared in {name}: {}\n      replay: {}",
                        e.first.as_deref().unwrap_or(""),
                        e.replay.as_deref().unwrap_or("")
                    );
                }
                EventKind::Fixed => {
                    let _ = writeln!(s, "    fixed in {name}");
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests;
