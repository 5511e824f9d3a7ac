//! Helpers shared by the integration tests that run the `ompd-conform` binary.

use ompd_report::Report;
use std::process::Command;

/// Runs `ompd-conform run ARGS --format json` and returns the exit code and the report.
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
