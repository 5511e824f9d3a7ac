//! The suite against deliberately broken OMPD libraries (`c-fixtures`, `c/broken_ompd.c`): each
//! forwards every entry point to a real vendor library and commits exactly one violation. Every
//! run must finish with the same result keys as the clean forwarding build (nothing lost), the
//! named check must get exactly the intended outcome with the cause in its text, and every other
//! result must keep the clean build's outcome, except checks that call the broken entry point
//! (taken from the registry's `entry_points`).
//!
//! The inner library is `llvm-14`: its build has no stack protector, so no over-long write of
//! its own can turn into a SIGABRT that looks like the stack-smash fixture's; its DT_NEEDED is
//! complete (unlike llvm-15/16 and Intel's, which need preloads), so the undeclared dependency
//! is the only load problem in play; and it is a Debian package that CI fetches anyway. Its
//! known findings (NULL out-parameters that crash it, listed in `golden/expectations/llvm.toml`)
//! stay in every run, which is what makes the differential comparison exercise the harness's
//! worker replacement on every unit.

#[path = "common/broken.rs"]
mod broken;

use broken::{inner_library, INNER};
use c_fixtures::Fixture;
use ompd_checks as checks;
use ompd_report::{Outcome, Report, ResultRecord};
use rstest::rstest;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::OnceLock;

/// Options of every run: one arch variant and layout, the four default scenarios, no property
/// phase. Each run takes well under a second (the hang fixture: its per-call deadlines).
const RUN_ARGS: &[&str] = &["--cases", "0", "--arch", "lp64-le", "--layout", "natural"];

/// Seconds one call may take in the hang fixture's run (every call but the hanging one answers
/// in microseconds).
const HANG_CALL_TIMEOUT: &str = "1";

/// A run of one fixture: the exit code and the report.
struct Run {
    code: i32,
    report: Report,
    /// What the runner printed on stderr (error lines).
    stderr: String,
    /// The directory the fixture ran from (kept for the flaky fixture's marker).
    dir: tempfile::TempDir,
}

/// Copies `fixture` into a fresh directory beside `libompd_inner.so` (a link to the inner
/// library) and runs `ompd-conform run` on the copy with [`RUN_ARGS`] and `extra`.
fn run(fixture: &Fixture, extra: &[&str]) -> Run {
    let (dir, lib) = broken::stage(fixture);
    let out = dir.path().join("report.json");
    let output = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .arg(&lib)
        .args(RUN_ARGS)
        .args(extra)
        .args(["--quiet", "--format", "json", "--output"])
        .arg(&out)
        .output()
        .expect("ompd-conform starts");
    let report: Report = serde_json::from_slice(&std::fs::read(&out).expect("report written"))
        .expect("report parses");
    Run {
        code: output.status.code().unwrap_or(-1),
        report,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        dir,
    }
}

/// A result's identity within one library's run.
type Key = (String, String, String, String);

fn key(r: &ResultRecord) -> Key {
    (
        r.check.clone(),
        r.scenario.clone(),
        r.arch.clone(),
        r.layout.clone().unwrap_or_default(),
    )
}

fn by_key(report: &Report) -> BTreeMap<Key, &ResultRecord> {
    report.results.iter().map(|r| (key(r), r)).collect()
}

/// The clean forwarding build's report, run once.
fn baseline() -> &'static Report {
    static BASELINE: OnceLock<Report> = OnceLock::new();
    BASELINE.get_or_init(|| {
        let run = run(c_fixtures::clean_library(), &[]);
        assert_eq!(run.code, 100, "the inner library's known findings");
        let lib = &run.report.libraries[0];
        assert_eq!(lib.api_version, Some(201811));
        assert!(
            lib.version_string
                .as_deref()
                .is_some_and(|v| v.starts_with("LLVM OpenMP")),
            "the clean build forwards to {INNER}: {:?}",
            lib.version_string
        );
        assert!(!run.report.results.is_empty());
        assert!(!run.report.incomplete);
        run.report
    })
}

/// Checks that call `entry_point`, by the registry.
fn callers(entry_point: &str) -> BTreeSet<&'static str> {
    checks::registry()
        .iter()
        .filter(|c| c.entry_points.iter().any(|e| e.name() == entry_point))
        .map(|c| c.id)
        .collect()
}

/// Asserts the differential properties of `report` against the baseline: the same result keys,
/// and the baseline's outcome for every result whose check is not in `exempt`.
fn assert_same_elsewhere(name: &str, report: &Report, exempt: &BTreeSet<&str>) {
    let base = by_key(baseline());
    let got = by_key(report);
    let (b, g): (BTreeSet<_>, BTreeSet<_>) = (base.keys().collect(), got.keys().collect());
    assert_eq!(
        g.len(),
        report.results.len(),
        "{name}: a result is reported twice"
    );
    assert!(
        b == g,
        "{name}: result keys differ from the baseline; missing {:?}, extra {:?}",
        b.difference(&g).take(5).collect::<Vec<_>>(),
        g.difference(&b).take(5).collect::<Vec<_>>()
    );
    assert!(!report.incomplete, "{name}: the run completed");
    // The contract checks judge what every check of their unit did (its output, its
    // violations): where a check that calls the broken entry point changed, they may too.
    let unit = |k: &Key| (k.1.clone(), k.2.clone(), k.3.clone());
    let moved: BTreeSet<_> = got
        .iter()
        .filter(|(k, r)| exempt.contains(k.0.as_str()) && r.outcome != base[*k].outcome)
        .map(|(k, _)| unit(k))
        .collect();
    let judges_its_unit =
        |k: &Key| k.0.starts_with("callbacks.contract.") && moved.contains(&unit(k));
    let changed: Vec<String> = got
        .iter()
        .filter(|(k, r)| {
            !exempt.contains(k.0.as_str()) && !judges_its_unit(k) && r.outcome != base[*k].outcome
        })
        .map(|(k, r)| {
            format!(
                "{} on {}: {} -> {} ({}; {})",
                k.0,
                k.1,
                base[k].outcome.as_str(),
                r.outcome.as_str(),
                r.actual,
                r.detail
            )
        })
        .collect();
    assert!(
        changed.is_empty(),
        "{name}: results outside the broken entry point's checks changed:\n{}",
        changed.join("\n")
    );
}

/// What a fixture's violation must produce.
struct Expect {
    /// The check that must catch it.
    check: &'static str,
    /// The outcome it must get.
    outcome: Outcome,
    /// The scenarios in which the violation is observable (every scenario when empty).
    scenarios: &'static [&'static str],
    /// Texts that `actual` or `detail` of each such result must contain (the cause).
    says: &'static [&'static str],
}

/// The scenarios whose checks call the broken entry points of the contract fixtures: those that
/// run every family.
const CALLING: &[&str] = &[
    "serial",
    "nested-tasks",
    "serialized",
    "untracked",
    "no-ompt",
];

/// The expectation for each violation fixture.
fn expectation(name: &str) -> Expect {
    let e = |check, outcome, says| Expect {
        check,
        outcome,
        scenarios: &[],
        says,
    };
    match name {
        "segfault" => e(
            "aspace.omp_version.matches_model",
            Outcome::Crash,
            &["SIGSEGV", "reproduced"],
        ),
        // The inner (LLVM) library finds no thread in scan mode, so there no call reaches the
        // broken ompd_get_thread_id.
        "abort" => Expect {
            scenarios: &["serial", "nested-tasks", "serialized", "untracked"],
            ..e("thread.id.round_trip", Outcome::Crash, &["SIGABRT"])
        },
        "exit0" => e(
            "task.function.matches_model",
            Outcome::Crash,
            &["exited with code 0"],
        ),
        // The library's exception, named as such: never the harness's own abort.
        "throw" => e(
            "task.function.matches_model",
            Outcome::Crash,
            &[
                "a C++ exception escaped from ompd_get_task_function",
                "reproduced",
            ],
        ),
        "hang" => e(
            "lib.finalize.after_initialize",
            Outcome::Timeout,
            &["ompd_finalize() did not return within 1s", "--call-timeout"],
        ),
        "stack_smash" => e(
            "task.frame.matches_model",
            Outcome::Crash,
            &["SIGABRT", "stack smashing detected"],
        ),
        // A SHOULD-level requirement in the 5.0 generation: a warning.
        "stdout" => Expect {
            scenarios: CALLING,
            ..e(
                "callbacks.contract.no_direct_output",
                Outcome::Warn,
                &[
                    "during aspace.omp_version.matches_model",
                    "ompd_get_omp_version was called",
                ],
            )
        },
        "leak" => e(
            "own.handles.released_without_leak",
            Outcome::Warn,
            &[
                "still live after every handle was released",
                "from ompd_get_thread_handle",
            ],
        ),
        "rel_not_ok" => e(
            "own.handles.release_ok",
            Outcome::Fail,
            &["releasing the thread handle", "error"],
        ),
        "double_free" => Expect {
            scenarios: CALLING,
            ..e(
                "callbacks.contract.no_violations",
                Outcome::Fail,
                &["DoubleFree", "ompd_get_omp_version_string"],
            )
        },
        "free_tool_memory" => Expect {
            scenarios: CALLING,
            ..e(
                "callbacks.contract.no_violations",
                Outcome::Fail,
                &[
                    "ForeignFree",
                    "site: \"ompd_get_thread_id\"",
                    "during thread.id.round_trip",
                ],
            )
        },
        "static_string" => e(
            "aspace.omp_version_string.tool_owned",
            Outcome::Fail,
            &["is not a live block from alloc_memory"],
        ),
        // The serial scenario has a single OpenMP thread: no pair to compare.
        "compare_asymmetric" => Expect {
            scenarios: &["nested-tasks", "serialized", "untracked"],
            ..e(
                "compare.thread.antisymmetric",
                Outcome::Fail,
                &["= 1 but cmp reversed = 1"],
            )
        },
        "null_ok" => e(
            "null.get_omp_version.omp_version",
            Outcome::Fail,
            &["ompd_get_omp_version(omp_version = NULL): ok"],
        ),
        "wrong_api_version" => e("lib.api_version.known_value", Outcome::Fail, &["201800"]),
        "missing_entry" => e(
            "lib.inventory.profile_entry_points_exported",
            Outcome::Fail,
            &["ompd_get_task_function is not exported"],
        ),
        other => panic!("no expectation for fixture {other}"),
    }
}

/// Every build of `c/broken_ompd.c` has a test here.
#[test]
fn every_fixture_has_a_test() {
    let covered = [
        "segfault",
        "abort",
        "exit0",
        "throw",
        "hang",
        "stack_smash",
        "stdout",
        "leak",
        "rel_not_ok",
        "double_free",
        "free_tool_memory",
        "static_string",
        "compare_asymmetric",
        "null_ok",
        "wrong_api_version",
        "missing_entry",
        "undeclared_dep",
        "flaky",
        // tests/hang_quarantine.rs
        "hang_task",
        "segfault_task",
    ];
    let built: BTreeSet<&str> = c_fixtures::broken_libraries()
        .iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(built, covered.into_iter().collect());
}

/// The clean build answers like the inner library itself, except that it does not export the
/// inner library's extra `ompd_state` symbol, and that the heap watch judges only the code of
/// the file loaded as the library: the inner library's calls of `operator new`/`delete` fail
/// `callbacks.contract.no_direct_heap` for the inner library itself, never for the forwarder,
/// whose own code calls no heap manager.
#[test]
fn the_clean_build_answers_like_its_inner_library() {
    let base = by_key(baseline());
    let out = tempfile::tempdir().expect("temporary directory");
    let report_file = out.path().join("report.json");
    let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .arg(inner_library())
        .args(RUN_ARGS)
        .args(["--quiet", "--format", "json", "--output"])
        .arg(&report_file)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("ompd-conform starts");
    assert_eq!(status.code(), Some(100));
    let direct: Report =
        serde_json::from_slice(&std::fs::read(&report_file).expect("report")).expect("parses");
    let direct = by_key(&direct);
    assert_eq!(
        direct.keys().collect::<BTreeSet<_>>(),
        base.keys().collect::<BTreeSet<_>>()
    );
    for (k, r) in &direct {
        if k.0 == "lib.inventory.no_unknown_ompd_symbols" {
            assert_eq!((r.outcome, base[k].outcome), (Outcome::Warn, Outcome::Pass));
            continue;
        }
        if k.0 == "callbacks.contract.no_direct_heap" {
            assert_eq!((r.outcome, base[k].outcome), (Outcome::Fail, Outcome::Pass));
            continue;
        }
        assert_eq!(r.outcome, base[k].outcome, "{k:?}: {}", base[k].actual);
    }
}

#[rstest]
#[case::segfault("segfault")]
#[case::abort("abort")]
#[case::exit0("exit0")]
#[case::throw("throw")]
#[case::hang("hang")]
#[case::stack_smash("stack_smash")]
#[case::stdout("stdout")]
#[case::leak("leak")]
#[case::rel_not_ok("rel_not_ok")]
#[case::double_free("double_free")]
#[case::free_tool_memory("free_tool_memory")]
#[case::static_string("static_string")]
#[case::compare_asymmetric("compare_asymmetric")]
#[case::null_ok("null_ok")]
#[case::wrong_api_version("wrong_api_version")]
#[case::missing_entry("missing_entry")]
fn the_violation_is_caught_and_nothing_else_changes(#[case] name: &str) {
    let fixture = c_fixtures::library(name).expect("the fixture is built");
    let expect = expectation(name);
    let extra: &[&str] = if name == "hang" {
        &["--call-timeout", HANG_CALL_TIMEOUT]
    } else {
        &[]
    };
    let run = run(fixture, extra);
    assert_eq!(run.code, 100, "{name}: findings, no harness error");
    let mut exempt = callers(fixture.entry_point);
    exempt.insert(expect.check);
    assert_same_elsewhere(name, &run.report, &exempt);

    let observable = |r: &&ResultRecord| {
        expect.scenarios.is_empty() || expect.scenarios.contains(&r.scenario.as_str())
    };
    let named: Vec<&ResultRecord> = run
        .report
        .results
        .iter()
        .filter(|r| r.check == expect.check)
        .filter(observable)
        .collect();
    assert!(!named.is_empty(), "{name}: {} ran", expect.check);
    // A build that crashes or hangs on every call of its entry point gets it quarantined after
    // two checks: the later results say so, naming it, and the earlier ones the cause.
    let (quarantined, judged): (Vec<&ResultRecord>, Vec<&ResultRecord>) =
        named.into_iter().partition(|r| r.actual == "not run");
    assert!(!judged.is_empty(), "{name}: {} was judged", expect.check);
    for r in judged.iter().chain(&quarantined) {
        assert_eq!(
            r.outcome, expect.outcome,
            "{name}: {} on {}: {} ({})",
            r.check, r.scenario, r.actual, r.detail
        );
    }
    for r in judged {
        let text = format!("{} {}", r.actual, r.detail);
        for s in expect.says {
            assert!(text.contains(s), "{name}: {} lacks {s:?}: {text}", r.check);
        }
    }
    for r in quarantined {
        let note = format!("not run: {} ", fixture.entry_point);
        assert!(r.detail.starts_with(&note), "{name}: {}", r.detail);
    }
    if name == "missing_entry" {
        // Every other check that needs the missing entry point skips, saying why.
        for r in run
            .report
            .results
            .iter()
            .filter(|r| callers(fixture.entry_point).contains(r.check.as_str()))
        {
            assert_eq!(r.outcome, Outcome::Skip, "{}: {}", r.check, r.actual);
            assert!(r.detail.contains("ompd_get_task_function is not exported"));
        }
    }
}

/// Without the dependency preloaded, the library cannot load: every check that runs its code is
/// a harness error naming the undefined symbol (exit 1), the checks judged from the file alone
/// keep their outcomes; with `--preload` of the dependency it runs like the clean build.
#[test]
fn an_undeclared_dependency_is_a_diagnosed_load_failure_unless_preloaded() {
    let fixture = c_fixtures::library("undeclared_dep").expect("the fixture is built");
    let loading: BTreeSet<&str> = checks::registry()
        .iter()
        .filter(|c| c.stage != checks::Stage::Static)
        .map(|c| c.id)
        .collect();

    let run_plain = run(fixture, &[]);
    assert_eq!(run_plain.code, 1, "a harness error");
    let errors: Vec<&str> = run_plain.stderr.lines().collect();
    assert_eq!(errors.len(), 1, "one error line: {errors:?}");
    assert!(
        errors[0].starts_with("ompd-conform: error: ")
            && errors[0].contains("undefined symbol ompd_fixture_dep_value")
            && errors[0].contains("--preload"),
        "{}",
        errors[0]
    );
    assert_same_elsewhere("undeclared_dep", &run_plain.report, &loading);
    for r in run_plain
        .report
        .results
        .iter()
        .filter(|r| loading.contains(r.check.as_str()))
    {
        assert_eq!(r.outcome, Outcome::HarnessError, "{}", r.check);
        assert!(
            r.detail.contains("undefined symbol") && r.detail.contains("ompd_fixture_dep_value"),
            "{}: {}",
            r.check,
            r.detail
        );
    }

    let preload = run(fixture, &["--preload", c_fixtures::undeclared_dependency()]);
    assert_eq!(preload.code, 100);
    assert_same_elsewhere(
        "undeclared_dep --preload",
        &preload.report,
        &BTreeSet::new(),
    );
}

/// A crash only the first call of the whole run makes: one `crash` result marked flaky (its
/// re-run alone did not crash), every other result as in the clean build.
#[test]
fn a_crash_that_does_not_reproduce_is_reported_as_flaky() {
    let fixture = c_fixtures::library("flaky").expect("the fixture is built");
    let run = run(fixture, &[]);
    assert_eq!(run.code, 100);
    let exempt = callers(fixture.entry_point);
    let base = by_key(baseline());
    let changed: Vec<&ResultRecord> = run
        .report
        .results
        .iter()
        .filter(|r| r.outcome != base[&key(r)].outcome)
        .collect();
    assert_eq!(
        changed.len(),
        1,
        "exactly the first call crashed: {changed:#?}"
    );
    let r = changed[0];
    assert!(
        callers(fixture.entry_point).contains(r.check.as_str()),
        "{}",
        r.check
    );
    assert_eq!(r.outcome, Outcome::Crash);
    assert!(r.flaky, "{}: {}", r.check, r.detail);
    assert!(r.actual.contains("SIGSEGV"), "{}", r.actual);
    assert!(r.detail.contains("did not reproduce"), "{}", r.detail);
    assert_same_elsewhere("flaky", &run.report, &exempt);
    let marker = run
        .dir
        .path()
        .join(format!("libompd_broken_{}.so.crashed-once", fixture.name));
    assert!(
        marker.exists(),
        "the marker of the first call: {}",
        marker.display()
    );
    assert_eq!(
        run.report.results.iter().filter(|r| r.flaky).count(),
        1,
        "only the crash is flaky"
    );
}

/// Without a per-call deadline, the per-check timeout still ends a hung check (the backstop).
#[test]
fn the_check_timeout_is_the_backstop_without_a_call_deadline() {
    let fixture = c_fixtures::library("hang").expect("the fixture is built");
    let check = "lib.finalize.after_initialize";
    let run = run(
        fixture,
        &["--call-timeout", "0", "--timeout", "2", "--check", check],
    );
    let r = run
        .report
        .results
        .iter()
        .find(|r| r.check == check)
        .expect("the check ran");
    assert_eq!(r.outcome, Outcome::Timeout, "{}", r.actual);
    assert!(r.actual.contains("no answer within 2s"), "{}", r.actual);
}
