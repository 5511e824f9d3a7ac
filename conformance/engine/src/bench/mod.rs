//! Throughput figures for `cargo xtask bench` (hidden command `ompd-conform __bench LIB`): fresh
//! library instances per second, and checks per second of one unit with process isolation (one
//! worker per run, as the suite runs) and without it (the same unit's checks run in this very
//! process, again and again).
//!
//! The in-process measurement is the one place outside a worker where a vendor library is loaded:
//! a dedicated `__bench` process does it on purpose, to price isolation; its answers are counted,
//! never judged. Checks that crash in the isolated pass are left out of both passes, and only
//! checks that ran count (a library that refuses a second address space in one process, as
//! Intel's does, skips its checks in the later in-process runs).

pub mod floor;
pub mod plot;
pub mod scaling;
pub mod traffic;

use crate::parallel::parallel_map;
use crate::process::Spawn;
use crate::run::RunOptions;
use crate::supervisor::{self, Exec, Stop};
use crate::worker::{self, Event, Unit};
use ompd_checks::Stage;
use ompd_report::Outcome;
use ompd_serve::arch::Arch;
use ompd_vendors::Resolved;
use serde::Serialize;
use sim_target::layout::Policy;
use std::time::Instant;

/// The scenario, arch and layout of the measured unit.
const UNIT: (&str, Arch, Policy) = ("nested-tasks", Arch::LP64_LE, Policy::Natural);

/// Fresh instances started in each way of starting them, whatever the reps: enough for the
/// figure to hold still (200, at about 2 500 a second, took 0.08 s and moved by a fifth from
/// one run to the next).
const INSTANCES: usize = 1_000;

/// What one library measured.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Figures {
    /// Workers running at once while instances are counted (the run's default `--jobs`: one per
    /// core).
    pub jobs: usize,
    /// Fresh worker processes, each executed again, that loaded the library, initialized it and
    /// initialized an address space (no checks), per second, `jobs` at a time.
    pub exec_instances_per_s: f64,
    /// The same, with workers forked by a zygote.
    pub fork_instances_per_s: f64,
    /// The floor: forked fresh instances per second of an OMPD library that does nothing
    /// ([`floor`]), measured in the same run.
    #[serde(default)]
    pub floor_instances_per_s: f64,
    /// Checks of the measured unit.
    pub checks: usize,
    /// How many times the unit ran in each pass.
    pub reps: usize,
    /// Checks (not skipped) per second with a fresh worker process per run of the unit.
    pub isolated_checks_per_s: f64,
    /// Checks (not skipped) per second with every run of the unit in this process.
    pub in_process_checks_per_s: f64,
    /// The callback traffic of one call, per entry point, over the calls the unit's checks made
    /// in this process.
    pub traffic: Vec<traffic::Traffic>,
    /// How the query costs grow with the target's size.
    pub scaling: Vec<scaling::Point>,
}

/// Measures `lib` with `reps` runs per pass.
pub fn measure(lib: &Resolved, reps: usize) -> Result<Figures, String> {
    let reps = reps.max(1);
    let opts = RunOptions {
        rerun_crashes: false,
        ..RunOptions::default()
    };
    let stop = Stop::default();
    let quarantine = crate::quarantine::Quarantine::new(0);
    let exec = Exec::of(&opts, &stop, &quarantine);
    let unit = surviving_unit(lib, exec)?;
    let instances = |unit: &Unit, spawn| {
        let exec = Exec { spawn, ..exec };
        // As the run starts them: up to a batch's worth to a worker.
        let workers = INSTANCES / crate::batch::BATCH;
        per_second(1, || {
            let started = parallel_map(workers, opts.jobs, |_| {
                supervisor::setup_only(unit, exec, crate::batch::BATCH)
            });
            started.into_iter().try_fold(0, |n, r| r.map(|k| n + k))
        })
    };
    let exec_instances_per_s = instances(&unit, Spawn::Exec)?;
    let fork_instances_per_s = instances(&unit, Spawn::Fork)?;
    let floor_lib = floor::empty_library()?;
    let empty = Unit {
        library: floor_lib.name,
        path: floor_lib.path,
        preload: floor_lib.preload,
        needs_cxx_runtime: floor_lib.needs_cxx_runtime,
        ..unit.clone()
    };
    let floor_instances_per_s = instances(&empty, Spawn::Fork)?;
    let isolated_checks_per_s = per_second(reps, || {
        Ok(supervisor::run_unit(&unit, exec)
            .records
            .iter()
            .filter(|r| r.outcome != Outcome::Skip)
            .count())
    })?;
    let in_process_checks_per_s = per_second(reps, || {
        let mut ran = 0usize;
        worker::run_unit(&unit, &mut |e: &worker::Event| {
            if matches!(e, Event::Result { outcome, .. } if *outcome != Outcome::Skip) {
                ran += 1;
            }
            true
        })
        .map_err(|e| e.to_string())?;
        Ok(ran)
    })?;
    let traffic = traffic::per_entry_point(ompd_serve::callbacks::ledger().calls());
    let scaling = scaling::measure(lib, exec);
    Ok(Figures {
        traffic,
        scaling,
        jobs: opts.jobs,
        exec_instances_per_s,
        fork_instances_per_s,
        floor_instances_per_s,
        checks: unit.checks.len(),
        reps,
        isolated_checks_per_s,
        in_process_checks_per_s,
    })
}

/// Runs `pass` `reps` times: what the passes counted, per second of their wall time.
fn per_second(reps: usize, mut pass: impl FnMut() -> Result<usize, String>) -> Result<f64, String> {
    let start = Instant::now();
    let mut counted = 0usize;
    for _ in 0..reps {
        counted += pass()?;
    }
    Ok(counted as f64 / start.elapsed().as_secs_f64())
}

/// The bench unit of `lib` with every target-stage check that does not crash or hang it: a first
/// isolated run finds those, and both passes leave them out (in this process a crash would end
/// the measurement).
fn surviving_unit(lib: &Resolved, exec: Exec) -> Result<Unit, String> {
    let (scenario, arch, layout) = UNIT;
    let target = supervisor::stage_check_ids(Stage::Target, &[]);
    let scenario = worker::Scenario::built_in(scenario)?;
    let full = supervisor::unit_of(
        lib,
        ompd_checks::Stage::Target,
        worker::Target::Simulated {
            scenario,
            arch,
            layout,
        },
        target,
    );
    let first = supervisor::run_unit(&full, exec);
    if let Some(r) = first
        .records
        .iter()
        .find(|r| r.outcome == Outcome::HarnessError)
    {
        return Err(format!("{}: {}", r.check, r.detail));
    }
    let survivors: Vec<String> = first
        .records
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Crash | Outcome::Timeout))
        .map(|r| r.check.clone())
        .collect();
    Ok(Unit {
        checks: survivors,
        ..full
    })
}
