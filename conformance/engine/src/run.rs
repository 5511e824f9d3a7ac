//! A whole run: the options, the units planned for each library, every unit run in isolation
//! (`opts.jobs` at a time), the real targets and the property phase, and the report gathered
//! from them.

use crate::parallel::parallel_map;
use crate::process::Spawn;
use crate::property::PropertyOptions;
use crate::quarantine::Quarantine;
use crate::real_runs::RealRun;
use crate::supervisor::{
    record, record_all, run_unit, stage_check_ids, stage_checks, unit_of, Exec, Stop, UnitRun,
    DEFAULT_SEED,
};
use crate::worker::{Event, Scenario, Target, Unit};
use ompd_checks::{self as checks, Stage};
use ompd_loader::inspect::{self, StaticInfo};
use ompd_report::shard::{Order, Shard, ShardInfo};
use ompd_report::{LibraryInfo, Report, ResultRecord};
use ompd_serve::arch::Arch;
use ompd_vendors::Resolved;
use sim_target::layout::Policy;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Scenarios, resolved (default: the default scenario set; a replayed file is a model).
    pub scenarios: Vec<Scenario>,
    /// Architectures (default: all four).
    pub archs: Vec<Arch>,
    /// Layout policies (default: natural, packed, random, Intel 2026.2 where it applies, and the
    /// far placement on its sample of cells).
    pub layouts: Vec<Policy>,
    /// Run every layout on every scenario × architecture cell (the nightly product), where by
    /// default some run on a sample of cells (`Policy::sampled`).
    pub full: bool,
    /// Run the checks that load fresh copies of the library (every layout word withheld, a
    /// process without its runtime) on every simulated unit, where by default they run on one
    /// unit per library (`--full`).
    pub fresh_everywhere: bool,
    /// Check id filters: an id, or a prefix ending in `*`. Empty runs every check.
    pub checks: Vec<String>,
    /// Parallel workers.
    pub jobs: usize,
    /// Time a single check may take before its worker is stopped.
    pub check_timeout: Duration,
    /// Time one call into the library may take before the worker's watchdog ends it and the
    /// check is reported `timeout` naming the call (none: only `check_timeout`).
    pub call_deadline: Option<Duration>,
    /// Distinct checks an entry point must hang or crash in before the rest of the library's
    /// run stops calling it (0: never).
    pub quarantine_after: usize,
    /// The property phase over generated cases (none: scenarios only).
    pub property: Option<PropertyOptions>,
    /// Re-run each crashed check once, alone, in a fresh worker (flake or reproducible).
    pub rerun_crashes: bool,
    /// Environment variables passed on to workers besides `PATH` (the environment is scrubbed).
    pub keep_env: Vec<String>,
    /// Run the simulated scenarios (off when only real targets were asked for).
    pub sim: bool,
    /// Real targets (fixture programs, processes, core files), each run with every library.
    pub real: Vec<RealRun>,
    /// How fresh workers start (forked by a zygote, or executed).
    pub spawn: Spawn,
    /// Run only this shard's share of the work items (none: all of them).
    pub shard: Option<Shard>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            scenarios: Scenario::default_set(),
            archs: Arch::ALL.to_vec(),
            layouts: vec![
                Policy::Natural,
                Policy::Packed,
                Policy::Random(DEFAULT_SEED),
                Policy::Intel2026_2,
                Policy::Far,
            ],
            full: false,
            fresh_everywhere: false,
            checks: Vec::new(),
            jobs: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            check_timeout: Duration::from_secs(60),
            call_deadline: Some(DEFAULT_CALL_DEADLINE),
            quarantine_after: DEFAULT_QUARANTINE_AFTER,
            property: Some(PropertyOptions::default()),
            rerun_crashes: true,
            keep_env: Vec::new(),
            sim: true,
            real: Vec::new(),
            spawn: Spawn::default(),
            shard: None,
        }
    }
}

impl<'a> Exec<'a> {
    /// How the units of a run with `opts` run, stopped by `stop`, with `quarantine`.
    pub fn of(opts: &'a RunOptions, stop: &'a Stop, quarantine: &'a Quarantine) -> Exec<'a> {
        Exec {
            timeout: opts.check_timeout,
            stop,
            rerun_crashes: opts.rerun_crashes,
            keep_env: &opts.keep_env,
            call_deadline: opts.call_deadline,
            quarantine,
            spawn: opts.spawn,
        }
    }
}

/// The default per-call deadline: an honest OMPD call takes microseconds (the busiest makes
/// about 32 target-access callbacks), so seconds leave a wide margin on a loaded machine.
pub const DEFAULT_CALL_DEADLINE: Duration = Duration::from_secs(3);

/// The default number of checks an entry point hangs or crashes in before it is quarantined.
pub const DEFAULT_QUARANTINE_AFTER: usize = 2;

/// The units to run for one library.
pub fn plan(lib: &Resolved, opts: &RunOptions) -> Vec<Unit> {
    let ids = |stage: Stage| stage_check_ids(stage, &opts.checks);
    let mut units = Vec::new();
    let lifecycle = ids(Stage::Library);
    if !lifecycle.is_empty() {
        // Library-level checks need no target; they are reported against the host variant.
        units.push(unit_of(lib, Stage::Library, Target::Host, lifecycle));
    }
    let target = ids(Stage::Target);
    if !target.is_empty() && opts.sim {
        for scenario in &opts.scenarios {
            let judged: Vec<String> = target
                .iter()
                .filter(|c| scenario.judges(c))
                .cloned()
                .collect();
            if judged.is_empty() {
                continue;
            }
            for a in &opts.archs {
                let runs =
                    |l: &&Policy| l.supports(*a) && (opts.full || l.sampled(scenario.name(), *a));
                for l in opts.layouts.iter().filter(runs) {
                    let t = Target::Simulated {
                        scenario: scenario.clone(),
                        arch: *a,
                        layout: *l,
                    };
                    let mut unit = unit_of(lib, Stage::Target, t, judged.clone());
                    unit.fresh_everywhere = opts.fresh_everywhere;
                    units.push(unit);
                }
            }
        }
    }
    units
}

/// Runs every unit of every library and returns the report. `progress` gets one line per unit.
/// A shard run (`opts.shard`) runs its share of the work items (the simulated units, then the
/// real targets, then each library's property phase, numbered in that order) and records each
/// result's place in the unsharded run's order.
pub fn run(
    libs: &[Resolved],
    statics: &[StaticInfo],
    opts: &RunOptions,
    stop: &Stop,
    progress: &(dyn Fn(&str) + Sync),
) -> Report {
    let quarantine = Quarantine::new(opts.quarantine_after);
    let exec = Exec::of(opts, stop, &quarantine);
    let units: Vec<Unit> = libs.iter().flat_map(|l| plan(l, opts)).collect();
    let owns = |k: usize| opts.shard.is_none_or(|s| s.owns(k));
    let mine: Vec<usize> = (0..units.len()).filter(|k| owns(*k)).collect();
    let mut results = run_units(&units, &mine, opts, exec, progress);
    let first_real = units.len();
    let (real_records, notes) = run_real(libs, opts, exec, progress, &|j| owns(first_real + j));
    let mut keyed: Vec<(Order, ResultRecord)> = Vec::new();
    let mut infos = Vec::new();
    for (li, (lib, info)) in libs.iter().zip(statics).enumerate() {
        // The static stage: judged from the file, reported like the library-level checks.
        keyed.extend(numbered(PHASE_STATIC, li, static_records(lib, info, opts)));
        let mut library = library_info(lib, info);
        library.quarantined = quarantine.report(&lib.path);
        for (k, r) in mine.iter().zip(&results) {
            let u = &units[*k];
            if u.library == lib.name && u.path == lib.path {
                note_unit(&mut library, r);
            }
        }
        infos.push(library);
    }
    for (k, r) in mine.iter().zip(results.iter_mut()) {
        keyed.extend(numbered(PHASE_UNITS, *k, std::mem::take(&mut r.records)));
    }
    for (j, recs) in real_records {
        keyed.extend(numbered(PHASE_REAL, j, recs));
    }
    for n in notes {
        eprintln!("warning: {n}");
        for li in &mut infos {
            li.diagnostics.push(format!("real target: {n}"));
        }
    }
    if let Some(p) = &opts.property {
        let first = first_real + opts.real.len();
        let phase = property_phase(libs, opts, p, exec, progress, &|i| owns(first + i));
        for (i, recs) in phase {
            keyed.extend(numbered(PHASE_PROPERTY, i, recs));
        }
    }
    assemble(infos, keyed, opts, stop)
}

/// The phases of a run, in the order its results are reported.
const PHASE_STATIC: u32 = 0;
const PHASE_UNITS: u32 = 1;
const PHASE_REAL: u32 = 2;
const PHASE_PROPERTY: u32 = 3;

/// `recs` of work item `item` in `phase`, each with its place in the run's order.
fn numbered(phase: u32, item: usize, recs: Vec<ResultRecord>) -> Vec<(Order, ResultRecord)> {
    let item = u32::try_from(item).unwrap_or(u32::MAX);
    (0u32..)
        .zip(recs)
        .map(|(pos, r)| ([phase, item, pos], r))
        .collect()
}

/// The report of a run: its libraries and its results in order (with the order keys, for a
/// shard run).
fn assemble(
    libraries: Vec<LibraryInfo>,
    mut keyed: Vec<(Order, ResultRecord)>,
    opts: &RunOptions,
    stop: &Stop,
) -> Report {
    ompd_report::runtime_row::fold(&mut keyed);
    let mut report = Report::new();
    report.libraries = libraries;
    let mut order = Vec::with_capacity(keyed.len());
    for (k, rec) in keyed {
        order.push(k);
        report.push(rec);
    }
    report.shard = opts.shard.map(|s| ShardInfo {
        index: s.index,
        count: s.count,
        order,
    });
    report.incomplete = stop.reason().is_some();
    report
}

/// Runs the simulated units numbered `mine` (`opts.jobs` batches at a time, each batch a
/// library's consecutive units in one worker, `crate::batch`), answers in that order.
fn run_units(
    units: &[Unit],
    mine: &[usize],
    opts: &RunOptions,
    exec: Exec,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<UnitRun> {
    let total = units.len();
    // A library that cannot load fails the same way in every unit: once one unit saw it, the
    // library's other units are recorded from that failure without starting workers.
    let unloadable: Mutex<BTreeMap<PathBuf, LoadFailure>> = Mutex::new(BTreeMap::new());
    let batches = batches_of(units, mine);
    let runs = parallel_map(batches.len(), opts.jobs, |b| {
        let picked: Vec<Unit> = batches[b].iter().map(|&i| units[i].clone()).collect();
        let path = &picked[0].path;
        let known = || {
            let failures = unloadable.lock().unwrap_or_else(|e| e.into_inner());
            failures.get(path).cloned()
        };
        let runs: Vec<UnitRun> = match known() {
            Some(f) => picked.iter().map(|u| f.unit_run(u)).collect(),
            None => crate::batch::run_padded(&picked, exec)
                .into_iter()
                .zip(&picked)
                .map(|(r, u)| r.unwrap_or_else(|| run_unit(u, exec)))
                .collect(),
        };
        let runs = after_load_failure(runs, &picked, &unloadable);
        for (&i, u) in batches[b].iter().zip(&picked) {
            progress(&format!(
                "[{}/{total}] {} {} {} {}",
                i + 1,
                u.library,
                u.target.scenario_name(),
                u.target.arch().name(),
                u.target
                    .layout()
                    .map_or_else(String::new, |l| l.to_string())
            ));
        }
        runs
    });
    runs.into_iter().flatten().collect()
}

/// The units numbered `mine` in batches of at most [`crate::batch::BATCH`] consecutive units
/// of one library.
fn batches_of(units: &[Unit], mine: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for &i in mine {
        match out.last_mut() {
            Some(b) if b.len() < crate::batch::BATCH && units[b[0]].path == units[i].path => {
                b.push(i)
            }
            _ => out.push(vec![i]),
        }
    }
    out
}

/// A batch's runs, each unit after the first whose library failed to load recorded from that
/// failure (as a unit started later is), and the failure kept for the library's later units.
fn after_load_failure(
    runs: Vec<UnitRun>,
    units: &[Unit],
    unloadable: &Mutex<BTreeMap<PathBuf, LoadFailure>>,
) -> Vec<UnitRun> {
    let mut failed: Option<LoadFailure> = None;
    let runs = runs
        .into_iter()
        .zip(units)
        .map(|(r, u)| match &failed {
            Some(f) => f.unit_run(u),
            None => {
                failed = LoadFailure::of(&r);
                r
            }
        })
        .collect();
    if let Some(f) = failed {
        let mut failures = unloadable.lock().unwrap_or_else(|e| e.into_inner());
        failures.entry(units[0].path.clone()).or_insert(f);
    }
    runs
}

/// The static checks of a library, judged from its file.
fn static_records(lib: &Resolved, info: &StaticInfo, opts: &RunOptions) -> Vec<ResultRecord> {
    let host = unit_of(lib, Stage::Library, Target::Host, vec![]);
    stage_checks(Stage::Static, &opts.checks)
        .map(|c| {
            let v = match c.run {
                checks::Run::File(judge) => judge(info),
                checks::Run::Worker(_) => checks::Verdict::harness_error(
                    "a static-stage check must be judged from the file",
                ),
            };
            record(&host, c.id, v.outcome, &v.expected, v.actual, v.detail)
        })
        .collect()
}

/// What the report says of a library from its file.
fn library_info(lib: &Resolved, info: &StaticInfo) -> LibraryInfo {
    LibraryInfo {
        name: lib.name.clone(),
        path: lib.path.display().to_string(),
        sha256: info.sha256.clone(),
        entry_points: info.exported_ompd.clone(),
        package_version: lib.version.clone(),
        elf: format!("{} {}", info.class, info.machine),
        soname: info.soname.clone(),
        needed: info.needed.clone(),
        ..LibraryInfo::default()
    }
}

/// What one of its units learned about a library: its versions and profile (from the first unit
/// that loaded it), load failures and whether it printed anything.
fn note_unit(li: &mut LibraryInfo, r: &UnitRun) {
    if let (
        Some(Event::Loaded {
            diagnostics,
            api_version,
            version_string,
            profile,
            ..
        }),
        true,
    ) = (&r.loaded, li.api_version.is_none())
    {
        li.api_version = *api_version;
        li.profile = Some(*profile);
        li.version_string.clone_from(version_string);
        for d in diagnostics {
            li.add_diagnostic(d);
        }
    }
    if let Some(m) = &r.load_failed {
        li.note_load_failed(m);
    }
    if let Some(first) = r.output.lines().find(|l| !l.trim().is_empty()) {
        li.note_output(first);
    }
}

/// Runs the real targets of the run that `mine` picks by index (`opts.jobs` targets at a time,
/// each target's units in turn: a live process has one tracer at a time). Returns the records of
/// each target run, by target index, and the notes about targets that misbehaved.
fn run_real(
    libs: &[Resolved],
    opts: &RunOptions,
    exec: Exec,
    progress: &(dyn Fn(&str) + Sync),
    mine: &(dyn Fn(usize) -> bool + Sync),
) -> (Vec<(usize, Vec<ResultRecord>)>, Vec<String>) {
    if opts.real.is_empty() || exec.stop.reason().is_some() {
        return (Vec::new(), Vec::new());
    }
    let checks = stage_check_ids(Stage::Target, &opts.checks);
    let scratch = match tempfile::Builder::new().prefix("ompd-real-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            return (
                Vec::new(),
                vec![format!("cannot make a scratch directory: {e}")],
            )
        }
    };
    let ptrace = live_target::spawn::ptrace_permitted();
    let total = opts.real.len();
    let picked: Vec<usize> = (0..total).filter(|j| mine(*j)).collect();
    let all = parallel_map(picked.len(), opts.jobs, |n| {
        let i = picked[n];
        if exec.stop.reason().is_some() {
            return (Vec::new(), Vec::new());
        }
        let t = &opts.real[i];
        let done = crate::tour::run_target(t, libs, &checks, exec, scratch.path(), &ptrace);
        progress(&format!("[real {}/{total}] {}", i + 1, t.label()));
        done
    });
    let mut records = Vec::new();
    let mut notes = Vec::new();
    for (j, (r, n)) in picked.into_iter().zip(all) {
        records.push((j, r));
        notes.extend(n);
    }
    (records, notes)
}

/// How a library failed to load in one unit, replayed for its other units.
#[derive(Clone, Debug)]
struct LoadFailure {
    first: ResultRecord,
    load_failed: Option<String>,
}

impl LoadFailure {
    /// The load failure `r` shows, if its library never loaded.
    fn of(r: &UnitRun) -> Option<LoadFailure> {
        if r.load_failed.is_none() && !r.died_loading {
            return None;
        }
        Some(LoadFailure {
            first: r.records.first()?.clone(),
            load_failed: r.load_failed.clone(),
        })
    }

    /// The same failure for every check of `unit`, without running it.
    fn unit_run(&self, unit: &Unit) -> UnitRun {
        let mut out = UnitRun {
            load_failed: self.load_failed.clone(),
            died_loading: true,
            ..UnitRun::default()
        };
        let detail = format!(
            "{} (not attempted again: the library failed to load in an earlier unit)",
            self.first.detail
        );
        record_all(
            &mut out,
            unit,
            &unit.checks,
            self.first.outcome,
            &self.first.expected,
            &self.first.actual,
            &detail,
        );
        out
    }
}

/// Runs the property phase of the libraries `mine` picks by index, as many side by side as there
/// are jobs (each with its share of the jobs for its cases and shrinks: a library's waves and
/// shrinking rounds wait for their slowest unit, and the other library's units fill that wait);
/// the records by library index.
fn property_phase(
    libs: &[Resolved],
    opts: &RunOptions,
    p: &PropertyOptions,
    exec: Exec,
    progress: &(dyn Fn(&str) + Sync),
    mine: &dyn Fn(usize) -> bool,
) -> Vec<(usize, Vec<ResultRecord>)> {
    // The property phase reports one summary per check; a crash there is shrunk, not re-run.
    let exec = Exec {
        rerun_crashes: false,
        ..exec
    };
    let picked: Vec<usize> = (0..libs.len()).filter(|i| mine(*i)).collect();
    let side_by_side = opts.jobs.min(picked.len()).max(1);
    let jobs = (opts.jobs / side_by_side).max(1);
    parallel_map(picked.len(), side_by_side, |k| {
        let i = picked[k];
        let recs = crate::property::run_library(&libs[i], &opts.checks, p, exec, jobs);
        progress(&format!(
            "[property] {}: {} results over generated cases (both populations)",
            libs[i].name,
            recs.len()
        ));
        (i, recs)
    })
}

/// Static stage for every library: inspect the file before any code runs; a file that exports
/// no `ompd_*` symbol is refused.
pub fn inspect_all(libs: &[Resolved]) -> Result<Vec<StaticInfo>, inspect::InspectError> {
    libs.iter()
        .map(|l| {
            let info = inspect::inspect(&l.path)?;
            inspect::require_ompd(&l.path, &info)?;
            Ok(info)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib() -> Resolved {
        Resolved {
            name: "x".into(),
            path: "/x.so".into(),
            preload: vec![],
            needs_cxx_runtime: false,
            version: None,
        }
    }

    fn far_cells(units: &[Unit]) -> Vec<(String, Arch)> {
        units
            .iter()
            .filter(|u| u.target.layout() == Some(Policy::Far))
            .map(|u| (u.target.scenario_name().to_string(), u.target.arch()))
            .collect()
    }

    #[test]
    fn the_default_plan_covers_four_arches_and_the_intel_layout_once_per_scenario() {
        let units = plan(&lib(), &RunOptions::default());
        let scenarios = sim_target::model::default_scenarios().len();
        let far = sim_target::layout::FAR_SAMPLE.len();
        // A scenario run under one layout only has a unit per arch.
        let one = sim_target::layout::ONE_LAYOUT.len();
        let full = scenarios - one;
        assert_eq!(units.len(), 1 + full * (4 * 3 + 1) + one * 4 + far);
        assert_eq!(
            units
                .iter()
                .filter(|u| u.target.layout() == Some(Policy::Intel2026_2))
                .count(),
            full
        );
        assert!(units
            .iter()
            .all(|u| u.target.layout() != Some(Policy::Intel2026_2)
                || u.target.arch() == Arch::LP64_LE));
    }

    #[test]
    fn the_far_placement_runs_on_its_sample_by_default_and_everywhere_in_the_full_product() {
        let sample: Vec<(String, Arch)> = sim_target::layout::FAR_SAMPLE
            .iter()
            .map(|(s, a)| (s.to_string(), *a))
            .collect();
        assert_eq!(far_cells(&plan(&lib(), &RunOptions::default())), sample);
        let full = RunOptions {
            full: true,
            ..RunOptions::default()
        };
        let scenarios = sim_target::model::default_scenarios().len();
        assert_eq!(far_cells(&plan(&lib(), &full)).len(), scenarios * 4);
    }
}
