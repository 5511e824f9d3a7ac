//! The check index `conformance/checks/CHECKS.tsv`: one row per registered check, in run order, with
//! the file and line each check records of itself (`Check::at`, which the compiler fills in
//! through `here!`), its stage, severity, requirement ids and entry points. Most ids are
//! assembled by `concat!` and appear in no source line, so `grep -n ID conformance/checks/CHECKS.tsv` is
//! the one hop from a report key to its code.
//!
//! This test regenerates the index and fails when the committed file differs;
//! `cargo xtask checks-index` (which sets `OMPD_CHECKS_INDEX_WRITE=1`) rewrites it.

use std::path::Path;

/// The index as committed: a header, then one tab-separated row per check.
fn index() -> String {
    let mut out = String::from("id\tdefined at\tstage\tseverity\trequirements\tentry points\n");
    for c in ompd_checks::registry() {
        let (file, line) = (c.at.file, c.at.line);
        assert!(
            !file.is_empty(),
            "{} records no site (`at: crate::here!()`)",
            c.id
        );
        let eps: Vec<String> = c.entry_points.iter().map(|e| e.to_string()).collect();
        out += &format!(
            "{}\t{file}:{line}\t{:?}\t{:?}\t{}\t{}\n",
            c.id,
            c.stage,
            c.severity,
            c.requirements.join(","),
            eps.join(",")
        );
    }
    out
}

#[test]
fn the_committed_index_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("CHECKS.tsv");
    let fresh = index();
    if std::env::var_os("OMPD_CHECKS_INDEX_WRITE").is_some() {
        std::fs::write(&path, &fresh).expect("CHECKS.tsv is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "conformance/checks/CHECKS.tsv is stale: run `cargo xtask checks-index` and commit it"
    );
}

#[test]
fn every_site_is_a_line_of_the_crate_outside_its_tests() {
    let root = ompd_vendors::workspace_root();
    for c in ompd_checks::registry() {
        let text = std::fs::read_to_string(root.join(c.at.file)).expect("the site's file reads");
        let lines: Vec<&str> = text.lines().collect();
        let line = c.at.line as usize;
        assert!(
            c.at.file.starts_with("conformance/checks/src/") && (1..=lines.len()).contains(&line),
            "{}: {}:{line}",
            c.id,
            c.at.file
        );
        let tests = lines.iter().position(|l| l.trim() == "#[cfg(test)]");
        assert!(
            tests.is_none_or(|t| line <= t),
            "{} is recorded at {}:{line}, inside the file's tests",
            c.id,
            c.at.file
        );
    }
}
