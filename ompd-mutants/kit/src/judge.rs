//! Judging the kill: a mutant's results against the clean baseline's, the kill matrix and the
//! score.

use crate::{stage, Args};
use ompd_mutants::table::{self, flavour, targets, Flavour, Mutant};
use ompd_report::{Outcome, Report};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// True for an outcome that reports a finding.
fn finding(o: Outcome) -> bool {
    matches!(
        o,
        Outcome::Warn | Outcome::Fail | Outcome::Crash | Outcome::Timeout
    )
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

/// The checks with a finding in `mutant` where the baseline had none.
fn killers(base: &Outcomes, mutant: &Report) -> BTreeSet<String> {
    outcomes(mutant)
        .into_iter()
        .filter(|(k, o)| finding(*o) && !base.get(k).is_some_and(|b| finding(*b)))
        .map(|((check, _), _)| check)
        .collect()
}

/// One row of the matrix.
struct Row {
    mutant: &'static Mutant,
    killers: BTreeSet<String>,
}

impl Row {
    fn target_hit(&self) -> bool {
        self.killers.iter().any(|c| targets(self.mutant, c))
    }
}

/// Runs the clean baseline of a forwarder and says what findings it has (those results
/// cannot kill); returns its outcomes and its check ids.
fn baseline(args: &Args, f: Flavour) -> Result<(Outcomes, BTreeSet<String>), String> {
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
    let checks = base.results.iter().map(|r| r.check.clone()).collect();
    Ok((outcomes(&base), checks))
}

/// Runs the baselines and every chosen mutant, prints and writes the matrix; true when every
/// mutant was killed by one of its targets.
pub fn run(args: &Args, chosen: &[&'static Mutant]) -> Result<bool, String> {
    let mut bases: BTreeMap<Flavour, Outcomes> = BTreeMap::new();
    let mut all = BTreeSet::new();
    let flavours: BTreeSet<Flavour> = std::iter::once(Flavour::V5_2)
        .chain(chosen.iter().map(|m| flavour(m)))
        .collect();
    for f in flavours {
        let (b, checks) = baseline(args, f)?;
        all.extend(checks);
        bases.insert(f, b);
    }
    let mut rows = Vec::new();
    for m in chosen {
        let f = flavour(m);
        let report = stage::run_one(args, Some(m.name), f)?;
        let row = Row {
            mutant: m,
            killers: bases
                .get(&f)
                .map(|b| killers(b, &report))
                .unwrap_or_default(),
        };
        eprintln!("{}", line(&row));
        rows.push(row);
    }
    let text = matrix(&rows, &all);
    let path = args.out.join("kill-matrix.md");
    std::fs::write(&path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    print!("{}", summary(&rows, &all));
    println!("kill matrix: {}", path.display());
    Ok(rows.iter().all(Row::target_hit))
}

/// The one-line verdict on a mutant.
fn line(r: &Row) -> String {
    let verdict = match (r.killers.is_empty(), r.target_hit()) {
        (true, _) => "SURVIVED",
        (false, false) => "killed, but by none of its targets",
        (false, true) => "killed",
    };
    let first: Vec<&str> = r.killers.iter().take(4).map(String::as_str).collect();
    format!(
        "{:<34} {verdict} ({} checks{}{})",
        r.mutant.name,
        r.killers.len(),
        if first.is_empty() { "" } else { ": " },
        first.join(", ")
    )
}

/// The MUST requirements of OpenMP 5.2, 6.0 and TR 2.001 a killing check cites (shown violated by a
/// mutant), and those none does.
fn musts_shown(rows: &[Row]) -> (BTreeSet<String>, BTreeSet<String>) {
    use ompd_checks::Profile;
    let cited: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.killers.iter())
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
fn summary(rows: &[Row], all: &BTreeSet<String>) -> String {
    let killed = rows.iter().filter(|r| r.target_hit()).count();
    let killing: BTreeSet<&String> = rows.iter().flat_map(|r| r.killers.iter()).collect();
    let (shown, not_shown) = musts_shown(rows);
    format!(
        "score: {killed} of {} mutants killed by a targeted check ({:.0} %); {} of {} checks kill at least one mutant; {} of {} MUST requirements (5.2, 6.0, TR 2.001) shown violated by a killed mutant\n",
        rows.len(),
        100.0 * killed as f64 / rows.len().max(1) as f64,
        killing.len(),
        all.len(),
        shown.len(),
        shown.len() + not_shown.len()
    )
}

/// The Markdown kill matrix: mutant → killing checks, then the checks no mutant killed.
fn matrix(rows: &[Row], all: &BTreeSet<String>) -> String {
    let mut s = String::from("# Kill matrix\n\n| mutant | entry point | killed by a target | killing checks |\n|---|---|---|---|\n");
    for r in rows {
        let ep = match (
            r.mutant.entry_point,
            table::runtime_patch(r.mutant.deviation),
        ) {
            (_, Some(_)) => "none: the runtime".into(),
            (None, None) => "every one".into(),
            (Some(e), None) => e.to_string(),
        };
        let list: Vec<&str> = r.killers.iter().map(String::as_str).collect();
        let _ = writeln!(
            s,
            "| {} | {ep} | {} | {} |",
            r.mutant.name,
            if r.target_hit() { "yes" } else { "**no**" },
            list.join(", ")
        );
    }
    let killing: BTreeSet<&String> = rows.iter().flat_map(|r| r.killers.iter()).collect();
    let _ = writeln!(s, "\n{}\n## Checks no mutant killed\n", summary(rows, all));
    for c in all.iter().filter(|c| !killing.contains(c)) {
        let _ = writeln!(s, "- {c}");
    }
    let _ = writeln!(
        s,
        "\n## MUST requirements no killed mutant shows violated\n"
    );
    for id in musts_shown(rows).1 {
        let _ = writeln!(s, "- {id}");
    }
    s
}
