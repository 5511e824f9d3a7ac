//! A run stopped early (Ctrl-C, SIGTERM, `--run-timeout`) still writes its report: every planned
//! result is present (run, or skipped as not reached), the report is marked incomplete, and the
//! exit code is 130.

use ompd_report::{Outcome, Report};
use ompd_vendors as vendors;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Results a full scenario run (`--cases 0`) of `libs` libraries plans: per library the static
/// and lifecycle checks once and the target checks each scenario runs once per arch/layout pair;
/// the checks of the runtime once per unit, in the runtime row, whatever the number of libraries.
fn planned_results(libs: usize) -> usize {
    let out = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .args(["list", "--format", "json"])
        .output()
        .expect("ompd-conform list runs");
    let checks: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json list");
    let stage = |s: &str| checks.iter().filter(|c| c["stage"] == s).count();
    // The default plan's units of a scenario: the arch variants × the layouts that describe
    // them and that a default run samples there.
    let opts = ompd_engine::run::RunOptions::default();
    let units = |s: &str| -> usize {
        opts.archs
            .iter()
            .map(|a| {
                opts.layouts
                    .iter()
                    .filter(|l| l.supports(*a) && l.sampled(s, *a))
                    .count()
            })
            .sum()
    };
    let per_scenario = |runtime: bool| -> usize {
        sim_target::model::scenario_names()
            .map(|s| {
                let scenario = ompd_engine::worker::Scenario::built_in(s).expect("a built-in");
                let judged = checks
                    .iter()
                    .filter(|c| c["stage"] == "target")
                    .map(|c| c["id"].as_str().unwrap_or(""))
                    .filter(|id| ompd_report::runtime_row::is_runtime_check(id) == runtime)
                    .filter(|id| scenario.judges(id))
                    .count();
                judged * units(s)
            })
            .sum()
    };
    let library = stage("static") + stage("library") + per_scenario(false);
    libs * library + per_scenario(true)
}

fn run_and_stop(
    libs: &[&str],
    extra: &[&str],
    signal: Option<nix::sys::signal::Signal>,
) -> (i32, Report) {
    vendors::fetch(&vendors::default_cache_dir(), libs, false, &mut |_| {})
        .expect("vendor libraries fetch");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .args(libs)
        .args([
            "--cases", "0", "--jobs", "1", "--quiet", "--format", "json", "--output",
        ])
        .arg(&out)
        .args(extra)
        .stdout(Stdio::null())
        .spawn()
        .expect("ompd-conform starts");
    if let Some(sig) = signal {
        std::thread::sleep(Duration::from_millis(1500));
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, sig).expect("signal sent");
    }
    let code = child
        .wait()
        .expect("ompd-conform ends")
        .code()
        .unwrap_or(-1);
    let report: Report =
        serde_json::from_slice(&std::fs::read(&out).expect("report written")).expect("parses");
    (code, report)
}

fn assert_stopped_cleanly(code: i32, report: &Report, libs: usize, why: &str) {
    assert_eq!(code, 130, "exit code of a stopped run");
    assert!(report.incomplete, "the report says it is incomplete");
    assert_eq!(
        report.results.len(),
        planned_results(libs),
        "every planned result is present"
    );
    let total: usize = report.summary.values().sum();
    assert_eq!(total, report.results.len());
    let not_reached = report
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Skip && r.detail.contains(why))
        .count();
    assert!(
        not_reached > 0,
        "results not reached name the reason `{why}`"
    );
    assert!(
        report.results.iter().any(|r| r.outcome == Outcome::Pass),
        "what ran before the stop is kept"
    );
}

#[test]
fn ctrl_c_writes_what_the_run_has_marked_incomplete() {
    // Seven libraries one worker at a time take far longer than the 1.5 s before the signal.
    let libs: Vec<&str> = vendors::known().iter().map(|v| v.name).collect();
    let (code, report) = run_and_stop(&libs, &[], Some(nix::sys::signal::Signal::SIGINT));
    assert_stopped_cleanly(code, &report, libs.len(), "interrupted by SIGINT");
}

#[test]
fn the_whole_run_timeout_stops_the_run_the_same_way() {
    let libs: Vec<&str> = vendors::known().iter().map(|v| v.name).collect();
    let (code, report) = run_and_stop(&libs, &["--run-timeout", "1"], None);
    assert_stopped_cleanly(code, &report, libs.len(), "--run-timeout");
}
