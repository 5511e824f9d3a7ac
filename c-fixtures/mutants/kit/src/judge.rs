//! Judging the kill: a mutant's results against the clean baseline's, place by place.
//!
//! A mutant is killed by a check it targets, at a place its clean baseline also ran, when
//! that result turns fail, crash or timeout where the baseline's had no finding (a *fail
//! kill*). A warning kills only through a target whose violation warns by its requirement at
//! the flavour's profile (a SHOULD or ambiguous level: a *warn kill*). Findings of checks the
//! mutant does not target are collateral: listed, never a kill.

use crate::{stage, Args};
use ompd_checks::{Profile, Severity};
use ompd_mutants::table::{flavour, Flavour, Mutant};
use ompd_report::{Outcome, Report};
use std::collections::{BTreeMap, BTreeSet};

/// True for an outcome that reports a finding.
fn finding(o: Outcome) -> bool {
    matches!(
        o,
        Outcome::Warn | Outcome::Fail | Outcome::Crash | Outcome::Timeout
    )
}

/// True for an outcome that fails a library.
fn failing(o: Outcome) -> bool {
    matches!(o, Outcome::Fail | Outcome::Crash | Outcome::Timeout)
}

/// Every result's outcome by (check, place).
type Outcomes = BTreeMap<(String, String), Outcome>;

/// Every result's outcome by (check, place).
fn outcomes(r: &Report) -> Outcomes {
    r.results
        .iter()
        .map(|x| ((x.check.clone(), x.place()), x.outcome))
        .collect()
}

/// The profile a flavour's libraries report, at which a check's severity is read.
fn profile(f: Flavour) -> Profile {
    match f {
        Flavour::V5_2 | Flavour::Runtime => Profile::V5_2,
        Flavour::V6_0 => Profile::V6_0,
        Flavour::Tr2 => Profile::Tr2,
    }
}

/// True when `check` is one of `m`'s targets: an id, or a pattern whose `*` stands for any run
/// of characters (`fault.*.read`: the read-fault check of every routine; `null.*`: every
/// NULL-argument check), matched by the suite's one matcher.
fn targets(m: &Mutant, check: &str) -> bool {
    m.targets.iter().any(|t| ompd_report::glob(t, check))
}

/// True when a violation of `check` warns by its requirement at `p` (SHOULD or ambiguous).
fn warns_by_level(check: &str, p: Profile) -> bool {
    ompd_checks::find(check)
        .is_some_and(|c| matches!(c.severity.at(p), Severity::Should | Severity::Ambig))
}

/// One mutant's verdict.
pub struct Row {
    /// The mutant.
    pub mutant: &'static Mutant,
    /// Targeted checks that turned fail, crash or timeout.
    pub fails: BTreeSet<String>,
    /// Targeted checks of a warning level that turned warn.
    pub warns: BTreeSet<String>,
    /// Findings that kill nothing: of checks it does not target, or a warning of a targeted
    /// check that fails by its requirement's level.
    pub collateral: BTreeSet<String>,
    /// Targeted checks with a finding at a place the baseline did not run.
    pub unbased: BTreeSet<String>,
}

impl Row {
    /// Judges `mutant`'s report against its flavour's baseline.
    fn judge(mutant: &'static Mutant, base: &Outcomes, report: &Report) -> Row {
        let p = profile(flavour(mutant));
        let mut row = Row {
            mutant,
            fails: BTreeSet::new(),
            warns: BTreeSet::new(),
            collateral: BTreeSet::new(),
            unbased: BTreeSet::new(),
        };
        for ((check, place), o) in outcomes(report) {
            let was = base.get(&(check.clone(), place));
            if !finding(o) || was.is_some_and(|b| finding(*b)) {
                continue;
            }
            let set = match (targets(mutant, &check), was) {
                (false, _) => &mut row.collateral,
                (true, None) => &mut row.unbased,
                (true, Some(_)) if failing(o) => &mut row.fails,
                (true, Some(_)) if warns_by_level(&check, p) => &mut row.warns,
                (true, Some(_)) => &mut row.collateral,
            };
            set.insert(check);
        }
        row
    }

    /// True when a check it targets killed it.
    pub fn killed(&self) -> bool {
        !self.fails.is_empty() || !self.warns.is_empty()
    }

    /// The one-line verdict on the mutant.
    pub fn line(&self) -> String {
        let verdict = match (self.fails.is_empty(), self.warns.is_empty()) {
            (false, _) => "killed",
            (true, false) => "killed by a warning of a SHOULD-level target",
            (true, true) if self.collateral.is_empty() && self.unbased.is_empty() => "SURVIVED",
            (true, true) => "not killed by a target",
        };
        let shown: Vec<&str> = self
            .kills()
            .chain(self.collateral.iter())
            .take(4)
            .map(String::as_str)
            .collect();
        format!(
            "{:<34} {verdict} ({} targeted, {} collateral{}{})",
            self.mutant.name,
            self.fails.len() + self.warns.len(),
            self.collateral.len(),
            if shown.is_empty() { "" } else { ": " },
            shown.join(", ")
        )
    }

    /// Its targeted kills: the fails, then the warnings.
    pub fn kills(&self) -> impl Iterator<Item = &String> {
        self.fails.iter().chain(&self.warns)
    }
}

/// Runs the clean baseline of a forwarder and says what findings it has (those results
/// cannot kill); returns its outcomes.
fn baseline(args: &Args, f: Flavour) -> Result<Outcomes, String> {
    let base = stage::run_one(args, None, f)?;
    let dirty: Vec<String> = base
        .results
        .iter()
        .filter(|r| finding(r.outcome))
        .map(|r| format!("{} {}", r.check, r.place()))
        .collect();
    if let Some(first) = dirty.first() {
        eprintln!(
            "ompd-mutants: note: the clean {} baseline has {} finding(s), e.g. {first}: those results cannot kill",
            f.clean(),
            dirty.len(),
        );
    }
    Ok(outcomes(&base))
}

/// Runs the baselines and every chosen mutant; prints one line per mutant and returns the
/// rows.
pub fn run(args: &Args, chosen: &[&'static Mutant]) -> Result<Vec<Row>, String> {
    let mut bases: BTreeMap<Flavour, Outcomes> = BTreeMap::new();
    let flavours: BTreeSet<Flavour> = std::iter::once(Flavour::V5_2)
        .chain(chosen.iter().map(|m| flavour(m)))
        .collect();
    for f in flavours {
        bases.insert(f, baseline(args, f)?);
    }
    let mut rows = Vec::new();
    for m in chosen {
        let report = stage::run_one(args, Some(m.name), flavour(m))?;
        let row = Row::judge(m, &bases[&flavour(m)], &report);
        eprintln!("{}", row.line());
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ompd_mutants::table::find;

    #[test]
    fn a_target_names_an_id_or_a_family_with_one_star() {
        assert!(targets(
            find("null_output_ok").unwrap(),
            "null.get_state.state"
        ));
        let read = find("read_fault_ignored").unwrap();
        assert!(targets(read, "fault.get_state.read"));
        assert!(!targets(read, "fault.get_state.alloc"));
        assert!(targets(
            find("thread_id_off").unwrap(),
            "thread.id.round_trip"
        ));
        assert!(!targets(
            find("thread_id_off").unwrap(),
            "thread.id.round_trip_2"
        ));
    }
}
