//! Routes × consumers: every handle of each kind the scenario offers, through every route (the
//! compare family's pools: by id of each kind, by index in a region, enclosing, a task's
//! region, generating and scheduling parents, implicit tasks of a region), passed to every
//! routine that consumes that kind, each answer judged against the model's value for the
//! handle's entity.
//!
//! An answer is judged where the primary route's handle of the same entity (a thread by its
//! pthread id, a thread's current region or task) answers the model's value: what a library
//! gets wrong on every route is the consumer family's finding (`thread.*`, `state.*`,
//! `task.*`, `tool_data.*`); what it gets wrong on another route only is this family's. An
//! entity no primary route reaches (a region no thread is in the innermost of, a task no thread
//! is running: a generating or scheduling parent) is judged on every route that reaches it
//! wherever one of those routes answers right, since no consumer family queries it. Unlike
//! `compare.*.equal_handles_answer_alike`, the judgement does not rest on the library's compare.

use crate::checks::compare::{self, Item};
use crate::ctx::native_id_bytes;
use crate::known::Fact;
use crate::{Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::{
    thread_id_kind, Address, EntryPoint, ParallelHandle, Scope, TaskHandle, ThreadHandle,
};
use ompd_loader::library::{AnyHandle, Call, Handle, Kind};
use sim_target::model::Model;
use std::collections::BTreeSet;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "route.thread.answers_match_model",
        requirements: &["OMPD-HANDLE-THREAD-020", "OMPD-STATE-010", "OMPD-TDATA-001"],
        summary: "a thread handle from every route (by pthread id, by lwp id, by index in each region) answers the model's thread id, state and tool data wherever the handle by pthread id does",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetThreadInParallel, EntryPoint::GetThreadId, EntryPoint::GetState, EntryPoint::GetToolData],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(threads),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "route.parallel.answers_match_model",
        requirements: &["OMPD-HANDLE-THREAD-010", "OMPD-TDATA-001", "OMPD-ICV-010"],
        summary: "a parallel handle from every route (current, enclosing, a task's region) answers the model's tool data, its thread 0 and its team-size-var wherever the thread's current-region handle does",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetEnclosingParallelHandle, EntryPoint::GetTaskParallelHandle, EntryPoint::GetToolData, EntryPoint::GetThreadInParallel, EntryPoint::GetThreadId, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(parallels),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "route.task.answers_match_model",
        requirements: &["OMPD-FRAME-001", "OMPD-TDATA-001", "OMPD-HANDLE-PAR-006"],
        summary: "a task handle from every route (current, generating and scheduling parents, implicit tasks of a region) answers the model's entry point, frames, tool data and region (its tool data) wherever the thread's current-task handle does",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetGeneratingTaskHandle, EntryPoint::GetSchedulingTaskHandle, EntryPoint::GetTaskInParallel, EntryPoint::GetTaskFunction, EntryPoint::GetTaskFrame, EntryPoint::GetToolData, EntryPoint::GetTaskParallelHandle],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(tasks),
        ..Check::TARGET
    },
];

/// A consumer: its name, and for a handle of `entity`, the model's value (from the model as the
/// target's architecture shows it) and the answer (both shown), or `None` where the model has no
/// value for it (no state tracking, no OMPT).
type Consumer<'l, K> = (
    &'static str,
    fn(&Ctx<'l>, &Model, &Handle<'l, K>, usize) -> Option<(String, Result<String, String>)>,
);

/// Judges every non-primary item of `items` by every consumer, for the entities whose primary
/// handle answers that consumer right, and for the entities no primary handle reaches that
/// answer it right on some route.
fn judge<'l, K: Kind>(
    j: &mut Judge,
    ctx: &Ctx<'l>,
    items: &[Item<'l, K>],
    consumers: &[Consumer<'l, K>],
) {
    let truth = ctx.model.normalized(ctx.arch);
    let primary: BTreeSet<usize> = items
        .iter()
        .filter(|it| it.primary)
        .map(|it| it.entity)
        .collect();
    for (name, consume) in consumers {
        let right: BTreeSet<usize> = items
            .iter()
            .filter(|it| it.primary || !primary.contains(&it.entity))
            .filter(
                |it| matches!(consume(ctx, &truth, &it.h, it.entity), Some((want, Ok(got))) if got == want),
            )
            .map(|it| it.entity)
            .collect();
        for it in items
            .iter()
            .filter(|it| !it.primary && right.contains(&it.entity))
        {
            let Some((want, got)) = consume(ctx, &truth, &it.h, it.entity) else {
                continue;
            };
            j.expect(got.as_ref() == Ok(&want), || {
                let got = got.clone().unwrap_or_else(|e| e);
                format!(
                    "{} (entity {}): {name}: {got}, the model's is {want}",
                    it.route, it.entity
                )
            });
        }
    }
}

/// A call's answer shown, or its failure.
fn shown<T>(c: Call<T>, f: impl FnOnce(T) -> String) -> Result<String, String> {
    c.map(f).map_err(|e| e.to_string())
}

/// Tool data of `h` at `scope` against the model's `want` (None without OMPT).
fn tool_data(
    ctx: &Ctx,
    h: AnyHandle,
    scope: Scope,
    want: u64,
) -> Option<(String, Result<String, String>)> {
    tool_data_by(ctx, want, || ctx.lib.get_tool_data(h, scope))
}

/// The tool data `get` answers against the model's `want` (None without OMPT: `get` is not
/// called).
fn tool_data_by(
    ctx: &Ctx,
    want: u64,
    get: impl FnOnce() -> Call<(i64, Address)>,
) -> Option<(String, Result<String, String>)> {
    ctx.model.ompt_support.then(|| {
        (
            format!("{want:#x}"),
            shown(get(), |(v, _)| format!("{:#x}", v as u64)),
        )
    })
}

/// Thread `t`'s pthread id against what `get` answers when asked for that many bytes.
fn pthread_id(
    ctx: &Ctx,
    m: &Model,
    t: usize,
    get: impl FnOnce(usize) -> Call<Vec<u8>>,
) -> Option<(String, Result<String, String>)> {
    let want = native_id_bytes(
        ctx.model,
        ctx.arch,
        &m.threads[t].native,
        thread_id_kind::PTHREAD,
    );
    let got = get(want.len());
    Some((format!("{want:02x?}"), shown(got, |b| format!("{b:02x?}"))))
}

fn threads(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let pool = compare::threads(ctx, ah, &mut Judge::new(ctx, ""));
    let id: Consumer<ThreadHandle> = ("pthread id", |ctx, m, h, e| {
        pthread_id(ctx, m, e, |n| {
            ctx.lib.get_thread_id(h, thread_id_kind::PTHREAD, n)
        })
    });
    let state: Consumer<ThreadHandle> = ("state", |ctx, m, h, e| {
        let want = m.threads[e].state;
        ctx.model.debug_enabled().then(|| {
            (
                format!("{want:#x}"),
                shown(ctx.lib.get_state(h, true), |(s, _)| format!("{s:#x}")),
            )
        })
    });
    let data: Consumer<ThreadHandle> = ("tool data", |ctx, m, h, e| {
        tool_data(
            ctx,
            AnyHandle::Thread(h),
            Scope::THREAD,
            m.threads[e].tool_data,
        )
    });
    run(ctx, &pool.items, &[id, state, data], "thread")
}

fn parallels(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let pool = compare::parallels(ctx, ah, &mut Judge::new(ctx, ""));
    let data: Consumer<ParallelHandle> = ("tool data", |ctx, m, h, e| {
        tool_data(
            ctx,
            AnyHandle::Parallel(h),
            Scope::PARALLEL,
            m.regions[e].tool_data,
        )
    });
    let first: Consumer<ParallelHandle> = ("thread 0's pthread id", |ctx, m, h, e| {
        let t = m.regions[e].members.first()?;
        pthread_id(ctx, m, t.0, |n| {
            let th = ctx.lib.get_thread_in_parallel(h, 0)?;
            ctx.lib.get_thread_id(&th, thread_id_kind::PTHREAD, n)
        })
    });
    let size: Consumer<ParallelHandle> = ("team-size-var", |ctx, m, h, e| {
        let want = m.regions[e].members.len();
        let got = super::parallel::par_icv(ctx, h, "team-size-var");
        Some((want.to_string(), got.map(|v| v.to_string())))
    });
    run(ctx, &pool.items, &[data, first, size], "parallel")
}

fn tasks(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let pool = compare::tasks(ctx, ah, &mut Judge::new(ctx, ""));
    let function: Consumer<TaskHandle> = ("entry point", |ctx, m, h, e| {
        let want = m.tasks[e].function;
        Some((
            format!("{want:#x}"),
            shown(ctx.lib.get_task_function(h), |a| {
                format!("{:#x}", a.address)
            }),
        ))
    });
    let frames: Consumer<TaskHandle> = ("exit and enter frames", |ctx, m, h, e| {
        let m = &m.tasks[e];
        let want = format!("{:#x} {:#x}", m.exit_frame, m.enter_frame);
        let got = ctx.lib.get_task_frame(h);
        ctx.model.debug_enabled().then(|| {
            (
                want,
                shown(got, |(x, n)| {
                    format!(
                        "{:#x} {:#x}",
                        x.frame_address.address, n.frame_address.address
                    )
                }),
            )
        })
    });
    let data: Consumer<TaskHandle> = ("tool data", |ctx, m, h, e| {
        tool_data(ctx, AnyHandle::Task(h), Scope::TASK, m.tasks[e].tool_data)
    });
    let region: Consumer<TaskHandle> = ("its region's tool data", |ctx, m, h, e| {
        tool_data_by(ctx, m.regions[m.tasks[e].region.0].tool_data, || {
            let p = ctx.lib.get_task_parallel_handle(h)?;
            ctx.lib
                .get_tool_data(AnyHandle::Parallel(&p), Scope::PARALLEL)
        })
    });
    run(ctx, &pool.items, &[function, frames, data, region], "task")
}

/// Judges `items` by `consumers` into a verdict.
fn run<'l, K: Kind>(
    ctx: &Ctx<'l>,
    items: &[Item<'l, K>],
    consumers: &[Consumer<'l, K>],
    kind: &str,
) -> Verdict {
    let mut j = Judge::new(
        ctx,
        format!("every {kind} handle answers the model's values, by whatever route it came"),
    );
    judge(&mut j, ctx, items, consumers);
    j.verdict_or_skip(|| {
        format!(
            "no {kind} entity is reached by a second route whose first route answers right \
             (or, for an entity the first route does not reach, any route)"
        )
    })
}
