//! The positive control: the reference library builds pass every check of the default run
//! (every scenario × arch × layout, and the property phase's 1 024 generated cases) with no
//! finding at all; and no expectation applies to them (the runtimes' findings are the runtime
//! row's).

mod common;

use common::{build_references, conform};
use ompd_report::Outcome;
use ompd_review::expectations;
use std::collections::BTreeSet;

#[test]
fn the_reference_builds_pass_every_check_of_the_default_run() {
    let names = build_references();
    let (code, report) = conform(&names);
    let found = findings(&report);
    assert!(found.is_empty(), "findings:\n{}", found.join("\n"));
    assert_eq!(code, 0);
    unjudged_as_listed(&report);
    for name in &names {
        let lib = report
            .libraries
            .iter()
            .find(|l| l.name == *name)
            .expect("in report");
        assert!(lib.version_string.is_some(), "{name}");
        let passed = report
            .results
            .iter()
            .filter(|r| r.library == *name && r.outcome == Outcome::Pass)
            .count();
        // The TR build runs the TR's checks and the 5.x checks of requirements TR 2.001 states.
        let floor = if name.contains("tr2") { 300 } else { 10_000 };
        assert!(passed > floor, "{name}: only {passed} passes");
    }
    let api: Vec<Option<i64>> = names
        .iter()
        .map(|n| {
            report
                .libraries
                .iter()
                .find(|l| l.name == *n)
                .and_then(|l| l.api_version)
        })
        .collect();
    assert_eq!(
        api,
        [
            Some(201811),
            Some(202011),
            Some(202111),
            Some(202411),
            Some(201607)
        ]
    );
    let tr = report
        .libraries
        .iter()
        .find(|l| l.name == "reference-tr2.001")
        .expect("TR build");
    assert_eq!(tr.profile, Some(ompd_abi::Generation::Tr2));
    // The 5.x checks of requirements TR 2.001 states run on the TR build: through routines of
    // the same name (compare), renamed by 5.0 (the id query, the release, the current region)
    // and adapted (the display-control release, the version query).
    for id in [
        "thread.compare.same_thread_equal",
        "thread.id.round_trip",
        "compare.parallel.entity_identity",
        "aspace.release.ok",
        "dcv.get.well_formed",
        "lib.finalize.no_callbacks_after",
    ] {
        let passed = report
            .results
            .iter()
            .any(|r| r.library == tr.name && r.check == id && r.outcome == Outcome::Pass);
        assert!(passed, "{id} passes on the TR build");
    }
}

/// Every check that judges none of the reference builds is listed with its reason in
/// `golden/reference-unjudged.tsv`, and every listed check judges none.
fn unjudged_as_listed(report: &ompd_report::Report) {
    let path = suite_data::reference_unjudged_path();
    let text = std::fs::read_to_string(&path).expect("the list reads");
    let listed: BTreeSet<&str> = ompd_report::lines::data_lines(&text)
        .map(|(n, l)| match l.split_once('\t') {
            Some((check, why)) if !why.trim().is_empty() => check,
            _ => panic!("{}:{n}: `check<TAB>reason`", path.display()),
        })
        .collect();
    let rows = report
        .results
        .iter()
        .filter(|r| r.library != ompd_report::runtime_row::ROW);
    let judged: BTreeSet<&str> = rows
        .clone()
        .filter(|r| matches!(r.outcome, Outcome::Pass | Outcome::Warn | Outcome::Fail))
        .map(|r| r.check.as_str())
        .collect();
    let unjudged: BTreeSet<&str> = rows
        .map(|r| r.check.as_str())
        .filter(|c| !judged.contains(c))
        .collect();
    let unlisted: Vec<_> = unjudged.difference(&listed).collect();
    let stale: Vec<_> = listed.intersection(&judged).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "judge nothing on any reference build, unlisted: {unlisted:?}; listed, yet judged: {stale:?}"
    );
}

/// The findings (fail, warn, crash, timeout) of a report, the first ten rendered.
fn findings(report: &ompd_report::Report) -> Vec<String> {
    report
        .results
        .iter()
        .filter(|r| {
            matches!(
                r.outcome,
                Outcome::Fail | Outcome::Warn | Outcome::Crash | Outcome::Timeout
            )
        })
        .take(10)
        .map(|r| {
            format!(
                "{} {} {} {:?}: {}",
                r.library,
                r.check,
                r.place(),
                r.outcome,
                r.actual
            )
        })
        .collect()
}

/// Intel's runtimes up to 2023.2 publish an older self-description (the `older-runtime`
/// scenario, run when named): the references serve it on every arch and layout, and the ICVs
/// it does not describe answer unavailable, which the checks leave unjudged.
#[test]
fn the_reference_builds_serve_the_older_self_description() {
    let mut args = build_references();
    args.extend(["--scenario", "older-runtime"]);
    let (code, report) = conform(&args);
    let found = findings(&report);
    assert!(found.is_empty(), "findings:\n{}", found.join("\n"));
    assert_eq!(code, 0);
    let passed = |lib: &str, check: &str| {
        report
            .results
            .iter()
            .filter(|r| r.library == lib && r.check == check && r.outcome == Outcome::Pass)
            .count()
    };
    for check in [
        "thread.handle.by_pthread_id",
        "state.get.matches_model",
        "icv.value.stacksize-var",
        "dcv.get.values_match_model",
    ] {
        assert!(passed("reference-5.2", check) >= 13, "{check}");
    }
    assert!(passed("reference-tr2.001", "dcv.get.well_formed") >= 13);
    let unjudged = report.results.iter().any(|r| {
        r.library == "reference-6.0"
            && r.check == "icv.value.thread-limit-var"
            && r.outcome == Outcome::Skip
            && r.detail.contains("does not define")
    });
    assert!(
        unjudged,
        "thread-limit-var: unavailable where the runtime does not describe it"
    );
}

/// No expectation applies to a reference build: a finding in its rows is a regression of the
/// gate. The runtimes' findings are in the runtime row (`runtime.toml`), not the libraries'.
#[test]
fn no_expectation_applies_to_a_reference_build() {
    let dir = suite_data::expectations_dir();
    let files = expectations::load_dir(&dir).expect("expectations load");
    for name in ompd_vendors::REFERENCES.map(|r| r.name) {
        let lib = ompd_report::LibraryInfo {
            name: name.into(),
            ..Default::default()
        };
        for f in files.iter().filter(|f| f.applies_to(name)) {
            let any = f.expect.iter().find(|e| e.applies_to(&lib));
            assert!(
                any.is_none(),
                "{}: {:?} applies to {name}: a finding of the reference must be fixed, not recorded",
                f.path.display(),
                any.map(|e| e.check.patterns())
            );
        }
    }
}
