//! Handles that compare equal answer alike (OMPD-CMP-009): for each handle kind, every handle
//! the scenario offers through every route (the compare family's pools: by id of each kind, in
//! a parallel by index, enclosing, the task's region, generating and scheduling parents,
//! current), and every pair that compares 0 must give the same answer to every query of that
//! kind: a library whose answer depends on the route a handle came by is caught here.

use crate::checks::compare::{self, Pool};
use crate::known::Fact;
use crate::{Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::{thread_id_kind, EntryPoint, Rc, Scope};
use ompd_loader::library::{AnyHandle, AspaceH, Call, Kind};

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "compare.thread.equal_handles_answer_alike",
        requirements: &["OMPD-CMP-009"],
        summary: "thread handles that compare 0, whatever route gave them, answer the same thread id and state",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ThreadHandleCompare, EntryPoint::GetThreadId, EntryPoint::GetState],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(threads),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "compare.parallel.equal_handles_answer_alike",
        requirements: &["OMPD-CMP-009"],
        summary: "parallel handles that compare 0, whatever route gave them, answer the same tool data, parallel-scope ICVs and thread 0",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ParallelHandleCompare, EntryPoint::GetToolData, EntryPoint::GetIcvFromScope, EntryPoint::GetThreadInParallel, EntryPoint::GetThreadId],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(parallels),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "compare.task.equal_handles_answer_alike",
        requirements: &["OMPD-CMP-009"],
        summary: "task handles that compare 0, whatever route gave them, answer the same tool data, task-scope ICVs, entry point and frames",
        severity: Severity::Must,
        entry_points: &[EntryPoint::TaskHandleCompare, EntryPoint::GetToolData, EntryPoint::GetIcvFromScope, EntryPoint::GetTaskFunction, EntryPoint::GetTaskFrame],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(tasks),
        ..Check::TARGET
    },
];

/// A call's answer, comparable (a failure by its text).
fn said<T>(c: Call<T>) -> Result<T, String> {
    c.map_err(|e| e.to_string())
}

/// An ICV getter's answer, comparable: its code, and the value only where the code gives one
/// (ok, or incomplete for a list); what an error leaves in the out-parameter is no answer.
fn icv_said(c: Call<(Rc, Option<i64>)>) -> Result<(Rc, Option<i64>), String> {
    said(c).map(|(rc, v)| (rc, v.filter(|_| rc == Rc::OK || rc == Rc::INCOMPLETE)))
}

/// Judges every pair of `pool` that compares 0: the same `answer`.
fn alike<'l, K: Kind, A: PartialEq + std::fmt::Debug>(
    ctx: &Ctx<'l>,
    mut pool: Pool<'l, K>,
    kind: &str,
    answer: impl Fn(&ompd_loader::library::Handle<'l, K>) -> A,
) -> Verdict {
    pool.trim();
    let answers: Vec<A> = pool.items.iter().map(|it| answer(&it.h)).collect();
    let mut j = Judge::new(
        ctx,
        format!("the same answers from {kind} handles that compare 0"),
    );
    for a in 0..pool.items.len() {
        for b in a + 1..pool.items.len() {
            if matches!(pool.cmp(a, b), Ok(0)) {
                j.expect(answers[a] == answers[b], || {
                    format!(
                        "{} and {} compare 0 but answer {:02x?} and {:02x?}",
                        pool.name(a),
                        pool.name(b),
                        answers[a],
                        answers[b]
                    )
                });
            }
        }
    }
    j.verdict_or_skip(|| {
        format!("no two {kind} handles compare 0 (compare.{kind}.entity_identity judges that)")
    })
}

/// The ids of the ICVs the library enumerates at `scope`, up to where its enumeration breaks
/// (the ICV family judges the break).
fn icvs_at(ctx: &Ctx, ah: &AspaceH, scope: Scope) -> Vec<u64> {
    ctx.icvs_before_break(ah)
        .map(|l| {
            l.into_iter()
                .filter(|e| e.scope == scope)
                .map(|e| e.id)
                .collect()
        })
        .unwrap_or_default()
}

fn threads(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    // Handles that cannot be gathered are the other compare checks' findings, not this one's.
    let pool = compare::threads(ctx, ah, &mut Judge::new(ctx, ""));
    let Some(t0) = ctx.threads().next() else {
        return Verdict::skip("the scenario has no thread");
    };
    let size = ctx.thread_id(t0, thread_id_kind::PTHREAD).len();
    let lib = ctx.lib;
    alike(ctx, pool, "thread", |h| {
        (
            said(lib.get_thread_id(h, thread_id_kind::PTHREAD, size)),
            said(lib.get_state(h, true)),
        )
    })
}

fn parallels(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let pool = compare::parallels(ctx, ah, &mut Judge::new(ctx, ""));
    let (lib, icvs) = (ctx.lib, icvs_at(ctx, ah, Scope::PARALLEL));
    let size = ctx
        .threads()
        .next()
        .map_or(8, |t| ctx.thread_id(t, thread_id_kind::PTHREAD).len());
    alike(ctx, pool, "parallel", |h| {
        let icv: Vec<_> = icvs
            .iter()
            .map(|id| icv_said(lib.get_icv(AnyHandle::Parallel(h), Scope::PARALLEL, *id)))
            .collect();
        let first = said(lib.get_thread_in_parallel(h, 0))
            .and_then(|t| said(lib.get_thread_id(&t, thread_id_kind::PTHREAD, size)));
        let data = said(lib.get_tool_data(AnyHandle::Parallel(h), Scope::PARALLEL));
        (data.map(|(v, _)| v), icv, first)
    })
}

fn tasks(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let pool = compare::tasks(ctx, ah, &mut Judge::new(ctx, ""));
    let (lib, icvs) = (ctx.lib, icvs_at(ctx, ah, Scope::TASK));
    alike(ctx, pool, "task", |h| {
        let icv: Vec<_> = icvs
            .iter()
            .map(|id| icv_said(lib.get_icv(AnyHandle::Task(h), Scope::TASK, *id)))
            .collect();
        let data = said(lib.get_tool_data(AnyHandle::Task(h), Scope::TASK));
        let function = said(lib.get_task_function(h)).map(|a| a.address);
        let frames = said(lib.get_task_frame(h)).map(|(e, n)| {
            (
                e.frame_address.address,
                e.frame_flag,
                n.frame_address.address,
                n.frame_flag,
            )
        });
        (data.map(|(v, _)| v), icv, function, frames)
    })
}
