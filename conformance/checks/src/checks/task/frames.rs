//! Task frames and task functions: the OMPT exit and enter frames of every task the handle API
//! reaches, their flags and segments, and the entry point of every task (the outlined region
//! body of an implicit task, the task routine of an explicit one) — judged against the model.

use crate::known::Fact;
use crate::{Check, Ctx, Judge, Profile, Run, Severity, TaskSubject, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{frame_flag, Address, FrameInfo, Rc, SEGMENT_NONE};
use ompd_loader::library::{Call, Fail, POISON_WORD};
use sim_target::model::{Model, TaskKind};

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "task.frame.matches_model",
        requirements: &["OMPD-FRAME-002", "OMPD-HANDLE-TASK-001", "OMPD-HANDLE-TASK-004", "OMPD-RC-008"],
        summary: "the exit and enter frame addresses of every reachable task are the model's, with segment none; without state tracking needs_state_tracking is accepted",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetSchedulingTaskHandle, EntryPoint::GetTaskInParallel, EntryPoint::GetTaskFrame],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::Frames]),
        run: Run::Worker(frame_addresses),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.frame.flags_written",
        requirements: &["OMPD-FRAME-002", "OMPD-RC-002"],
        summary: "ompd_get_task_frame returning ok writes frame_flag in both exit_frame and enter_frame",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetTaskFrame],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(flags_written),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.frame.flags_valid",
        requirements: &["OMPD-FRAME-003"],
        summary: "the frame_flag of a set frame combines runtime or application with cfa, framepointer or stackaddress",
        severity: Severity::Should,
        entry_points: &[EntryPoint::GetTaskFrame],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(flags_valid),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.function.matches_model",
        requirements: &["OMPD-FRAME-001", "OMPD-HANDLE-TASK-001", "OMPD-HANDLE-TASK-004", "OMPD-RC-008"],
        summary: "the entry point of every reachable task is the model's (region function or task routine) with segment none; a task without outlined code (the initial task) answers unavailable",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetSchedulingTaskHandle, EntryPoint::GetTaskInParallel, EntryPoint::GetTaskFunction],
        since: Profile::Tr2,
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::Functions]),
        run: Run::Worker(function),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "task.function.serialized_region",
        requirements: &["OMPD-FRAME-001", "OMPD-HANDLE-TASK-001"],
        summary: "the implicit task of a serialized region answers its region's function like any other task (the spec names no exception)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetTaskInParallel, EntryPoint::GetTaskFunction],
        since: Profile::Tr2,
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::Functions]),
        run: Run::Worker(function_serialized),
        ..Check::TARGET
    },
];

/// A task subject with the answer of `ompd_get_task_frame` for it: (exit, enter).
type Answered<'l> = (TaskSubject<'l>, Call<(FrameInfo, FrameInfo)>);

/// The frames of every task subject, each with its answer. Failures to reach a task are
/// recorded in `j`.
fn frames<'l>(ctx: &Ctx<'l>, j: &mut Judge) -> Vec<Answered<'l>> {
    let Some(ah) = ctx.aspace.as_ref() else {
        return Vec::new();
    };
    ctx.task_subjects(ah, j)
        .into_iter()
        .map(|s| {
            let got = ctx.lib.get_task_frame(&s.handle);
            (s, got)
        })
        .collect()
}

fn frame_addresses(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::aspace_or_skip!(ctx, EntryPoint::GetTaskFrame);
    let truth = ctx.model.normalized(ctx.arch);
    let mut j = Judge::new(
        ctx,
        if ctx.model.debug_enabled() {
            "ok with the model's exit and enter frame addresses"
        } else {
            "needs_state_tracking (debug-var is off), or the model's frame addresses"
        },
    );
    for (s, got) in frames(ctx, &mut j) {
        let want = &truth.tasks[s.task.0];
        match got {
            Ok((exit, enter)) => {
                let (x, e) = (exit.frame_address.address, enter.frame_address.address);
                j.expect(x == want.exit_frame && e == want.enter_frame, || {
                    format!(
                        "{}: exit {x:#x} enter {e:#x}, model exit {:#x} enter {:#x}",
                        s.label, want.exit_frame, want.enter_frame
                    )
                });
                for (which, f) in [("exit", exit), ("enter", enter)] {
                    let seg = f.frame_address.segment;
                    j.expect(seg == SEGMENT_NONE, || {
                        format!("{}: {which}_frame segment {seg:#x}, not none", s.label)
                    });
                }
            }
            Err(e) => crate::refused(&mut j, ctx, &s.label, &e),
        }
    }
    j.verdict()
}

fn flags_written(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::aspace_or_skip!(ctx, EntryPoint::GetTaskFrame);
    let mut j = Judge::new(
        ctx,
        "frame_flag written in both outputs, and nothing past them",
    );
    for (s, got) in frames(ctx, &mut j) {
        let (exit, enter) = match got {
            Ok(x) => x,
            // Bytes past an output mean its frame_flag, if changed, was overwritten by an
            // over-long write rather than set.
            Err(Fail::Invalid(m)) => {
                j.fail(format!("{}: {m}", s.label));
                continue;
            }
            Err(_) => continue,
        };
        for (which, f) in [("exit", exit), ("enter", enter)] {
            j.expect(f.frame_flag != POISON_WORD, || {
                format!(
                    "{}: {which}_frame.frame_flag was not written (still {POISON_WORD:#x})",
                    s.label
                )
            });
        }
    }
    j.verdict()
}

/// True for a flag combining one of runtime/application with one of cfa/framepointer/
/// stackaddress, and nothing else.
fn valid_flag(flag: i64) -> bool {
    let who = flag & 0x0f;
    let what = flag & !0x0f;
    (who == frame_flag::RUNTIME || who == frame_flag::APPLICATION)
        && [
            frame_flag::CFA,
            frame_flag::FRAMEPOINTER,
            frame_flag::STACKADDRESS,
        ]
        .contains(&what)
}

fn flags_valid(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::aspace_or_skip!(ctx, EntryPoint::GetTaskFrame);
    let mut j = Judge::new(
        ctx,
        "runtime (0x00) or application (0x01) | cfa (0x10), framepointer (0x20) or stackaddress (0x30)",
    );
    for (s, got) in frames(ctx, &mut j) {
        let Ok((exit, enter)) = got else { continue };
        for (which, f) in [("exit", exit), ("enter", enter)] {
            // An unset frame's flag is unspecified (AMBIG-25); an unwritten one is judged by
            // task.frame.flags_written.
            if f.frame_address.address == 0 || f.frame_flag == POISON_WORD {
                continue;
            }
            j.expect(valid_flag(f.frame_flag), || {
                format!(
                    "{}: {which}_frame.frame_flag {:#x} is no valid combination",
                    s.label, f.frame_flag
                )
            });
        }
    }
    j.verdict()
}

/// True for a task of a serialized region (an implicit task of a one-thread non-initial team).
fn in_serialized_region(m: &Model, s: &TaskSubject) -> bool {
    matches!(m.tasks[s.task.0].kind, TaskKind::Implicit { region, .. } if m.is_serialized(region))
}

/// True when the model's function is the all-ones marker of a task without outlined code (the
/// initial task), for which `ompd_rc_unavailable` is the answer.
fn no_outlined_code(ctx: &Ctx, function: u64) -> bool {
    function == u64::MAX >> (64 - 8 * ctx.arch.pointer as u32)
}

/// Judges an entry point answered `ok` against the model's, with segment none.
fn judge_entry(j: &mut Judge, s: &TaskSubject, a: Address, want: u64) {
    j.expect(a.address == want && a.segment == SEGMENT_NONE, || {
        format!(
            "{}: segment {:#x} address {:#x}, model {want:#x} (segment none)",
            s.label, a.segment, a.address
        )
    });
}

/// Judges the entry point of `s` against `truth` (the model as an image can hold it: addresses
/// of the target's width, outer serialized levels running the innermost level's function).
fn judge_function(j: &mut Judge, ctx: &Ctx, truth: &Model, s: &TaskSubject) {
    let want = truth.tasks[s.task.0].function;
    let none = no_outlined_code(ctx, want);
    match ctx.lib.get_task_function(&s.handle) {
        // The all-ones word is the runtime's marker of a task without outlined code (the
        // initial task), not an entry point: the task has none to give (OMPD-FRAME-001).
        Ok(a) if none => j.fail(format!(
            "{}: ok with {:#x}, but the task runs no outlined code (the runtime's marker); unavailable expected",
            s.label, a.address
        )),
        Ok(a) => judge_entry(j, s, a, want),
        Err(Fail::Rc(rc)) if rc == Rc::UNAVAILABLE && none => j.holds(),
        Err(e) => crate::refused(j, ctx, &s.label, &e),
    }
}

fn function(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetTaskFunction);
    let truth = ctx.model.normalized(ctx.arch);
    let mut j = Judge::new(
        ctx,
        "the region function of an implicit task, the task routine of an explicit task",
    );
    for s in ctx.task_subjects(ah, &mut j) {
        if !in_serialized_region(ctx.model, &s) {
            judge_function(&mut j, ctx, &truth, &s);
        } else if let Ok(a) = ctx.lib.get_task_function(&s.handle) {
            // A refusal is graded by task.function.serialized_region; a wrong answer fails here.
            judge_entry(&mut j, &s, a, truth.tasks[s.task.0].function);
        }
    }
    j.verdict()
}

fn function_serialized(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetTaskFunction);
    let truth = ctx.model.normalized(ctx.arch);
    let mut j = Judge::new(ctx, "ok with the serialized region's function");
    for s in ctx.task_subjects(ah, &mut j) {
        if in_serialized_region(ctx.model, &s) {
            judge_function(&mut j, ctx, &truth, &s);
        }
    }
    j.verdict()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_flags_combine_one_of_each_group() {
        assert!(valid_flag(frame_flag::APPLICATION | frame_flag::CFA));
        assert!(valid_flag(frame_flag::RUNTIME | frame_flag::STACKADDRESS));
        assert!(!valid_flag(frame_flag::APPLICATION));
        assert!(!valid_flag(0x02 | frame_flag::CFA));
        assert!(!valid_flag(0x40));
        assert!(!valid_flag(POISON_WORD));
    }
}
