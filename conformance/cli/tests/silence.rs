//! Silence: a library that stops answering, so that checks that judged it skip, fails the gate.
//! The mutation kit's forwarder around the reference is blessed clean; the same staged library,
//! now answering `unavailable` from `ompd_get_curr_parallel_handle`, leaves the fault checks of
//! that routine with no fault-free answer to protect, and the gate calls them silenced.

use std::path::Path;
use std::process::Command;

/// Builds the 5.2 forwarder and the 5.2 reference beside the runner.
fn build() -> std::path::PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "ompd-mutants-52",
            "-p",
            "ompd-reference-52",
        ])
        .status()
        .expect("cargo starts");
    assert!(
        status.success(),
        "the forwarder and reference builds failed: {status}"
    );
    Path::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .parent()
        .expect("the runner's directory")
        .to_path_buf()
}

/// Runs `ompd-conform run LIB` on the fault checks of `ompd_get_curr_parallel_handle` with the
/// expectations `exp`;
/// returns the exit code and the report's text.
fn run(lib: &Path, exp: &Path, extra: &[&str]) -> (i32, String) {
    let dir = lib.parent().expect("staged directory");
    let out = dir.join("report.json");
    let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .arg(lib)
        .args([
            "--cases",
            "0",
            "--check",
            "fault.get_curr_parallel_handle.*",
            "--quiet",
            "--format",
            "json",
        ])
        .arg("--expectations")
        .arg(exp)
        .arg("--output")
        .arg(&out)
        .arg("--results-dir")
        .arg(dir)
        .args(extra)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("ompd-conform starts");
    let text = std::fs::read_to_string(&out).expect("report written");
    (status.code().unwrap_or(-1), text)
}

#[test]
fn a_library_that_stops_answering_fails_the_gate_as_silenced() {
    let built = build();
    let dir = tempfile::Builder::new()
        .prefix("silence-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temporary directory");
    let lib = dir.path().join("libompd.so");
    std::fs::copy(built.join("libompd_mutants_52.so"), &lib).expect("copy the forwarder");
    std::os::unix::fs::symlink(
        built.join("libompd_reference_52.so"),
        dir.path().join(ompd_mutants::INNER_FILE),
    )
    .expect("link the inner library");
    let exp = dir.path().join("expectations.toml");
    let (code, _) = run(&lib, &exp, &["--bless"]);
    assert_eq!(code, 0, "the clean forwarder blesses");
    let baseline = std::fs::read_to_string(dir.path().join("expectations.judged.tsv"))
        .expect("bless writes the judged baseline");
    assert!(baseline.contains("fault.get_curr_parallel_handle.read\tsim\t"));
    let (code, _) = run(&lib, &exp, &[]);
    assert_eq!(code, 0, "the blessed run passes its gate");

    std::fs::write(
        dir.path().join(ompd_mutants::MUTANT_FILE),
        "curr_parallel_unavailable",
    )
    .expect("name the mutant");
    let (code, report) = run(&lib, &exp, &[]);
    assert_eq!(code, 100, "the gate fails");
    let report: ompd_report::Report = serde_json::from_str(&report).expect("report parses");
    let silenced: Vec<&str> = report
        .results
        .iter()
        .filter(|r| r.gate == Some(ompd_report::Gate::Silenced))
        .map(|r| r.check.as_str())
        .collect();
    assert!(
        silenced.contains(&"fault.get_curr_parallel_handle.read"),
        "silenced: {silenced:?}"
    );
    assert!(report
        .results
        .iter()
        .filter(|r| r.gate == Some(ompd_report::Gate::Silenced))
        .all(|r| matches!(
            r.outcome,
            ompd_report::Outcome::Skip | ompd_report::Outcome::NotSupported
        )));
}
