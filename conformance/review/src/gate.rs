//! The expectations gate: every result of a run judged against the expectation entries that
//! apply to its library ([`Gate`]: match, expected-fail, unexpected-pass, flake, regression), the
//! stale entries, and the exit code the run calls for.
//!
//! An entry applies to a library when its file's `libraries` globs and its own `library`,
//! `version` and `profile` conditions hold; the first applicable entry that covers a result
//! (check and unit: scenario, arch, layout, target, a real target's runtime, build, fixture)
//! judges it. An entry is *stale* when it covers no result at all although the run ran its check
//! and a unit the entry describes, so a run narrowed with `--check`, `--scenario` or `--arch` does not call the
//! entries it left out stale (nor one shadowed by an earlier entry).

use crate::cover::{ByCheck, Results};
use crate::expectations::{Expectation, File};
use crate::judged;
use ompd_report::{Gate, LibraryInfo, Outcome, Report, ResultRecord};
use std::collections::BTreeSet;

/// An entry of one of the evaluation's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryRef {
    /// Index into [`Evaluation::files`].
    pub file: usize,
    /// Index into that file's `expect`.
    pub index: usize,
}

/// One result judged.
#[derive(Clone, Copy, Debug)]
pub struct Judged {
    /// Index into the report's results.
    pub result: usize,
    /// The classification.
    pub gate: Gate,
    /// The entry that covered the result, if any.
    pub entry: Option<EntryRef>,
}

/// The gate for one library.
#[derive(Clone, Debug)]
pub struct LibraryGate {
    /// Library name.
    pub library: String,
    /// Indices of the files that apply to it, in order.
    pub files: Vec<usize>,
    /// Every result of the library.
    pub judged: Vec<Judged>,
    /// Entries that apply but cover nothing the run ran.
    pub stale: Vec<EntryRef>,
}

/// A report judged against expectation files.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// The files used.
    pub files: Vec<File>,
    /// One per library of the report, in report order.
    pub libraries: Vec<LibraryGate>,
    /// Unexpected passes and stale entries do not fail the gate.
    pub allow_improvements: bool,
    /// New warnings do not fail the gate.
    pub allow_warnings: bool,
    /// A shard's evaluation: stale entries are judged when the shards are merged (a shard ran
    /// only part of the run, so an entry covering nothing in it may cover a result of another).
    pub stale_deferred: bool,
    /// The target kinds whose silence is judged, and whose judged baseline `--bless` records
    /// ([`Evaluation::limit_silence`]; every kind unless the run was narrowed).
    pub silence_kinds: BTreeSet<String>,
}

/// Every target kind.
const KINDS: [&str; 3] = ["sim", "live", "core"];

/// True for outcomes that are findings (including harness errors).
pub fn finding(o: Outcome) -> bool {
    o.is_failure() || o == Outcome::HarnessError
}

/// Classifies one result given the entry covering it. A warning no entry covers is a new
/// warning; one an entry accepts is a match.
pub fn classify(r: &ResultRecord, entry: Option<&Expectation>) -> Gate {
    match entry {
        Some(e) if e.outcome.allows(r.outcome) => {
            if finding(r.outcome) {
                Gate::ExpectedFail
            } else {
                Gate::Match
            }
        }
        Some(_) if !finding(r.outcome) => Gate::UnexpectedPass,
        _ if r.outcome == Outcome::Crash && r.flaky => Gate::Flake,
        None if r.outcome == Outcome::Warn => Gate::NewWarning,
        None if !finding(r.outcome) => Gate::Match,
        _ => Gate::Regression,
    }
}

impl Evaluation {
    /// Judges every result of `report` against `files`.
    pub fn new(report: &Report, files: Vec<File>, allow_improvements: bool) -> Evaluation {
        let mut libraries = Vec::new();
        for lib in &report.rows() {
            libraries.push(judge_library(report, lib, &files));
        }
        Evaluation {
            files,
            libraries,
            allow_improvements,
            allow_warnings: false,
            stale_deferred: false,
            silence_kinds: KINDS.iter().map(|k| k.to_string()).collect(),
        }
    }

    /// Judges silence only on results of the target kinds `kinds` (a run narrowed to some
    /// scenarios or runtimes of a kind cannot say what the others stopped judging): a silenced
    /// result of another kind is a match again.
    pub fn limit_silence(&mut self, report: &Report, kinds: &[&str]) {
        self.silence_kinds = kinds.iter().map(|k| k.to_string()).collect();
        for j in self.libraries.iter_mut().flat_map(|l| &mut l.judged) {
            if j.gate == Gate::Silenced
                && !kinds.contains(&report.results[j.result].target.as_str())
            {
                j.gate = Gate::Match;
            }
        }
    }

    /// Lets new warnings pass the gate (`--allow-warnings`); they are still reported.
    pub fn allowing_warnings(mut self, allow: bool) -> Evaluation {
        self.allow_warnings = allow;
        self
    }

    /// Leaves stale entries to the merge of a shard run's reports.
    pub fn defer_stale(&mut self) {
        self.stale_deferred = true;
        for l in &mut self.libraries {
            l.stale.clear();
        }
    }

    /// The entry `e` refers to.
    pub fn entry(&self, e: EntryRef) -> &Expectation {
        &self.files[e.file].expect[e.index]
    }

    /// Writes each result's classification into the report (`gate` in the JSON).
    pub fn mark(&self, report: &mut Report) {
        for l in &self.libraries {
            for j in &l.judged {
                report.results[j.result].gate = Some(j.gate);
            }
        }
    }

    /// Results with this classification, over every library.
    pub fn count(&self, g: Gate) -> usize {
        self.libraries
            .iter()
            .flat_map(|l| &l.judged)
            .filter(|j| j.gate == g)
            .count()
    }

    /// Stale entries, over every library.
    pub fn stale_count(&self) -> usize {
        self.libraries.iter().map(|l| l.stale.len()).sum()
    }

    /// Whether the run fails the gate: a regression, a flake or a silenced check, (without
    /// `--allow-warnings`) a new warning, or (without `--allow-improvements`) an unexpected pass
    /// or a stale entry.
    pub fn fails(&self) -> bool {
        self.count(Gate::Regression) + self.count(Gate::Flake) + self.count(Gate::Silenced) > 0
            || (!self.allow_warnings && self.count(Gate::NewWarning) > 0)
            || (!self.allow_improvements
                && self.count(Gate::UnexpectedPass) + self.stale_count() > 0)
    }

    /// One line summing up the gate, e.g. `gate: 2 regressions, 1 unexpected pass, 410
    /// expected failures (exit 100)`.
    pub fn summary_line(&self) -> String {
        let n =
            |c: usize, one: &str, many: &str| format!("{c} {}", if c == 1 { one } else { many });
        let mut parts = vec![
            n(self.count(Gate::Regression), "regression", "regressions"),
            n(self.count(Gate::Flake), "flake", "flakes"),
            n(self.count(Gate::NewWarning), "new warning", "new warnings"),
            n(self.count(Gate::Silenced), "silenced", "silenced"),
            n(
                self.count(Gate::UnexpectedPass),
                "unexpected pass",
                "unexpected passes",
            ),
            if self.stale_deferred {
                "stale entries judged at merge".into()
            } else {
                n(self.stale_count(), "stale entry", "stale entries")
            },
            n(
                self.count(Gate::ExpectedFail),
                "expected failure",
                "expected failures",
            ),
        ];
        if self.allow_improvements {
            parts.push("improvements allowed".into());
        }
        if self.allow_warnings {
            parts.push("warnings allowed".into());
        }
        format!(
            "gate: {} ({})",
            parts.join(", "),
            if self.fails() { "FAILED" } else { "passed" }
        )
    }
}

/// Entries of `files` that apply to `lib`, in file order.
pub fn applicable(files: &[File], lib: &LibraryInfo) -> Vec<EntryRef> {
    files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.applies_to(&lib.name))
        .flat_map(|(fi, f)| {
            f.expect
                .iter()
                .enumerate()
                .filter(|(_, e)| e.applies_to(lib))
                .map(move |(index, _)| EntryRef { file: fi, index })
        })
        .collect()
}

fn judge_library(report: &Report, lib: &LibraryInfo, files: &[File]) -> LibraryGate {
    let entries = applicable(files, lib);
    let expect = |e: &EntryRef| &files[e.file].expect[e.index];
    let mut by_check = ByCheck::new(entries.iter().map(expect).collect());
    let mut used = vec![false; entries.len()];
    let mut judged = Vec::new();
    for (i, r) in report.results.iter().enumerate() {
        if r.library != lib.name {
            continue;
        }
        let hit = by_check.first_covering(r);
        if let Some(k) = hit {
            used[k] = true;
        }
        let entry = hit.map(|k| entries[k]);
        judged.push(Judged {
            result: i,
            gate: classify(r, entry.as_ref().map(expect)),
            entry,
        });
    }
    silence(report, lib, files, &mut judged);
    let mine: Vec<&ResultRecord> = judged.iter().map(|j| &report.results[j.result]).collect();
    let stage_of: std::collections::HashMap<&str, ompd_checks::Stage> = ompd_checks::registry()
        .iter()
        .map(|c| (c.id, c.stage))
        .collect();
    let stage = |id: &str| stage_of.get(id).copied();
    let target = ompd_checks::Stage::Target;
    let results = Results::new(&mine, |r| stage(&r.check) == Some(target));
    let stale = entries
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(e, _)| *e)
        .filter(|e| {
            let x = expect(e);
            // Shadowed by an earlier entry is not stale; neither is an entry whose check or unit
            // the run did not run.
            // Static and library-level checks run once per library, on the host unit, whatever
            // the arch and layout selection: if such a check ran and the entry covers none of its
            // results, the entry can never match. A target check's entry is stale only if the run
            // had a target unit the entry describes (a run narrowed to other units says nothing).
            let stages: Vec<ompd_checks::Stage> = results.checks_of(x).filter_map(&stage).collect();
            !results.any_covered(x)
                && !stages.is_empty()
                && (!stages.contains(&target) || results.any_unit_described(x))
        })
        .collect();
    LibraryGate {
        library: lib.name.clone(),
        files: files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.applies_to(&lib.name))
            .map(|(i, _)| i)
            .collect(),
        judged,
        stale,
    }
}

/// Marks as silenced the skips and not-supported results no entry covers, at each place where
/// the judged baseline of a file applying to `lib` says the library was judged and no result
/// judges it now.
fn silence(report: &Report, lib: &LibraryInfo, files: &[File], judged: &mut [Judged]) {
    let baselines: Vec<&judged::Baseline> = files
        .iter()
        .filter(|f| f.applies_to(&lib.name))
        .map(|f| &f.judged)
        .collect();
    if baselines.is_empty() {
        return;
    }
    let now = judged::judged_places(judged.iter().map(|j| &report.results[j.result]));
    for j in judged.iter_mut() {
        let r = &report.results[j.result];
        let unjudged = j.entry.is_none() && j.gate == Gate::Match && !judged::judges(r.outcome);
        let Some(place) = judged::place(r).filter(|_| unjudged) else {
            continue;
        };
        if !now.contains(&place) && baselines.iter().any(|b| b.judged(&lib.name, &place)) {
            j.gate = Gate::Silenced;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use crate::cover::tests::rec;

    fn report(results: Vec<ResultRecord>) -> Report {
        let mut r = Report::new();
        r.libraries.push(LibraryInfo {
            name: "v-1".into(),
            package_version: Some("1.2.3".into()),
            ..LibraryInfo::default()
        });
        for x in results {
            r.push(x);
        }
        r
    }

    fn files(text: &str) -> Vec<File> {
        vec![File::parse(text, Path::new("v.toml")).expect("parses")]
    }

    const HEAD: &str = "vendor = 'v'\nlibraries = ['v-*']\n";

    #[test]
    fn classifies_each_kind() {
        let f = files(&format!(
            "{HEAD}[[expect]]\ncheck = 'lib.api_version.known_value'\noutcome = 'fail'\nreason = 'r'\n\
             [[expect]]\ncheck = 'lib.version_string.*'\nscenario = 'serial'\noutcome = 'fail'\nreason = 'r'\n\
             [[expect]]\ncheck = 'icv.enumerate.*'\nversion = '2.*'\noutcome = 'fail'\nreason = 'r'\n"
        ));
        let mut flaky = rec("lifecycle.finalize.ok", "none", Outcome::Crash);
        flaky.flaky = true;
        let rep = report(vec![
            rec("lib.api_version.known_value", "none", Outcome::Fail),
            rec("lib.version_string.tool_owned", "serial", Outcome::Pass),
            rec("icv.enumerate.standard_names", "serial", Outcome::Fail),
            rec("lifecycle.initialize.ok", "none", Outcome::Warn),
            flaky,
        ]);
        let ev = Evaluation::new(&rep, f, false);
        let gates: Vec<Gate> = ev.libraries[0].judged.iter().map(|j| j.gate).collect();
        assert_eq!(
            gates,
            [
                Gate::ExpectedFail,
                Gate::UnexpectedPass,
                // The version condition (2.*) does not hold for 1.2.3: no entry applies.
                Gate::Regression,
                // A warning no entry accepts.
                Gate::NewWarning,
                Gate::Flake
            ]
        );
        assert!(ev.fails());
        assert!(ev.libraries[0].stale.is_empty());
    }

    #[test]
    fn a_check_that_stops_judging_is_silenced_unless_an_entry_records_the_skip() {
        let judged = "state.get.matches_model\tsim\tserial\tv-1\n\
                      task.frame.matches_model\tsim\tserial\tv-1\n\
                      thread.id.round_trip\tsim\tserial\tv-1\n";
        let f = vec![File::parse(
            &format!("{HEAD}[[expect]]\ncheck = 'task.frame.matches_model'\noutcome = 'skip'\nreason = 'r'\n"),
            Path::new("v.toml"),
        )
        .unwrap()
        .with_judged(judged)
        .unwrap()];
        let rep = report(vec![
            // Judged before, skips now, no entry: silenced.
            rec("state.get.matches_model", "serial", Outcome::Skip),
            // An entry records the skip.
            rec("task.frame.matches_model", "serial", Outcome::Skip),
            // One unit still judges it: not silent.
            rec("thread.id.round_trip", "serial", Outcome::NotSupported),
            rec("thread.id.round_trip", "serial", Outcome::Pass),
            // Never judged before: a skip is a skip.
            rec("thread.id.every_kind", "serial", Outcome::Skip),
        ]);
        let mut ev = Evaluation::new(&rep, f, false);
        let gates: Vec<Gate> = ev.libraries[0].judged.iter().map(|j| j.gate).collect();
        use Gate::{Match, Silenced};
        assert_eq!(gates, [Silenced, Match, Match, Match, Match]);
        assert!(ev.fails());
        assert!(
            ev.summary_line().contains("1 silenced"),
            "{}",
            ev.summary_line()
        );
        ev.limit_silence(&rep, &["live", "core"]);
        assert!(
            !ev.fails(),
            "a run narrowed on the simulated target judges no silence there"
        );
    }

    #[test]
    fn the_gate_sees_warnings() {
        let f = files(&format!(
            "{HEAD}[[expect]]\ncheck = 'lib.finalize.before_initialize'\noutcome = 'warn'\nreason = 'r'\n\
             [[expect]]\ncheck = 'lib.inventory.no_unknown_ompd_symbols'\noutcome = 'warn'\nreason = 'r'\n"
        ));
        let rep = report(vec![
            // Recorded, and still warning: as expected.
            rec("lib.finalize.before_initialize", "none", Outcome::Warn),
            // Recorded, and now passing: the entry must go.
            rec(
                "lib.inventory.no_unknown_ompd_symbols",
                "none",
                Outcome::Pass,
            ),
        ]);
        let ev = Evaluation::new(&rep, f.clone(), false);
        let gates: Vec<Gate> = ev.libraries[0].judged.iter().map(|j| j.gate).collect();
        assert_eq!(gates, [Gate::Match, Gate::UnexpectedPass]);

        // A warning nothing records fails the gate, unless warnings are allowed.
        let rep = report(vec![rec("lib.api_version.stable", "none", Outcome::Warn)]);
        let ev = Evaluation::new(&rep, f.clone(), false);
        assert_eq!(ev.count(Gate::NewWarning), 1);
        assert!(ev.fails());
        assert!(
            ev.summary_line().contains("1 new warning,"),
            "{}",
            ev.summary_line()
        );
        let ev = Evaluation::new(&rep, f, false).allowing_warnings(true);
        assert!(!ev.fails());
        assert!(
            ev.summary_line().ends_with("warnings allowed (passed)"),
            "{}",
            ev.summary_line()
        );
    }

    #[test]
    fn stale_only_where_the_run_ran_the_entry_s_check_and_unit() {
        let f = files(&format!(
            "{HEAD}[[expect]]\ncheck = 'lib.api_version.known_value'\nscenario = 'serial'\noutcome = 'fail'\nreason = 'r'\n\
             [[expect]]\ncheck = 'icv.enumerate.*'\nscenario = 'serial'\noutcome = 'fail'\nreason = 'r'\n"
        ));
        // Library-level checks run only on the host unit (scenario `none`): an entry for another
        // scenario can never match once its check ran. The target entry's check ran, but not on
        // a serial unit: not stale.
        let rep = report(vec![
            rec("lib.api_version.known_value", "none", Outcome::Pass),
            rec(
                "icv.enumerate.standard_names",
                "nested-tasks",
                Outcome::Pass,
            ),
        ]);
        let ev = Evaluation::new(&rep, f.clone(), false);
        assert_eq!(ev.libraries[0].stale, [EntryRef { file: 0, index: 0 }]);
        assert!(ev.fails());
        // A shard ran part of the run: its stale entries are the merge's to judge.
        let mut shard = ev.clone();
        shard.defer_stale();
        assert!(!shard.fails());
        assert!(shard
            .summary_line()
            .contains("stale entries judged at merge"));
        // Once a serial target unit ran, the target entry that covers nothing is stale too.
        let rep = report(vec![
            rec("lib.api_version.known_value", "none", Outcome::Pass),
            rec(
                "icv.enumerate.standard_names",
                "nested-tasks",
                Outcome::Pass,
            ),
            rec("icv.value.dyn-var", "serial", Outcome::Pass),
        ]);
        let ev = Evaluation::new(&rep, f.clone(), false);
        assert_eq!(
            ev.libraries[0].stale,
            [
                EntryRef { file: 0, index: 0 },
                EntryRef { file: 0, index: 1 }
            ]
        );
        // A run of neither check says nothing of either entry.
        let rep = report(vec![rec("icv.value.dyn-var", "serial", Outcome::Pass)]);
        let ev = Evaluation::new(&rep, f, false);
        assert!(ev.libraries[0].stale.is_empty());
        assert!(!ev.fails());
    }
}
