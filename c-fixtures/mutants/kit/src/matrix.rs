//! The kill matrix (mutant → the targeted checks that killed it; check → its killing mutants),
//! the score, and the ledger of what is owed (`owed.tsv`: checks without a targeted kill and
//! mutants no target kills yet, each with its reason).

use crate::judge::Row;
use ompd_checks::Profile;
use ompd_mutants::table::{self, flavour, Flavour};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// What `owed.tsv` lists: checks and mutants by id, with the reason.
#[derive(Default)]
pub struct Owed {
    /// Checks without a targeted kill.
    pub checks: BTreeMap<String, String>,
    /// Mutants no check they target kills.
    pub mutants: BTreeMap<String, String>,
}

impl Owed {
    /// Parses the ledger: `check|mutant<TAB>id<TAB>reason` rows; `#` comments and blank lines.
    pub fn parse(text: &str) -> Result<Owed, String> {
        let mut owed = Owed::default();
        for (n, l) in ompd_report::data_lines(text) {
            let f: Vec<&str> = l.splitn(3, '\t').collect();
            let map = match f.first() {
                Some(&"check") => &mut owed.checks,
                Some(&"mutant") => &mut owed.mutants,
                _ => return Err(format!("owed.tsv:{n}: not a check or mutant row")),
            };
            match f.as_slice() {
                [_, id, why] if !why.trim().is_empty() => {
                    map.insert(id.to_string(), why.to_string());
                }
                _ => return Err(format!("owed.tsv:{n}: a row is kind, id and reason")),
            }
        }
        Ok(owed)
    }
}

/// Each check with a targeted kill → its killing mutants.
fn killers(rows: &[Row]) -> BTreeMap<&str, BTreeSet<&'static str>> {
    let mut by: BTreeMap<&str, BTreeSet<&'static str>> = BTreeMap::new();
    for r in rows {
        for c in r.kills() {
            by.entry(c.as_str()).or_default().insert(r.mutant.name);
        }
    }
    by
}

/// The MUST requirements of 5.2, 6.0 and TR 2.001 a targeted check that failed cites (shown
/// violated by a fail kill), and those none does.
fn musts_shown(rows: &[Row]) -> (BTreeSet<String>, BTreeSet<String>) {
    let cited: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.fails.iter())
        .filter_map(|c| ompd_checks::find(c))
        .flat_map(|c| c.requirements.iter().copied())
        .collect();
    ompd_review::coverage::checklist()
        .into_iter()
        .filter(|r| {
            [Profile::V5_2, Profile::V6_0, Profile::Tr2]
                .iter()
                .any(|p| r.binds(*p))
        })
        .map(|r| r.id)
        .partition(|id| cited.contains(id.as_str()))
}

/// The score lines.
pub fn summary(rows: &[Row], all: &BTreeSet<String>) -> String {
    let killed = rows.iter().filter(|r| r.killed()).count();
    let by_fail = rows.iter().filter(|r| !r.fails.is_empty()).count();
    let by = killers(rows);
    let failed: BTreeSet<&String> = rows.iter().flat_map(|r| r.fails.iter()).collect();
    let (shown, not_shown) = musts_shown(rows);
    format!(
        "score: {killed} of {} mutants killed by a check they target ({by_fail} by a fail, {} only by a warning of a SHOULD-level target); \
         {} of {} checks have a targeted kill ({} by a fail); \
         {} of {} MUST requirements (5.2, 6.0, TR 2.001) shown violated by a fail kill\n",
        rows.len(),
        killed - by_fail,
        by.len(),
        all.len(),
        failed.len(),
        shown.len(),
        shown.len() + not_shown.len()
    )
}

/// The flavour's name in the matrix.
fn flavour_name(f: Flavour) -> &'static str {
    match f {
        Flavour::V5_2 => "5.2",
        Flavour::V6_0 => "6.0",
        Flavour::Runtime => "runtime",
        Flavour::Tr2 => "TR 2.001",
    }
}

/// The Markdown kill matrix: the score, mutant → its targeted kills, check → its killing
/// mutants, what is owed and the MUSTs no fail kill shows violated.
pub fn render(rows: &[Row], all: &BTreeSet<String>, owed: &Owed) -> String {
    let mut s = format!(
        "# Kill matrix\n\nWritten by `cargo xtask mutants` (`--bless` rewrites it; CI fails when it differs). \
         A kill is a targeted check turning fail, crash or timeout where the clean baseline, run at the same places, had no finding; \
         a warning kills only through a SHOULD-level target.\n\n{}\n",
        summary(rows, all)
    );
    s.push_str("## Mutants\n\n| mutant | flavour | entry point | fail kills | warn kills |\n|---|---|---|---|---|\n");
    for r in rows {
        let ep = match (
            r.mutant.entry_point,
            table::runtime_patch(r.mutant.deviation),
        ) {
            (_, Some(_)) => "none: the runtime".into(),
            (None, None) => "every one".into(),
            (Some(e), None) => e.to_string(),
        };
        let join = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            s,
            "| {} | {} | {ep} | {} | {} |",
            r.mutant.name,
            flavour_name(flavour(r.mutant)),
            join(&r.fails),
            join(&r.warns)
        );
    }
    s.push_str("\n## Checks\n\n| check | killing mutants |\n|---|---|\n");
    let by = killers(rows);
    for c in all {
        let names: Vec<&str> = by.get(c.as_str()).into_iter().flatten().copied().collect();
        let cell = match (names.is_empty(), owed.checks.get(c)) {
            (false, _) => names.join(", "),
            (true, Some(why)) => format!("**owed**: {why}"),
            (true, None) => "**none**".into(),
        };
        let _ = writeln!(s, "| {c} | {cell} |");
    }
    s.push_str("\n## Mutants owed a targeted kill\n\n");
    for (name, why) in &owed.mutants {
        let _ = writeln!(s, "- {name}: {why}");
    }
    s.push_str("\n## MUST requirements no fail kill shows violated\n\n");
    for id in musts_shown(rows).1 {
        let _ = writeln!(s, "- {id}");
    }
    s
}

/// What the ledger and the rows disagree on: a check or mutant without a kill that the ledger
/// does not list, and a listed one that now has its kill (the entry is stale). `full`: the run
/// judged every mutant, so the checks are judged too.
pub fn unowed(rows: &[Row], all: &BTreeSet<String>, owed: &Owed, full: bool) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        let listed = owed.mutants.contains_key(r.mutant.name);
        match (r.killed(), listed) {
            (false, false) => out.push(format!(
                "mutant {} is not killed by a check it targets",
                r.mutant.name
            )),
            (true, true) => out.push(format!(
                "mutant {} is killed now: remove it from owed.tsv",
                r.mutant.name
            )),
            _ => {}
        }
    }
    if !full {
        return out;
    }
    let by = killers(rows);
    for c in all {
        match (by.contains_key(c.as_str()), owed.checks.contains_key(c)) {
            (false, false) => out.push(format!("check {c} has no targeted kill")),
            (true, true) => out.push(format!(
                "check {c} has a targeted kill now: remove it from owed.tsv"
            )),
            _ => {}
        }
    }
    for c in owed.checks.keys().filter(|c| !all.contains(*c)) {
        out.push(format!("owed.tsv lists {c}, which no baseline ran"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ompd_mutants::table::find;

    fn row(name: &str, fails: &[&str], warns: &[&str]) -> Row {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Row {
            mutant: find(name).expect("a mutant of the table"),
            fails: set(fails),
            warns: set(warns),
            collateral: BTreeSet::new(),
            unbased: BTreeSet::new(),
        }
    }

    #[test]
    fn the_ledger_reads_checks_and_mutants_with_reasons_and_refuses_a_bare_row() {
        let owed = Owed::parse("# c\n\ncheck\ta.b\twhy\nmutant\tm\tbecause\n").unwrap();
        assert_eq!(owed.checks["a.b"], "why");
        assert_eq!(owed.mutants["m"], "because");
        assert!(
            Owed::parse("check\ta.b\t \n").is_err(),
            "a row without a reason"
        );
        assert!(Owed::parse("thing\ta.b\twhy\n").is_err(), "an unknown kind");
    }

    #[test]
    fn what_has_no_kill_must_be_owed_and_what_is_owed_must_have_none() {
        let rows = [
            row("thread_id_off", &["thread.id.round_trip"], &[]),
            row("state_off", &[], &[]),
        ];
        let all: BTreeSet<String> = ["thread.id.round_trip", "state.get.matches_model"]
            .map(String::from)
            .into();
        let problems = unowed(&rows, &all, &Owed::default(), true);
        assert_eq!(
            problems,
            [
                "mutant state_off is not killed by a check it targets",
                "check state.get.matches_model has no targeted kill",
            ]
        );
        let owed = Owed::parse(
            "mutant\tstate_off\tr\ncheck\tstate.get.matches_model\tr\ncheck\tthread.id.round_trip\tr\n",
        )
        .unwrap();
        assert_eq!(
            unowed(&rows, &all, &owed, true),
            ["check thread.id.round_trip has a targeted kill now: remove it from owed.tsv"]
        );
        assert!(
            unowed(&rows, &all, &owed, false).is_empty(),
            "a partial run judges mutants only"
        );
    }

    #[test]
    fn a_warning_counts_only_as_a_warn_kill_and_the_score_says_so() {
        let rows = [
            row("thread_id_off", &["thread.id.round_trip"], &[]),
            row(
                "omp_version_prints",
                &[],
                &["callbacks.contract.no_direct_output"],
            ),
        ];
        let all: BTreeSet<String> = [
            "thread.id.round_trip",
            "callbacks.contract.no_direct_output",
        ]
        .map(String::from)
        .into();
        let s = summary(&rows, &all);
        assert!(
            s.contains(
                "2 of 2 mutants killed by a check they target (1 by a fail, 1 only by a warning"
            ),
            "{s}"
        );
        assert!(
            s.contains("2 of 2 checks have a targeted kill (1 by a fail)"),
            "{s}"
        );
    }
}
