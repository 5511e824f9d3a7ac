//! Tool data: the OMPT `ompt_data_t` a tool stored for every thread, parallel region and task,
//! read through `ompd_get_tool_data` at the matching scope and judged against the model; the
//! scopes that carry no tool data; and a runtime without OMPT support, where there is none
//! (`Model::ompt_support`, the `no-ompt` scenario).

use crate::known::Fact;
use crate::{Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{Address, Scope, SEGMENT_NONE};
use ompd_loader::library::{AnyHandle, Call, Fail};

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "tool_data.thread.matches_model",
        requirements: &["OMPD-TDATA-001"],
        summary: "thread scope: value and ptr are the thread's ompt_data_t (ptr aliasing value as the union does)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetToolData],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::ToolData]),
        run: Run::Worker(thread),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tool_data.parallel.matches_model",
        requirements: &["OMPD-TDATA-001"],
        summary: "parallel scope: value and ptr are the region's ompt_data_t, for every innermost region and the initial region",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetEnclosingParallelHandle, EntryPoint::GetToolData],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::ToolData]),
        run: Run::Worker(parallel),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tool_data.task.matches_model",
        requirements: &["OMPD-TDATA-001"],
        summary: "task scope: value and ptr are the task's ompt_data_t, for every reachable task",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetSchedulingTaskHandle, EntryPoint::GetTaskInParallel, EntryPoint::GetToolData],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::ToolData]),
        run: Run::Worker(task),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tool_data.no_ompt.unsupported",
        requirements: &["OMPD-TDATA-002"],
        summary: "on a runtime without OMPT support, ompd_get_tool_data answers ompd_rc_unsupported for every thread, region and task",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetCurrParallelHandle, EntryPoint::GetCurrTaskHandle, EntryPoint::GetToolData],
        run: Run::Worker(no_ompt),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tool_data.scope.no_data_scopes",
        requirements: &["OMPD-TDATA-003"],
        summary: "the address-space and global scopes carry no OMPT data: any non-ok code",
        severity: Severity::Ambig,
        entry_points: &[EntryPoint::GetToolData],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::ToolData]),
        run: Run::Worker(no_data_scopes),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tool_data.implicit_task.consistent",
        requirements: &["OMPD-TDATA-003", "OMPD-TDATA-001"],
        summary: "implicit-task scope with an implicit task: either a non-ok code (the text leaves it open) or that task's ompt_data_t (a wrong value on ok fails)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetTaskInParallel, EntryPoint::GetToolData],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::ToolData]),
        run: Run::Worker(implicit_task),
        ..Check::TARGET
    },
];

/// Judges one answer against the model's `value`: the same 64 bits, the union's pointer member
/// of that value in `ptr`, and segment none.
fn judge(j: &mut Judge, ctx: &Ctx, label: &str, got: Call<(i64, Address)>, want: u64) {
    let ptr = ctx.arch.union_pointer(want);
    match got {
        Ok((v, a)) => j.expect(
            v as u64 == want && a.address == ptr && a.segment == SEGMENT_NONE,
            || {
                format!(
                    "{label}: value {:#x} ptr {:#x} (segment {:#x}), model value {want:#x} ptr {ptr:#x}",
                    v as u64, a.address, a.segment
                )
            },
        ),
        Err(e) => j.fail(format!("{label}: {e}")),
    }
}

fn expected(ctx: &Ctx) -> String {
    format!(
        "ok with the model's value and, as ptr, its first {} bytes in target order",
        ctx.arch.pointer
    )
}

fn thread(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetToolData);
    if let Some(v) = without_ompt(ctx) {
        return v;
    }
    let mut j = Judge::new(ctx, expected(ctx));
    for t in ctx.threads() {
        let label = format!("gtid {}", t.0);
        match ctx.thread_handle(ah, t) {
            Ok(h) => {
                let got = ctx.lib.get_tool_data(AnyHandle::Thread(&h), Scope::THREAD);
                judge(&mut j, ctx, &label, got, ctx.model.threads[t.0].tool_data);
            }
            Err(e) => j.fail(format!("{label}: no thread handle: {e}")),
        }
    }
    j.verdict()
}

fn parallel(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetToolData);
    if let Some(v) = without_ompt(ctx) {
        return v;
    }
    let mut j = Judge::new(ctx, expected(ctx));
    for (r, label, ph) in ctx.all_regions_with_handles(ah, &mut j) {
        let got = ctx
            .lib
            .get_tool_data(AnyHandle::Parallel(&ph), Scope::PARALLEL);
        judge(&mut j, ctx, &label, got, ctx.model.regions[r.0].tool_data);
    }
    j.verdict()
}

fn task(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetToolData);
    if let Some(v) = without_ompt(ctx) {
        return v;
    }
    let mut j = Judge::new(ctx, expected(ctx));
    for s in ctx.task_subjects(ah, &mut j) {
        let got = ctx
            .lib
            .get_tool_data(AnyHandle::Task(&s.handle), Scope::TASK);
        judge(
            &mut j,
            ctx,
            &s.label,
            got,
            ctx.model.tasks[s.task.0].tool_data,
        );
    }
    j.verdict()
}

/// A skip on a runtime without OMPT support, which keeps no tool data to compare with.
fn without_ompt(ctx: &Ctx) -> Option<Verdict> {
    (!ctx.model.ompt_support).then(|| {
        Verdict::skip(
            "the runtime has no OMPT support, so no tool data: tool_data.no_ompt.unsupported judges it",
        )
    })
}

/// Every thread's, innermost region's and task's tool data must be refused as unsupported.
fn no_ompt(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetToolData);
    if ctx.model.ompt_support {
        return Verdict::skip("the runtime supports OMPT (the no-ompt scenario has none)");
    }
    let mut j = Judge::new(
        ctx,
        "ompd_rc_unsupported at every thread, parallel and task scope",
    );
    let answer = |j: &mut Judge, label: &str, got: Call<(i64, Address)>| match got {
        Err(Fail::Rc(rc)) if rc == ompd_abi::Rc::UNSUPPORTED => j.holds(),
        Ok((v, _)) => j.fail(format!("{label}: ok with value {:#x}", v as u64)),
        Err(e) => j.fail(format!("{label}: {e}")),
    };
    for t in ctx.threads() {
        let label = format!("gtid {}", t.0);
        match ctx.thread_handle(ah, t) {
            Ok(h) => answer(
                &mut j,
                &label,
                ctx.lib.get_tool_data(AnyHandle::Thread(&h), Scope::THREAD),
            ),
            Err(e) => j.fail(format!("{label}: no thread handle: {e}")),
        }
    }
    for (_, label, ph) in ctx.all_regions_with_handles(ah, &mut j) {
        let got = ctx
            .lib
            .get_tool_data(AnyHandle::Parallel(&ph), Scope::PARALLEL);
        answer(&mut j, &label, got);
    }
    for s in ctx.task_subjects(ah, &mut j) {
        let got = ctx
            .lib
            .get_tool_data(AnyHandle::Task(&s.handle), Scope::TASK);
        answer(&mut j, &s.label, got);
    }
    j.verdict()
}

fn no_data_scopes(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetToolData);
    let mut j = Judge::new(ctx, "a non-ok code");
    for scope in [Scope::ADDRESS_SPACE, Scope::GLOBAL] {
        match ctx.lib.get_tool_data(AnyHandle::Aspace(ah), scope) {
            Err(Fail::Rc(_)) => j.holds(),
            Ok((v, a)) => j.fail(format!(
                "scope {scope:?}: ok with value {:#x} ptr {:#x}",
                v as u64, a.address
            )),
            Err(e) => j.fail(format!("scope {scope:?}: {e}")),
        }
    }
    j.verdict()
}

fn implicit_task(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetToolData);
    if let Some(v) = without_ompt(ctx) {
        return v;
    }
    let mut j = Judge::new(ctx, "a non-ok code, or the implicit task's data");
    for s in ctx.task_subjects(ah, &mut j) {
        if !crate::is_implicit(ctx.model, s.task) {
            continue;
        }
        let got = ctx
            .lib
            .get_tool_data(AnyHandle::Task(&s.handle), Scope::IMPLICIT_TASK);
        match got {
            Err(Fail::Rc(_)) => j.holds(),
            got => judge(
                &mut j,
                ctx,
                &s.label,
                got,
                ctx.model.tasks[s.task.0].tool_data,
            ),
        }
    }
    j.verdict()
}
