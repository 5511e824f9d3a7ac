//! Batches: several units that differ only in their target (a wave's generated cases) run one
//! after the other in one worker, each against a fresh instance of the library
//! (`Unit::then`), so that a batch costs one fork, not one per unit. Every unit is judged as
//! [`supervisor::run_unit`] judges it: when a worker crashes, hangs, or the run is stopped in
//! the middle of a unit, that unit goes on exactly as a lone unit would (its crash attributed
//! and re-run by the same rules, its other checks in fresh workers), and the units after it
//! start a new batch.

use crate::process::Worker as Process;
use crate::supervisor::{self, Exec, Next, UnitRun, UnitState};
use crate::worker::Unit;
use ompd_report::Outcome;

/// Runs `units` (the same library, stage and checks; only the target differs) in as few
/// workers as their endings allow; one result per unit started, in order (a stop of the run
/// leaves the units after the one it interrupted unstarted). Units that differ in more than
/// their target run a worker each.
pub(crate) fn run_batch(units: &[Unit], exec: Exec) -> Vec<UnitRun> {
    let mut runs = Vec::with_capacity(units.len());
    while runs.len() < units.len() && exec.stop.reason().is_none() {
        let rest = &units[runs.len()..];
        if rest.len() == 1 || !same_but_target(units) {
            runs.push(supervisor::run_unit(&rest[0], exec));
            continue;
        }
        if let Some(partial) = one_worker(rest, exec, &mut runs) {
            runs.push(partial.drive());
        }
    }
    runs
}

/// True when the units differ in nothing but their target.
fn same_but_target(units: &[Unit]) -> bool {
    let Some(first) = units.first() else {
        return true;
    };
    units.iter().all(|u| {
        let as_first = Unit {
            target: first.target.clone(),
            ..u.clone()
        };
        as_first == *first && u.then.is_empty()
    })
}

/// Runs `units` in one worker, pushing each finished unit's run to `runs`; returns the unit the
/// worker left unfinished (it crashed, hung or was stopped in it, or said done with checks
/// left), for the caller to go on with as a lone unit would. Units after that one are not
/// started.
fn one_worker<'u, 'a>(
    units: &'u [Unit],
    exec: Exec<'a>,
    runs: &mut Vec<UnitRun>,
) -> Option<UnitState<'u, 'a>> {
    let mut st = UnitState::new(&units[0], exec);
    let mut first = st.next_worker_unit();
    first.then = units[1..].iter().map(|u| u.target.clone()).collect();
    let began = crate::phases::thread_cpu();
    let (mut child, mut capture) = match Process::start(exec.spawn, exec.keep_env, &first) {
        Ok(started) => started,
        Err(detail) => {
            st.all(Outcome::HarnessError, "", "", &detail);
            runs.push(st.finish());
            return None;
        }
    };
    crate::phases::add(
        crate::phases::Phase::Start,
        crate::phases::thread_cpu().saturating_sub(began),
    );
    let mut rx = child.stream(&first);
    let mut k = 0;
    loop {
        let began = crate::phases::thread_cpu();
        let mut w = st.watch(&mut child, &mut rx, true);
        let handling = crate::phases::thread_cpu().saturating_sub(began);
        crate::phases::add(crate::phases::Phase::Supervise, handling);
        if !(w.done && st.complete()) {
            // Ended, timed out or stopped in the middle of unit k, or done with checks left
            // (then it is stopped here: its next unit starts afresh).
            if w.done {
                child.stop();
            }
            let status = child.wait().ok();
            return match st.ended(&mut w, status, &mut capture) {
                Next::Finish => {
                    runs.push(st.finish());
                    None
                }
                Next::Replace => Some(st),
            };
        }
        k += 1;
        if k == units.len() {
            // What the worker printed goes with its last unit.
            let _ = child.wait();
            let mut last = st.finish();
            last.output = supervisor::captured(&mut capture);
            runs.push(last);
            return None;
        }
        runs.push(st.finish());
        st = UnitState::new(&units[k], exec);
    }
}
