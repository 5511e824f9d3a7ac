//! `--full` runs the checks that load fresh copies of the library (every layout word withheld,
//! a process without its runtime) on every simulated unit; without it they run on one unit per
//! library and skip elsewhere, saying where they run.

mod common;

use common::{build_references, conform};
use ompd_report::{Outcome, Report};

/// The checks that load fresh copies of the library.
const FRESH: [&str; 3] = [
    "layout.missing_word.no_made_up_answer",
    "aspace.process_initialize.foreign_runtime",
    "aspace.process_initialize.foreign_runtime_code",
];

/// The outcome of each of [`FRESH`] on the one unit `report` holds.
fn outcomes(report: &Report) -> Vec<(String, Outcome)> {
    FRESH
        .iter()
        .map(|id| {
            let r = report
                .results
                .iter()
                .find(|r| r.check == *id)
                .unwrap_or_else(|| panic!("{id} has a result"));
            (r.check.clone(), r.outcome)
        })
        .collect()
}

#[test]
fn full_runs_the_fresh_copy_checks_on_every_unit() {
    build_references();
    let args = |full: bool| {
        let mut a = vec!["reference-5.2", "--scenario", "serial", "--arch", "lp64-le"];
        a.extend(["--layout", "natural", "--cases", "0"]);
        for id in FRESH {
            a.extend(["--check", id]);
        }
        if full {
            a.push("--full");
        }
        a
    };
    let (code, sampled) = conform(&args(false));
    assert_eq!(code, 0);
    for (id, outcome) in outcomes(&sampled) {
        assert_eq!(
            outcome,
            Outcome::Skip,
            "{id} runs on nested-tasks only by default"
        );
    }
    let skip = sampled.results.iter().find(|r| r.check == FRESH[0]);
    assert!(
        skip.is_some_and(|r| r.detail.contains("nested-tasks/lp64-le/natural")
            || r.actual.contains("nested-tasks/lp64-le/natural")),
        "the skip names the unit the check runs on: {skip:?}"
    );
    let (code, full) = conform(&args(true));
    assert_eq!(code, 0);
    for (id, outcome) in outcomes(&full) {
        assert_eq!(
            outcome,
            Outcome::Pass,
            "{id} on serial/lp64-le/natural with --full"
        );
    }
}
