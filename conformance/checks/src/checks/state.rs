//! Thread states: the state enumeration, and every thread's state and wait id against the model
//! (or `ompd_rc_needs_state_tracking` when the runtime tracks no state). On a real runtime the
//! model's state is the word the runtime keeps, which the harness reads itself: a library
//! answers what the runtime's memory shows, and whether that is the program's state is the
//! runtime's part (`runtime.state.*`).

use crate::known::Fact;
use crate::{expect_rc, Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{state, Rc};
use std::collections::BTreeSet;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "state.enumerate.well_formed",
        requirements: &["OMPD-STATE-001", "OMPD-STATE-002", "OMPD-STATE-004", "OMPD-STATE-005", "OMPD-MEM-003"],
        summary: "enumerating from ompt_state_undefined visits known state values once each, with allocated names, and ends with more_enums 0",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateStates],
        real: Some(&[]),
        run: Run::Worker(enumerate),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "state.enumerate.standard_names",
        requirements: &["OMPD-STATE-006"],
        summary: "standard states are named with their OMPT enumerator spelling",
        severity: Severity::Should,
        entry_points: &[EntryPoint::EnumerateStates],
        real: Some(&[]),
        run: Run::Worker(names),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "state.enumerate.unknown_current",
        requirements: &["OMPD-STATE-003"],
        summary: "ompd_enumerate_states with a current_state that is not a state (a gap value, negative, huge) returns ompd_rc_bad_input",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateStates],
        real: Some(&[]),
        run: Run::Worker(unknown_current),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "state.enumerate.after_last",
        requirements: &["OMPD-STATE-002", "OMPD-STATE-004"],
        summary: "ompd_enumerate_states from the last state (the one answered with more_enums 0) claims no further state: any non-ok code, or ok with more_enums 0",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateStates],
        real: Some(&[]),
        run: Run::Worker(after_last),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "state.get.matches_model",
        requirements: &["OMPD-STATE-010", "OMPD-STATE-012", "OMPD-RC-008", "OMPD-RT-007"],
        summary: "every thread's state (and wait id in wait states) is the one the runtime keeps (on a real runtime, the state word the harness reads); without state tracking the answer is needs_state_tracking",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetState],
        real: Some(&[Fact::Threads, Fact::States]),
        run: Run::Worker(get_state),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "state.get.among_enumerated",
        requirements: &["OMPD-STATE-010"],
        summary: "every state ompd_get_state answers is one ompd_enumerate_states lists for the address space",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateStates, EntryPoint::GetThreadHandle, EntryPoint::GetState],
        real: Some(&[Fact::Threads]),
        run: Run::Worker(among_enumerated),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "state.get.null_wait_id",
        requirements: &["OMPD-STATE-011"],
        summary: "ompd_get_state accepts a NULL wait_id and still answers",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetState],
        real: Some(&[Fact::Threads, Fact::States]),
        run: Run::Worker(null_wait_id),
        ..Check::TARGET
    },
];

/// Walks the enumeration: (value, name, more) per step, and the error that stopped it, if any.
/// The steps of an enumeration (value, name, more) and the error that stopped it, if any.
type Walk = (Vec<(i64, String, i64)>, Option<String>);

fn walk(ctx: &Ctx) -> Result<Walk, Verdict> {
    let ah = ctx.aspace()?;
    let mut out = Vec::new();
    let mut cur = state::UNDEFINED;
    loop {
        match ctx.lib.enumerate_states(ah, cur) {
            Ok((next, name, more)) => {
                out.push((next, name, more));
                if more == 0 || out.len() > 1024 {
                    return Ok((out, None));
                }
                cur = next;
            }
            Err(e) => return Ok((out, Some(e.to_string()))),
        }
    }
}

fn enumerate(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let (steps, err) = match walk(ctx) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let mut j = Judge::new(
        ctx,
        "a finite list of distinct state values, each named, ending with more_enums 0",
    );
    j.expect(err.is_none(), || {
        format!(
            "enumeration stopped after {} steps: {}",
            steps.len(),
            err.clone().unwrap_or_default()
        )
    });
    j.expect(steps.len() <= 1024, || {
        "did not terminate within 1024 steps".into()
    });
    let values: BTreeSet<i64> = steps.iter().map(|s| s.0).collect();
    j.expect(values.len() == steps.len(), || {
        "a state value repeats".into()
    });
    for (v, name, _) in &steps {
        j.expect(!name.is_empty(), || {
            format!("state {v:#x} has an empty name")
        });
        j.expect(*v != state::UNDEFINED, || {
            "ompt_state_undefined is enumerated".into()
        });
    }
    j.expect(steps.iter().any(|s| s.0 == state::WORK_SERIAL), || {
        "ompt_state_work_serial is missing".into()
    });
    j.verdict()
}

/// The call after the last item: no states remain after the one answered with more_enums 0,
/// so an ok answer may not say that more do (a tool that goes on would walk the enumeration
/// again, or read past the library's table).
fn after_last(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let (steps, err) = match walk(ctx) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, "a non-ok code, or ok with more_enums 0");
    let last = match (steps.last(), err) {
        (Some((last, _, 0)), None) => *last,
        (_, err) => {
            j.fail(format!(
                "the enumeration has no last state: {}",
                err.unwrap_or_else(|| format!("more_enums stayed 1 for {} steps", steps.len()))
            ));
            return j.verdict();
        }
    };
    match ctx.lib.enumerate_states(ah, last) {
        Ok((next, name, more)) => j.expect(more == 0, || {
            format!(
                "from the last state {last:#x}: ok with {next:#x} ({name}) and more_enums {more}"
            )
        }),
        Err(_) => j.holds(),
    }
    j.verdict()
}

fn names(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let (steps, _) = match walk(ctx) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, "the OMPT enumerator spelling for every standard value");
    for (v, name, _) in &steps {
        if let Some(std) = state::name(*v) {
            j.expect(name == std, || {
                format!("{v:#x} is named {name:?}, not {std:?}")
            });
        }
    }
    j.verdict()
}

fn get_state(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let tracking = ctx.model.debug_enabled();
    let mut j = Judge::new(
        ctx,
        if tracking {
            "the model's state and wait id"
        } else {
            "needs_state_tracking (debug-var is off)"
        },
    );
    for t in ctx.threads() {
        let th = match ctx.thread_handle(ah, t) {
            Ok(h) => h,
            Err(e) => {
                j.fail(format!("gtid {}: no handle: {e}", t.0));
                continue;
            }
        };
        let m = &ctx.model.threads[t.0];
        let got = ctx.lib.get_state(&th, true);
        if !tracking {
            expect_rc(
                &mut j,
                &format!("gtid {}", t.0),
                got,
                Rc::NEEDS_STATE_TRACKING,
                &[],
            );
            continue;
        }
        match got {
            Ok((s, w)) => {
                j.expect(s == m.state, || {
                    format!("gtid {}: state {s:#x}, model {:#x}", t.0, m.state)
                });
                if state::is_wait(m.state) {
                    j.expect(w == Some(m.wait_id), || {
                        format!("gtid {}: wait id {w:x?}, model {:#x}", t.0, m.wait_id)
                    });
                }
            }
            Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
        }
    }
    j.verdict()
}

fn among_enumerated(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let (steps, err) = match walk(ctx) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let listed: BTreeSet<i64> = steps.iter().map(|s| s.0).collect();
    let stopped = err.map_or(String::new(), |e| {
        format!(" (the enumeration stopped: {e})")
    });
    let mut j = Judge::new(ctx, "a state the enumeration lists");
    for t in ctx.threads() {
        let Ok(th) = ctx.thread_handle(ah, t) else {
            continue;
        };
        if let Ok((s, _)) = ctx.lib.get_state(&th, true) {
            j.expect(listed.contains(&s), || {
                format!(
                    "gtid {}: state {s:#x} is not among the {} enumerated{stopped}",
                    t.0,
                    listed.len()
                )
            });
        }
    }
    j.verdict_or_skip(|| {
        "ompd_get_state answered no state (without state tracking, or no thread handle)".into()
    })
}

fn unknown_current(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "bad_input for 0x005, 0x030, -1 and 0x7fffffff");
    for v in [0x005i64, 0x030, -1, 0x7fff_ffff] {
        if state::ALL.iter().any(|(s, _)| *s == v) {
            continue;
        }
        expect_rc(
            &mut j,
            &format!("current_state {v:#x}"),
            ctx.lib.enumerate_states(ah, v),
            Rc::BAD_INPUT,
            &[],
        );
    }
    j.verdict()
}

fn null_wait_id(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    if !ctx.model.debug_enabled() {
        return Verdict::skip("the runtime tracks no state in this scenario");
    }
    let mut j = Judge::new(ctx, "ok with the model's state");
    let t = sim_target::model::ThreadId(0);
    match ctx.thread_handle(ah, t) {
        Ok(th) => match ctx.lib.get_state(&th, false) {
            Ok((s, _)) => j.expect(s == ctx.model.threads[0].state, || format!("state {s:#x}")),
            Err(e) => j.fail(e.to_string()),
        },
        Err(e) => j.fail(format!("no handle: {e}")),
    }
    j.verdict()
}
