//! A library that hangs, or crashes on every call, in a commonly called entry point
//! (`ompd_get_curr_task_handle`, the `hang_task` and `segfault_task` builds of
//! `c-fixtures/selftest/c/broken_ompd.c`) still gets its full default run, in at most three times the
//! clean build's time: the per-call deadline ends each hang in seconds, and once the entry point
//! hung (or reproducibly crashed) in two checks it is quarantined. The times are measured here,
//! as ratios to the clean build's run in the same test, never against a fixed time. Every result
//! that differs from the clean build's is a check that calls the entry point, reported as hung,
//! crashed or not run; every other check is judged as on the clean build.

#[path = "common/broken.rs"]
mod broken;

use ompd_report::{Outcome, Report, ResultRecord};
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

/// The entry point both broken builds break.
const BROKEN: &str = "ompd_get_curr_task_handle";

/// Runs the full default run (every scenario, arch and layout, and the property phase) of the
/// broken build `name`: its report and wall time.
fn full_run(name: &str) -> (Report, Duration) {
    let fixture = c_fixtures::library(name).expect("the fixture is built");
    let (dir, lib) = broken::stage(fixture);
    let out = dir.path().join("report.json");
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .arg(&lib)
        .args([
            "--quiet",
            "--no-expectations",
            "--format",
            "json",
            "--output",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("ompd-conform starts");
    let took = start.elapsed();
    assert_eq!(
        status.code(),
        Some(100),
        "{name}: findings, no harness error"
    );
    let report = serde_json::from_slice(&std::fs::read(&out).expect("report written"))
        .expect("report parses");
    (report, took)
}

/// Results of the scenario units by (check, scenario, arch, layout); the property phase's
/// summaries name the case that failed first, which differs between builds.
fn by_unit(r: &Report) -> BTreeMap<(String, String, String, String), &ResultRecord> {
    r.results
        .iter()
        .filter(|r| !ompd_report::is_generated(&r.scenario))
        .map(|r| {
            let layout = r.layout.clone().unwrap_or_default();
            (
                (r.check.clone(), r.scenario.clone(), r.arch.clone(), layout),
                r,
            )
        })
        .collect()
}

/// What a changed result of the build must say: the call hung or crashed, or was not run.
fn blames_the_entry_point(r: &ResultRecord, outcome: Outcome, verb: &str) -> bool {
    let hung_or_crashed = r.actual.contains(BROKEN);
    let not_run =
        r.actual == "not run" && r.detail.starts_with(&format!("not run: {BROKEN} {verb}"));
    r.outcome == outcome && (hung_or_crashed || not_run)
}

#[test]
fn a_broken_common_entry_point_is_quarantined_within_three_times_the_clean_run() {
    let (clean, clean_took) = full_run("clean");
    let clean_units = by_unit(&clean);
    for (name, outcome, cause, verb) in [
        ("hang_task", Outcome::Timeout, "hang", "hung"),
        ("segfault_task", Outcome::Crash, "crash", "crashed"),
    ] {
        let (report, took) = full_run(name);
        let ratio = took.as_secs_f64() / clean_took.as_secs_f64();
        assert!(
            ratio <= 3.0,
            "{name}: {took:?}, {ratio:.1} times the clean build's {clean_took:?}"
        );
        let q = &report.libraries[0].quarantined;
        assert_eq!(q.len(), 1, "{name}: {q:?}");
        assert_eq!(
            (q[0].entry_point.as_str(), q[0].cause.as_str()),
            (BROKEN, cause)
        );
        let units = by_unit(&report);
        assert!(
            units.keys().eq(clean_units.keys()),
            "{name}: every scenario result is there"
        );
        let changed: Vec<&ResultRecord> = units
            .iter()
            .filter(|(k, r)| r.outcome != clean_units[*k].outcome)
            .map(|(_, r)| *r)
            .collect();
        let not_run = changed.iter().filter(|r| r.actual == "not run").count();
        assert!(not_run > 0, "{name}: the quarantine spared calls");
        let wrong: Vec<String> = changed
            .iter()
            .filter(|r| !blames_the_entry_point(r, outcome, verb))
            .take(5)
            .map(|r| format!("{} on {}: {} ({})", r.check, r.place(), r.actual, r.detail))
            .collect();
        assert!(
            wrong.is_empty(),
            "{name}: changed for another reason:\n{}",
            wrong.join("\n")
        );
    }
}
