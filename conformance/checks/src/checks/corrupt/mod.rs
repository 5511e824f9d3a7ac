//! Corrupted images: the torn and wild runtime state a debugger meets in a core file taken
//! mid-update or after a wild write. One check per corruption kind of
//! [`sim_target::image::corrupt`] (parent cycles of teams, tasks and serialized-region records;
//! NULL, wild and misaligned pointers; huge counts; unterminated strings), all run by one driver.
//!
//! Each check draws [`CASES`] corruptions of the unit's image with a proptest [`TestRunner`]
//! seeded from the unit (reproducible), and for each one:
//! 1. takes a thread handle on the intact image ("before"), chosen by the model so that
//!    navigating from it reaches the corrupted object;
//! 2. serves the corrupted copy of the image through the unit's own target
//!    ([`ompd_serve::callbacks::Target::substitute`]) and walks every entry point that reaches
//!    the object from that thread: the thread lookup ("after"), ids, state, tool data, ICVs
//!    (values and strings), the enclosing-region, generating-task and scheduling-task chains (each
//!    bounded by the model's length plus one), threads and tasks of each region, frames, task
//!    functions, compares, and for globals the address-space ICVs and display control variables;
//! 3. judges every call (asking the intact image again where needed) and restores it:
//!    - more target-access callbacks than the ledger's budget in one call fails (the library
//!      does not terminate on the corrupted state; OMPD-HANDLE-PAR-005 and OMPD-HANDLE-TASK-002
//!      require chain walks to terminate);
//!    - `ok` with an invalid output (unwritten, NULL, an unterminated string) fails
//!      (OMPD-RC-002);
//!    - `ok` after one of the call's own reads failed (the pointer was wild, the string had no
//!      terminator) must give the answer the same call, with the same arguments, gives on the
//!      intact image without a failed read (values equal, handles comparing equal), else it
//!      fails (OMPD-CB-030);
//!    - any other non-ok passes, and `ok` on intact data passes (a cycle of valid objects is
//!      indistinguishable from a deep but valid chain within one call);
//!    - a crash is attributed by the supervisor;
//! 4. releases every handle and string; a block left live warns (OMPD-RC-006).
//!
//! The corrupted image is served through the unit's own address space rather than a second
//! `ompd_process_initialize` on a fresh copy: Intel's library cannot initialize a second address
//! space in one process (compare.*.other_address_space skips there), and the layout caches the
//! libraries key by context stay valid because no layout word is ever corrupted. A failing case is
//! shrunk by proptest to the simplest corruption that still fails, named in the detail with the
//! routine.

mod plan;
mod walk;

use crate::known::Fact;
use crate::{Check, Ctx, Input, Property, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_loader::library::{AspaceH, Fail};
use ompd_report::Outcome;
use ompd_serve::callbacks;
use ompd_serve::ledger::Violation;
use plan::Plan;
use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use sim_target::image::corrupt::{self, Corruption, Kind};
use sim_target::image::ServedImage;
use std::cell::RefCell;
use walk::{Ids, Probe, Walk};

/// Corruptions drawn per unit and kind (the family runs on every scenario × arch × layout unit).
pub const CASES: u32 = 6;

/// Shrink steps allowed when a case fails.
const MAX_SHRINK_ITERS: u32 = 8;

/// One check of the family: `"kind" [requirements] "summary"`. Each table row is its own
/// invocation, so the check records the row's line.
macro_rules! corrupt {
    ($kind:literal [$($req:literal),+] $summary:literal) => {
        Check {
            at: crate::here!(),
            id: concat!("corrupt.", $kind),
            requirements: &[$($req),+],
            summary: $summary,
            severity: Severity::Must,
            entry_points: WALKED,
            real: Some(&[Fact::Image]),
            property: Property::OwnCases,
            input: Input::Provoking,
            arg: crate::Arg::Corruption(Kind::by_id($kind)),
            run: Run::Worker(run),
            ..Check::TARGET
        }
    };
}

/// Checks of this family, one per corruption kind.
pub static CHECKS: &[Check] = &[
    corrupt!("parent_cycle.team" ["OMPD-HANDLE-PAR-005", "OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-006"]
        "with a team's t_parent pointing at the team itself or a team nested in it, every call terminates within the callback budget and answers ok only with the intact answer or from intact data"),
    corrupt!("parent_cycle.task" ["OMPD-HANDLE-TASK-002", "OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-006"]
        "with a task's td_parent pointing at the task itself or a task it generated, every call terminates within the callback budget and answers ok only with the intact answer or from intact data"),
    corrupt!("parent_cycle.lwt" ["OMPD-HANDLE-PAR-005", "OMPD-HANDLE-TASK-002", "OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-006"]
        "with a serialized-region record's parent pointing at itself or a record inside it, every call terminates within the callback budget and answers ok only with the intact answer or from intact data"),
    corrupt!("pointer.null" ["OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-002", "OMPD-RC-006"]
        "with a NULL pointer anywhere in the runtime's object graph, no call crashes or exceeds the callback budget, and ok comes only with the intact answer or from intact data"),
    corrupt!("pointer.wild" ["OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-002", "OMPD-RC-006"]
        "with a pointer of the object graph aimed at unmapped memory or an object of another type, no call crashes or exceeds the callback budget, and ok comes only with the intact answer or from intact data"),
    corrupt!("pointer.misaligned" ["OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-002", "OMPD-RC-006"]
        "with a pointer of the object graph off by 1 to 7 bytes, no call crashes or exceeds the callback budget, and ok comes only with the intact answer or from intact data"),
    corrupt!("count.huge" ["OMPD-CB-030", "OMPD-CB-034", "OMPD-MEM-006", "OMPD-RC-002", "OMPD-RC-006"]
        "with a huge team size, level, thread count, list length or environment-block size, no call crashes or exceeds the callback budget, and ok comes only with the intact answer or from intact data"),
    corrupt!("string.unterminated" ["OMPD-CB-007", "OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-002", "OMPD-RC-006"]
        "with a string the library reads running to the end of its region without a NUL, no call crashes, and ok comes only with the intact answer and a terminated string"),
];

/// Every entry point a walk may call (any kind's walk reaches any of them: the thread, its
/// current region and task are probed whatever the corrupted object), plus the releases.
const WALKED: &[EntryPoint] = &[
    EntryPoint::GetThreadHandle,
    EntryPoint::GetThreadId,
    EntryPoint::GetState,
    EntryPoint::GetToolData,
    EntryPoint::ThreadHandleCompare,
    EntryPoint::EnumerateIcvs,
    EntryPoint::GetIcvFromScope,
    EntryPoint::GetIcvStringFromScope,
    EntryPoint::GetCurrParallelHandle,
    EntryPoint::GetEnclosingParallelHandle,
    EntryPoint::GetThreadInParallel,
    EntryPoint::GetTaskInParallel,
    EntryPoint::ParallelHandleCompare,
    EntryPoint::GetCurrTaskHandle,
    EntryPoint::GetGeneratingTaskHandle,
    EntryPoint::GetSchedulingTaskHandle,
    EntryPoint::GetTaskParallelHandle,
    EntryPoint::GetTaskFrame,
    EntryPoint::GetTaskFunction,
    EntryPoint::TaskHandleCompare,
    EntryPoint::GetDisplayControlVars,
    EntryPoint::RelDisplayControlVars,
    EntryPoint::RelThreadHandle,
    EntryPoint::RelParallelHandle,
    EntryPoint::RelTaskHandle,
];

/// What the family expects, in one line.
const EXPECTED: &str = "every call on the corrupted image terminates within the callback budget; ok only from intact reads or with the intact image's answer, never with an invalid output";

fn run(ctx: &mut Ctx, arg: crate::Arg) -> Verdict {
    let crate::Arg::Corruption(kind) = arg else {
        return Verdict::harness_error(format!("a corruption row gives {arg:?}"));
    };
    let ah = crate::aspace_or_skip!(ctx);
    let strategy = match strategy(ctx, kind) {
        Ok(s) => s,
        Err(skip) => return skip,
    };
    // Everything cached per unit is filled before the first mark, so it never counts as a leak.
    let ids = Ids::new(ctx, ah);
    let tally = RefCell::new(Tally::default());
    let ended = drive(ctx, ah, &ids, &strategy, &seed(ctx, kind.id()), &tally);
    conclude(ended, tally.into_inner())
}

/// The corruptions of `kind` the unit's image offers, or the skip verdict saying why the check
/// does not apply.
fn strategy(ctx: &Ctx, kind: Kind) -> Result<BoxedStrategy<Corruption>, Verdict> {
    // Like every family, a check skips when an entry point it calls is not exported (the
    // inventory checks judge the exports).
    let exported = ctx.lib.api.exported();
    if let Some(missing) = WALKED.iter().find(|e| !exported.contains(e)) {
        return Err(Verdict::skip(format!("{missing} is not exported")));
    }
    if ctx.model.threads.is_empty() {
        return Err(Verdict::skip("the scenario has no OpenMP thread"));
    }
    let target = ctx.target();
    let Some(image) = target.image() else {
        return Err(Verdict::skip(format!(
            "corrupting memory needs a simulated image, not a {} target",
            target.kind().name()
        )));
    };
    corrupt::strategy(image, kind).ok_or_else(|| {
        Verdict::skip(format!(
            "the image offers no {} corruption (e.g. no serialized-region record)",
            kind.id()
        ))
    })
}

/// How the cases of one check ended.
enum Ended {
    /// Every case held.
    Held,
    /// A case failed: the simplest failing corruption and its finding.
    Failed(Corruption, String),
    /// The generator could not draw a case.
    GaveUp(String),
}

/// Draws [`CASES`] corruptions from `strategy` and runs each; the first that fails is shrunk.
fn drive(
    ctx: &Ctx,
    ah: &AspaceH,
    ids: &Ids,
    strategy: &BoxedStrategy<Corruption>,
    seed: &[u8; 32],
    tally: &RefCell<Tally>,
) -> Ended {
    // The cases and the shrinking are driven here rather than by `TestRunner::run`, which
    // prints to stderr when it stops shrinking (that output would count as the library's).
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, seed),
    );
    for _ in 0..CASES {
        let mut tree = match strategy.new_tree(&mut runner) {
            Ok(t) => t,
            Err(why) => return Ended::GaveUp(why.to_string()),
        };
        let first = tree.current();
        if let Err(why) = run_case(ctx, ah, ids, &first, tally) {
            let (c, why) = shrink(&mut *tree, (first, why), |c| {
                run_case(ctx, ah, ids, c, tally)
            });
            return Ended::Failed(c, why);
        }
    }
    Ended::Held
}

/// The verdict of a check from how its cases ended and what they saw.
fn conclude(ended: Ended, tally: Tally) -> Verdict {
    match ended {
        Ended::Failed(c, why) => Verdict::new(
            Outcome::Fail,
            EXPECTED,
            why,
            format!(
                "minimal corruption: {c}; {} calls judged over {} corrupted images (drawn and shrunk)",
                tally.calls, tally.cases
            ),
        ),
        Ended::GaveUp(why) => Verdict::new(
            Outcome::HarnessError,
            EXPECTED,
            "",
            format!("the corruption generator gave up: {why}"),
        ),
        Ended::Held if tally.cases == 0 => {
            Verdict::skip("no corrupted image reached a thread handle on the intact image")
        }
        Ended::Held => match tally.leaks.first() {
            Some(leak) => Verdict::new(
                Outcome::Warn,
                EXPECTED,
                leak.clone(),
                format!(
                    "{} of {} corrupted images left a block live (OMPD-RC-006)",
                    tally.leaks.len(),
                    tally.cases
                ),
            ),
            None => Verdict::new(
                Outcome::Pass,
                EXPECTED,
                format!(
                    "{} calls judged over {} corrupted images",
                    tally.calls, tally.cases
                ),
                "",
            ),
        },
    }
}

/// Shrinks a failing case: simpler corruptions are tried while they still fail, at most
/// [`MAX_SHRINK_ITERS`] of them; returns the simplest failing one with its finding.
fn shrink(
    tree: &mut dyn ValueTree<Value = Corruption>,
    mut best: (Corruption, String),
    mut fails: impl FnMut(&Corruption) -> Result<(), String>,
) -> (Corruption, String) {
    if !tree.simplify() {
        return best;
    }
    for _ in 0..MAX_SHRINK_ITERS {
        let c = tree.current();
        let more = match fails(&c) {
            Err(why) => {
                best = (c, why);
                tree.simplify()
            }
            Ok(()) => tree.complicate(),
        };
        if !more {
            break;
        }
    }
    best
}

/// FNV-1a of `text`: stable across Rust releases, unlike the standard hasher.
fn fnv(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A seed for the unit: the same unit draws the same corruptions in every run.
fn seed(ctx: &Ctx, kind: &str) -> [u8; 32] {
    let h = fnv(&format!(
        "{kind}/{}/{}/{}",
        ctx.scenario,
        ctx.arch.name(),
        ctx.policy
    ));
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&(h ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes());
    }
    out
}

/// What the cases of one check saw (cases that passed, calls judged, leaks).
#[derive(Default)]
struct Tally {
    cases: usize,
    calls: usize,
    leaks: Vec<String>,
}

/// Runs one corrupted image; `Err` is the finding (routine and what it did).
fn run_case(
    ctx: &Ctx,
    ah: &AspaceH,
    ids: &Ids,
    c: &Corruption,
    tally: &RefCell<Tally>,
) -> Result<(), String> {
    let target = ctx.target();
    let plan = Plan::new(ctx.model, c.object);
    let mark = callbacks::ledger().mark();
    let verdict = {
        let Ok(before) = ctx.thread_handle(ah, plan.thread) else {
            return Ok(());
        };
        let Some(image) = target.image() else {
            return Err("harness: corrupting memory needs a simulated image".to_string());
        };
        let mut memory = image.memory.clone();
        if let Err(e) = c.apply(&mut memory) {
            return Err(format!("harness: the corruption does not apply: {e}"));
        }
        let served = target.substitute(memory);
        let mut walk = Walk::new(ctx, ah, ids, &before, &served);
        walk.run(&plan);
        tally.borrow_mut().calls += walk.probes.len();
        judge(&walk.probes)
        // The walk's handles and strings are released here, then the intact image is back.
    };
    let leak = {
        let l = callbacks::ledger();
        let live = l.since(mark).new_live;
        live.first().map(|b| {
            format!(
                "{} block(s) still live after releasing every handle and string of the walk \
                 (first: {} bytes from {}) on {c}",
                live.len(),
                b.size,
                b.site
            )
        })
    };
    let mut t = tally.borrow_mut();
    t.cases += 1;
    if let (Some(leak), Ok(())) = (leak, &verdict) {
        t.leaks.push(leak);
    }
    verdict
}

/// Judges every call of a walk over the corrupted image.
fn judge(probes: &[Probe]) -> Result<(), String> {
    for p in probes {
        if let Some(v) = p.violations.first() {
            return Err(match v {
                Violation::BudgetExceeded { cap, .. } => format!(
                    "{}: more than {cap} target-access callbacks in one call (it does not terminate on the corrupted state)",
                    p.label
                ),
                other => format!("{}: callback contract violation {other:?}", p.label),
            });
        }
        if let Err(Fail::Invalid(m)) = &p.got {
            return Err(format!("{}: ok with an invalid output: {m}", p.label));
        }
        if let Some(Err(why)) = &p.reference {
            return Err(format!(
                "{}: ok after {} failed read(s), but {why}",
                p.label, p.failed_reads
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::walk::Answer;
    use super::*;
    use ompd_abi::Rc;
    use ompd_loader::library::Call;

    #[test]
    fn one_check_per_kind() {
        let kinds: Vec<crate::Arg> = CHECKS.iter().map(|c| c.arg).collect();
        let all: Vec<crate::Arg> = Kind::ALL.map(crate::Arg::Corruption).to_vec();
        assert_eq!(kinds, all);
        for (c, k) in CHECKS.iter().zip(Kind::ALL) {
            assert_eq!(c.id, format!("corrupt.{}", k.id()));
        }
    }

    fn probe(got: Call<Answer>, failed_reads: u64) -> Probe {
        Probe {
            label: "parallel[0] ompd_get_thread_in_parallel(0)".into(),
            got,
            failed_reads,
            violations: Vec::new(),
            reference: None,
        }
    }

    #[test]
    fn judging_fails_on_budget_invalid_output_and_wrong_answers_after_failed_reads() {
        let ok = || Ok(Answer::Value("ok Some(4)".into()));
        // Non-ok passes, and ok on intact data passes.
        assert!(judge(&[probe(Err(Fail::Rc(Rc::ERROR)), 2), probe(ok(), 0)]).is_ok());
        // Ok after a failed read passes only with the intact image's answer.
        let mut same = probe(ok(), 1);
        same.reference = Some(Ok(()));
        assert!(judge(&[same]).is_ok());
        let mut wrong = probe(ok(), 1);
        wrong.reference = Some(Err("it answers 0 where the intact image answers 4".into()));
        let e = judge(&[wrong]).unwrap_err();
        assert!(
            e.contains("thread_in_parallel(0): ok after 1 failed read"),
            "{e}"
        );
        let mut looping = probe(Err(Fail::Rc(Rc::ERROR)), 0);
        looping.violations.push(Violation::BudgetExceeded {
            site: EntryPoint::GetThreadInParallel.name(),
            callback: "read_memory",
            cap: 10,
        });
        assert!(judge(&[looping])
            .unwrap_err()
            .contains("does not terminate"));
        let invalid = probe(Err(Fail::Invalid("thread handle is NULL".into())), 0);
        assert!(judge(&[invalid]).unwrap_err().contains("invalid output"));
    }

    #[test]
    fn seeds_differ_by_unit_and_reproduce() {
        let a = fnv("pointer.wild/serial/lp64-le/natural");
        assert_eq!(a, fnv("pointer.wild/serial/lp64-le/natural"));
        assert_ne!(a, fnv("pointer.wild/serial/lp64-le/packed"));
    }
}
