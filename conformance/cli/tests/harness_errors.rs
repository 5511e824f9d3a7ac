//! A failure of the harness inside a worker (a model it cannot lower, a real target it cannot
//! open, a unit it cannot read, including one naming a scenario it does not know) is a typed
//! `harness_failed` event naming the cause, booked as `harness-error` for every check it stopped, never as a crash of
//! the library; and a run with a harness error exits 1.

use ompd_engine::real::RealTarget;
use ompd_engine::worker::{Event, HarnessFailure, Target, Unit};
use ompd_report::{Outcome, Report};
use ompd_vendors as vendors;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const LIB: &str = "llvm-19";

/// The library, once it is in the cache.
fn library() -> &'static vendors::Resolved {
    static ONCE: OnceLock<vendors::Resolved> = OnceLock::new();
    ONCE.get_or_init(|| {
        let cache = vendors::default_cache_dir();
        vendors::fetch(&cache, &[LIB], false, &mut |_| {}).expect("vendor library fetches");
        vendors::resolve(LIB, &cache).expect("vendor library resolves")
    })
}

/// A target unit of the library on the first default scenario, two checks.
fn unit() -> Unit {
    let lib = library();
    let unit = serde_json::json!({
        "library": lib.name,
        "path": lib.path,
        "preload": lib.preload,
        "needs_cxx_runtime": lib.needs_cxx_runtime,
        "stage": "target",
        "target": {
            "kind": "simulated",
            "scenario": {"built_in": sim_target::model::default_scenarios()[0].name},
            "arch": ompd_serve::arch::Arch::LP64_LE,
            "layout": sim_target::layout::Policy::Natural,
        },
        "checks": ["thread.handle.by_pthread_id", "icv.value.dyn-var"],
    });
    serde_json::from_value(unit).expect("a unit")
}

/// Runs the hidden worker command on `input` (one line): its events and exit code.
fn worker(input: &str) -> (Vec<Event>, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg(ompd_engine::host::Entry::Worker.arg())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the worker starts");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{input}").expect("the unit is sent");
    drop(stdin);
    let out = child.wait_with_output().expect("the worker ends");
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("an event"))
        .collect();
    (events, out.status.code().unwrap_or(-1))
}

/// The harness failure the worker reported, after checking it was the last event and the worker
/// exited 1.
fn failure_of(unit: &Unit) -> HarnessFailure {
    let (events, code) = worker(&serde_json::to_string(unit).expect("units serialize"));
    assert_eq!(code, 1, "a worker whose harness failed exits 1: {events:?}");
    match events.last() {
        Some(Event::HarnessFailed { failure }) => failure.clone(),
        other => panic!("the last event is not a harness failure: {other:?} in {events:?}"),
    }
}

#[test]
fn a_unit_naming_an_unknown_scenario_is_malformed() {
    let mut u = serde_json::to_value(unit()).expect("units serialize");
    u["target"]["scenario"]["built_in"] = "no-such-scenario".into();
    let (events, code) = worker(&u.to_string());
    assert_eq!(code, 1);
    assert!(
        matches!(
            events.as_slice(),
            [Event::HarnessFailed {
                failure: HarnessFailure::MalformedUnit(m)
            }] if m.contains("unknown scenario `no-such-scenario`")
        ),
        "{events:?}"
    );
}

#[test]
fn a_core_file_that_does_not_exist_is_a_harness_failure() {
    let mut u = unit();
    u.target = Target::Real {
        target: RealTarget::Core {
            path: "/nonexistent/ompd-conform-test.core".into(),
        },
        info: Default::default(),
        env: Vec::new(),
        stop: None,
    };
    let failure = failure_of(&u);
    assert!(
        matches!(&failure, HarnessFailure::TargetUnavailable(m) if m.contains("ompd-conform-test.core")),
        "{failure:?}"
    );
}

#[test]
fn a_malformed_unit_is_a_harness_failure() {
    let (events, code) = worker("{\"library\": 7}");
    assert_eq!(code, 1);
    assert!(
        matches!(
            events.as_slice(),
            [Event::HarnessFailed {
                failure: HarnessFailure::MalformedUnit(_)
            }]
        ),
        "{events:?}"
    );
}

/// A replayed model whose first task's exit frame lies above 4 GiB: valid, but it cannot be
/// lowered for a 32-bit arch.
fn unlowerable_model(dir: &std::path::Path) -> std::path::PathBuf {
    let mut m = sim_target::model::default_scenarios()[0].model.clone();
    m.tasks[0].exit_frame = 0x1_0000_0000;
    let path = dir.join("high-frame.json");
    std::fs::write(&path, serde_json::to_string(&m).expect("models serialize")).expect("written");
    path
}

#[test]
fn a_model_the_harness_cannot_lower_gives_harness_errors_and_exit_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = unlowerable_model(dir.path());
    let report_path = dir.path().join("report.json");
    let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .args(["run", LIB, "--quiet", "--format", "json", "--output"])
        .arg(&report_path)
        .arg("--replay")
        .arg(&model)
        .args(["--arch", "ilp32-le", "--layout", "natural"])
        .args(["--check", "thread.*", "--no-expectations"])
        .arg("--results-dir")
        .arg(dir.path())
        .stdout(Stdio::null())
        .status()
        .expect("ompd-conform runs");
    let _ = library();
    assert_eq!(status.code(), Some(1), "a harness error exits 1");
    let report: Report =
        serde_json::from_slice(&std::fs::read(&report_path).expect("report written"))
            .expect("the report parses");
    let target: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.scenario == "replay:high-frame")
        .collect();
    assert!(
        !target.is_empty(),
        "the replayed model's checks are reported"
    );
    for r in target {
        assert_eq!(r.outcome, Outcome::HarnessError, "{r:?}");
        assert!(
            r.detail.contains("cannot lower the scenario") && r.detail.contains("ilp32-le"),
            "the detail names the cause: {}",
            r.detail
        );
    }
    assert_eq!(report.count(Outcome::Crash), 0);
}
