//! The suite against the real vendor libraries: every library runs to the end in all four arch
//! variants and passes the expectations gate (exit 0: every finding, crash included, is exactly
//! one recorded in its expectations file, and no entry is stale); and a library's answers for one model do not depend on the
//! layout policy.

mod common;

use common::conform;
use ompd_report::{Gate, Outcome};
use ompd_review::expectations::{self, File};
use ompd_vendors as vendors;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

fn expectation_files() -> Vec<File> {
    let dir = suite_data::expectations_dir();
    expectations::load_dir(&dir).expect("expectations load")
}

fn fetch(names: &[&str]) {
    vendors::fetch(&vendors::default_cache_dir(), names, false, &mut |_| {})
        .expect("vendor libraries fetch");
}

#[test]
fn every_vendor_library_runs_everywhere_and_matches_its_expectations() {
    fetch(&[]);
    let names: Vec<&str> = vendors::known().iter().map(|v| v.name).collect();
    let (code, report) = conform(&names);
    let mut problems = Vec::new();
    if code != 0 {
        problems.push(format!("exit code {code}, not 0"));
    }
    let gate = ompd_review::gate::Evaluation::new(&report, expectation_files(), false);
    for l in &gate.libraries {
        for e in &l.stale {
            let x = gate.entry(*e);
            problems.push(format!(
                "{}: stale expectation {} ({})",
                l.library, x.check, x.reason
            ));
        }
    }
    for name in &names {
        let lib = report
            .libraries
            .iter()
            .find(|l| l.name == *name)
            .expect("library in report");
        assert_eq!(lib.api_version, Some(201811), "{name}");
        assert!(lib.version_string.is_some(), "{name}");
        let results: Vec<_> = report
            .results
            .iter()
            .filter(|r| r.library == *name)
            .collect();
        let arches: BTreeSet<&str> = results
            .iter()
            .filter(|r| !ompd_report::is_generated(&r.scenario))
            .map(|r| r.arch.as_str())
            .collect();
        assert_eq!(arches.len(), 4, "{name}: results in every arch variant");
        let count = |scenario: &str| results.iter().filter(|r| r.scenario == scenario).count();
        let generated = count(ompd_engine::property::SCENARIO);
        let far = count(ompd_engine::property::FAR_SCENARIO);
        let target_checks = ompd_checks::registry()
            .iter()
            .filter(|c| c.stage == ompd_checks::Stage::Target && ompd_engine::property::runs(c))
            .filter(|c| !ompd_report::runtime_row::is_runtime_check(c.id))
            .count();
        assert_eq!(
            generated, target_checks,
            "{name}: one property result per target-stage check (the runtime's are the runtime row's)"
        );
        assert_eq!(far, target_checks, "{name}: and one per check placed far");
        assert!(
            !results.iter().any(|r| r.outcome == Outcome::HarnessError),
            "{name}"
        );
        // The gate (run with the repository's expectations) judged every result: anything but
        // a match or a recorded failure is a problem, named here.
        for r in &results {
            match r.gate {
                Some(Gate::Match | Gate::ExpectedFail) => {}
                other => problems.push(format!(
                    "{name}: {} {} on {}: {} ({})",
                    other.map(|g| g.as_str()).unwrap_or("unjudged"),
                    r.check,
                    r.place(),
                    r.actual,
                    r.detail
                )),
            }
        }
        assert!(
            results.iter().any(|r| r.gate == Some(Gate::ExpectedFail)),
            "{name}: the findings are recorded"
        );
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Layouts an expectation of `lib` names for `check` specifically (layout-dependent findings).
fn layout_specific(files: &[File], lib: &str, check: &str, layout: &str) -> bool {
    files
        .iter()
        .filter(|f| f.applies_to(lib))
        .flat_map(|f| &f.expect)
        .any(|e| !e.layout.is_wildcard() && e.check.matches(check) && e.layout.matches(layout))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("OMPD_LAYOUT_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The same model gives the same outcome for every check under every layout policy.
    #[test]
    fn answers_do_not_depend_on_the_layout(model in sim_target::strategy::model(), seed in any::<u64>()) {
        fetch(&["llvm-19", "intel-2026.2"]);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("case.json");
        std::fs::write(&file, serde_json::to_vec(&model).unwrap()).unwrap();
        let random = format!("random:{seed}");
        let (code, report) = conform(&[
            "llvm-19", "intel-2026.2", "--replay", file.to_str().unwrap(), "--check", "thread.*", "--check", "parallel.*",
            "--check", "task.*", "--check", "state.*", "--check", "icv.value.*",
            "--layout", "natural", "--layout", "packed", "--layout", &random, "--layout", "intel-2026.2",
            // Every answer judged: a quarantine set in by crashes under one layout would report
            // the later layouts' calls as not run.
            "--quarantine-after", "0",
        ]);
        prop_assert!(code == 0 || code == 100, "exit code {}", code);
        let files = expectation_files();
        let mut by: BTreeMap<(String, String, String), BTreeMap<String, Outcome>> = BTreeMap::new();
        for r in &report.results {
            let layout = r.layout.clone().unwrap_or_default();
            if r.scenario == "none" || layout_specific(&files, &r.library, &r.check, &layout) {
                continue;
            }
            by.entry((r.library.clone(), r.check.clone(), r.arch.clone())).or_default().insert(layout, r.outcome);
        }
        prop_assert!(!by.is_empty());
        for ((lib, check, arch), outcomes) in &by {
            let distinct: BTreeSet<_> = outcomes.values().collect();
            prop_assert!(distinct.len() == 1, "{} {} on {}: {:?}", lib, check, arch, outcomes);
        }
    }
}
