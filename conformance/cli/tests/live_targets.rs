//! The suite against real OpenMP runtimes: every vendor library against every fixture build,
//! scenario and runtime, live under ptrace and from gcore core files, must pass the expectations
//! gate; the fixtures' truth must lift into a model for every scenario; a process and a core
//! file given by the user find their OMPD library through `ompd_dll_locations`.
//!
//! Live targets need ptrace. Where it is not permitted the tests say so and stop, except under
//! CI (`CI` set), where that is a failure: CI runs as root and must run them.

mod common;

use common::conform;
use ompd_report::Outcome;
use ompd_vendors as vendors;
use std::path::Path;
use std::process::Command;

/// `Ok` when live targets can run here; otherwise the reason, after failing under CI.
fn ptrace_or_skip(test: &str) -> bool {
    match live_target::spawn::ptrace_permitted() {
        Ok(()) => true,
        Err(why) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{test}: ptrace is not permitted under CI: {why}"
            );
            eprintln!("{test}: SKIPPED, ptrace is not permitted here: {why}");
            false
        }
    }
}

/// Runs a fixture up to its `READY` line and releases it; its stdout lines up to `READY`
/// (where it prints its records as `TRUTH <hex>` and `OMPT <hex>`). It must exit 0.
fn run_to_ready(mut cmd: Command) -> Vec<String> {
    use std::io::BufRead;
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("fixture starts");
    let mut child = Kill(child);
    let out = child.0.stdout.take().unwrap();
    let mut lines = Vec::new();
    let mut reader = std::io::BufReader::new(out).lines();
    for l in reader.by_ref() {
        let l = l.expect("fixture output");
        let ready = l.starts_with("READY ");
        lines.push(l);
        if ready {
            break;
        }
    }
    let pid = nix::unistd::Pid::from_raw(child.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGUSR1).expect("release");
    // Read on to the end (DONE): a closed pipe would kill the fixture with SIGPIPE.
    let after: Vec<String> = reader.map_while(Result::ok).collect();
    assert!(
        after.iter().any(|l| l == "DONE"),
        "no DONE after release: {after:?}"
    );
    let status = child.0.wait().expect("fixture exits");
    assert!(status.success(), "fixture exited with {status}");
    lines
}

fn cache() -> std::path::PathBuf {
    let c = vendors::default_cache_dir();
    vendors::fetch(&c, &[], false, &mut |_| {}).expect("vendor libraries fetch");
    c
}

#[test]
fn every_library_against_every_fixture_live_and_core_matches_its_expectations() {
    if !ptrace_or_skip("live gate") {
        return;
    }
    cache();
    let mut names: Vec<&str> = vendors::known().iter().map(|v| v.name).collect();
    names.extend(common::build_references());
    let mut args = names.clone();
    args.push("--live");
    let (code, report) = conform(&args);
    let bad: Vec<String> = report
        .results
        .iter()
        .filter(|r| {
            r.gate.is_some_and(|g| {
                !matches!(
                    g,
                    ompd_report::Gate::Match | ompd_report::Gate::ExpectedFail
                )
            })
        })
        .take(10)
        .map(|r| {
            format!(
                "{} {} {} {:?}: {} ({})",
                r.library,
                r.check,
                r.place(),
                r.outcome,
                r.actual,
                r.detail
            )
        })
        .collect();
    assert_eq!(
        code,
        0,
        "the live gate failed; first unexpected results:\n{}",
        bad.join("\n")
    );
    // Every library ran live and from core files, and no simulated unit ran.
    for lib in &names {
        for target in ["live", "core"] {
            assert!(
                report
                    .results
                    .iter()
                    .any(|r| r.library == *lib && r.target == target),
                "{lib}: no {target} result"
            );
        }
    }
    assert!(report
        .results
        .iter()
        .all(|r| r.target != "sim" || r.scenario == "none"));
    // The truth pipeline judged real answers: model-judged checks passed on every unstripped
    // runtime and compiler, live and from core files.
    for check in [
        "parallel.curr.team_size_matches_model",
        "parallel.enclosing.levels_match_model",
        "icv.value.thread-limit-var",
        "icv.value.run-sched-var",
        "task.generating.chain_matches_model",
        "tool_data.parallel.matches_model",
        "runtime.dll_locations.valid_vector",
    ] {
        for (runtime, build) in [
            ("intel-2026.2", "gcc"),
            ("intel-2026.2", "clang-19"),
            ("llvm-21", "gcc"),
            ("llvm-21", "clang-19"),
        ] {
            for target in ["live", "core"] {
                let passed = report.results.iter().any(|r| {
                    let real = r.real.as_ref();
                    r.check == check
                        && real.and_then(|x| x.runtime.as_deref()) == Some(runtime)
                        && real.and_then(|x| x.build.as_deref()) == Some(build)
                        && r.layout.is_none()
                        && r.target == target
                        && r.outcome == Outcome::Pass
                });
                assert!(
                    passed,
                    "{check} never passed on {runtime}/{build} ({target})"
                );
            }
        }
    }
    // The stripped runtime is reported as such.
    assert!(report
        .libraries
        .iter()
        .all(|l| l.diagnostics.iter().any(|d| d.contains("is stripped"))));
}

#[test]
fn the_truth_of_every_fixture_scenario_lifts_into_a_valid_model() {
    // No ptrace: the fixture prints its record too (`TRUTH <hex>`), which is what the harness
    // reads from its memory.
    let (runtimes, _) = c_fixtures::find_runtimes(&cache());
    let scratch = tempfile::tempdir().unwrap();
    let mut lifted = 0;
    for rt in runtimes.iter().filter(|r| r.unstripped) {
        let shim = c_fixtures::runtime_shim(&rt.library, &scratch.path().join(&rt.name)).unwrap();
        for p in c_fixtures::fixture_programs() {
            let lifted_here = |s: &&c_fixtures::Scenario| s.builds.contains(&p.compiler);
            for s in c_fixtures::scenarios().iter().filter(lifted_here) {
                let mut cmd = p.command(s, Some(&shim));
                cmd.env("OMP_DEBUG", "enabled")
                    .env("OMP_TOOL_LIBRARIES", c_fixtures::ompt_tool());
                let lines = run_to_ready(cmd);
                let hex = |tag: &str| {
                    lines
                        .iter()
                        .find_map(|l| l.strip_prefix(tag))
                        .map(|h| c_fixtures::truth::decode_hex(h.trim()).unwrap())
                };
                let truth =
                    c_fixtures::truth::Truth::decode(&hex("TRUTH ").expect("TRUTH line")).unwrap();
                let ompt = hex("OMPT ").map(|b| c_fixtures::truth::Ompt::decode(&b).unwrap());
                let rec = ompd_engine::real::Recorded { truth, ompt };
                let env: Vec<(String, String)> = s
                    .env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let l = ompd_engine::real::lift(&rec, &env)
                    .unwrap_or_else(|e| panic!("{} {:?} {}: {e}", rt.name, p.compiler, s.name));
                let omp_threads = rec.truth.threads.iter().filter(|t| t.omp.is_some()).count();
                assert_eq!(l.model.threads.len(), omp_threads, "{}", s.name);
                for (t, th) in l.model.threads.iter().enumerate() {
                    let rec_t = rec
                        .truth
                        .threads
                        .iter()
                        .find(|x| x.tid as u32 == th.native.lwp)
                        .unwrap();
                    let o = rec_t.omp.as_ref().unwrap();
                    let m = &l.model;
                    assert_eq!(m.level(th.region) as i64, o.level, "{} thread {t}", s.name);
                    assert_eq!(
                        m.active_level(th.region) as i64,
                        o.active_level,
                        "{}",
                        s.name
                    );
                    // An initial team in a teams body keeps threads its record does not name.
                    let kept = match m.regions[th.region.0].teams {
                        Some(sim_target::model::TeamsPart::InitialTeam { threads }) => threads,
                        _ => m.regions[th.region.0].members.len(),
                    };
                    assert_eq!(kept as i64, o.num_threads, "{}", s.name);
                    assert_eq!(
                        m.thread_num(th.region, sim_target::model::ThreadId(t))
                            .map(|n| n as i64),
                        Some(o.thread_num),
                        "{}",
                        s.name
                    );
                }
                lifted += 1;
            }
        }
    }
    assert!(lifted > 0, "no unstripped runtime in the vendor cache");
}

#[test]
fn a_process_and_a_core_file_find_their_library_through_ompd_dll_locations() {
    if !ptrace_or_skip("discovery") {
        return;
    }
    let (runtimes, _) = c_fixtures::find_runtimes(&cache());
    let intel = runtimes
        .iter()
        .rfind(|r| r.name.starts_with("intel"))
        .expect("an Intel runtime is in the vendor cache");
    let scratch = tempfile::tempdir().unwrap();
    let shim = c_fixtures::runtime_shim(&intel.library, &scratch.path().join("shim")).unwrap();
    let program = &c_fixtures::fixture_programs()[0];
    let scenario = c_fixtures::scenario("nested").unwrap();
    let mut cmd = program.command(scenario, Some(&shim));
    cmd.env("OMP_DEBUG", "enabled");
    let running = live_target::spawn::Running::start(cmd).expect("fixture starts");
    let pid = running.pid().to_string();
    // No library named: the runtime's ompd_dll_locations names libiomp5_db.so.
    // The truth is read from the process and lifted as for a fixture the harness started (its
    // environment from /proc); the checks judged here carry no scenario-specific finding.
    let checks = [
        "--check",
        "runtime.*",
        "--check",
        "aspace.*",
        "--check",
        "parallel.curr.*",
        "--check",
        "icv.value.*",
        "--check",
        "thread.*",
    ];
    let mut args = vec!["--pid", pid.as_str()];
    args.extend(checks);
    let (code, report) = conform(&args);
    let core = scratch.path().join("fixture.core");
    live_target::spawn::gcore(running.pid(), &core).expect("gcore");
    let fin = running.release().expect("release");
    assert!(
        fin.status.success(),
        "the fixture must go on and exit 0 after the harness"
    );
    assert_eq!(
        code,
        0,
        "{:?}",
        report
            .results
            .iter()
            .filter(|r| r.outcome != Outcome::Pass)
            .collect::<Vec<_>>()
    );
    let names: Vec<&str> = report.libraries.iter().map(|l| l.path.as_str()).collect();
    assert!(
        names.iter().any(|p| Path::new(p)
            .file_name()
            .is_some_and(|n| n == "libiomp5_db.so")),
        "discovered {names:?}"
    );
    assert!(report.results.iter().any(|r| r.target == "live"
        && r.check == "aspace.process_initialize.compatible_target"
        && r.outcome == Outcome::Pass));
    for check in [
        "icv.value.nthreads-var",
        "icv.value.thread-limit-var",
        "parallel.curr.team_size_matches_model",
    ] {
        assert!(
            report
                .results
                .iter()
                .any(|r| r.check == check && r.outcome == Outcome::Pass),
            "{check} did not pass on the attached process"
        );
    }
    // The same from the core file, after the process is gone.
    let core_arg = core.display().to_string();
    let (code, report) = conform(&[
        "--core",
        &core_arg,
        "--check",
        "runtime.*",
        "--check",
        "aspace.*",
    ]);
    assert_eq!(code, 0);
    assert!(report.results.iter().any(|r| r.target == "core"
        && r.check == "runtime.dll_locations.valid_vector"
        && r.outcome == Outcome::Pass));
}

#[test]
fn bad_real_targets_get_one_line_and_exit_2() {
    for (args, names) in [
        (
            vec!["--core", "/etc/passwd"],
            "/etc/passwd is not a usable core file",
        ),
        (vec!["--core", "/nonexistent.core"], "does not exist"),
        (vec!["--pid", "999999999"], "no process with pid 999999999"),
        (vec!["--run", "nosuch"], "unknown fixture `nosuch`"),
        (
            vec!["--runtime", "/etc/passwd"],
            "it needs --live, --cores or --run",
        ),
        (
            vec!["--run", "serial", "--runtime", "/etc/passwd"],
            "runtime /etc/passwd: ",
        ),
        (
            vec!["--run", "serial", "--runtime", LIBM],
            "defines no __kmpc_fork_call",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
            .arg("run")
            .args(&args)
            .output()
            .expect("ompd-conform starts");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
}

/// A shared object on every Debian machine that is no OpenMP runtime.
const LIBM: &str = "/lib/x86_64-linux-gnu/libm.so.6";

#[test]
fn a_runtime_the_user_gives_is_the_libraries_own() {
    if !ptrace_or_skip("a_runtime_the_user_gives_is_the_libraries_own") {
        return;
    }
    // Intel 2026.2's runtime, given as the library's own: the reference 5.2 build's API version
    // (202111) is its OpenMP version, and it defines the whole runtime interface.
    let (runtimes, _) = c_fixtures::find_runtimes(&cache());
    let rt = runtimes
        .iter()
        .find(|r| r.name == "intel-2026.2")
        .expect("intel-2026.2 runtime");
    let refs = common::build_references();
    assert!(refs.contains(&"reference-5.2"));
    let path = rt.library.display().to_string();
    let (_, report) = conform(&[
        "reference-5.2",
        "--run",
        "serial",
        "--no-core",
        "--runtime",
        &path,
        "--check",
        "lib.api_version.matches_runtime",
        "--check",
        "runtime.dll_locations*",
        "--no-expectations",
    ]);
    assert!(!report.results.is_empty());
    for r in &report.results {
        let real = r.real.as_ref().expect("a real target");
        assert_eq!(real.runtime.as_deref(), Some("own-libiomp5.so"));
        assert!(real
            .runtime_file
            .as_deref()
            .is_some_and(|f| f.ends_with("libiomp5.so")));
        assert_eq!(
            r.outcome,
            Outcome::Pass,
            "{} {}: {}",
            r.check,
            real.variant(),
            r.actual
        );
    }
}
