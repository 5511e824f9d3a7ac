//! Real targets of a run: the OpenMP fixture programs (`fixture_protocol`) on each runtime, stopped
//! live and dumped to core files, or a process or core file the user names; and the units of
//! every library against each.
//!
//! A fixture runs only while its units run: it is started, every library's live unit attaches
//! to it in turn (one tracer at a time), `gcore` dumps it for the core units, and it is
//! released and must exit 0 (a fixture that did not is reported: its records are suspect). It
//! can never outlive the run: it dies with the thread that started it (`PR_SET_PDEATHSIG`).

use crate::real::RealTarget as RealSpec;
use crate::supervisor::{self, Exec};
use crate::worker::{RealUnit, Unit};
use fixture_protocol::compile::Built;
use ompd_report::{Outcome, ResultRecord};
use ompd_vendors::Resolved;
use std::path::{Path, PathBuf};

/// Where a real target comes from.
#[derive(Clone, Debug)]
pub enum RealSource {
    /// A fixture program run by the harness on a runtime.
    Fixture {
        /// The program build.
        program: fixture_protocol::Program,
        /// The OMPT truth tool it runs with (`OMP_TOOL_LIBRARIES`).
        ompt_tool: PathBuf,
        /// Its scenario.
        scenario: &'static fixture_protocol::Scenario,
        /// The runtime, through a shim directory (`None`: the program's own, the system's).
        runtime: Option<fixture_protocol::Runtime>,
        /// Run the live units.
        live: bool,
        /// Also dump it with `gcore` and run the core units.
        core: bool,
        /// Run it with `OMP_DEBUG=enabled` (state tracking on).
        omp_debug: bool,
    },
    /// A process the user started (attached, never released or killed by the harness).
    Pid(i32),
    /// A core file the user gave.
    Core(PathBuf),
}

/// One real target of a run, with the columns its results are reported under.
#[derive(Clone, Debug)]
pub struct RealTarget {
    /// The scenario column (the fixture scenario, or `pid N` / the core file's name).
    pub scenario: String,
    /// The layout column: the runtime and compiler (`intel-2026.2/clang-19`), or `process`.
    pub variant: String,
    /// The source.
    pub source: RealSource,
}

/// The fixtures of a run, compiled on first need (`fixture_protocol::compile`) into
/// `ompd-fixtures` next to the vendor cache (`target/ompd-fixtures`). The error is one line
/// naming what is missing (the C compiler or `omp-tools.h`, and its Debian package).
pub fn build_fixtures(cache: &Path) -> Result<Built, String> {
    let root = cache.parent().map_or_else(
        || PathBuf::from("ompd-fixtures"),
        |p| p.join("ompd-fixtures"),
    );
    fixture_protocol::compile::build(&root, cache)
        .map_err(|e| format!("cannot build the OpenMP fixtures for real targets: {e}"))
}

/// The fixture targets of `--live` / `--cores`: every fixture build (`built`) × scenario ×
/// runtime found in the vendor cache (the unstripped ones, and the stripped system runtime as a negative case),
/// filtered by scenario names (`only`; empty keeps all), run live (`live`) and from a core file
/// of each (`core`). The second list names what is absent.
pub fn fixture_targets(
    built: &Built,
    cache: &Path,
    only: &[String],
    live: bool,
    core: bool,
) -> (Vec<RealTarget>, Vec<String>) {
    let (runtimes, missing_rt) = fixture_protocol::find_runtimes(cache);
    let mut missing: Vec<String> = missing_rt
        .into_iter()
        .map(|(n, why)| format!("runtime {n}: {why}"))
        .collect();
    missing.extend(
        built
            .missing
            .iter()
            .map(|(c, why)| format!("fixture build {}: {why}", c.executable())),
    );
    let mut out = Vec::new();
    for rt in &runtimes {
        for p in &built.programs {
            for s in fixture_protocol::scenarios() {
                if !only.is_empty() && !only.iter().any(|o| o == s.name) {
                    continue;
                }
                // The first scenario also runs without OMP_DEBUG: state queries must then
                // answer needs_state_tracking (OMPD-RT-007).
                let first = std::ptr::eq(s, &fixture_protocol::scenarios()[0]);
                // A stripped runtime is a negative case: one scenario shows it.
                if !rt.unstripped && !first {
                    continue;
                }
                for omp_debug in [true, false] {
                    if !(omp_debug || first && rt.unstripped) {
                        continue;
                    }
                    out.push(RealTarget {
                        scenario: if omp_debug {
                            s.name.to_string()
                        } else {
                            format!("{}-nodebug", s.name)
                        },
                        variant: format!("{}/{}", rt.name, p.compiler.executable()),
                        source: RealSource::Fixture {
                            program: p.clone(),
                            ompt_tool: built.ompt_tool.clone(),
                            scenario: s,
                            runtime: Some(rt.clone()),
                            live: live || !rt.unstripped,
                            core: core && rt.unstripped && omp_debug,
                            omp_debug,
                        },
                    });
                }
            }
        }
    }
    (out, missing)
}

/// Starts `program` in `scenario` on `runtime` (through a shim directory at `dir`; none: the
/// program's own runtime) with the OMPT truth tool and, with `omp_debug`, `OMP_DEBUG=enabled`.
/// The running fixture (stopped at READY) and the environment it was given.
fn launch(
    program: &fixture_protocol::Program,
    ompt_tool: &Path,
    scenario: &fixture_protocol::Scenario,
    runtime: Option<&fixture_protocol::Runtime>,
    dir: &Path,
    omp_debug: bool,
) -> Result<(live_target::spawn::Running, Vec<(String, String)>), String> {
    let shim = match runtime {
        Some(rt) => Some(
            fixture_protocol::runtime_shim(&rt.library, dir)
                .map_err(|e| format!("cannot make the runtime shim of {}: {e}", rt.name))?,
        ),
        None => None,
    };
    let mut cmd = program.command(scenario, shim.as_deref());
    cmd.env("OMP_TOOL_LIBRARIES", ompt_tool)
        .stderr(std::process::Stdio::null());
    let mut env: Vec<(String, String)> = scenario
        .env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if omp_debug {
        cmd.env("OMP_DEBUG", "enabled");
        env.push(("OMP_DEBUG".into(), "enabled".into()));
    }
    let running = live_target::spawn::Running::start(cmd)
        .map_err(|e| format!("the fixture did not start: {e}"))?;
    Ok((running, env))
}

/// A unit of `lib` running `checks` against `spec`.
fn unit(
    lib: &Resolved,
    t: &RealTarget,
    spec: RealSpec,
    env: &[(String, String)],
    checks: &[String],
) -> Unit {
    let mut u = supervisor::unit_of(
        lib,
        ompd_checks::Stage::Target,
        &t.scenario,
        ompd_serve::arch::Arch::LP64_LE,
        sim_target::layout::Policy::Natural,
        checks.to_vec(),
    );
    u.real = Some(RealUnit {
        info: info(t, &spec),
        spec,
        variant: t.variant.clone(),
        env: env.to_vec(),
    });
    u
}

/// What the report says of `t` run as `spec`.
fn info(t: &RealTarget, spec: &RealSpec) -> ompd_report::RealTargetInfo {
    let mut info = ompd_report::RealTargetInfo {
        kind: spec.kind().name().to_string(),
        ..Default::default()
    };
    match (&t.source, spec) {
        (RealSource::Fixture { .. }, RealSpec::Live { pid: 0 }) => {}
        (_, RealSpec::Live { pid }) => info.pid = Some(*pid),
        (RealSource::Core(path), _) => info.core = Some(path.display().to_string()),
        _ => {}
    }
    if let RealSource::Fixture {
        program,
        scenario,
        runtime,
        omp_debug,
        ..
    } = &t.source
    {
        info.omp_debug = Some(*omp_debug);
        info.fixture = Some(scenario.name.to_string());
        info.runtime = runtime.as_ref().map(|r| r.name.clone());
        info.build = Some(program.compiler.executable().to_string());
    }
    info
}

/// Runs every library's units against one real target and returns their records, plus a note
/// when the target itself misbehaved (a fixture that did not start, or did not exit 0).
pub(crate) fn run_target(
    t: &RealTarget,
    libs: &[Resolved],
    checks: &[String],
    exec: Exec,
    scratch: &Path,
    ptrace: &Result<(), String>,
) -> (Vec<ResultRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut notes = Vec::new();
    if let (Err(why), RealSource::Pid(_) | RealSource::Fixture { .. }) = (ptrace, &t.source) {
        let note = format!("live targets need ptrace, which is not permitted here: {why}");
        return (skip_all(t, libs, checks, &note), vec![note]);
    }
    let run = |u: Unit, records: &mut Vec<ResultRecord>| {
        let r = supervisor::run_unit(&u, exec);
        records.extend(r.records);
    };
    match &t.source {
        RealSource::Pid(pid) => {
            for lib in libs {
                run(
                    unit(lib, t, RealSpec::Live { pid: *pid }, &[], checks),
                    &mut records,
                );
            }
        }
        RealSource::Core(path) => {
            for lib in libs {
                run(
                    unit(lib, t, RealSpec::Core { path: path.clone() }, &[], checks),
                    &mut records,
                );
            }
        }
        RealSource::Fixture {
            program,
            ompt_tool,
            scenario,
            runtime,
            live,
            core,
            omp_debug,
        } => {
            // One shim directory per target: targets run in parallel.
            let dir = scratch.join(format!(
                "shim-{}-{}",
                t.variant.replace('/', "-"),
                t.scenario
            ));
            let (running, env) = match launch(
                program,
                ompt_tool,
                scenario,
                runtime.as_ref(),
                &dir,
                *omp_debug,
            ) {
                Ok(x) => x,
                Err(e) => {
                    let note = format!("{} {}: {e}", t.variant, t.scenario);
                    return (skip_all(t, libs, checks, &note), vec![note]);
                }
            };
            let pid = running.pid();
            // A stripped runtime hides the symbols every OMPD library needs: only process
            // initialization (which must then fail) and the runtime interface are judged.
            let stripped: Vec<String>;
            let checks = match runtime {
                Some(rt) if !rt.unstripped => {
                    notes.push(format!(
                        "runtime {} ({}) is stripped: no .symtab, so no OMPD library finds its \
                         ompd_* symbols; only process initialization and the runtime interface \
                         are judged against it",
                        rt.name,
                        rt.library.display()
                    ));
                    stripped = checks
                        .iter()
                        .filter(|c| {
                            c.starts_with("aspace.process_initialize.") || c.starts_with("runtime.")
                        })
                        .cloned()
                        .collect();
                    &stripped[..]
                }
                _ => checks,
            };
            for lib in libs.iter().filter(|_| *live) {
                run(
                    unit(lib, t, RealSpec::Live { pid }, &env, checks),
                    &mut records,
                );
            }
            let core_file = if *core {
                let path = scratch.join(format!(
                    "core.{}.{}",
                    t.variant.replace('/', "-"),
                    t.scenario
                ));
                match live_target::spawn::gcore(pid, &path) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        notes.push(format!("{} {}: gcore failed: {e}", t.variant, t.scenario));
                        None
                    }
                }
            } else {
                None
            };
            match running.release() {
                Ok(f) if f.status.success() => {}
                Ok(f) => notes.push(format!(
                    "{} {}: the fixture exited with {} after release (its records are suspect)",
                    t.variant, t.scenario, f.status
                )),
                Err(e) => notes.push(format!("{} {}: release failed: {e}", t.variant, t.scenario)),
            }
            if let Some(path) = core_file {
                for lib in libs {
                    run(
                        unit(lib, t, RealSpec::Core { path: path.clone() }, &env, checks),
                        &mut records,
                    );
                }
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    (records, notes)
}

/// Every check of every library skipped with `why` (a target that could not be set up).
fn skip_all(t: &RealTarget, libs: &[Resolved], checks: &[String], why: &str) -> Vec<ResultRecord> {
    let mut out = Vec::new();
    for lib in libs {
        let u = unit(lib, t, RealSpec::Live { pid: 0 }, &[], checks);
        for c in checks {
            out.push(supervisor::record(
                &u,
                c,
                Outcome::Skip,
                "",
                String::new(),
                why.to_string(),
            ));
        }
    }
    out
}

/// The OMPD libraries the runtimes of the vendor cache name in `ompd_dll_locations`: each
/// unstripped runtime runs fixture `scenario` once, and its list is read from the live process
/// (what a debugger does when no library is given); `built` holds the fixture programs.
pub fn discover_libraries(
    built: &Built,
    cache: &Path,
    scenario: &str,
) -> Result<Vec<PathBuf>, String> {
    live_target::spawn::ptrace_permitted()
        .map_err(|e| format!("finding libraries needs ptrace, which is not permitted: {e}"))?;
    let s = fixture_protocol::scenario(scenario)
        .ok_or_else(|| format!("unknown fixture {scenario}"))?;
    let program = built
        .programs
        .first()
        .ok_or("no fixture program was built")?;
    let (runtimes, _) = fixture_protocol::find_runtimes(cache);
    let scratch = tempfile::Builder::new()
        .prefix("ompd-discover-")
        .tempdir()
        .map_err(|e| format!("scratch directory: {e}"))?;
    let mut found = Vec::new();
    for rt in runtimes.iter().filter(|r| r.unstripped) {
        let (running, _) = launch(
            program,
            &built.ompt_tool,
            s,
            Some(rt),
            &scratch.path().join(&rt.name),
            false,
        )
        .map_err(|e| format!("runtime {}: {e}", rt.name))?;
        let listed = crate::real::discover(&RealSpec::Live { pid: running.pid() });
        let _ = running.release();
        for p in listed.map_err(|e| format!("runtime {}: {e}", rt.name))? {
            if !found.contains(&p) {
                found.push(p);
            }
        }
    }
    if found.is_empty() {
        return Err("no unstripped runtime in the vendor cache names an OMPD library".into());
    }
    Ok(found)
}
