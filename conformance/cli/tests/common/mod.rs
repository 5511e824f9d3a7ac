//! Helpers shared by the integration tests that run the `ompd-conform` binary.

use ompd_report::Report;
use std::process::Command;

/// Runs `ompd-conform run ARGS --format json` and returns the exit code and the report.
#[allow(dead_code)] // Not every test binary runs the runner.
pub fn conform(args: &[&str]) -> (i32, Report) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .args(args)
        .args(["--quiet", "--format", "json", "--output"])
        .arg(&out)
        .arg("--results-dir")
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("ompd-conform starts");
    let report: Report = serde_json::from_slice(&std::fs::read(&out).expect("report written"))
        .expect("report parses");
    (status.code().unwrap_or(-1), report)
}

/// Builds the reference library builds (`ompd_vendors::REFERENCES`) beside the runner, where
/// it resolves them, and returns their names.
#[allow(dead_code)] // Not every test binary runs the references.
pub fn build_references() -> Vec<&'static str> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = Command::new(cargo);
    c.args(["build", "--quiet"]);
    for r in &ompd_vendors::REFERENCES {
        c.args(["-p", r.package]);
    }
    let status = c.status().expect("cargo starts");
    assert!(status.success(), "the reference builds failed: {status}");
    ompd_vendors::REFERENCES.iter().map(|r| r.name).collect()
}
