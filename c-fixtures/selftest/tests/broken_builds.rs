//! The broken OMPD libraries are built as documented: one per violation plus the clean
//! baseline, each exporting every OMPD 5.0 entry point except where the violation is a missing
//! one, and the undeclared dependency absent from DT_NEEDED.

use std::collections::BTreeSet;
use std::process::Command;

/// The dynamic symbols a shared object defines, by `nm -D --defined-only`.
fn defined_symbols(path: &str) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only", path])
        .output()
        .unwrap_or_else(|e| panic!("cannot run nm: {e}"));
    assert!(out.status.success(), "nm {path} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect()
}

#[test]
fn one_build_per_violation_plus_the_clean_one() {
    let all = c_fixtures::all_libraries();
    assert_eq!(c_fixtures::clean_library().name, "clean");
    assert_eq!(all.len(), c_fixtures::broken_libraries().len() + 1);
    let names: BTreeSet<_> = all.iter().map(|f| f.name).collect();
    assert_eq!(names.len(), all.len(), "names are unique");
    for f in all {
        assert!(
            std::path::Path::new(f.path).is_file(),
            "{}: {}",
            f.name,
            f.path
        );
        assert_eq!(f.entry_point.is_empty(), f.name == "clean", "{}", f.name);
        assert!(!f.violation.is_empty());
    }
    assert!(std::path::Path::new(c_fixtures::undeclared_dependency()).is_file());
}

#[test]
fn every_build_exports_the_5_0_interface_but_the_missing_entry_point() {
    for f in c_fixtures::all_libraries() {
        let defined = defined_symbols(f.path);
        for ep in ompd_abi::Generation::V5_0.entry_points() {
            let missing = f.name == "missing_entry" && ep.name() == f.entry_point;
            assert_eq!(defined.contains(ep.name()), !missing, "{}: {ep}", f.name);
        }
    }
}

#[test]
fn the_undeclared_dependency_is_undefined_and_not_needed() {
    let f = c_fixtures::library("undeclared_dep").expect("undeclared_dep is built");
    let out = Command::new("nm")
        .args(["-D", "--undefined-only", f.path])
        .output()
        .expect("nm runs");
    assert!(String::from_utf8_lossy(&out.stdout).contains("ompd_fixture_dep_value"));
    let out = Command::new("readelf")
        .args(["-d", f.path])
        .output()
        .expect("readelf runs");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("fixture_dep"));
}
