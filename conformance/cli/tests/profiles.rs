//! Profile detection of TR-era libraries from their exports: a library of the March 2014 draft
//! is recognized, judged on what applies to it (its file and its inventory), and never called
//! through a 5.x or TR form its routines do not have.

mod common;

use common::conform;
use ompd_report::Outcome;

#[test]
fn a_2014_draft_library_is_detected_and_judged_on_its_inventory() {
    let path = c_fixtures::draft_2014_library();
    let (code, report) = conform(&[path, "--cases", "0"]);
    let lib = &report.libraries[0];
    assert_eq!(lib.profile, Some(ompd_abi::Generation::Draft2014));
    assert_eq!(lib.entry_points.len(), 34);
    let outcome = |id: &str| {
        let r: Vec<Outcome> = report
            .results
            .iter()
            .filter(|r| r.check == id)
            .map(|r| r.outcome)
            .collect();
        assert!(!r.is_empty(), "{id} ran");
        r
    };
    for id in [
        "lib.inventory.profile_entry_points_exported",
        "lib.inventory.no_unknown_ompd_symbols",
        "static.needed.no_openmp_runtime",
    ] {
        assert!(outcome(id).iter().all(|o| *o == Outcome::Pass), "{id}");
    }
    let others: Vec<_> = report
        .results
        .iter()
        .filter(|r| !r.check.starts_with("lib.inventory.") && !r.check.starts_with("static."))
        .collect();
    assert!(others.len() > 300, "every other check reported");
    for r in others {
        assert_eq!(r.outcome, Outcome::Skip, "{} {}", r.check, r.actual);
        assert!(
            r.detail
                .contains("the library implements the OMPD 2014 draft"),
            "{}: {}",
            r.check,
            r.detail
        );
    }
    assert_eq!(code, 0);
}
