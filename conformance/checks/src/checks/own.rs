//! Ownership of memory between library and tool: released handles and failed calls leave no
//! allocation behind, tool-owned strings are fresh blocks that outlive the handle they came
//! from, and answers do not depend on what `alloc_memory` leaves in a block.

use crate::known::Fact;
use crate::{Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::Scope;
use ompd_abi::{EntryPoint, Rc};
use ompd_loader::library::{AnyHandle, AspaceH, Call, ParallelH, TaskH, ThreadH};
use ompd_serve::callbacks;
use ompd_serve::ledger::AllocMode;
use sim_target::model::ThreadId;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "own.handles.release_ok",
        requirements: &["OMPD-OWN-003", "OMPD-REL-010", "OMPD-REL-020", "OMPD-REL-030"],
        summary: "releasing a live thread, parallel or task handle with its ompd_rel_* routine answers ompd_rc_ok",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetCurrParallelHandle, EntryPoint::GetCurrTaskHandle, EntryPoint::RelThreadHandle, EntryPoint::RelParallelHandle, EntryPoint::RelTaskHandle],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(release_ok),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "own.handles.release_independent",
        requirements: &["OMPD-REL-011"],
        summary: "releasing one of two handles of the same thread, region or task leaves the other answering as before (the thread's id, the id of the region's thread 0, the task's frames)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetThreadId, EntryPoint::GetCurrParallelHandle, EntryPoint::GetThreadInParallel, EntryPoint::GetCurrTaskHandle, EntryPoint::GetTaskFrame],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(release_independent),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "own.handles.released_without_leak",
        requirements: &["OMPD-MEM-009"],
        summary: "obtaining and releasing thread, parallel and task handles leaves no alloc_memory block behind (after a warm-up pass fills any per-address-space cache)",
        severity: Severity::Should,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetCurrParallelHandle, EntryPoint::GetCurrTaskHandle, EntryPoint::RelThreadHandle, EntryPoint::RelParallelHandle, EntryPoint::RelTaskHandle],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(released_without_leak),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "own.failed_calls.no_leak",
        requirements: &["OMPD-RC-006"],
        summary: "a call that returns an error hands the tool nothing: no alloc_memory block stays live",
        severity: Severity::Should,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetThreadInParallel, EntryPoint::GetTaskInParallel, EntryPoint::GetIcvFromScope, EntryPoint::GetIcvStringFromScope, EntryPoint::GetCurrTaskHandle, EntryPoint::GetGeneratingTaskHandle, EntryPoint::GetTaskFunction],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(failed_calls_no_leak),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "own.allocator.answers_independent_of_fill",
        requirements: &["OMPD-MEM-007"],
        summary: "answers are identical whether alloc_memory returns zeroed or garbage-filled blocks",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetCurrParallelHandle, EntryPoint::GetCurrTaskHandle, EntryPoint::GetIcvFromScope, EntryPoint::GetState, EntryPoint::GetOmpVersionString],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(independent_of_fill),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "own.strings.fresh_block_per_call",
        requirements: &["OMPD-MEM-003", "OMPD-MEM-004"],
        summary: "each call returning a tool-owned string returns its own live alloc_memory block (two calls never share one)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetOmpVersionString],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(fresh_block_per_call),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "own.strings.valid_after_handle_release",
        requirements: &["OMPD-MEM-005"],
        summary: "an ICV string stays a live, unchanged block after the task handle it came from is released",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetIcvStringFromScope, EntryPoint::RelTaskHandle],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(valid_after_release),
        ..Check::TARGET
    },
];

/// Gets and drops the handles of every thread: thread, current parallel, current task.
fn handle_round(ctx: &Ctx, ah: &AspaceH) {
    for t in ctx.threads() {
        if let Ok(th) = ctx.thread_handle(ah, t) {
            let _ = ctx.lib.get_curr_parallel_handle(&th);
            let _ = ctx.lib.get_curr_task_handle(&th);
        }
    }
}

/// Gets every thread's handle, current parallel and current task handle, and releases each
/// explicitly: every release of a live handle must answer ok.
fn release_ok(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "ok from every ompd_rel_* of a live handle");
    for t in ctx.threads() {
        let Ok(th) = ctx.thread_handle(ah, t) else {
            continue;
        };
        let mut judge = |what: &str, rc: Rc| {
            j.expect(rc == Rc::OK, || {
                format!("releasing the {what} of thread {}: {rc}", t.0)
            });
        };
        if let Ok(p) = ctx.lib.get_curr_parallel_handle(&th) {
            judge("current parallel handle", p.release());
        }
        if let Ok(k) = ctx.lib.get_curr_task_handle(&th) {
            judge("current task handle", k.release());
        }
        judge("thread handle", th.release());
    }
    j.verdict_or_skip(|| {
        "no handle could be obtained to release (the thread.* checks judge that)".into()
    })
}

fn release_independent(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "the remaining handle answers as before after its twin is released",
    );
    // What a handle answered before its twin went is what it must answer after (whether that
    // answer is right is the other families' business): a thread's id, the id of a region's
    // thread 0, a task's frames.
    let kind = ompd_abi::thread_id_kind::PTHREAD;
    for t in ctx.threads() {
        let size = ctx.thread_id(t, kind).len();
        let lib = ctx.lib;
        let thread_id = |h: &ThreadH| lib.get_thread_id(h, kind, size).ok();
        let (Ok(a), Ok(b)) = (ctx.thread_handle(ah, t), ctx.thread_handle(ah, t)) else {
            continue;
        };
        let before = thread_id(&b);
        let _ = a.release();
        same(&mut j, t, "thread", before, thread_id(&b));
        let region = |p: &ParallelH| {
            lib.get_thread_in_parallel(p, 0)
                .ok()
                .and_then(|h| thread_id(&h))
        };
        if let (Ok(p1), Ok(p2)) = (
            lib.get_curr_parallel_handle(&b),
            lib.get_curr_parallel_handle(&b),
        ) {
            let before = region(&p2);
            let _ = p1.release();
            same(&mut j, t, "parallel", before, region(&p2));
        }
        let frames = |k: &TaskH| lib.get_task_frame(k).ok();
        if let (Ok(k1), Ok(k2)) = (lib.get_curr_task_handle(&b), lib.get_curr_task_handle(&b)) {
            let before = frames(&k2);
            let _ = k1.release();
            same(&mut j, t, "task", before, frames(&k2));
        }
    }
    j.verdict_or_skip(|| {
        "no handle answered before its twin was released (the thread.*, parallel.* and task.* checks judge that)".into()
    })
}

/// Judges one remaining handle: an answer it gave before its twin's release (none: nothing to
/// judge) must come again after.
fn same<T: PartialEq + std::fmt::Debug>(
    j: &mut Judge,
    t: ThreadId,
    what: &str,
    before: Option<T>,
    after: Option<T>,
) {
    if let Some(b) = before {
        j.expect(after.as_ref() == Some(&b), || {
            format!(
                "thread {}: the remaining {what} handle answers {after:02x?} after its twin's release, {b:02x?} before",
                t.0
            )
        });
    }
}

fn released_without_leak(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "no block allocated by the library stays live");
    handle_round(ctx, ah);
    let mark = callbacks::ledger().mark();
    handle_round(ctx, ah);
    let l = callbacks::ledger();
    let d = l.since(mark);
    j.expect(d.new_live.is_empty(), || {
        let first = d.new_live[0];
        format!(
            "{} block(s) still live after every handle was released; first: {} bytes from {}",
            d.new_live.len(),
            first.size,
            first.site
        )
    });
    j.verdict()
}

/// Calls that must fail, each with its description and whether it did fail.
fn failing_calls(ctx: &Ctx, ah: &AspaceH) -> Vec<(&'static str, bool)> {
    let mut out = Vec::new();
    let t0 = ThreadId(0);
    let mut unknown = ctx.thread_id(t0, ompd_abi::thread_id_kind::PTHREAD);
    unknown.iter_mut().for_each(|b| *b = 0xEE);
    out.push((
        "ompd_get_thread_handle of an unknown id",
        ctx.lib
            .get_thread_handle(ah, ompd_abi::thread_id_kind::PTHREAD, &unknown)
            .is_err(),
    ));
    if let Ok(ph) = ctx.curr_parallel(ah, t0) {
        out.push((
            "ompd_get_thread_in_parallel(-1)",
            ctx.lib.get_thread_in_parallel(&ph, -1).is_err(),
        ));
        out.push((
            "ompd_get_task_in_parallel(1 << 20)",
            ctx.lib.get_task_in_parallel(&ph, 1 << 20).is_err(),
        ));
    }
    if let Ok(initial) = initial_task(ctx, ah) {
        out.push((
            "ompd_get_task_function of the initial task",
            ctx.lib.get_task_function(&initial).is_err(),
        ));
    }
    let unknown_icv = ctx
        .icvs(ah)
        .map(|t| t.iter().map(|e| e.id).max().unwrap_or(0) + 1000)
        .unwrap_or(1000);
    out.push((
        "ompd_get_icv_from_scope of an unknown id",
        !matches!(
            ctx.lib.get_icv(AnyHandle::Aspace(ah), Scope::ADDRESS_SPACE, unknown_icv),
            Ok((rc, _)) if rc.is_ok()
        ),
    ));
    out.push((
        "ompd_get_icv_string_from_scope of an unknown id",
        ctx.lib
            .get_icv_string(AnyHandle::Aspace(ah), Scope::ADDRESS_SPACE, unknown_icv)
            .is_err(),
    ));
    out
}

/// The root of thread 0's generating-task chain: the initial task, which runs no outlined code
/// (so `ompd_get_task_function` has no entry point to answer). The chain is followed at most as
/// many steps as the model has tasks.
fn initial_task<'l>(ctx: &Ctx<'l>, ah: &AspaceH<'l>) -> Call<TaskH<'l>> {
    let mut task = ctx.curr_task(ah, ThreadId(0))?;
    for _ in 0..ctx.model.tasks.len() {
        match ctx.lib.get_generating_task_handle(&task) {
            Ok(parent) => task = parent,
            Err(_) => break,
        }
    }
    Ok(task)
}

fn failed_calls_no_leak(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "no live block after any failed call");
    // Warm-up: fill per-address-space caches the library may keep on purpose.
    let _ = failing_calls(ctx, ah);
    let mark = callbacks::ledger().mark();
    let calls = failing_calls(ctx, ah);
    let l = callbacks::ledger();
    let d = l.since(mark);
    let failed: Vec<&str> = calls.iter().filter(|(_, f)| *f).map(|(n, _)| *n).collect();
    if failed.is_empty() {
        return Verdict::skip("none of the probing calls failed");
    }
    j.expect(d.new_live.is_empty(), || {
        let first = d.new_live[0];
        format!(
            "{} block(s) live after failed calls ({}); first: {} bytes from {}",
            d.new_live.len(),
            failed.join(", "),
            first.size,
            first.site
        )
    });
    j.verdict()
}

/// Every answer a fixed set of queries gives, rendered as text.
fn answers(ctx: &Ctx, ah: &AspaceH) -> Vec<String> {
    let mut out = vec![crate::describe(&ctx.lib.get_omp_version_string(ah))];
    let icvs = ctx.icvs_before_break(ah).unwrap_or_default();
    for t in ctx.threads() {
        let th = ctx.thread_handle(ah, t);
        out.push(format!("gtid {} handle {}", t.0, th.is_ok()));
        let Ok(th) = th else { continue };
        out.push(crate::describe(&ctx.lib.get_state(&th, true)));
        let ph = ctx.lib.get_curr_parallel_handle(&th);
        let task = ctx.lib.get_curr_task_handle(&th);
        for e in &icvs {
            let h = match e.scope {
                Scope::THREAD => AnyHandle::Thread(&th),
                Scope::PARALLEL => match &ph {
                    Ok(p) => AnyHandle::Parallel(p),
                    Err(_) => continue,
                },
                Scope::TASK => match &task {
                    Ok(k) => AnyHandle::Task(k),
                    Err(_) => continue,
                },
                _ => AnyHandle::Aspace(ah),
            };
            out.push(format!(
                "gtid {} {}: {} / {}",
                t.0,
                e.name,
                crate::describe(&ctx.lib.get_icv(h, e.scope, e.id)),
                crate::describe(&ctx.lib.get_icv_string(h, e.scope, e.id))
            ));
        }
    }
    out
}

fn independent_of_fill(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "the same answers under both allocator fills");
    callbacks::set_alloc_mode(AllocMode::Zeroed);
    let zeroed = answers(ctx, ah);
    callbacks::set_alloc_mode(AllocMode::Poisoned);
    let poisoned = answers(ctx, ah);
    for (z, p) in zeroed.iter().zip(&poisoned) {
        j.expect(z == p, || {
            format!("zeroed blocks: {z}; poisoned blocks: {p}")
        });
    }
    j.expect(zeroed.len() == poisoned.len(), || {
        format!(
            "{} answers with zeroed blocks, {} with poisoned ones",
            zeroed.len(),
            poisoned.len()
        )
    });
    j.verdict()
}

fn fresh_block_per_call(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "two live, distinct blocks with the same text");
    let a = ctx.lib.get_omp_version_string_kept(ah);
    let b = ctx.lib.get_omp_version_string_kept(ah);
    match (&a, &b) {
        (Ok(a), Ok(b)) => {
            j.expect(a.addr() != b.addr(), || {
                format!("both calls returned the block at {:#x}", a.addr())
            });
            j.expect(a.text == b.text, || {
                format!("{:?} then {:?}", a.text, b.text)
            });
            j.expect(a.reread().as_deref() == Ok(a.text.as_str()), || {
                format!("the first block changed or died: {:?}", a.reread())
            });
        }
        _ => j.fail(format!(
            "ompd_get_omp_version_string: {} / {}",
            crate::describe(&a),
            crate::describe(&b)
        )),
    }
    j.verdict()
}

fn valid_after_release(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let icvs = match ctx.icvs_before_break(ah) {
        Ok(t) => t,
        Err(e) => return Verdict::skip(format!("no ICV enumerated: {e}")),
    };
    let task = match ctx.curr_task(ah, ThreadId(0)) {
        Ok(t) => t,
        Err(e) => return Verdict::skip(format!("no task handle: {e}")),
    };
    let kept = icvs
        .iter()
        .filter(|e| e.scope == Scope::TASK)
        .find_map(|e| {
            ctx.lib
                .get_icv_string_kept(AnyHandle::Task(&task), Scope::TASK, e.id)
                .ok()
                .map(|s| (e.name.clone(), s))
        });
    let Some((name, s)) = kept else {
        return Verdict::skip("no task-scope ICV has a string form in this library");
    };
    let mut j = Judge::new(
        ctx,
        "the block is live and unchanged after ompd_rel_task_handle",
    );
    let rc = task.release();
    j.expect(rc.is_ok(), || format!("ompd_rel_task_handle: {rc}"));
    let again = s.reread();
    j.expect(again.as_deref() == Ok(s.text.as_str()), || {
        format!("{name}: {:?} became {again:?}", s.text)
    });
    j.verdict()
}
