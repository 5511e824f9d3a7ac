//! Files that are no OMPD library are refused before any worker starts: one line naming what was
//! found, exit 1, and no report (nothing can pass on nothing).

use std::process::Command;

#[test]
fn a_library_without_ompd_symbols_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .args(["run", "/lib/x86_64-linux-gnu/libm.so.6", "--quiet"])
        .args(["--format", "json", "--output"])
        .arg(&report)
        .output()
        .expect("ompd-conform runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("is no OMPD library: it exports no ompd_* symbol"),
        "{err}"
    );
    assert!(err.contains("SONAME libm.so.6"), "{err}");
    assert!(!report.exists(), "no report: nothing was judged");
}
