//! The suite had three check-id matchers before [`ompd_report::glob`] replaced them: the
//! expectation-file glob (`*` anywhere), and the `--check` filter and the real-target table
//! (a trailing `*` for a prefix, otherwise the exact id). This test keeps the two old semantics
//! as oracles and proves the one matcher answers as they did, for every registered id and every
//! pattern users rely on: the real-target table's, every check pattern of
//! `suite-data/expectations/*.toml`, and the `--check` patterns of the documentation.

use ompd_report::glob;

/// The old `--check` filter and real-target table lookup.
fn legacy_prefix(pattern: &str, id: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => id.starts_with(prefix),
        None => id == pattern,
    }
}

/// The old expectation-file glob, as it was in `ompd-review`.
fn legacy_glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first)
        || !text[first.len()..].ends_with(last)
        || text.len() < first.len() + last.len()
    {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Every check pattern of the committed expectation files (`check = "..."` or `[...]`).
fn expectation_patterns() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../suite-data/expectations");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("suite-data/expectations is readable") {
        let text = std::fs::read_to_string(e.expect("entry").path()).expect("readable");
        for line in text.lines().filter(|l| l.trim_start().starts_with("check")) {
            let value = line.split_once('=').expect("check = value").1;
            out.extend(value.split('"').skip(1).step_by(2).map(str::to_string));
        }
    }
    assert!(out.len() > 100, "expectation patterns found: {}", out.len());
    out
}

#[test]
fn the_one_glob_answers_as_the_three_old_matchers_did() {
    let ids: Vec<&str> = ompd_checks::registry().iter().map(|c| c.id).collect();
    let table: Vec<&str> = crate::real::REAL.iter().map(|(p, _)| *p).collect();
    let documented = [
        "icv.*",
        "lib.api_version.stable",
        "*",
        "null.*",
        "fault.get_*",
    ];
    let expected = expectation_patterns();
    for id in &ids {
        for p in table.iter().copied().chain(documented) {
            assert_eq!(
                glob(p, id),
                legacy_prefix(p, id),
                "--check/real {p:?} on {id}"
            );
        }
        for p in &expected {
            assert_eq!(glob(p, id), legacy_glob(p, id), "expectation {p:?} on {id}");
        }
        // The real-target lookup takes the first row that matches.
        let old = table.iter().position(|p| legacy_prefix(p, id));
        let new = table.iter().position(|p| glob(p, id));
        assert_eq!(old, new, "real-target row of {id}");
    }
}
