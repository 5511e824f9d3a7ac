//! Breakpoint tours (`--live`): a fixture run with the breakpoint-stop shim preloaded
//! (`live_target::tour`), which stops the whole process at every OMPD breakpoint its runtime
//! passes. At each stop every library that serves the runtime runs the checks judged on tours
//! (`bp.*`, `runtime.bp_sequence.*`) in a unit of its own (attach, judge, detach; the process
//! stays stopped), then the tour continues.
//!
//! A library's results of one check over the tour fold into one record: the worst judged
//! outcome, its detail prefixed with the stop it came from; a skip only when every stop
//! skipped; a tour cut short turns its passes into harness errors. A library that declines the
//! runtime at the first stop (it looks up a symbol the runtime lacks) leaves the tour with a
//! note, as in `real_runs`.

use crate::real::RealTarget;
use crate::real_runs::{command, run_units, skip_all, FixtureRun, RealRun};
use crate::supervisor::Exec;
use crate::worker::Target;
use ompd_checks::known::BpStop;
use ompd_report::{Outcome, ResultRecord};
use ompd_vendors::Resolved;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// How long a tour waits for its next stop.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// The most stops a tour makes (a runtime that loops through its breakpoints ends there).
const MAX_STOPS: usize = 200;
/// The check that tells whether a library declined the runtime.
const DECLINED: &str = "aspace.process_initialize.foreign_runtime";

/// Whether `check` is judged on breakpoint tours only (and skipped by other real units).
pub fn judged_on_tours(check: &str) -> bool {
    check.starts_with("runtime.bp_sequence.") || check.starts_with("bp.")
}

/// Runs every library's units against one real target (`real_runs::run_target`): a breakpoint
/// tour runs the checks [`judged_on_tours`], every other target the rest.
pub(crate) fn run_target(
    run: &RealRun,
    libs: &[Resolved],
    checks: &[String],
    exec: Exec,
    scratch: &Path,
    ptrace: &Result<(), String>,
) -> (Vec<ResultRecord>, Vec<String>) {
    let tour = matches!(run, RealRun::Fixture(f) if f.tour.is_some());
    let checks: Vec<String> = checks
        .iter()
        .filter(|c| judged_on_tours(c) == tour)
        .cloned()
        .collect();
    match run {
        RealRun::Fixture(f) if tour && ptrace.is_ok() => {
            run_tour(run, f, libs, &checks, exec, scratch)
        }
        _ => crate::real_runs::run_target(run, libs, &checks, exec, scratch, ptrace),
    }
}

/// Runs the breakpoint tour of fixture `f` (`run`) with every library of `libs`; `checks` are
/// the ones [`judged_on_tours`].
fn run_tour(
    run: &RealRun,
    f: &FixtureRun,
    libs: &[Resolved],
    checks: &[String],
    exec: Exec,
    scratch: &Path,
) -> (Vec<ResultRecord>, Vec<String>) {
    if checks.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let (mut tour, env) = match start(f, scratch) {
        Ok(x) => x,
        Err(e) => {
            let note = format!("{}: {e}", f.name());
            return (skip_all(run, libs, checks, &note), vec![note]);
        }
    };
    // What a stop's units leave for the next stop's (removed with the tour).
    let keep = match tempfile::Builder::new().prefix("keep-").tempdir_in(scratch) {
        Ok(d) => d,
        Err(e) => {
            let note = format!("{}: a directory for the tour: {e}", f.name());
            return (skip_all(run, libs, checks, &note), vec![note]);
        }
    };
    let mut walk = Walk {
        keep: keep.path().to_path_buf(),
        run,
        f,
        checks: checks.to_vec(),
        exec,
        env,
        pid: tour.pid(),
        serving: libs.to_vec(),
        log: Vec::new(),
        tally: Tally::default(),
        notes: Vec::new(),
    };
    let mut broken = Some(format!("more than {MAX_STOPS} stops"));
    for _ in 0..MAX_STOPS {
        let stop = match tour.next_stop(STOP_TIMEOUT) {
            Ok(Some(stop)) => stop,
            Ok(None) => {
                if let Some(s) = tour.lost() {
                    walk.note(format_args!(
                        "stop {} ({} of thread {}) was announced as the program exited, which \
                         ended it before it stopped there: not judged",
                        s.seq, s.breakpoint, s.tid
                    ));
                }
                broken = None;
                break;
            }
            Err(e) => {
                broken = Some(e.to_string());
                break;
            }
        };
        walk.judge(&stop);
        if let Err(e) = tour.resume() {
            broken = Some(e.to_string());
            break;
        }
    }
    match tour.finish(STOP_TIMEOUT) {
        Ok(s) if s.success() => {}
        Ok(s) => broken = broken.or(Some(format!("the tour's fixture exited with {s}"))),
        Err(e) => broken = broken.or(Some(e.to_string())),
    }
    if let Some(why) = &broken {
        walk.note(why);
    }
    let mut records = walk.tally.records();
    if let Some(why) = broken {
        cut_short(&mut records, &why);
    }
    (records, walk.notes)
}

/// A tour that did not follow its program to a clean end judged only the stops before: what
/// passed there is no pass of the whole sequence, so it becomes a harness error naming `why`.
fn cut_short(records: &mut [ResultRecord], why: &str) {
    for r in records.iter_mut().filter(|r| r.outcome == Outcome::Pass) {
        r.outcome = Outcome::HarnessError;
        r.detail = format!(
            "the breakpoint tour ended before its program did ({why}); {}",
            r.detail
        );
    }
}

/// A tour under way: what each stop's units need, and what the stops gave so far.
struct Walk<'a> {
    /// Where a stop's units leave what the next stop's need ([`BpStop::keep`]).
    keep: std::path::PathBuf,
    run: &'a RealRun,
    f: &'a FixtureRun,
    checks: Vec<String>,
    exec: Exec<'a>,
    env: Vec<(String, String)>,
    pid: i32,
    /// The libraries still on the tour (those that declined the runtime left at the first stop).
    serving: Vec<Resolved>,
    /// Every stop so far: (breakpoint, thread).
    log: Vec<(String, u32)>,
    tally: Tally,
    notes: Vec<String>,
}

impl Walk<'_> {
    /// Runs every serving library's unit at `stop` and tallies the results.
    fn judge(&mut self, stop: &live_target::tour::Stop) {
        self.log.push((stop.breakpoint.clone(), stop.tid));
        let at = BpStop {
            breakpoint: stop.breakpoint.clone(),
            tid: stop.tid,
            view: stop.view,
            pid: self.pid as u32,
            log: self.log.clone(),
            parallel_regions: self.f.scenario.parallel_regions,
            teams: self.f.scenario.teams,
            explicit_tasks: self.f.scenario.explicit_tasks,
            keep: Some(self.keep.clone()),
        };
        let first = self.log.len() == 1;
        let mut checks = self.checks.clone();
        if first {
            checks.push(DECLINED.into());
        }
        let target = RealTarget::Live { pid: self.pid };
        let units = self.serving.iter().map(|lib| {
            let mut u = self.run.unit(lib, target.clone(), &self.env, &checks);
            if let Target::Real { stop, .. } = &mut u.target {
                *stop = Some(Box::new(at.clone()));
            }
            u
        });
        let mut records = run_units(units, self.exec);
        if first {
            let name = self.f.name();
            leave_declined(&mut self.serving, &mut records, &mut self.notes, &name);
        }
        self.tally.add(records, stop);
    }

    fn note(&mut self, what: impl std::fmt::Display) {
        self.notes.push(format!("{}: {what}", self.f.name()));
    }
}

/// Starts the tour of `f` (shim directory under `scratch`) and gives its environment.
fn start(
    f: &FixtureRun,
    scratch: &Path,
) -> Result<(live_target::tour::Tour, Vec<(String, String)>), String> {
    let (Some(shim), Some(rt)) = (&f.tour, &f.runtime) else {
        return Err("a breakpoint tour needs the shim and a runtime".into());
    };
    let offsets = live_target::tour::breakpoint_offsets(&rt.library)?;
    let dir = scratch.join(format!("shim-{}", f.name().replace(['/', ' '], "-")));
    let (mut cmd, env) = command(f, &dir)?;
    cmd.env("LD_PRELOAD", shim)
        .env(live_target::tour::BREAKPOINTS_ENV, offsets)
        .env("FIXTURE_TOUR", "1")
        // Every library's units at every stop take longer than the fixture's default safety
        // alarm (300 s) on a loaded machine; the alarm still ends a fixture nobody continues.
        .env("FIXTURE_TIMEOUT", "3600");
    let tour = live_target::tour::Tour::start(cmd)
        .map_err(|e| format!("the tour's fixture did not start: {e}"))?;
    Ok((tour, env))
}

/// Drops from `serving` each library that declined the runtime at the first stop (with a note),
/// and every record of those libraries and of the decline check itself.
fn leave_declined(
    serving: &mut Vec<Resolved>,
    records: &mut Vec<ResultRecord>,
    notes: &mut Vec<String>,
    name: &str,
) {
    let declined: Vec<String> = records
        .iter()
        .filter(|r| r.check == DECLINED && r.outcome != Outcome::Skip)
        .map(|r| r.library.clone())
        .collect();
    for lib in &declined {
        notes.push(format!(
            "{name}: {lib} declined the runtime; it leaves the tour"
        ));
    }
    serving.retain(|l| !declined.contains(&l.name));
    records.retain(|r| r.check != DECLINED && !declined.contains(&r.library));
}

/// Each (library, check)'s record so far: the worst judged one.
#[derive(Default)]
struct Tally(BTreeMap<(String, String), ResultRecord>);

impl Tally {
    fn add(&mut self, records: Vec<ResultRecord>, stop: &live_target::tour::Stop) {
        for mut r in records {
            if r.outcome != Outcome::Skip {
                r.detail = format!(
                    "stop {} ({} of thread {}): {}",
                    stop.seq, stop.breakpoint, stop.tid, r.detail
                );
            }
            if let Some(pid) = r.real.as_mut().map(|i| &mut i.pid) {
                *pid = None;
            }
            let key = (r.library.clone(), r.check.clone());
            match self.0.get(&key) {
                Some(old) if old.outcome.weight() >= r.outcome.weight() => {}
                _ => {
                    self.0.insert(key, r);
                }
            }
        }
    }

    fn records(self) -> Vec<ResultRecord> {
        self.0.into_values().collect()
    }
}
