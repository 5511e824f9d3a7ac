//! Timing probes for the scaling figures of `cargo xtask bench`: in a worker whose target is a
//! runtime state of a chosen size, one query set is repeated and its median wall time and
//! callback traffic are streamed as answers (`timing/us`, `timing/callbacks`). Measured, never
//! judged.
//!
//! - [`Probe::Threads`]: the thread handle of the last thread of the team, by its native id
//!   (`ompd_get_thread_handle`), then its current parallel handle.
//! - [`Probe::Nesting`]: the innermost thread's current parallel handle, then the enclosing chain
//!   up to the outermost region (one step per level).
//! - [`Probe::Tasks`]: the innermost thread's current task handle, its generating task and its
//!   parallel handle.

use ompd_checks::Ctx;
use ompd_loader::library::AspaceH;
use serde::{Deserialize, Serialize};
use sim_target::model::ThreadId;
use std::time::{Duration, Instant};

/// Which query set a probe times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Probe {
    /// Thread queries over one team of many threads.
    Threads,
    /// Parallel queries over deeply nested regions.
    Nesting,
    /// Task queries over a long chain of tasks.
    Tasks,
}

/// The answer path of the median microseconds of one query set.
pub const US: &str = "timing/us";
/// The answer path of the target-access callbacks of one query set.
pub const CALLBACKS: &str = "timing/callbacks";
/// The answer path of why nothing was timed.
pub const ERROR: &str = "timing/error";

/// Repetitions of a query set, at least (and until [`MIN_TIME`] has passed).
const MIN_REPS: usize = 20;

/// Time spent repeating a query set, at least.
const MIN_TIME: Duration = Duration::from_millis(30);

/// Times `probe` against the unit's target: the answers [`US`] (median microseconds of one query
/// set) and [`CALLBACKS`] (target-access callbacks of one set), or [`ERROR`].
pub fn run(ctx: &Ctx, probe: Probe) -> Vec<(String, String)> {
    let Some(ah) = ctx.aspace.as_ref() else {
        return vec![(ERROR.into(), "no address space".into())];
    };
    let innermost = ThreadId(ctx.model.threads.len() - 1);
    let set = || match probe {
        Probe::Threads => threads(ctx, ah, innermost),
        Probe::Nesting => nesting(ctx, ah, innermost),
        Probe::Tasks => tasks(ctx, ah, innermost),
    };
    let before = traffic();
    if let Err(e) = set() {
        return vec![(ERROR.into(), e)];
    }
    let callbacks = traffic() - before;
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < MIN_REPS || start.elapsed() < MIN_TIME {
        let t = Instant::now();
        let _ = set();
        times.push(t.elapsed());
    }
    times.sort_unstable();
    let median = times[times.len() / 2];
    vec![
        (US.into(), format!("{:.3}", median.as_secs_f64() * 1e6)),
        (CALLBACKS.into(), callbacks.to_string()),
    ]
}

/// Target-access callbacks so far (lookups, reads, conversions, thread contexts).
fn traffic() -> u64 {
    let l = ompd_serve::callbacks::ledger();
    let c = l.counters();
    c.lookups + c.reads + c.conversions + c.thread_contexts
}

fn threads(ctx: &Ctx, ah: &AspaceH, last: ThreadId) -> Result<(), String> {
    let th = ctx.thread_handle(ah, last).map_err(|e| e.to_string())?;
    ctx.lib
        .get_curr_parallel_handle(&th)
        .map_err(|e| e.to_string())?;
    Ok(())
}

fn nesting(ctx: &Ctx, ah: &AspaceH, innermost: ThreadId) -> Result<(), String> {
    let mut ph = ctx
        .curr_parallel(ah, innermost)
        .map_err(|e| e.to_string())?;
    let levels = ctx.model.level(ctx.model.threads[innermost.0].region);
    for _ in 0..levels {
        ph = ctx
            .lib
            .get_enclosing_parallel_handle(&ph)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn tasks(ctx: &Ctx, ah: &AspaceH, innermost: ThreadId) -> Result<(), String> {
    let task = ctx.curr_task(ah, innermost).map_err(|e| e.to_string())?;
    ctx.lib
        .get_generating_task_handle(&task)
        .map_err(|e| e.to_string())?;
    ctx.lib
        .get_task_parallel_handle(&task)
        .map_err(|e| e.to_string())?;
    Ok(())
}
