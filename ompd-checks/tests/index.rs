//! The check index `ompd-checks/CHECKS.tsv`: one row per registered check, in run order, with
//! the file and line of the table row that defines it (its literal id, or for a family built by
//! a macro the invocation row whose literals make up the id), its stage, severity, requirement
//! ids and entry points. Most ids are assembled by `concat!` and appear in no source line, so
//! `grep -n ID ompd-checks/CHECKS.tsv` is the one hop from a report key to its code.
//!
//! This test regenerates the index and fails when the committed file differs;
//! `cargo xtask checks-index` (which sets `OMPD_CHECKS_INDEX_WRITE=1`) rewrites it.

use std::path::{Path, PathBuf};

/// The crate's source files (every `.rs` under `src/`), sorted by path, with their lines.
fn sources() -> Vec<(String, Vec<String>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("source directory is readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("source is readable");
            let rel = p.strip_prefix(root).expect("under the crate");
            let name = format!("ompd-checks/{}", rel.to_string_lossy());
            (name, text.lines().map(str::to_string).collect())
        })
        .collect()
}

/// Where a check is defined: the table row `id: "ID"`, else the line holding its id as a string
/// literal (a macro invocation), or else, in the file that builds ids of its family with
/// `concat!("FAMILY.`, the first line holding the most of its remaining components as literals
/// (its second component or the whole tail among them). A test that names the id elsewhere is
/// never taken for its definition.
fn defined_at(id: &str, srcs: &[(String, Vec<String>)]) -> Option<(String, usize)> {
    for pattern in [format!("id: \"{id}\""), format!("\"{id}\"")] {
        for (name, lines) in srcs {
            if let Some(i) = lines.iter().position(|l| l.contains(&pattern)) {
                return Some((name.clone(), i + 1));
            }
        }
    }
    let (family, tail) = id.split_once('.')?;
    let builder = format!("concat!(\"{family}.");
    let parts: Vec<&str> = tail.split('.').collect();
    let lit = |s: &str| format!("\"{s}\"");
    let mut best: Option<(usize, String, usize)> = None;
    for (name, lines) in srcs
        .iter()
        .filter(|(_, l)| l.iter().any(|x| x.contains(&builder)))
    {
        for (i, l) in lines.iter().enumerate() {
            if !(l.contains(&lit(tail)) || l.contains(&lit(parts[0]))) {
                continue;
            }
            let score = usize::from(l.contains(&lit(tail))) * parts.len()
                + parts.iter().filter(|p| l.contains(&lit(p))).count();
            if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
                best = Some((score, name.clone(), i + 1));
            }
        }
    }
    best.map(|(_, n, l)| (n, l))
}

/// The index as committed: a header, then one tab-separated row per check.
fn index() -> String {
    let srcs = sources();
    let mut out = String::from("id\tdefined at\tstage\tseverity\trequirements\tentry points\n");
    for c in ompd_checks::registry() {
        let (file, line) =
            defined_at(c.id, &srcs).unwrap_or_else(|| panic!("no source row defines {}", c.id));
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
        "ompd-checks/CHECKS.tsv is stale: run `cargo xtask checks-index` and commit it"
    );
}

#[test]
fn no_check_is_indexed_at_a_test() {
    let srcs = sources();
    for c in ompd_checks::registry() {
        let (file, line) = defined_at(c.id, &srcs).expect("defined");
        let lines = &srcs
            .iter()
            .find(|(n, _)| *n == file)
            .expect("indexed file")
            .1;
        let tests = lines.iter().position(|l| l.trim() == "#[cfg(test)]");
        assert!(
            tests.is_none_or(|t| line <= t),
            "{} is indexed at {file}:{line}, inside the file's tests",
            c.id
        );
    }
}
