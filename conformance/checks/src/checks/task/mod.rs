//! Task handles: the current task of every thread, generating and scheduling chains, implicit
//! tasks by index, and the region of a task — judged against the model.
//!
//! [`frames`] holds the task frames and task functions.

pub(crate) mod frames;

use crate::known::Fact;
use crate::{expect_rc, Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{Rc, Scope};
use ompd_loader::library::{AnyHandle, Call, TaskH};
use sim_target::model::ThreadId;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "task.curr.kind_matches_model",
        requirements: &["OMPD-HANDLE-TASK-001", "OMPD-ICV-015", "OMPD-ICV-010"],
        summary: "the current task of every thread is implicit or explicit, final or not, as in the model",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(curr_kind),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.generating.chain_matches_model",
        requirements: &["OMPD-HANDLE-TASK-002"],
        summary: "the generating chain from each thread's current task has the model's length and task kinds",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetGeneratingTaskHandle, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(generating_chain),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.generating.initial_task_unavailable",
        requirements: &["OMPD-HANDLE-TASK-002"],
        summary: "the initial task has no generating task: ompd_rc_unavailable",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetTaskInParallel, EntryPoint::GetGeneratingTaskHandle],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(initial_unavailable),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.scheduling.chain_matches_model",
        requirements: &["OMPD-HANDLE-TASK-003"],
        summary: "the scheduling chain from each thread's current task has the model's length and ends with ompd_rc_unavailable",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetSchedulingTaskHandle],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(scheduling_chain),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.in_parallel.every_index",
        requirements: &["OMPD-HANDLE-TASK-004", "OMPD-CMP-004"],
        summary: "task n of a region is an implicit task and equals the current task of member n when that member runs it",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetTaskInParallel, EntryPoint::GetCurrTaskHandle, EntryPoint::TaskHandleCompare],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(task_in_parallel),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.in_parallel.out_of_range",
        requirements: &["OMPD-HANDLE-TASK-005"],
        summary: "task numbers below 0 or at least the team size give ompd_rc_bad_input",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetTaskInParallel],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(out_of_range),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.parallel.of_implicit_task",
        requirements: &["OMPD-HANDLE-PAR-006", "OMPD-CMP-004"],
        summary: "the region of implicit task n of region R compares equal to R",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetTaskInParallel, EntryPoint::GetTaskParallelHandle, EntryPoint::ParallelHandleCompare],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(task_parallel),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.parallel.of_current_task",
        requirements: &["OMPD-HANDLE-PAR-006", "OMPD-CMP-004"],
        summary: "the region of each thread's current task (implicit or explicit) compares equal to the region the model binds the task to, reached as a thread's current region",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetTaskParallelHandle, EntryPoint::ParallelHandleCompare],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(current_task_parallel),
        ..Check::TARGET
    },
];

/// A boolean task ICV (implicit-task-var, final-task-var, ...) of a task handle.
fn task_flag(ctx: &Ctx, task: &TaskH, name: &str) -> Result<bool, String> {
    match ctx.icv(AnyHandle::Task(task), Scope::TASK, name)? {
        Ok((Rc::OK, Some(v))) => Ok(v != 0),
        Ok((rc, _)) => Err(format!("{name}: {rc}")),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

fn curr_kind(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "implicit-task-var and final-task-var equal to the model's",
    );
    for t in ctx.threads() {
        let task = ctx.model.threads[t.0].current_task;
        match ctx.curr_task(ah, t) {
            Ok(h) => {
                let implicit = crate::is_implicit(ctx.model, task);
                match task_flag(ctx, &h, "implicit-task-var") {
                    Ok(v) => j.expect(v == implicit, || {
                        format!("gtid {}: implicit {v}, model {implicit}", t.0)
                    }),
                    Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
                }
                let fin = ctx.model.tasks[task.0].is_final;
                match task_flag(ctx, &h, "final-task-var") {
                    Ok(v) => j.expect(v == fin, || format!("gtid {}: final {v}, model {fin}", t.0)),
                    Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
                }
            }
            Err(e) => j.fail(format!("gtid {}: ompd_get_curr_task_handle: {e}", t.0)),
        }
    }
    j.verdict()
}

/// Walks a chain with `next` from `start`, recording the implicit flag of each task, and the code
/// that ended it. Bounded at `limit` steps.
fn walk<'l>(
    ctx: &Ctx<'l>,
    start: TaskH<'l>,
    limit: usize,
    next: impl Fn(&TaskH<'l>) -> Call<TaskH<'l>>,
) -> (Vec<Result<bool, String>>, Option<String>) {
    let mut kinds = vec![task_flag(ctx, &start, "implicit-task-var")];
    let mut cur = start;
    loop {
        if kinds.len() > limit {
            return (kinds, Some("did not terminate".into()));
        }
        match next(&cur) {
            Ok(n) => {
                kinds.push(task_flag(ctx, &n, "implicit-task-var"));
                cur = n;
            }
            Err(e) => return (kinds, Some(e.to_string())),
        }
    }
}

fn chain_check(ctx: &mut Ctx, scheduling: bool) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let expected = if scheduling {
        "the model's scheduling chain, then unavailable"
    } else {
        "the model's generating chain"
    };
    let mut j = Judge::new(ctx, expected);
    for t in ctx.threads() {
        let cur = ctx.model.threads[t.0].current_task;
        let chain = if scheduling {
            ctx.model.scheduling_chain(cur)
        } else {
            ctx.model.generating_chain(cur)
        };
        let want: Vec<Result<bool, String>> = chain
            .iter()
            .map(|x| Ok(crate::is_implicit(ctx.model, *x)))
            .collect();
        let start = match ctx.curr_task(ah, t) {
            Ok(h) => h,
            Err(e) => {
                j.fail(format!("gtid {}: {e}", t.0));
                continue;
            }
        };
        let (got, end) = if scheduling {
            walk(ctx, start, want.len() + 4, |h| {
                ctx.lib.get_scheduling_task_handle(h)
            })
        } else {
            walk(ctx, start, want.len() + 4, |h| {
                ctx.lib.get_generating_task_handle(h)
            })
        };
        let show = |v: &[Result<bool, String>]| {
            v.iter()
                .map(|k| match k {
                    Ok(true) => "implicit".to_string(),
                    Ok(false) => "explicit".into(),
                    Err(e) => e.clone(),
                })
                .collect::<Vec<_>>()
                .join(" → ")
        };
        j.expect(got == want, || {
            format!(
                "gtid {}: chain [{}], model [{}]; ended by {}",
                t.0,
                show(&got),
                show(&want),
                end.clone().unwrap_or_default()
            )
        });
        if scheduling {
            j.expect(end.as_deref() == Some("unavailable"), || {
                format!(
                    "gtid {}: scheduling chain ended by {end:?}, want unavailable",
                    t.0
                )
            });
        }
    }
    j.verdict()
}

fn generating_chain(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    chain_check(ctx, false)
}

fn scheduling_chain(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    chain_check(ctx, true)
}

fn initial_unavailable(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "unavailable");
    // The initial task is implicit task 0 of the outermost region; reach it from gtid 0.
    // The model always has gtid 0's region and the initial task: a library that cannot reach
    // them fails here too, never skips.
    let mut ph = match ctx.curr_parallel(ah, ThreadId(0)) {
        Ok(p) => p,
        Err(e) => {
            j.fail(format!("current parallel handle of gtid 0: {e}"));
            return j.verdict();
        }
    };
    // The walk ends within the model's regions, or the library's chain never ends.
    let mut steps = 0;
    while let Ok(next) = ctx.lib.get_enclosing_parallel_handle(&ph) {
        ph = next;
        steps += 1;
        if steps > ctx.model.regions.len() {
            j.fail(format!(
                "the enclosing chain from gtid 0's region does not end: ok after {steps} steps, \
                 the model has {} regions",
                ctx.model.regions.len()
            ));
            return j.verdict();
        }
    }
    match ctx.lib.get_task_in_parallel(&ph, 0) {
        Ok(initial) => {
            let got = ctx.lib.get_generating_task_handle(&initial);
            expect_rc(
                &mut j,
                "generating task of the initial task",
                got,
                Rc::UNAVAILABLE,
                &[],
            );
        }
        Err(e) => j.fail(format!("implicit task 0 of the outermost region: {e}")),
    }
    j.verdict()
}

fn task_in_parallel(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "implicit; equal to member n's current task when it runs it",
    );
    for (r, _, ph) in ctx.regions_with_handles(ah, &mut j) {
        let region = &ctx.model.regions[r.0];
        for (n, (member, implicit)) in region
            .members
            .iter()
            .zip(&region.implicit_tasks)
            .enumerate()
        {
            let task = match ctx.lib.get_task_in_parallel(&ph, n as i32) {
                Ok(h) => h,
                Err(e) => {
                    j.fail(format!("region {} task {n}: {e}", r.0));
                    continue;
                }
            };
            match task_flag(ctx, &task, "implicit-task-var") {
                Ok(v) => j.expect(v, || format!("region {} task {n} is not implicit", r.0)),
                Err(e) => j.fail(format!("region {} task {n}: {e}", r.0)),
            }
            if ctx.model.threads[member.0].current_task == *implicit {
                match ctx.curr_task(ah, *member) {
                    Ok(cur) => {
                        let c = ctx.lib.task_compare(&task, &cur);
                        j.expect(c == Ok(0), || {
                            format!(
                                "region {} task {n} vs current task of gtid {}: {}",
                                r.0,
                                member.0,
                                crate::describe(&c)
                            )
                        });
                    }
                    Err(e) => j.fail(format!("gtid {}: {e}", member.0)),
                }
            }
        }
    }
    j.verdict()
}

fn out_of_range(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "bad_input");
    let r = crate::innermost_region(ctx.model, ThreadId(0));
    let size = ctx.model.regions[r.0].members.len() as i32;
    let ph = match ctx.curr_parallel(ah, ThreadId(0)) {
        Ok(p) => p,
        Err(e) => return Verdict::skip(format!("no region for gtid 0: {e}")),
    };
    for n in [-1, size, i32::MIN] {
        let got = ctx.lib.get_task_in_parallel(&ph, n);
        expect_rc(
            &mut j,
            &format!("index {n} of {size}"),
            got.map(|_| ()),
            Rc::BAD_INPUT,
            &[],
        );
    }
    j.verdict()
}

fn current_task_parallel(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "0: the region the task binds to");
    let regions = ctx.regions_with_handles(ah, &mut j);
    for t in ctx.threads() {
        let task = ctx.model.threads[t.0].current_task;
        let want = ctx.model.tasks[task.0].region;
        let Some((_, _, ph)) = regions.iter().find(|(r, _, _)| *r == want) else {
            continue;
        };
        let got = ctx
            .curr_task(ah, t)
            .and_then(|h| ctx.lib.get_task_parallel_handle(&h))
            .and_then(|p| ctx.lib.parallel_compare(ph, &p));
        j.expect(got == Ok(0), || {
            format!(
                "gtid {} (task {}): its region against region {}: {}",
                t.0,
                task.0,
                want.0,
                crate::describe(&got)
            )
        });
    }
    j.verdict_or_skip(|| "no current task binds to a region some thread has current".to_string())
}

fn task_parallel(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "0");
    for (r, _, ph) in ctx.regions_with_handles(ah, &mut j) {
        for n in 0..ctx.model.regions[r.0].members.len() {
            let back = ctx
                .lib
                .get_task_in_parallel(&ph, n as i32)
                .and_then(|task| ctx.lib.get_task_parallel_handle(&task));
            match back {
                Ok(p2) => {
                    let c = ctx.lib.parallel_compare(&ph, &p2);
                    j.expect(c == Ok(0), || {
                        format!("region {} task {n}: {}", r.0, crate::describe(&c))
                    });
                }
                Err(e) => j.fail(format!("region {} task {n}: {e}", r.0)),
            }
        }
    }
    j.verdict()
}
