//! The runtime's thread states (`runtime.state.*`): the state word a real runtime keeps for each
//! OpenMP thread against the state the program's point implies.
//!
//! A library reads that word and answers it; its own checks (`state.get.*`) judge it against
//! the word ([`Known::state_words`](crate::known::Known::state_words)). Whether the word is the
//! state the program is in is the runtime's part, judged here: a runtime that leaves a thread
//! waiting in `taskwait` in `ompt_state_work_parallel` is reported here, not in the library's
//! state checks. A SHOULD: OMPT lets a runtime report a subset of the states, and OMPD-STATE-013
//! names the barrier states a thread in an explicit barrier may be in.

use crate::known::{Fact, StateWord};
use crate::{Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::state;

/// Checks of this family.
pub static CHECKS: &[Check] = &[Check {
    at: crate::here!(),
    id: "runtime.state.matches_program",
    requirements: &["OMPD-STATE-013"],
    summary: "the state word the runtime keeps for each OpenMP thread is the state its program's point implies: work_parallel in a region's code, work_serial outside, wait_taskwait in taskwait, wait_lock on a lock, wait_critical at a critical section, and in an explicit barrier wait_barrier_explicit (or the generic or implementation barrier state)",
    severity: Severity::Should,
    entry_points: &[],
    since: Profile::Tr2,
    real: Some(&[Fact::StateWords]),
    property: crate::Property::ScenariosOnly,
    run: Run::Worker(matches_program),
    ..Check::TARGET
}];

/// `ompt_state_wait_barrier` (generic; deprecated in 5.1).
const WAIT_BARRIER: i64 = 0x10;
/// `ompt_state_wait_barrier_explicit`.
const WAIT_BARRIER_EXPLICIT: i64 = 0x14;
/// `ompt_state_wait_barrier_implementation` (5.1).
const WAIT_BARRIER_IMPLEMENTATION: i64 = 0x15;

/// The words a runtime may keep for a thread whose program is in state `program`.
fn accepted(program: i64) -> Vec<i64> {
    match program {
        WAIT_BARRIER_EXPLICIT => vec![
            WAIT_BARRIER_EXPLICIT,
            WAIT_BARRIER,
            WAIT_BARRIER_IMPLEMENTATION,
        ],
        other => vec![other],
    }
}

/// A state value with its OMPT name, where it has one.
fn named(value: i64) -> String {
    match state::name(value) {
        Some(name) => format!("{value:#x} ({name})"),
        None => format!("{value:#x}"),
    }
}

/// A thread of the model by its kernel id and its place: its number in its innermost region
/// and that region's nesting level.
fn place(m: &sim_target::model::Model, thread: usize) -> String {
    let Some(t) = m.threads.get(thread) else {
        return format!("gtid {thread}");
    };
    let tid = sim_target::model::ThreadId(thread);
    let n = m.thread_num(t.region, tid).unwrap_or(0);
    let level = m.level(t.region);
    format!(
        "thread {} (thread {n} of its region at level {level})",
        t.native.lwp
    )
}

fn matches_program(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    if !ctx.known.has(Fact::StateWords) {
        return Verdict::skip(ctx.known.reason(Fact::StateWords));
    }
    let words: Vec<StateWord> = ctx.known.state_words.clone();
    let mut j = Judge::new(ctx, "the state the program's point implies");
    for w in &words {
        j.expect(accepted(w.program).contains(&w.word), || {
            format!(
                "{}: the runtime keeps {}, where the program is in {}",
                place(ctx.model, w.thread),
                named(w.word),
                named(w.program)
            )
        });
    }
    j.verdict_or_skip(|| "no OpenMP thread's state word was read".into())
}
