//! The library at breakpoint stops: a live fixture stopped at each OMPD breakpoint its runtime
//! passes (the breakpoint tours of `--live`, [`BpStop`]), the library asked about the thread
//! that stopped there and judged against the runtime's own OMPT view of it at that moment (the
//! runtime is judged separately: where it passes a breakpoint is `runtime.bp_sequence.*`).
//! Elsewhere these checks skip: no other target is stopped at one.

use crate::known::{BpStop, Fact};
use crate::{Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::Scope;
use ompd_abi::{thread_id_kind, EntryPoint};
use ompd_loader::library::{AnyHandle, AspaceH, Call, ParallelH, ThreadH, TrWordOf};

/// Checks of this family.
pub static CHECKS: &[Check] = &[Check {
    at: crate::here!(),
    id: "bp.curr.handles_match_runtime",
    requirements: &["OMPD-HANDLE-PAR-009", "OMPD-HANDLE-TASK-006", "OMPD-BP-007"],
    summary: "stopped at ompd_bp_parallel_begin/_end or ompd_bp_task_begin/_end, the stopped thread's current parallel and task handles are the region and task the runtime itself has current there (their OMPT tool data is the runtime's OMPT view at the stop)",
    severity: Severity::Must,
    entry_points: &[
        EntryPoint::GetThreadHandle,
        EntryPoint::GetCurrParallelHandle,
        EntryPoint::GetCurrTaskHandle,
        EntryPoint::GetToolData,
    ],
    real: Some(&[Fact::Stop]),
    property: crate::Property::ScenariosOnly,
    run: Run::Worker(handles_match_runtime),
    ..Check::TARGET
}, Check {
    at: crate::here!(),
    id: "bp.curr.region_team_size",
    requirements: &["OMPD-HANDLE-PAR-009"],
    summary: "TR 2.001, which has no tool data to tell regions by: stopped at ompd_bp_parallel_begin/_end or ompd_bp_task_begin/_end, the stopped thread's top parallel region has the team size (ompd_get_num_threads) of the region the runtime's OMPT view has current there; the fixtures' nesting levels differ in size (5, 4 and 3 threads under the initial region's 1)",
    severity: Severity::Must,
    entry_points: &[
        EntryPoint::GetThreadHandle,
        EntryPoint::GetCurrParallelHandle,
        EntryPoint::GetNumThreads,
    ],
    since: crate::Profile::Tr2,
    real: Some(&[Fact::Stop]),
    property: crate::Property::ScenariosOnly,
    run: Run::Worker(region_team_size),
    ..Check::TARGET
}, Check {
    at: crate::here!(),
    id: "bp.curr.team_size_matches_runtime",
    requirements: &["OMPD-HANDLE-PAR-001", "OMPD-ICV-010", "OMPD-ICV-015"],
    summary: "stopped at ompd_bp_parallel_begin/_end or ompd_bp_task_begin/_end, the team-size-var of the stopped thread's current parallel handle is the team size of the region the runtime's OMPT view has current there",
    severity: Severity::Must,
    entry_points: &[
        EntryPoint::GetThreadHandle,
        EntryPoint::GetCurrParallelHandle,
        EntryPoint::GetIcvFromScope,
    ],
    real: Some(&[Fact::Stop]),
    property: crate::Property::ScenariosOnly,
    run: Run::Worker(team_size_matches_runtime),
    ..Check::TARGET
}];

/// The stop, or the skip of a target that is not stopped at a breakpoint.
pub(crate) fn stop_or_skip(ctx: &Ctx) -> Result<BpStop, Verdict> {
    match (&ctx.known.stop, ctx.known.has(Fact::Stop)) {
        (Some(stop), true) => Ok(stop.clone()),
        _ => Err(Verdict::skip(
            "judged where a breakpoint tour (--live) stops a fixture at an OMPD breakpoint; \
             this target is not stopped at one",
        )),
    }
}

/// The stopped thread's handle, asked by its pthread id (its index found by its lwp).
fn stopped_thread<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    stop: &BpStop,
) -> Result<ThreadH<'l>, String> {
    let src = ctx.target.ok_or("no target")?.source();
    let index = src
        .find_thread(thread_id_kind::LWP, &stop.tid.to_le_bytes())
        .ok_or_else(|| format!("thread {} is not among the stopped threads", stop.tid))?;
    let id = src
        .thread_id_bytes(index, thread_id_kind::PTHREAD)
        .ok_or("the stopped thread has no pthread id")?;
    ctx.lib
        .get_thread_handle(ah, thread_id_kind::PTHREAD, &id)
        .map_err(|e| format!("{}: {e}", EntryPoint::GetThreadHandle))
}

/// Judges the tool data of the stopped thread's current `what` (asked by `ask`) against the
/// runtime's `want`; nothing to judge where the runtime's view has no data (`want` 0).
fn same_data(
    j: &mut Judge,
    at: &str,
    what: &str,
    want: u64,
    ask: impl FnOnce() -> Call<(i64, ompd_abi::Address)>,
) {
    if want == 0 {
        return;
    }
    let got = ask().map(|(v, _)| v as u64).map_err(|e| e.to_string());
    j.expect(got == Ok(want), || {
        format!("{at}: current {what}'s tool data {got:x?}, the runtime's {what} {want:#x}")
    });
}

/// The stop at a parallel or task breakpoint and the runtime's OMPT view there, or the skip.
fn region_stop(ctx: &Ctx) -> Result<(BpStop, [u64; 4]), Verdict> {
    let stop = match stop_or_skip(ctx) {
        Ok(s) if s.breakpoint.contains("_parallel_") || s.breakpoint.contains("_task_") => s,
        Ok(s) => {
            return Err(Verdict::skip(format!(
                "stopped at {}: judged at parallel and task breakpoints",
                s.breakpoint
            )))
        }
        Err(v) => return Err(v),
    };
    match stop.view {
        Some(view) => Ok((stop, view)),
        None => Err(Verdict::skip(
            "no OMPT view of the stopped thread: the fixture's OMPT tool is not loaded",
        )),
    }
}

fn handles_match_runtime(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let (stop, [region_data, _, task_data, _]) = match region_stop(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetToolData);
    let mut j = Judge::new(
        ctx,
        "the current region and task the runtime's OMPT view shows at the stop",
    );
    let at = format!("at {} of thread {}", stop.breakpoint, stop.tid);
    let th = match stopped_thread(ctx, ah, &stop) {
        Ok(th) => th,
        Err(e) => {
            j.fail(format!("{at}: {e}"));
            return j.verdict();
        }
    };
    let lib = ctx.lib;
    let region = || {
        lib.get_curr_parallel_handle(&th)
            .and_then(|p| lib.get_tool_data(AnyHandle::Parallel(&p), Scope::PARALLEL))
    };
    let task = || {
        lib.get_curr_task_handle(&th)
            .and_then(|t| lib.get_tool_data(AnyHandle::Task(&t), Scope::TASK))
    };
    same_data(&mut j, &at, "region", region_data, region);
    same_data(&mut j, &at, "task", task_data, task);
    j.verdict_or_skip(|| format!("{at}: the runtime's OMPT view gave no region or task data"))
}

/// The stop at a parallel or task breakpoint where the runtime's OMPT view gives the current
/// region's team size: the stop, the size and where it was (for the facts), or the skip.
fn sized_stop(ctx: &Ctx) -> Result<(BpStop, i64, String), Verdict> {
    let (stop, [_, size, _, _]) = region_stop(ctx)?;
    let at = format!("at {} of thread {}", stop.breakpoint, stop.tid);
    if size == 0 {
        return Err(Verdict::skip(format!(
            "{at}: the runtime's OMPT view gave no team size"
        )));
    }
    Ok((stop, size as i64, at))
}

fn team_size_matches_runtime(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    size_at_stop(
        ctx,
        EntryPoint::GetIcvFromScope,
        "team-size-var",
        |ctx, p| super::parallel::par_icv(ctx, p, "team-size-var"),
    )
}

fn region_team_size(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    size_at_stop(ctx, EntryPoint::GetNumThreads, "team size", |ctx, p| {
        ctx.lib
            .tr_word(TrWordOf::NumThreads(p))
            .map_err(|e| format!("{}: {e}", EntryPoint::GetNumThreads))
    })
}

/// Judges the team size `ask` gives (through `entry`, as `what`) for the stopped thread's
/// current parallel handle against the size of the runtime's current region at the stop.
fn size_at_stop(
    ctx: &mut Ctx,
    entry: EntryPoint,
    what: &str,
    ask: impl FnOnce(&Ctx, &ParallelH) -> Result<i64, String>,
) -> Verdict {
    let (stop, size, at) = match sized_stop(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let ah = crate::aspace_or_skip!(ctx, entry);
    let mut j = Judge::new(
        ctx,
        format!("the {what} of the region the runtime's OMPT view shows at the stop"),
    );
    let got = stopped_thread(ctx, ah, &stop).and_then(|th| {
        let p = ctx
            .lib
            .get_curr_parallel_handle(&th)
            .map_err(|e| format!("{}: {e}", EntryPoint::GetCurrParallelHandle))?;
        ask(ctx, &p)
    });
    j.expect(got == Ok(size), || {
        format!("{at}: the current region's {what} {got:?}, the runtime's region has {size}")
    });
    j.verdict()
}
