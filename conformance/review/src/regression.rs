//! Regression tracking: the comparison of two JSON reports (two versions of one library, or two
//! vendors; schema v2, or v1 read into the v2 shape). A result is keyed by check and place
//! (`ResultRecord::place`: scenario × arch × layout, or a real target's scenario × arch × variant
//! and kind), plus the library name when a report holds several libraries; when each report holds
//! exactly one library the names are ignored, so `llvm-19` compares with `intel-2026.2`.
//!
//! It names regressions (passed in OLD, fails in NEW, a warning that now fails among them; or
//! judged in OLD, a pass or warning, and skipped or not-supported in NEW: silenced), new
//! warnings (passed cleanly in OLD, warns in NEW), fixes (failed in OLD, passes in NEW), other
//! changed outcomes, checks only in NEW or only in OLD, and changed snapshot answers (the optional
//! `answers` section a `--golden` run writes).

use ompd_report::answers::{self as snapshot, Change};
use ompd_report::{Outcome, Report};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// Where one result was obtained: `library:` (when keyed by library) and the result's place.
type Place = String;

/// An outcome that changed for one check, at some places.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Moved {
    /// Check id.
    pub check: String,
    /// Outcome in OLD.
    pub old: Outcome,
    /// Outcome in NEW.
    pub new: Outcome,
    /// Where (places, prefixed by `library:` when keyed by library).
    pub places: Vec<Place>,
}

/// The comparison of two reports.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Libraries of OLD.
    pub old_libraries: Vec<String>,
    /// Libraries of NEW.
    pub new_libraries: Vec<String>,
    /// True when each report holds one library and the names were ignored.
    pub mapped: bool,
    /// Results present in both.
    pub common: usize,
    /// Passed (pass, warn, not-supported) in OLD, failed (fail, crash, timeout, harness-error)
    /// in NEW; or judged (pass, warn) in OLD, skipped or not-supported in NEW.
    pub regressions: Vec<Moved>,
    /// Passed cleanly (pass, not-supported) in OLD, warns in NEW: a SHOULD-level finding or an
    /// allowed alternative the library did not show before.
    pub new_warnings: Vec<Moved>,
    /// Failed in OLD, passed in NEW.
    pub fixes: Vec<Moved>,
    /// Any other outcome change (warn → pass, fail → crash, skip → pass, ...).
    pub changed: Vec<Moved>,
    /// Check ids only in NEW.
    pub new_checks: Vec<String>,
    /// Check ids only in OLD.
    pub removed_checks: Vec<String>,
    /// Results of checks in both reports, at places only NEW has (check, count).
    pub new_results: Vec<(String, usize)>,
    /// Results of checks in both reports, at places only OLD has (check, count).
    pub removed_results: Vec<(String, usize)>,
    /// Snapshot answers that differ (`library: change` when keyed by library).
    pub changed_answers: Vec<String>,
    /// Why answers were not compared, when they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answers_note: Option<String>,
}

/// Reads a report (v2, or v1 read into the v2 shape so that its places key as a v2 report's
/// do); the error is one line naming the file.
pub fn load(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Report::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn passed(o: Outcome) -> bool {
    matches!(o, Outcome::Pass | Outcome::Warn | Outcome::NotSupported)
}

/// A check that judged the library (pass or warn) and now judges nothing there: the library
/// stopped answering.
fn silenced(o: Outcome, n: Outcome) -> bool {
    matches!(o, Outcome::Pass | Outcome::Warn) && matches!(n, Outcome::Skip | Outcome::NotSupported)
}

fn failed(o: Outcome) -> bool {
    o.is_failure() || o == Outcome::HarnessError
}

/// Key → worst outcome, with check ids; `by_library` prefixes places with the library.
fn index(r: &Report, by_library: bool) -> BTreeMap<(String, Place), Outcome> {
    let mut out: BTreeMap<(String, Place), Outcome> = BTreeMap::new();
    for x in &r.results {
        let place = if by_library {
            format!("{}:{}", x.library, x.place())
        } else {
            x.place()
        };
        let e = out.entry((x.check.clone(), place)).or_insert(x.outcome);
        *e = (*e).max(x.outcome);
    }
    out
}

fn names(r: &Report) -> Vec<String> {
    let mut n: Vec<String> = r.libraries.iter().map(|l| l.name.clone()).collect();
    if n.is_empty() {
        let set: BTreeSet<&str> = r.results.iter().map(|x| x.library.as_str()).collect();
        n = set.into_iter().map(str::to_string).collect();
    }
    n
}

/// Compares OLD with NEW.
pub fn compare(old: &Report, new: &Report) -> Comparison {
    let mut c = Comparison {
        old_libraries: names(old),
        new_libraries: names(new),
        ..Comparison::default()
    };
    c.mapped = c.old_libraries.len() == 1 && c.new_libraries.len() == 1;
    let a = index(old, !c.mapped);
    let b = index(new, !c.mapped);
    let checks = |m: &BTreeMap<(String, Place), Outcome>| -> BTreeSet<String> {
        m.keys().map(|(k, _)| k.clone()).collect()
    };
    let (ca, cb) = (checks(&a), checks(&b));
    c.new_checks = cb.difference(&ca).cloned().collect();
    c.removed_checks = ca.difference(&cb).cloned().collect();
    let mut moved: BTreeMap<(String, Outcome, Outcome), Vec<Place>> = BTreeMap::new();
    let mut new_results: BTreeMap<String, usize> = BTreeMap::new();
    let mut removed_results: BTreeMap<String, usize> = BTreeMap::new();
    for ((check, place), o) in &a {
        match b.get(&(check.clone(), place.clone())) {
            Some(n) => {
                c.common += 1;
                if n != o {
                    moved
                        .entry((check.clone(), *o, *n))
                        .or_default()
                        .push(place.clone());
                }
            }
            None if cb.contains(check) => *removed_results.entry(check.clone()).or_default() += 1,
            None => {}
        }
    }
    for (check, place) in b.keys() {
        if ca.contains(check) && !a.contains_key(&(check.clone(), place.clone())) {
            *new_results.entry(check.clone()).or_default() += 1;
        }
    }
    c.new_results = new_results.into_iter().collect();
    c.removed_results = removed_results.into_iter().collect();
    for ((check, o, n), places) in moved {
        let m = Moved {
            check,
            old: o,
            new: n,
            places,
        };
        if (passed(o) && failed(n)) || silenced(o, n) {
            c.regressions.push(m);
        } else if matches!(o, Outcome::Pass | Outcome::NotSupported) && n == Outcome::Warn {
            c.new_warnings.push(m);
        } else if failed(o) && passed(n) {
            c.fixes.push(m);
        } else {
            c.changed.push(m);
        }
    }
    compare_answers(&mut c, old, new);
    c
}

/// The answers each report recorded (`--golden`), compared when both have them.
fn compare_answers(c: &mut Comparison, old: &Report, new: &Report) {
    match (old.answers.is_empty(), new.answers.is_empty()) {
        (true, true) => {
            c.answers_note = Some("neither report has answers (run with --golden)".into())
        }
        (true, false) | (false, true) => {
            c.answers_note = Some(format!(
                "only the {} report has answers (run both with --golden)",
                if old.answers.is_empty() { "NEW" } else { "OLD" }
            ))
        }
        (false, false) if old.answers.len() == 1 && new.answers.len() == 1 => {
            let (x, y) = (old.answers.values().next(), new.answers.values().next());
            if let (Some(x), Some(y)) = (x, y) {
                c.changed_answers = snapshot::diff(x, y).iter().map(Change::to_string).collect();
            }
        }
        (false, false) => {
            for (lib, x) in &old.answers {
                if let Some(y) = new.answers.get(lib) {
                    c.changed_answers
                        .extend(snapshot::diff(x, y).iter().map(|ch| format!("{lib}: {ch}")));
                }
            }
        }
    }
}

/// How many places of a group the human rendering shows.
const SHOWN: usize = 3;

impl Comparison {
    /// Number of results that regressed.
    pub fn regression_count(&self) -> usize {
        self.regressions.iter().map(|m| m.places.len()).sum()
    }

    /// Number of results that warn in NEW and passed cleanly in OLD.
    pub fn new_warning_count(&self) -> usize {
        self.new_warnings.iter().map(|m| m.places.len()).sum()
    }

    /// The readable rendering: one block per category, grouped by check, and a summary line.
    pub fn human(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "OLD: {}  NEW: {}{}; {} results in both",
            self.old_libraries.join(", "),
            self.new_libraries.join(", "),
            if self.mapped {
                " (one library each: compared regardless of name)"
            } else {
                ""
            },
            self.common
        );
        let count = |v: &[Moved]| v.iter().map(|m| m.places.len()).sum::<usize>();
        for (title, v) in [
            ("regressions", &self.regressions),
            ("new warnings", &self.new_warnings),
            ("fixes", &self.fixes),
            ("changed outcomes", &self.changed),
        ] {
            let _ = writeln!(s, "{title}: {}", count(v));
            moved_lines(&mut s, v);
        }
        for (title, v) in [
            ("new checks", &self.new_checks),
            ("removed checks", &self.removed_checks),
        ] {
            let _ = writeln!(s, "{title}: {}", v.len());
            for c in v {
                let _ = writeln!(s, "  {c}");
            }
        }
        for (title, v) in [
            ("new results of known checks", &self.new_results),
            ("removed results of known checks", &self.removed_results),
        ] {
            if !v.is_empty() {
                let _ = writeln!(s, "{title}: {}", v.iter().map(|(_, n)| n).sum::<usize>());
                for (c, n) in v {
                    let _ = writeln!(s, "  {c}  ({n})");
                }
            }
        }
        match &self.answers_note {
            Some(n) => {
                let _ = writeln!(s, "changed answers: not compared ({n})");
            }
            None => {
                let _ = writeln!(s, "changed answers: {}", self.changed_answers.len());
                for a in &self.changed_answers {
                    let _ = writeln!(s, "  {a}");
                }
            }
        }
        let _ = writeln!(
            s,
            "{} regressions, {} new warnings, {} fixes, {} changed outcomes, {} new checks, {} removed checks, {} changed answers",
            self.regression_count(),
            self.new_warning_count(),
            count(&self.fixes),
            count(&self.changed),
            self.new_checks.len(),
            self.removed_checks.len(),
            self.changed_answers.len()
        );
        s
    }
}

/// One line per group of moved results, with its first places.
fn moved_lines(s: &mut String, v: &[Moved]) {
    for m in v {
        let more = m.places.len().saturating_sub(SHOWN);
        let _ = writeln!(
            s,
            "  {}  {} → {}  at {}{}",
            m.check,
            m.old.as_str(),
            m.new.as_str(),
            m.places[..m.places.len().min(SHOWN)].join(", "),
            if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            }
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ompd_report::{LibraryInfo, ResultRecord};

    /// A report of `lib` with one result per row (check, scenario, outcome).
    pub(crate) fn report(lib: &str, rows: &[(&str, &str, Outcome)]) -> Report {
        let mut r = Report::new();
        r.libraries.push(LibraryInfo {
            name: lib.into(),
            ..LibraryInfo::default()
        });
        for (check, scenario, outcome) in rows {
            r.push(ResultRecord {
                library: lib.into(),
                requirements: vec!["OMPD-X".into()],
                actual: String::new(),
                ..crate::cover::tests::rec(check, scenario, *outcome)
            });
        }
        r
    }

    fn hand_made() -> (Report, Report) {
        use Outcome::*;
        let mut old = report(
            "llvm-19",
            &[
                ("a.b.regresses", "serial", Pass),
                ("a.b.regresses", "nested-tasks", Warn),
                ("a.b.fixed", "serial", Fail),
                ("a.b.crashes_now", "serial", Fail),
                ("a.b.same", "serial", Pass),
                ("a.b.warns_now", "serial", Pass),
                ("a.b.gone", "serial", Pass),
            ],
        );
        let mut new = report(
            "llvm-22",
            &[
                ("a.b.regresses", "serial", Fail),
                ("a.b.regresses", "nested-tasks", Crash),
                ("a.b.fixed", "serial", Pass),
                ("a.b.crashes_now", "serial", Crash),
                ("a.b.same", "serial", Pass),
                ("a.b.same", "untracked", Pass),
                ("a.b.warns_now", "serial", Warn),
                ("a.b.added", "serial", Skip),
            ],
        );
        let answers = |v: &str| {
            [(
                "x".to_string(),
                [
                    (
                        "serial/lp64-le/icv/nthreads-var@thread[0]".to_string(),
                        v.to_string(),
                    ),
                    ("serial/lp64-le/setup".to_string(), "ok".to_string()),
                ]
                .into_iter()
                .collect(),
            )]
            .into_iter()
            .collect()
        };
        old.answers = answers("4");
        new.answers = answers("2");
        (old, new)
    }

    #[test]
    fn names_regressions_fixes_changes_and_check_sets() {
        let (old, new) = hand_made();
        let c = compare(&old, &new);
        assert!(c.mapped);
        assert_eq!(c.regression_count(), 2);
        assert_eq!(c.regressions.len(), 2);
        assert_eq!(c.new_warning_count(), 1);
        assert_eq!(c.new_warnings[0].check, "a.b.warns_now");
        assert_eq!(c.fixes.len(), 1);
        assert_eq!(c.fixes[0].check, "a.b.fixed");
        assert_eq!(c.changed.len(), 1);
        assert_eq!(c.changed[0].check, "a.b.crashes_now");
        assert_eq!(c.new_checks, ["a.b.added"]);
        assert_eq!(c.removed_checks, ["a.b.gone"]);
        assert_eq!(c.new_results, [("a.b.same".to_string(), 1)]);
        assert_eq!(
            c.changed_answers,
            ["~ serial/lp64-le/icv/nthreads-var@thread[0]: 4 → 2"]
        );
        insta::assert_snapshot!("compare_hand_made", c.human());
    }

    #[test]
    fn a_check_that_stops_judging_is_a_regression() {
        use Outcome::*;
        let old = report(
            "l-1",
            &[("a.b.quiet", "serial", Pass), ("a.b.ns", "serial", Warn)],
        );
        let new = report(
            "l-2",
            &[
                ("a.b.quiet", "serial", Skip),
                ("a.b.ns", "serial", NotSupported),
            ],
        );
        let c = compare(&old, &new);
        let r: Vec<&str> = c.regressions.iter().map(|m| m.check.as_str()).collect();
        assert_eq!(r, ["a.b.ns", "a.b.quiet"]);
        let back = compare(&new, &old);
        assert!(
            back.regressions.is_empty(),
            "a skip that judges again is no regression"
        );
    }

    #[test]
    fn identical_reports_compare_clean() {
        let (old, _) = hand_made();
        let c = compare(&old, &old);
        assert_eq!(c.regression_count(), 0);
        assert!(c.fixes.is_empty() && c.changed.is_empty() && c.changed_answers.is_empty());
        assert_eq!(c.common, 7);
    }

    #[test]
    fn several_libraries_are_keyed_by_name() {
        use Outcome::*;
        let mut old = report("a", &[("x.y.z", "serial", Pass)]);
        old.results
            .extend(report("b", &[("x.y.z", "serial", Pass)]).results);
        old.libraries.push(LibraryInfo {
            name: "b".into(),
            ..LibraryInfo::default()
        });
        let mut new = old.clone();
        new.results[1].outcome = Fail;
        let c = compare(&old, &new);
        assert!(!c.mapped);
        assert_eq!(c.regressions[0].places, ["b:serial/lp64-le/natural"]);
    }

    #[test]
    fn a_v1_report_compares_with_the_v2_report_of_the_same_run() {
        // One simulated and two real results as a v1 report wrote them (the runtime and build in
        // layout, the OMP_DEBUG setting in the scenario), and as a v2 report writes them.
        let row = |scenario: &str, layout: &str, target: &str| {
            format!(
                r#"{{"library": "l", "check": "a.b.c", "requirements": [], "scenario": "{scenario}",
                "arch": "lp64-le", "layout": "{layout}", "outcome": "fail", "expected": "",
                "actual": "", "detail": "", "target": "{target}"}}"#
            )
        };
        let v1 = format!(
            r#"{{"schema": "ompd-conformance/report/v1", "libraries": [], "summary": {{}},
            "incomplete": false, "results": [{}, {}, {}]}}"#,
            row("serial", "natural", "sim"),
            row("nested", "llvm-21/gcc", "core"),
            row("nested-nodebug", "llvm-21/gcc", "live"),
        );
        let d = tempfile::tempdir().unwrap();
        let old_path = d.path().join("v1.json");
        std::fs::write(&old_path, v1).unwrap();
        let old = load(&old_path).unwrap();
        let mut new = report("l", &[("a.b.c", "serial", Outcome::Fail)]);
        for (target, debug) in [("core", true), ("live", false)] {
            let mut r = new.results[0].clone();
            r.scenario = "nested".into();
            r.layout = None;
            r.target = target.into();
            r.real = Some(ompd_report::RealTargetInfo {
                kind: target.into(),
                fixture: Some("nested".into()),
                runtime: Some("llvm-21".into()),
                build: Some("gcc".into()),
                omp_debug: Some(debug),
                pid: (target == "live").then_some(4242),
                ..Default::default()
            });
            new.push(r);
        }
        let c = compare(&old, &new);
        assert_eq!(c.common, 3, "{c:?}");
        assert!(
            c.regressions.is_empty()
                && c.fixes.is_empty()
                && c.changed.is_empty()
                && c.new_results.is_empty()
                && c.removed_results.is_empty(),
            "{c:?}"
        );
    }
}
