//! Gate-aware renderings of a run: the human tree (per library, grouped by check family, each
//! unexpected result with its requirements, acceptable outcomes, actual outcome, unit and replay
//! command; each family's expected failures counted on its line, or one line per check with
//! `--verbose`), ending in the summary table, and the JUnit XML document (one testcase per
//! check and unit, named by the result's place). Renderers never change an outcome.

use crate::gate::{Evaluation, Judged, LibraryGate};
use ompd_report::{Gate, Outcome, Report, ResultRecord};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// At most this many unexpected results are printed in full per check.
const SHOWN: usize = 5;

/// The command that replays one result.
pub fn replay_command(report: &Report, r: &ResultRecord) -> String {
    if let Some(cmd) = &r.replay {
        return cmd.clone();
    }
    let named = ompd_vendors::is_named(&r.library);
    let lib = if r.library == ompd_report::runtime_row::ROW {
        // A check of the runtime calls no library: any library's unit judges it, and the
        // reference's 5.2 build, there wherever the runner is, judges every generation's.
        ompd_vendors::REFERENCE_5_2.name.to_string()
    } else if named {
        r.library.clone()
    } else {
        report
            .libraries
            .iter()
            .find(|l| l.name == r.library)
            .map(|l| l.path.clone())
            .unwrap_or_else(|| r.library.clone())
    };
    if r.scenario == ompd_report::HOST_SCENARIO {
        return format!("ompd-conform run {lib} --check {}", r.check);
    }
    // A real target: its fixture scenario again (live or core), or the process or core file.
    if let Some(real) = &r.real {
        let runtime = real
            .runtime_file
            .as_ref()
            .map_or_else(String::new, |f| format!(" --runtime {f}"));
        return match (&real.fixture, &real.core, real.pid) {
            (Some(fixture), _, _) if r.target == "core" => format!(
                "ompd-conform run {lib} --run {fixture}{runtime} --cores --check {}",
                r.check
            ),
            (Some(fixture), _, _) => format!(
                "ompd-conform run {lib} --run {fixture}{runtime} --no-core --check {}",
                r.check
            ),
            (None, Some(core), _) => {
                format!("ompd-conform run {lib} --core {core} --check {}", r.check)
            }
            (None, None, Some(pid)) => {
                format!("ompd-conform run {lib} --pid {pid} --check {}", r.check)
            }
            (None, None, None) => format!("ompd-conform run {lib} --check {}", r.check),
        };
    }
    let scenario = match r.scenario.strip_prefix("replay:") {
        Some(name) => format!("--replay {name}.json"),
        None => format!("--scenario {}", r.scenario),
    };
    let layout = r
        .layout
        .as_deref()
        .map_or_else(String::new, |l| format!(" --layout {l}"));
    format!(
        "ompd-conform run {lib} {scenario} --arch {}{layout} --check {}",
        r.arch, r.check
    )
}

fn family(check: &str) -> &str {
    check.split('.').next().unwrap_or(check)
}

/// The acceptable outcomes of a result, with where they come from.
fn acceptable(ev: &Evaluation, j: &Judged) -> String {
    match j.entry {
        Some(e) => {
            let x = ev.entry(e);
            format!(
                "{} (expectation in {}: {})",
                x.outcome,
                ev.files[e.file].path.display(),
                x.reason
            )
        }
        None if j.gate == Gate::Silenced => "a verdict (pass, warn or fail), as when the expectations were blessed (the judged baseline beside them), or an entry recording the skip with its reason".into(),
        None if j.gate == Gate::NewWarning => "pass, not-supported or skip (no expectation entry)".into(),
        None => "pass, warn, not-supported or skip (no expectation entry)".into(),
    }
}

/// How the human rendering is asked for.
#[derive(Clone, Debug, Default)]
pub struct View {
    /// Every check worth a line (`--verbose`); otherwise only what needs a reader: unexpected
    /// results in full, and each family's expected failures counted on its line.
    pub verbose: bool,
    /// The files the run writes, named under the summary table.
    pub written: crate::summary::Written,
}

/// The human rendering: the library headers, per library a tree of check families, then the
/// summary table, the totals and the gate.
pub fn human(report: &Report, ev: &Evaluation, view: &View) -> String {
    let mut out = report.library_header();
    for lg in &ev.libraries {
        let files: Vec<String> = lg
            .files
            .iter()
            .map(|f| ev.files[*f].path.display().to_string())
            .collect();
        let _ = writeln!(
            out,
            "{} (expectations: {})",
            lg.library,
            if files.is_empty() {
                "none".to_string()
            } else {
                files.join(", ")
            }
        );
        library_tree(&mut out, report, ev, lg, view.verbose);
    }
    out.push_str(&crate::summary::table(report, ev, &view.written));
    let counts: Vec<String> = Outcome::ALL
        .iter()
        .filter(|o| report.count(**o) > 0)
        .map(|o| format!("{} {}", report.count(*o), o.as_str()))
        .collect();
    let _ = writeln!(out, "totals: {}", counts.join(", "));
    let _ = writeln!(out, "{}", ev.summary_line());
    if report.incomplete {
        let _ = writeln!(out, "the run was interrupted: these results are incomplete");
    }
    out.push_str(&report.closing_line());
    out.push('\n');
    out
}

/// One library's tree: its check families (the checks worth a line each), then its stale
/// expectation entries.
fn library_tree(
    out: &mut String,
    report: &Report,
    ev: &Evaluation,
    lg: &LibraryGate,
    verbose: bool,
) {
    let mut fams: BTreeMap<&str, BTreeMap<&str, Vec<&Judged>>> = BTreeMap::new();
    for j in &lg.judged {
        let c = &report.results[j.result].check;
        fams.entry(family(c))
            .or_default()
            .entry(c)
            .or_default()
            .push(j);
    }
    if !verbose {
        fams.retain(|_, checks| worst(checks.values().flatten()) != Gate::Match);
        if fams.is_empty() && lg.stale.is_empty() {
            let _ = writeln!(out, "└─ every result as the expectations foresee");
        }
    }
    let nf = fams.len();
    for (fi, (fam, checks)) in fams.iter().enumerate() {
        let last_f = fi + 1 == nf && lg.stale.is_empty();
        family_lines(out, report, ev, (fam, checks), last_f, verbose);
    }
    if !lg.stale.is_empty() {
        let _ = writeln!(
            out,
            "└─ stale expectations ({}): they cover nothing this run ran",
            lg.stale.len()
        );
        for e in &lg.stale {
            let x = ev.entry(*e);
            let _ = writeln!(
                out,
                "   - STALE {} ({}) on {} in {}: {}",
                x.check,
                x.outcome,
                x.unit_text(),
                ev.files[e.file].path.display(),
                x.reason
            );
        }
    }
}

/// One family of checks: its line with the counts by gate, then a line per check worth one.
fn family_lines(
    out: &mut String,
    report: &Report,
    ev: &Evaluation,
    (fam, checks): (&str, &BTreeMap<&str, Vec<&Judged>>),
    last_f: bool,
    verbose: bool,
) {
    let (branch, pipe) = if last_f {
        ("└─", "   ")
    } else {
        ("├─", "│  ")
    };
    let mut by_gate: BTreeMap<Gate, usize> = BTreeMap::new();
    for js in checks.values() {
        *by_gate.entry(worst(js.iter())).or_default() += 1;
    }
    let counts: Vec<String> = by_gate
        .iter()
        .map(|(g, n)| format!("{n} {}", g.as_str()))
        .collect();
    let _ = writeln!(
        out,
        "{branch} {fam} ({} checks: {})",
        checks.len(),
        counts.join(", ")
    );
    let lines: Vec<String> = checks
        .iter()
        .filter(|(_, js)| verbose || worst(js.iter()) > Gate::ExpectedFail)
        .filter_map(|(c, js)| check_lines(report, ev, c, js))
        .collect();
    let n = lines.len();
    for (i, l) in lines.iter().enumerate() {
        let (b, p) = if i + 1 == n {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        let mut ls = l.lines();
        if let Some(first) = ls.next() {
            let _ = writeln!(out, "{pipe}{b} {first}");
        }
        for rest in ls {
            let _ = writeln!(out, "{pipe}{p}   {rest}");
        }
    }
}

/// The worst gate among `judged` ([`Gate::Match`] for none).
fn worst<'a>(judged: impl Iterator<Item = &'a &'a Judged>) -> Gate {
    judged.map(|j| j.gate).max().unwrap_or(Gate::Match)
}

/// The lines of one check, or none when every result is a plain pass.
fn check_lines(report: &Report, ev: &Evaluation, check: &str, js: &[&Judged]) -> Option<String> {
    let worst = worst(js.iter());
    let rec = |j: &Judged| &report.results[j.result];
    let n = js.len();
    let mut s = String::new();
    match worst {
        Gate::Match => {
            let o = js.iter().map(|j| rec(j).outcome).max()?;
            if o == Outcome::Pass {
                return None;
            }
            let k = js.iter().filter(|j| rec(j).outcome == o).count();
            let first = js.iter().find(|j| rec(j).outcome == o)?;
            let why = if rec(first).detail.is_empty() {
                &rec(first).actual
            } else {
                &rec(first).detail
            };
            let short: String = why.chars().take(120).collect();
            let _ = write!(s, "{} {check}: {k} of {n} units ({short})", o.as_str());
        }
        Gate::ExpectedFail => {
            let bad: Vec<_> = js.iter().filter(|j| j.gate == Gate::ExpectedFail).collect();
            let mut outs: Vec<&str> = bad.iter().map(|j| rec(j).outcome.as_str()).collect();
            outs.dedup();
            let reason = bad[0]
                .entry
                .map(|e| ev.entry(e).reason.as_str())
                .unwrap_or("");
            let _ = write!(
                s,
                "expected-fail {check}: {} on {} of {n} units, as recorded ({reason})",
                outs.join("/"),
                bad.len()
            );
        }
        _ => unexpected_lines(&mut s, report, ev, check, js, worst),
    }
    Some(s.trim_end().to_string())
}

/// The lines of a check with unexpected results: the count, the requirement, and the first few
/// results with what was acceptable and how to replay them.
fn unexpected_lines(
    s: &mut String,
    report: &Report,
    ev: &Evaluation,
    check: &str,
    js: &[&Judged],
    worst: Gate,
) {
    let rec = |j: &Judged| &report.results[j.result];
    let n = js.len();
    let bad: Vec<&&Judged> = js
        .iter()
        .filter(|j| {
            matches!(
                j.gate,
                Gate::UnexpectedPass
                    | Gate::NewWarning
                    | Gate::Silenced
                    | Gate::Flake
                    | Gate::Regression
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "{} {check}: {} of {n} units unexpected",
        worst.as_str().to_uppercase(),
        bad.len()
    );
    let r0 = rec(bad[0]);
    let _ = writeln!(s, "requirement: {}", r0.requirements.join(", "));
    for j in bad.iter().take(SHOWN) {
        let r = rec(j);
        let _ = writeln!(
            s,
            "- {}: {} on {} ({})",
            j.gate.as_str(),
            r.outcome.as_str(),
            r.unit(),
            r.target
        );
        let _ = writeln!(s, "  acceptable: {}", acceptable(ev, j));
        let _ = writeln!(
            s,
            "  actual: {}; expected {}{}",
            r.actual,
            r.expected,
            if r.detail.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.detail)
            }
        );
        if r.flaky {
            let _ = writeln!(s, "  the crash did not reproduce when re-run alone");
        }
        let _ = writeln!(s, "  replay: {}", replay_command(report, r));
    }
    if bad.len() > SHOWN {
        let _ = writeln!(s, "… and {} more", bad.len() - SHOWN);
    }
}

/// The JUnit XML document: one test suite per library, one testcase per result (named
/// `check [place]`, class `library.family`), and one failing testcase per stale
/// expectation entry. Expected failures are successes; regressions, flakes, (without
/// `--allow-warnings`) new warnings and (without `--allow-improvements`) unexpected passes are
/// failures carrying the message; harness errors
/// are errors; skips are skipped.
pub fn junit(report: &Report, ev: &Evaluation) -> Result<String, String> {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    let mut doc = quick_junit::Report::new("ompd-conform");
    for lg in &ev.libraries {
        let mut suite = TestSuite::new(lg.library.clone());
        for j in &lg.judged {
            let r = &report.results[j.result];
            let failing = match j.gate {
                Gate::Regression | Gate::Flake | Gate::Silenced => true,
                Gate::UnexpectedPass => !ev.allow_improvements,
                Gate::NewWarning => !ev.allow_warnings,
                Gate::Match | Gate::ExpectedFail => false,
            };
            let message = format!(
                "{} ({}): {} on {}; acceptable: {}; actual: {}; expected {}",
                r.check,
                j.gate.as_str(),
                r.outcome.as_str(),
                r.place(),
                acceptable(ev, j),
                r.actual,
                r.expected
            );
            let status = if r.outcome == Outcome::HarnessError && failing {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(message)
                    .set_description(format!("replay: {}", replay_command(report, r)));
                s
            } else if failing {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(message)
                    .set_type(r.outcome.as_str())
                    .set_description(format!(
                        "requirements: {}\n{}\nreplay: {}",
                        r.requirements.join(", "),
                        r.detail,
                        replay_command(report, r)
                    ));
                s
            } else if r.outcome == Outcome::Skip {
                let mut s = TestCaseStatus::skipped();
                s.set_message(r.detail.clone());
                s
            } else {
                TestCaseStatus::success()
            };
            let mut tc = TestCase::new(format!("{} [{}]", r.check, r.place()), status);
            tc.set_classname(format!("{}.{}", r.library, family(&r.check)));
            if j.gate == Gate::ExpectedFail {
                tc.set_system_out(format!("expected failure: {}", acceptable(ev, j)));
            }
            suite.add_test_case(tc);
        }
        for e in &lg.stale {
            let x = ev.entry(*e);
            let status = if ev.allow_improvements {
                TestCaseStatus::success()
            } else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(format!(
                    "stale expectation in {}: {} ({}) covers nothing this run ran: {}",
                    ev.files[e.file].path.display(),
                    x.check,
                    x.outcome,
                    x.reason
                ));
                s
            };
            let mut tc = TestCase::new(format!("stale {} [{}]", x.check, x.unit_text()), status);
            tc.set_classname(format!("{}.expectations", lg.library));
            suite.add_test_case(tc);
        }
        doc.add_test_suite(suite);
    }
    doc.to_string().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(scenario: &str, detail: &str, replay: Option<&str>) -> ResultRecord {
        ResultRecord {
            library: "/x/libompd.so".into(),
            check: "icv.value.bind-var".into(),
            requirements: vec![],
            scenario: scenario.into(),
            arch: "ilp32-le".into(),
            layout: Some("random:34".into()),
            outcome: Outcome::Fail,
            expected: String::new(),
            actual: String::new(),
            detail: detail.into(),
            flaky: false,
            target: "sim".into(),
            real: None,
            gate: None,
            replay: replay.map(str::to_string),
        }
    }

    #[test]
    fn the_replay_command_comes_from_its_field_never_from_the_detail() {
        let report = Report::new();
        let saved = "ompd-conform run /x/libompd.so --replay m.json --arch ilp32-le --layout random:34 --check icv.value.bind-var";
        let r = rec("generated", "shrunk; replay: something else", Some(saved));
        assert_eq!(replay_command(&report, &r), saved);
        let r = rec("serial", "it said replay: nonsense", None);
        assert_eq!(
            replay_command(&report, &r),
            "ompd-conform run /x/libompd.so --scenario serial --arch ilp32-le --layout random:34 \
             --check icv.value.bind-var"
        );
    }
}
