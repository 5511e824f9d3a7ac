//! The callback contract, judged after the checks of a unit ran: the library wrote nothing to
//! stdout or stderr itself, the ledger saw no callback contract violation, and the process kept
//! its signal configuration and its threads.

use crate::{Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_serve::callbacks;
use ompd_serve::ledger::Violation;

/// Runs after every other check of a unit but the address-space release.
pub static OUTPUT: &[Check] = &[Check {
    id: "callbacks.contract.no_direct_output",
    requirements: &["OMPD-THR-003"],
    summary:
        "the library writes nothing to stdout or stderr itself (output goes through print_string; 6.0 forbids writing to descriptors it did not open)",
    severity: Severity::MustFrom(Profile::V6_0),
    entry_points: &[EntryPoint::ProcessInitialize],
    real: Some(&[]),
    run: Run::Worker(no_direct_output),
    ..Check::TARGET
}];

/// Runs last in every unit.
pub static CONTRACT: &[Check] = &[
    Check {
        id: "callbacks.contract.no_violations",
        requirements: &["OMPD-CB-001", "OMPD-CB-005", "OMPD-MEM-004", "OMPD-PROC-004", "OMPD-MEM-010", "OMPD-CB-006", "OMPD-CB-011"],
        summary: "the library calls back only inside entry points, with contexts the tool gave it (a thread context only for a thread-local symbol, asked for with an id of the kind's size), and frees only its own blocks once",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ProcessInitialize],
        real: Some(&[]),
        run: Run::Worker(no_violations),
        ..Check::TARGET
    },
    Check {
        id: "callbacks.contract.defined_return_codes",
        requirements: &["OMPD-GEN-003"],
        summary: "every call of the unit answers a code ompd_rc_t defines for the library's profile (0 to 12; 6.0 adds 13, incompatible_handle)",
        severity: Severity::MustFrom(Profile::V5_1),
        entry_points: &[EntryPoint::ProcessInitialize],
        real: Some(&[]),
        run: Run::Worker(defined_return_codes),
        ..Check::TARGET
    },
    Check {
        id: "callbacks.contract.signals_untouched",
        requirements: &["OMPD-THR-002"],
        summary: "loading the library and every check of the unit leave the signal dispositions (ignored, caught) and the thread's signal mask as they were",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ProcessInitialize],
        real: Some(&[]),
        run: Run::Worker(signals_untouched),
        ..Check::TARGET
    },
    Check {
        id: "callbacks.contract.no_threads",
        requirements: &["OMPD-THR-004"],
        summary: "loading the library and every check of the unit start no thread in the tool's process",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ProcessInitialize],
        real: Some(&[]),
        run: Run::Worker(no_threads),
        ..Check::TARGET
    },
];

fn no_direct_output(ctx: &mut Ctx, _: &str) -> Verdict {
    let mut j = Judge::new(
        ctx,
        "no bytes on stdout or stderr during any check of the unit",
    );
    for (check, text) in &ctx.printed {
        j.fail(format!(
            "during {check}: {:?}",
            text.lines().next().unwrap_or_default()
        ));
    }
    held_over_calls(j)
}

fn no_violations(ctx: &mut Ctx, _: &str) -> Verdict {
    let j = Judge::new(ctx, "no callback contract violation");
    judge_violations(j, ctx, "callbacks.contract.no_violations")
}

fn signals_untouched(ctx: &mut Ctx, _: &str) -> Verdict {
    let j = Judge::new(ctx, "the signal dispositions and mask unchanged");
    judge_violations(j, ctx, "callbacks.contract.signals_untouched")
}

fn no_threads(ctx: &mut Ctx, _: &str) -> Verdict {
    let j = Judge::new(ctx, "no thread started");
    judge_violations(j, ctx, "callbacks.contract.no_threads")
}

fn defined_return_codes(ctx: &mut Ctx, _: &str) -> Verdict {
    let last = if ctx.profile >= Profile::V6_0 { 13 } else { 12 };
    let mut j = Judge::new(ctx, format!("codes 0 to {last}"));
    for (rc, (site, calls)) in callbacks::ledger().codes() {
        j.expect((0..=last).contains(rc), || {
            format!("{site} answered {rc} ({calls} calls in all answered it)")
        });
    }
    held_over_calls(j)
}

/// Fails on every violation of the unit that check `id` judges ([`Violation::judged_by`]),
/// those carried from earlier workers of the unit included.
fn judge_violations(mut j: Judge, ctx: &Ctx, id: &str) -> Verdict {
    for (check, v) in &ctx.earlier_violations {
        if Violation::judged_by_debug(v) == id {
            j.fail(format!(
                "{v} (during {check}, in an earlier worker of the unit)"
            ));
        }
    }
    for v in callbacks::ledger().violations() {
        if v.judged_by() == id {
            j.fail(format!("{v:?}"));
        }
    }
    held_over_calls(j)
}

/// The unit itself is the fact checked, so it holds when the library was called in it (this
/// worker made calls into the library, the unit's setup among them); with no call, nothing was
/// judged and the check skips.
fn held_over_calls(mut j: Judge) -> Verdict {
    let calls = callbacks::ledger().calls().len();
    if calls > 0 {
        j.holds();
    }
    j.verdict_or_skip(|| {
        "no call into the library was made in this worker of the unit: nothing to judge".into()
    })
}
