//! Batches: several units of one library (its consecutive simulated units, a wave's generated
//! cases, a shrinking round's candidates) run one after the other in one worker, each against a
//! library instance no earlier unit used (`Unit::then`), so that a batch costs one fork, not one
//! per unit. Every unit is judged as [`supervisor::run_unit`] judges it: when a worker crashes,
//! hangs, or the run is stopped in the middle of a unit, that unit goes on exactly as a lone
//! unit would (its crash attributed and re-run by the same rules, its other checks in fresh
//! workers), and the units after it start a new batch.

use crate::process::Worker as Process;
use crate::supervisor::{self, Exec, Next, UnitRun, UnitState};
use crate::worker::Unit;
use ompd_report::Outcome;

/// Units one worker runs at most.
pub(crate) const BATCH: usize = 8;

/// `0..n` in batches of at most [`BATCH`], as even as their number allows and as many as a
/// multiple of `jobs`, so that `jobs` workers at a time share them evenly.
pub(crate) fn pieces(n: usize, jobs: usize) -> Vec<std::ops::Range<usize>> {
    let jobs = jobs.max(1);
    let batches = n.div_ceil(BATCH).div_ceil(jobs) * jobs;
    (0..batches)
        .map(|k| k * n / batches..(k + 1) * n / batches)
        .filter(|r| !r.is_empty())
        .collect()
}

/// [`run_batch`], with `None` for each unit left unstarted by a stop of the run.
pub(crate) fn run_padded(units: &[Unit], exec: Exec) -> Vec<Option<UnitRun>> {
    let mut runs: Vec<Option<UnitRun>> = run_batch(units, exec).into_iter().map(Some).collect();
    runs.resize_with(units.len(), || None);
    runs
}

/// Runs `units` in as few workers as their endings allow; one result per unit started, in
/// order (a stop of the run leaves the units after the one it interrupted unstarted).
pub(crate) fn run_batch(units: &[Unit], exec: Exec) -> Vec<UnitRun> {
    let mut runs = Vec::with_capacity(units.len());
    while runs.len() < units.len() && exec.stop.reason().is_none() {
        let rest = &units[runs.len()..];
        if rest.len() == 1 {
            runs.push(supervisor::run_unit(&rest[0], exec));
            continue;
        }
        if let Some(partial) = one_worker(rest, exec, &mut runs) {
            runs.push(partial.drive());
        }
    }
    runs
}

/// Runs `units` in one worker, pushing each finished unit's run to `runs`; returns the unit the
/// worker left unfinished (it crashed, hung or was stopped in it, or said done with checks
/// left), for the caller to go on with as a lone unit would. Units after that one are not
/// started. A worker that ends between two units without a word of the next one (it ends its
/// batch after a unit whose library changed the process, or died or hung unloading a library)
/// leaves the rest to a new batch, which starts with that unit: the first unit of a worker is
/// always judged, so every batch makes progress.
fn one_worker<'u, 'a>(
    units: &'u [Unit],
    exec: Exec<'a>,
    runs: &mut Vec<UnitRun>,
) -> Option<UnitState<'u, 'a>> {
    let mut first = UnitState::new(&units[0], exec);
    let (mut child, capture, mut rx) = match start(&first, units, exec) {
        Ok(started) => started,
        Err(detail) => {
            first.all(Outcome::HarnessError, "", "", &detail);
            runs.push(first.finish());
            return None;
        }
    };
    let mut first = Some(first);
    // Where the last unit's part of the capture file ended.
    let mut printed = 0;
    for (k, unit) in units.iter().enumerate() {
        let mut st = first.take().unwrap_or_else(|| {
            let mut st = UnitState::new(unit, exec);
            st.printed_from(printed);
            st
        });
        let began = crate::phases::thread_cpu();
        let mut w = st.watch(&mut child, &mut rx, true);
        let handling = crate::phases::thread_cpu().saturating_sub(began);
        crate::phases::add(crate::phases::Phase::Supervise, handling);
        if k > 0 && w.silent() && st.unstarted() {
            // The worker ended its batch before this unit (the last one changed the process),
            // or died or hung between two units (unloading a library): the rest start a new
            // batch, this unit first.
            let _ = child.wait();
            return None;
        }
        if !(w.done && st.complete()) {
            // Ended, timed out or stopped in the middle of unit k, or done with checks left
            // (then it is stopped here: its next unit starts afresh).
            if w.done {
                child.stop();
            }
            let status = child.wait().ok();
            return match st.ended(&mut w, status, &capture) {
                Next::Finish => {
                    runs.push(st.finish());
                    None
                }
                Next::Replace => Some(st),
            };
        }
        st.took_output(&capture, w.printed);
        printed = w.printed.unwrap_or(printed);
        runs.push(st.finish());
    }
    let _ = child.wait();
    None
}

/// Starts one worker for `units`: the first as `st` has it, the rest as its [`Unit::then`], all
/// under the first's quarantine (a worker applies the first it is given). The worker, its
/// captured output and its event stream.
fn start(
    st: &UnitState,
    units: &[Unit],
    exec: Exec,
) -> Result<(Process, std::fs::File, crate::process::Events), String> {
    let mut first = st.next_worker_unit();
    first.then = units[1..]
        .iter()
        .map(|u| Unit {
            quarantined: first.quarantined.clone(),
            ..UnitState::new(u, exec).next_worker_unit()
        })
        .collect();
    let began = crate::phases::thread_cpu();
    let (mut child, capture) = Process::start(exec.spawn, exec.keep_env, &first)?;
    crate::phases::add(
        crate::phases::Phase::Start,
        crate::phases::thread_cpu().saturating_sub(began),
    );
    let rx = child.stream(&first);
    Ok((child, capture, rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_every_unit_once_in_batches_the_jobs_share() {
        for n in 0..40 {
            for jobs in 1..4 {
                let p = pieces(n, jobs);
                let all: Vec<usize> = p.iter().cloned().flatten().collect();
                assert_eq!(all, (0..n).collect::<Vec<_>>(), "{n} units, {jobs} jobs");
                assert!(p.iter().all(|r| r.len() <= BATCH && !r.is_empty()));
                let (lo, hi) = (
                    p.iter().map(|r| r.len()).min(),
                    p.iter().map(|r| r.len()).max(),
                );
                assert!(
                    hi.unwrap_or(0) - lo.unwrap_or(0) <= 1 || p.len() < jobs,
                    "{p:?}"
                );
            }
        }
        assert_eq!(pieces(20, 2).len(), 4);
    }
}
