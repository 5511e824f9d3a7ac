//! Real targets of a run: the OpenMP fixture programs (`fixture_protocol`) on each runtime, stopped
//! live and dumped to core files, or a process or core file the user names; and the units of
//! every library against each.
//!
//! A fixture runs only while its units run: it is started, every library's live unit attaches
//! to it in turn (one tracer at a time), `gcore` dumps it for the core units, and it is
//! released and must exit 0 (a fixture that did not is reported: its records are suspect). It
//! can never outlive the run: it dies with the thread that started it (`PR_SET_PDEATHSIG`).
//!
//! A [`RealRun`] is what a run plans; each of its units opens a
//! [`RealTarget`](crate::real::RealTarget) (the started fixture's pid, its core file, or what
//! the user named).

use crate::real::RealTarget;
use crate::supervisor::{self, Exec};
use crate::worker::{Target, Unit};
use fixture_protocol::compile::Built;
use fixture_protocol::Runtime;
use ompd_report::{Outcome, ResultRecord};
use ompd_vendors::Resolved;
use std::path::{Path, PathBuf};

/// One real target of a run, run with every library: a fixture the harness starts (live, and
/// dumped to a core file), or a process or core file the user names.
#[derive(Clone, Debug)]
pub enum RealRun {
    /// A fixture program the harness runs on a runtime.
    Fixture(FixtureRun),
    /// A process the user started (attached, never released or killed by the harness).
    Pid(i32),
    /// A core file the user gave.
    Core(PathBuf),
}

/// A fixture program run by the harness: which build, scenario and runtime, and how.
#[derive(Clone, Debug)]
pub struct FixtureRun {
    /// The program build.
    pub program: fixture_protocol::Program,
    /// The OMPT truth tool it runs with (`OMP_TOOL_LIBRARIES`).
    pub ompt_tool: PathBuf,
    /// Its scenario.
    pub scenario: &'static fixture_protocol::Scenario,
    /// The runtime, through a shim directory (`None`: the program's own, the system's).
    pub runtime: Option<fixture_protocol::Runtime>,
    /// Run the live units.
    pub live: bool,
    /// Also dump it with `gcore` and run the core units.
    pub core: bool,
    /// Run it with `OMP_DEBUG=enabled` (state tracking on).
    pub omp_debug: bool,
    /// A breakpoint tour (`crate::tour`) with this breakpoint-stop shim (`libbp_stop.so`)
    /// preloaded, instead of the stop at `READY`.
    pub tour: Option<PathBuf>,
}

impl FixtureRun {
    /// How notes name it: `RUNTIME/BUILD SCENARIO` (`-nodebug` appended without `OMP_DEBUG`).
    pub fn name(&self) -> String {
        let runtime = self.runtime.as_ref().map_or("default", |r| r.name.as_str());
        let debug = if self.omp_debug { "" } else { "-nodebug" };
        let tour = if self.tour.is_some() { "-tour" } else { "" };
        format!(
            "{runtime}/{} {}{debug}{tour}",
            self.program.compiler.executable(),
            self.scenario.name
        )
    }

    /// Its name as part of a file name (no `/`, no space).
    fn file_name(&self) -> String {
        self.name().replace(['/', ' '], "-")
    }
}

impl RealRun {
    /// The target the user named (`None` for a fixture: it does not run yet).
    pub fn named(&self) -> Option<RealTarget> {
        match self {
            RealRun::Fixture(_) => None,
            RealRun::Pid(pid) => Some(RealTarget::Live { pid: *pid }),
            RealRun::Core(path) => Some(RealTarget::Core { path: path.clone() }),
        }
    }

    /// How progress lines and notes name it: `pid-N`, the core file's name, or the fixture's
    /// [`name`](FixtureRun::name).
    pub fn label(&self) -> String {
        match self {
            RealRun::Fixture(f) => f.name(),
            RealRun::Pid(pid) => format!("pid-{pid}"),
            RealRun::Core(path) => path
                .file_name()
                .map_or("core".into(), |n| n.to_string_lossy().into_owned()),
        }
    }

    /// What the report says of its unit that opens `target`.
    fn info(&self, target: &RealTarget) -> ompd_report::RealTargetInfo {
        let mut info = ompd_report::RealTargetInfo {
            kind: target.kind().name().to_string(),
            ..Default::default()
        };
        match (self, target) {
            (RealRun::Fixture(f), _) => {
                if let RealTarget::Live { pid } = target {
                    info.pid = Some(*pid).filter(|p| *p > 0);
                }
                info.omp_debug = Some(f.omp_debug);
                info.tour = f.tour.as_ref().map(|_| true);
                info.fixture = Some(f.scenario.name.to_string());
                info.runtime = f.runtime.as_ref().map(|r| r.name.clone());
                info.runtime_file = f
                    .runtime
                    .as_ref()
                    .filter(|r| r.name.starts_with(OWN_RUNTIME))
                    .map(|r| r.library.display().to_string());
                info.build = Some(f.program.compiler.executable().to_string());
            }
            (RealRun::Pid(pid), _) => info.pid = Some(*pid),
            (RealRun::Core(path), _) => info.core = Some(path.display().to_string()),
        }
        info
    }

    /// A unit of `lib` running `checks` against `target`, one of this run's targets, whose
    /// fixture ran with `env`.
    pub(crate) fn unit(
        &self,
        lib: &Resolved,
        target: RealTarget,
        env: &[(String, String)],
        checks: &[String],
    ) -> Unit {
        let t = Target::Real {
            info: self.info(&target),
            target,
            env: env.to_vec(),
            stop: None,
        };
        supervisor::unit_of(lib, ompd_checks::Stage::Target, t, checks.to_vec())
    }
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
/// runtime (`runtimes`, with what is absent: [`runtimes`]; the unstripped ones, and a stripped
/// one as a negative case),
/// filtered by scenario names (`only`; empty keeps all), run live (`live`) and from a core file
/// of each (`core`). The second list names what is absent.
pub fn fixture_targets(
    built: &Built,
    (runtimes, missing_rt): Runtimes,
    only: &[String],
    live: bool,
    core: bool,
) -> (Vec<RealRun>, Vec<String>) {
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
                if !only.is_empty() && !only.iter().any(|o| o == s.name)
                    || !s.builds.contains(&p.compiler)
                {
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
                    let run = FixtureRun {
                        program: p.clone(),
                        ompt_tool: built.ompt_tool.clone(),
                        scenario: s,
                        runtime: Some(rt.clone()),
                        live: live || !rt.unstripped,
                        core: core && rt.unstripped && omp_debug,
                        omp_debug,
                        tour: None,
                    };
                    if live && rt.unstripped && omp_debug && TOURS.contains(&s.name) {
                        out.push(RealRun::Fixture(FixtureRun {
                            tour: Some(built.bp_stop.clone()),
                            core: false,
                            ..run.clone()
                        }));
                    }
                    out.push(RealRun::Fixture(run));
                }
            }
        }
    }
    (out, missing)
}

/// The runtimes a run's fixtures run on, and the ones absent with the reason.
pub type Runtimes = (Vec<Runtime>, Vec<(String, String)>);

/// The prefix of the name of a runtime the user gives (`--runtime`): the runtime the libraries
/// under test ship with (`lib.api_version.matches_runtime` judges them on it).
pub const OWN_RUNTIME: &str = ompd_checks::OWN_RUNTIME;

/// The runtimes the fixtures run on, with the ones absent and why: the files `given` (each named
/// [`OWN_RUNTIME`] and its file name), or, when none is given, the vendor cache's
/// (`fixture_protocol::find_runtimes`). `Err` names a given file that is no OpenMP runtime.
pub fn runtimes(cache: &Path, given: &[PathBuf]) -> Result<Runtimes, String> {
    if given.is_empty() {
        return Ok(fixture_protocol::find_runtimes(cache));
    }
    let own = given
        .iter()
        .map(|p| own_runtime(p))
        .collect::<Result<_, _>>()?;
    Ok((own, Vec::new()))
}

/// The runtime at `path`, the user's own: an ELF file that defines `__kmpc_fork_call` (an LLVM-
/// or Intel-family runtime, which both fixture builds can run on); unstripped when its symbol
/// tables keep `ompd_state`, which an OMPD library reads.
fn own_runtime(path: &Path) -> Result<Runtime, String> {
    let library = path
        .canonicalize()
        .map_err(|e| format!("runtime {}: {e}", path.display()))?;
    let table = live_target::elf::SymbolTable::cached(&library)
        .map_err(|e| format!("runtime {}: {e}", path.display()))?;
    if table.get("__kmpc_fork_call").is_none() {
        return Err(format!(
            "runtime {}: defines no __kmpc_fork_call, so it is no LLVM- or Intel-family OpenMP runtime",
            path.display()
        ));
    }
    let file = library.file_name().unwrap_or_default().to_string_lossy();
    Ok(Runtime {
        name: format!("{OWN_RUNTIME}{file}"),
        unstripped: table.get("ompd_state").is_some(),
        library,
    })
}

/// The scenarios a breakpoint tour runs (with `--live`, on every unstripped runtime and build
/// the scenario runs): parallel regions nested two deep, explicit tasks, and a host teams
/// construct.
const TOURS: [&str; 3] = ["nested", "tasks", "teams"];

/// Starts fixture `f` (on its runtime through a shim directory at `dir`; none: the program's own
/// runtime) with the OMPT truth tool and, with `omp_debug`, `OMP_DEBUG=enabled`. The running
/// fixture (stopped at READY) and the environment it was given.
fn launch(
    f: &FixtureRun,
    dir: &Path,
) -> Result<(live_target::spawn::Running, Vec<(String, String)>), String> {
    let (cmd, env) = command(f, dir)?;
    let running = live_target::spawn::Running::start(cmd)
        .map_err(|e| format!("the fixture did not start: {e}"))?;
    Ok((running, env))
}

/// The command that runs fixture `f` as [`launch`] describes, and its environment.
pub(crate) fn command(
    f: &FixtureRun,
    dir: &Path,
) -> Result<(std::process::Command, Vec<(String, String)>), String> {
    let FixtureRun {
        program,
        ompt_tool,
        scenario,
        runtime,
        omp_debug,
        ..
    } = f;
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
    if *omp_debug {
        cmd.env("OMP_DEBUG", "enabled");
        env.push(("OMP_DEBUG".into(), "enabled".into()));
    }
    Ok((cmd, env))
}

/// Runs every library's units against one real target and returns their records, plus a note
/// when the target itself misbehaved (a fixture that did not start, or did not exit 0).
pub(crate) fn run_target(
    run: &RealRun,
    libs: &[Resolved],
    checks: &[String],
    exec: Exec,
    scratch: &Path,
    ptrace: &Result<(), String>,
) -> (Vec<ResultRecord>, Vec<String>) {
    if let (Err(why), RealRun::Pid(_) | RealRun::Fixture(_)) = (ptrace, run) {
        let note = format!("live targets need ptrace, which is not permitted here: {why}");
        return (skip_all(run, libs, checks, &note), vec![note]);
    }
    match (run, run.named()) {
        (RealRun::Fixture(f), _) => run_fixture(run, f, libs, checks, exec, scratch),
        (_, Some(target)) => {
            let units = libs
                .iter()
                .map(|lib| run.unit(lib, target.clone(), &[], checks));
            (run_units(units, exec), Vec::new())
        }
        (_, None) => (Vec::new(), Vec::new()),
    }
}

/// Runs `units` one after the other (a live process has one tracer at a time).
pub(crate) fn run_units(units: impl Iterator<Item = Unit>, exec: Exec) -> Vec<ResultRecord> {
    units
        .flat_map(|u| supervisor::run_unit(&u, exec).records)
        .collect()
}

/// Starts fixture `f` (`run`), runs every library's live units against it, dumps it for the
/// core units, releases it and runs those.
fn run_fixture(
    run: &RealRun,
    f: &FixtureRun,
    libs: &[Resolved],
    checks: &[String],
    exec: Exec,
    scratch: &Path,
) -> (Vec<ResultRecord>, Vec<String>) {
    let name = f.name();
    // One shim directory per target: targets run in parallel.
    let dir = scratch.join(format!("shim-{}", f.file_name()));
    let (running, env) = match launch(f, &dir) {
        Ok(x) => x,
        Err(e) => {
            let note = format!("{name}: {e}");
            return (skip_all(run, libs, checks, &note), vec![note]);
        }
    };
    let pid = running.pid();
    let mut notes = Vec::new();
    let checks = judged_on(f, checks, &mut notes);
    let mut records = Vec::new();
    if f.live {
        let units = libs
            .iter()
            .map(|lib| run.unit(lib, RealTarget::Live { pid }, &env, &checks));
        records.extend(run_units(units, exec));
    }
    let core_file = if f.core {
        let path = scratch.join(format!("core.{}", f.file_name()));
        live_target::spawn::gcore(pid, &path)
            .map_err(|e| notes.push(format!("{name}: gcore failed: {e}")))
            .ok()
    } else {
        None
    };
    match running.release() {
        Ok(done) if done.status.success() => {}
        Ok(done) => notes.push(format!(
            "{name}: the fixture exited with {} after release (its records are suspect)",
            done.status
        )),
        Err(e) => notes.push(format!("{name}: release failed: {e}")),
    }
    if let Some(path) = core_file {
        let target = RealTarget::Core { path: path.clone() };
        let units = libs
            .iter()
            .map(|lib| run.unit(lib, target.clone(), &env, &checks));
        records.extend(run_units(units, exec));
        let _ = std::fs::remove_file(&path);
    }
    keep_served(&mut records, &mut notes, &name);
    (records, notes)
}

/// Checks judged where there is no address space to judge the rest with: process
/// initialization and the runtime interface.
fn judged_without_aspace(check: &str) -> bool {
    check.starts_with("aspace.process_initialize.")
        || ompd_report::runtime_row::is_runtime_check(check)
}

/// Drops the results of every unit whose library declined the runtime (it looked up a symbol
/// the runtime does not define: `aspace.process_initialize.foreign_runtime` judged it) but
/// those [`judged_without_aspace`], with a note per library: every other check of such a unit
/// could only skip, as on a stripped runtime.
fn keep_served(records: &mut Vec<ResultRecord>, notes: &mut Vec<String>, name: &str) {
    let declined: Vec<(String, String, String)> = records
        .iter()
        .filter(|r| {
            r.check == "aspace.process_initialize.foreign_runtime" && r.outcome != Outcome::Skip
        })
        .map(|r| (r.library.clone(), r.target.clone(), r.actual.clone()))
        .collect();
    for (lib, target, actual) in &declined {
        if target == "live" || !declined.iter().any(|d| d.0 == *lib && d.1 == "live") {
            let why = records
                .iter()
                .find(|r| {
                    r.library == *lib && r.check == "aspace.process_initialize.compatible_target"
                })
                .map_or(actual.as_str(), |r| r.detail.as_str());
            notes.push(format!(
                "{name}: {lib} declined the runtime ({why}); only process initialization and \
                 the runtime interface are judged"
            ));
        }
    }
    records.retain(|r| {
        judged_without_aspace(&r.check)
            || !declined
                .iter()
                .any(|(lib, target, _)| r.library == *lib && r.target == *target)
    });
}

/// The checks judged against fixture `f`: all of them, except on a stripped runtime, which hides
/// the symbols every OMPD library needs: only process initialization (which must then fail)
/// and the runtime interface are judged there (with a note saying so); and at the stop of a
/// program in a teams construct, where the families that judge the simulator's teams scenario
/// (`ompd_checks::variants`) and the runtime interface are.
fn judged_on(f: &FixtureRun, checks: &[String], notes: &mut Vec<String>) -> Vec<String> {
    if f.scenario.teams.0 > 0 && f.tour.is_none() {
        let teams = sim_target::model::Variant::Teams;
        let judged =
            |c: &&String| ompd_checks::variants::judges(teams, c) || c.starts_with("runtime.");
        return checks.iter().filter(judged).cloned().collect();
    }
    match &f.runtime {
        Some(rt) if !rt.unstripped => {
            notes.push(format!(
                "runtime {} ({}) is stripped: no .symtab, so no OMPD library finds its ompd_* \
                 symbols; only process initialization and the runtime interface are judged \
                 against it",
                rt.name,
                rt.library.display()
            ));
            checks
                .iter()
                .filter(|c| judged_without_aspace(c))
                .cloned()
                .collect()
        }
        _ => checks.to_vec(),
    }
}

/// Every check of every library skipped with `why` (a target that could not be set up).
pub(crate) fn skip_all(
    run: &RealRun,
    libs: &[Resolved],
    checks: &[String],
    why: &str,
) -> Vec<ResultRecord> {
    // A fixture that never ran has no pid: its units are reported as live ones.
    let target = run.named().unwrap_or(RealTarget::Live { pid: 0 });
    let mut out = Vec::new();
    for lib in libs {
        let u = run.unit(lib, target.clone(), &[], checks);
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

/// The OMPD libraries the `runtimes` ([`runtimes`]) name in `ompd_dll_locations`: each
/// unstripped runtime runs fixture `scenario` once, and its list is read from the live process
/// (what a debugger does when no library is given); `built` holds the fixture programs.
pub fn discover_libraries(
    built: &Built,
    runtimes: &[Runtime],
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
    let scratch = tempfile::Builder::new()
        .prefix("ompd-discover-")
        .tempdir()
        .map_err(|e| format!("scratch directory: {e}"))?;
    let mut found = Vec::new();
    for rt in runtimes.iter().filter(|r| r.unstripped) {
        let f = FixtureRun {
            program: program.clone(),
            ompt_tool: built.ompt_tool.clone(),
            scenario: s,
            runtime: Some(rt.clone()),
            live: true,
            core: false,
            omp_debug: false,
            tour: None,
        };
        let (running, _) = launch(&f, &scratch.path().join(&rt.name))
            .map_err(|e| format!("runtime {}: {e}", rt.name))?;
        let listed = crate::real::discover(&RealTarget::Live { pid: running.pid() });
        let _ = running.release();
        for p in listed.map_err(|e| format!("runtime {}: {e}", rt.name))? {
            if !found.contains(&p) {
                found.push(p);
            }
        }
    }
    if found.is_empty() {
        return Err("no unstripped runtime names an OMPD library".into());
    }
    Ok(found)
}
