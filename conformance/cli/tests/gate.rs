//! The expectations gate end to end: one changed expectation, or one changed answer (a broken
//! fixture judged against LLVM 14's expectations), makes `ompd-conform run` exit 100 with a
//! message naming the check; a malformed expectations file is a usage error; `--bless` adopts a
//! run so that the next run passes the gate.

use ompd_vendors as vendors;
use rstest::rstest;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// One arch variant and layout, no property phase: about a second per run.
const QUICK: &[&str] = &["--cases", "0", "--arch", "lp64-le", "--layout", "natural"];

fn llvm_toml() -> String {
    std::fs::read_to_string(suite_data::expectations_dir().join("llvm.toml")).expect("llvm.toml")
}

/// The vendor name, once its library is in the cache.
fn fetched(name: &str) -> &str {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        vendors::fetch(
            &vendors::default_cache_dir(),
            &["llvm-14", "llvm-19"],
            false,
            &mut |_| {},
        )
        .expect("vendor libraries fetch");
    });
    name
}

/// Runs `ompd-conform run LIB QUICK ARGS` and returns the exit code, stdout and stderr.
fn conform(
    lib: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
    results: &Path,
) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .arg(lib)
        .args(QUICK)
        .args(args)
        .arg("--results-dir")
        .arg(results)
        .output()
        .expect("ompd-conform starts");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Removes the `[[expect]]` entry of `check` (the first one naming it exactly).
fn without_entry(text: &str, check: &str) -> String {
    let at = text
        .find(&format!("[[expect]]\ncheck = \"{check}\"\n"))
        .expect("entry present");
    let end = text[at + 10..]
        .find("[[expect]]")
        .map(|i| at + 10 + i)
        .unwrap_or(text.len());
    format!("{}{}", &text[..at], &text[end..])
}

#[test]
fn the_repository_expectations_pass_the_gate_for_llvm_19() {
    let d = tempfile::tempdir().unwrap();
    let (code, out, err) = conform(fetched("llvm-19"), &["--verbose"], d.path());
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("gate: 0 regressions"), "{out}");
    assert!(
        out.contains("expected-fail icv.enumerate.standard_names"),
        "{out}"
    );
}

#[test]
fn without_verbose_a_library_with_nothing_unexpected_fits_on_a_screen_and_ends_in_the_table() {
    let d = tempfile::tempdir().unwrap();
    let junit = d.path().join("j.xml");
    let junit_arg = junit.to_str().unwrap();
    let (code, out, err) = conform(fetched("llvm-19"), &["--junit", junit_arg], d.path());
    assert_eq!(code, 0, "{err}\n{out}");
    let tree = out
        .split("llvm-19 (expectations:")
        .nth(1)
        .and_then(|t| t.split("runtime (expectations:").next())
        .expect("the library's tree");
    assert!(tree.lines().count() <= 40, "{tree}");
    assert!(
        !out.contains("expected-fail icv.enumerate.standard_names"),
        "{out}"
    );
    assert!(tree.contains("├─ icv ("), "the family's count line: {tree}");
    let header = out
        .lines()
        .find(|l| l.starts_with("library ") && l.contains(" judged "))
        .expect("the table");
    for column in [
        "profile", "judged", "expected", "regress", "new-warn", "silenced",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != header)
        .skip(1)
        .take(2)
        .collect();
    assert!(
        rows[0].starts_with("llvm-19 ") && rows[0].contains("OpenMP 5.0"),
        "{rows:?}"
    );
    assert!(rows[1].starts_with("runtime "), "the runtime row: {rows:?}");
    assert!(out.contains(&format!("JUnit report: {junit_arg}")), "{out}");
}

#[rstest]
#[case::an_entry_removed(
    "icv.enumerate.standard_names",
    "REGRESSION icv.enumerate.standard_names"
)]
#[case::an_outcome_changed(
    "parallel.enclosing.outermost_unavailable",
    "REGRESSION parallel.enclosing.outermost_unavailable"
)]
#[case::an_entry_added(
    "lib.api_version.known_value",
    "UNEXPECTED-PASS lib.api_version.known_value"
)]
#[case::an_entry_for_a_passing_check(
    "static.needed.no_openmp_runtime",
    "STALE static.needed.no_openmp_runtime"
)]
fn one_changed_expectation_fails_the_gate(#[case] check: &str, #[case] message: &str) {
    let d = tempfile::tempdir().unwrap();
    let text = llvm_toml();
    let changed = match message.split(' ').next() {
        Some("REGRESSION") if check.starts_with("icv") => without_entry(&text, check),
        Some("REGRESSION") => text.replacen(
            &format!("check = \"{check}\"\noutcome = \"fail\""),
            &format!("check = \"{check}\"\noutcome = \"warn\""),
            1,
        ),
        _ => format!(
            "{text}\n[[expect]]\ncheck = \"{check}\"\noutcome = \"fail\"\nreason = \"a finding that is not there\"\n"
        ),
    };
    assert_ne!(changed, text);
    let file = d.path().join("llvm.toml");
    std::fs::write(&file, &changed).unwrap();
    let lib = fetched("llvm-19");
    let f = file.to_str().unwrap();
    // The static check passes on LLVM 19 and is covered first by the new entry only when no
    // earlier entry covers it: an expected fail that passes is an unexpected pass, not stale.
    let (code, out, err) = conform(lib, &["--expectations", f], d.path());
    assert_eq!(code, 100, "{err}\n{out}");
    let expected = if message.starts_with("STALE") {
        // Every result of the check is covered by the entry: it is an unexpected pass.
        format!("UNEXPECTED-PASS {check}")
    } else {
        message.to_string()
    };
    assert!(out.contains(&expected), "{expected} not in:\n{out}");
    assert!(out.contains("(FAILED)"), "{out}");
    assert!(
        err.contains("llvm-19.unexpected.toml"),
        "the unexpected results file is named: {err}"
    );
    let unexpected = std::fs::read_to_string(d.path().join("llvm-19.unexpected.toml")).unwrap();
    assert!(unexpected.contains(check), "{unexpected}");
    if message.starts_with("UNEXPECTED") || message.starts_with("STALE") {
        let (code, out, _) = conform(
            lib,
            &["--expectations", f, "--allow-improvements"],
            d.path(),
        );
        assert_eq!(code, 0, "{out}");
    }
    // Blessing adopts the run: the file is rewritten and the next run passes.
    let (code, out, err) = conform(lib, &["--expectations", f, "--bless"], d.path());
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(err.contains("blessed"), "{err}");
    let blessed = std::fs::read_to_string(&file).unwrap();
    assert_ne!(blessed, changed);
    if message.starts_with("REGRESSION") && check.starts_with("icv") {
        assert!(blessed.contains("reason = \"blessed on "), "{blessed}");
    }
    let (code, out, err) = conform(lib, &["--expectations", f], d.path());
    assert_eq!(code, 0, "{err}\n{out}");
}

#[test]
fn a_truly_stale_entry_is_reported_and_fails_the_gate() {
    let d = tempfile::tempdir().unwrap();
    // An entry for a scenario × check pair the run runs but that produces no result there
    // cannot exist; an entry whose arch and check both ran but never together can: the
    // static checks run only on lp64-le.
    let file = d.path().join("llvm.toml");
    std::fs::write(
        &file,
        format!(
            "{}\n[[expect]]\ncheck = \"static.needed.no_openmp_runtime\"\narch = \"ilp32-le\"\noutcome = \"warn\"\nreason = \"only on lp64-le\"\n",
            llvm_toml()
        ),
    )
    .unwrap();
    let lib = fetched("llvm-19");
    let f = file.to_str().unwrap();
    let (code, out, err) = conform(lib, &["--expectations", f, "--arch", "ilp32-le"], d.path());
    assert_eq!(code, 100, "{err}\n{out}");
    assert!(
        out.contains("STALE static.needed.no_openmp_runtime"),
        "{out}"
    );
    let (code, _, _) = conform(
        lib,
        &["--expectations", f, "--arch", "ilp32-le", "--bless"],
        d.path(),
    );
    assert_eq!(code, 0);
    assert!(!std::fs::read_to_string(&file)
        .unwrap()
        .contains("only on lp64-le"));
}

#[test]
fn a_malformed_expectations_file_is_one_usage_error_line() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("bad.toml");
    std::fs::write(
        &file,
        "vendor = 'x'\nlibraries = ['*']\n[[expect]]\ncheck = 'lib.*'\n",
    )
    .unwrap();
    let (code, out, err) = conform(
        fetched("llvm-19"),
        &["--expectations", file.to_str().unwrap()],
        d.path(),
    );
    assert_eq!(code, 2, "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.toml"), "{err}");
}

#[test]
fn junit_has_one_testcase_per_result_and_failures_carry_the_message() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("llvm.toml");
    std::fs::write(
        &file,
        without_entry(&llvm_toml(), "icv.enumerate.standard_names"),
    )
    .unwrap();
    let junit = d.path().join("r.xml");
    let json = d.path().join("r.json");
    let (code, _, _) = conform(
        fetched("llvm-19"),
        &[
            "--expectations",
            file.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--format",
            "json",
            "--output",
            json.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(code, 100);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let report: ompd_report::Report =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), report.results.len());
    let failures = xml.matches("<failure ").count();
    let regressions = report
        .results
        .iter()
        .filter(|r| r.gate == Some(ompd_report::Gate::Regression))
        .count();
    assert_eq!(failures, regressions);
    assert!(regressions > 0);
    assert!(
        xml.contains("icv.enumerate.standard_names (regression): fail on serial/lp64-le/natural")
    );
}

/// The broken fixtures of `c_fixtures`, each judged against LLVM 14's expectations (the library
/// they forward to): a changed answer fails the gate naming the check.
#[rstest]
#[case::api_version("wrong_api_version", "lib.api_version.known_value")]
#[case::compare("compare_asymmetric", "compare.thread.antisymmetric")]
#[case::null_ok("null_ok", "null.get_omp_version.omp_version")]
#[case::static_string("static_string", "aspace.omp_version_string.tool_owned")]
fn a_changed_answer_fails_the_gate(#[case] fixture: &str, #[case] check: &str) {
    let inner = vendors::resolve(fetched("llvm-14"), &vendors::default_cache_dir())
        .expect("resolves")
        .path;
    let f = c_fixtures::broken_libraries()
        .iter()
        .chain([c_fixtures::clean_library()])
        .find(|f| f.name == fixture || (fixture == "clean" && f.name == "clean"))
        .unwrap_or_else(|| panic!("fixture {fixture}"));
    let dir = tempfile::Builder::new()
        .prefix("gate-fixture-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let lib = dir.path().join(format!("libompd_broken_{}.so", f.name));
    std::fs::copy(f.path, &lib).unwrap();
    std::os::unix::fs::symlink(&inner, dir.path().join(c_fixtures::INNER_LIBRARY)).unwrap();
    // LLVM 14's expectations, applied to the fixtures: the file's and the entries that name
    // LLVM 14 among other releases.
    let file = dir.path().join("llvm-14.toml");
    std::fs::write(
        &file,
        llvm_toml()
            .replacen(
                "libraries = [\"llvm-*\"]",
                "libraries = [\"libompd_broken_*\"]",
                1,
            )
            .replace("\"llvm-14\"", "\"libompd_broken_*\""),
    )
    .unwrap();
    // The fixtures export the 5.0 entry points only: LLVM's extra `ompd_state` warning is gone.
    let args = [
        "--expectations",
        file.to_str().unwrap(),
        "--allow-improvements",
    ];
    let clean = dir.path().join("libompd_broken_clean.so");
    std::fs::copy(c_fixtures::clean_library().path, &clean).unwrap();
    let (code, out, err) = conform(&clean, &args, dir.path());
    assert_eq!(
        code, 0,
        "the clean build matches LLVM 14's expectations: {err}\n{out}"
    );
    let (code, out, err) = conform(&lib, &args, dir.path());
    assert_eq!(code, 100, "{err}\n{out}");
    assert!(
        out.contains(&format!("REGRESSION {check}")),
        "REGRESSION {check} not in:\n{out}"
    );
    assert!(
        out.contains(&format!("--check {check}")),
        "replay command: {out}"
    );
}
