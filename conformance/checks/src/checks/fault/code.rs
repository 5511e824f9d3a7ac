//! The code that follows a callback failure, one check per fault kind (`fault.code.<kind>`,
//! SHOULD). Which non-ok code a routine gives after a failed callback is a matter the text
//! leaves partly open: the codes it names pass (the callback's own, `callback_error`, `error`,
//! `device_read_error` for reads, `unavailable` for a missing symbol, OMPD-CB-031; `nomem` for an
//! allocation, the SHOULD part of OMPD-MEM-006; `stale_handle`, OMPD-CB-032), and any other
//! non-ok code is a SHOULD-level finding. The MUST checks `fault.<routine>.<kind>` grade the same
//! codes as a warning among their MUST facts; these checks give that fact a SHOULD-level home of
//! its own across every routine of the fault table, each injected at the first and the last
//! callback of the kind its fault-free call made (the ICV getters with every ICV they answer).
//! An `ok` answer is the MUST checks' to judge; a check that saw no non-ok answer skips.

use super::{planned, Kind, Subjects, ROWS};
use crate::known::Fact;
use crate::{Check, Ctx, Input, Judge, Property, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_loader::library::{AspaceH, Fail};

/// One check: the fault kind, the requirements that name its codes, and the codes in words.
macro_rules! code_check {
    ($kind:ident [$($req:literal),+] $codes:literal) => {
        Check {
            at: crate::here!(),
            id: concat!("fault.code.", stringify!($kind)),
            requirements: &[$($req),+],
            summary: concat!(
                "every routine of the fault table answers an injected ",
                stringify!($kind),
                " failure (at the first and the last such callback) with ok or a code the text names: ",
                $codes
            ),
            severity: Severity::Should,
            entry_points: CALLED,
            real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
            property: Property::ScenariosOnly,
            input: Input::Provoking,
            arg: crate::Arg::FaultEverywhere(Kind::by_id(stringify!($kind))),
            run: Run::Worker(run),
            ..Check::TARGET
        }
    };
}

/// Every entry point the checks call: the routines of the fault table (a test holds the two
/// lists equal), the handles they hold, and the releases of what the routines answer. A check
/// that cannot call one of them (not exported, quarantined) is reported as such.
const CALLED: &[EntryPoint] = with_held!(;
    EntryPoint::ProcessInitialize,
    EntryPoint::RelAddressSpaceHandle,
    EntryPoint::GetOmpVersion,
    EntryPoint::GetOmpVersionString,
    EntryPoint::GetThreadInParallel,
    EntryPoint::GetThreadId,
    EntryPoint::GetEnclosingParallelHandle,
    EntryPoint::GetTaskParallelHandle,
    EntryPoint::GetGeneratingTaskHandle,
    EntryPoint::GetSchedulingTaskHandle,
    EntryPoint::GetTaskInParallel,
    EntryPoint::GetTaskFunction,
    EntryPoint::GetTaskFrame,
    EntryPoint::EnumerateStates,
    EntryPoint::GetState,
    EntryPoint::GetDisplayControlVars,
    EntryPoint::RelDisplayControlVars,
    EntryPoint::EnumerateIcvs,
    EntryPoint::GetIcvFromScope,
    EntryPoint::GetIcvStringFromScope,
    EntryPoint::GetToolData
);

/// The checks, one per fault kind.
pub static CHECKS: &[Check] = &[
    code_check!(read ["OMPD-CB-031"] "the callback's, callback_error, device_read_error or error"),
    code_check!(short_read ["OMPD-CB-031"] "the callback's, callback_error, device_read_error or error"),
    code_check!(symbol ["OMPD-CB-031"] "the callback's, callback_error, error or unavailable (incompatible from ompd_process_initialize)"),
    code_check!(alloc ["OMPD-MEM-006"] "nomem"),
    code_check!(conversion ["OMPD-CB-031"] "the callback's, callback_error or error"),
    code_check!(thread_context ["OMPD-CB-031"] "the callback's, callback_error or error"),
    code_check!(stale_handle ["OMPD-CB-032"] "stale_handle"),
];

fn run(ctx: &mut Ctx, arg: crate::Arg) -> Verdict {
    let crate::Arg::FaultEverywhere(kind) = arg else {
        return Verdict::harness_error(format!("a fault-code row gives {arg:?}"));
    };
    let ah = crate::aspace_or_skip!(ctx);
    if ctx.model.threads.is_empty() {
        return Verdict::skip("the scenario has no OpenMP thread");
    }
    let mut j = Judge::new(ctx, "ok, or a code the text names for the failed callback");
    for entry in routines() {
        if ctx.lib.api.serves(entry) && !entry.other_form_in(ctx.profile) {
            routine(ctx, ah, entry, kind, &mut j);
        }
    }
    j.verdict_or_skip(|| {
        format!(
            "no routine answered an injected {} failure with a non-ok code (an ok answer is judged by fault.<routine>.{})",
            kind.callbacks(),
            kind.id()
        )
    })
}

/// The routines of the fault table, in its order.
fn routines() -> impl Iterator<Item = EntryPoint> {
    ROWS.iter().filter_map(|row| match row[0].arg {
        crate::Arg::Fault(_, entry) => Some(entry),
        _ => None,
    })
}

/// Injects `kind` at the first and the last callback of the kind `entry`'s fault-free call made
/// (for an ICV getter, with every ICV it answers), and judges each non-ok answer's code into `j`.
fn routine(ctx: &Ctx, ah: &AspaceH, entry: EntryPoint, kind: Kind, j: &mut Judge) {
    let Ok(t) = ctx.subject_thread(entry) else {
        return;
    };
    let held = ctx.thread_handles(ah, t);
    let icvs = match entry {
        EntryPoint::GetIcvFromScope | EntryPoint::GetIcvStringFromScope => {
            let string = entry == EntryPoint::GetIcvStringFromScope;
            let answered = held.answered_icvs(ctx, ah, string);
            let named = |(name, icv)| (format!(" ({name})"), Some(icv));
            answered.into_iter().map(named).collect()
        }
        _ => vec![(String::new(), None)],
    };
    for (label, icv) in icvs {
        let s = Subjects {
            icv,
            ..Subjects::new(ctx, &held, t, entry)
        };
        // Fresh copies of the library are loaded on one unit only.
        if s.copies && crate::checks::layout::elsewhere(ctx).is_some() {
            return;
        }
        at_both_ends(ctx, ah, (&s, &label), entry, kind, j);
    }
}

/// Injects `kind` at the first and the last callback of the kind the fault-free call of `entry`
/// with the subjects `s` made, and judges each non-ok answer's code into `j` (each fact led by
/// `entry` and `label`).
fn at_both_ends(
    ctx: &Ctx,
    ah: &AspaceH,
    (s, label): (&Subjects, &str),
    entry: EntryPoint,
    kind: Kind,
    j: &mut Judge,
) {
    // Two fault-free calls: the first fills whatever the library caches, the second's census
    // places the failures.
    let census =
        match planned(ctx, ah, s, entry, None).and_then(|_| planned(ctx, ah, s, entry, None)) {
            Ok((Ok(_), census)) => census,
            _ => return,
        };
    let n = kind.count(&census);
    if n == 0 {
        return;
    }
    let mut at = vec![1, n];
    at.dedup();
    for k in at {
        let (fault, what) = kind.fault(&census, k);
        let Ok((Err(Fail::Rc(rc)), c)) = planned(ctx, ah, s, entry, Some(fault)) else {
            continue;
        };
        let Some(own) = c.injected.first().map(|i| i.rc) else {
            continue;
        };
        if kind.named(entry, own, rc) {
            j.holds();
        } else {
            j.fail(format!("{entry}{label}: {what} ({own}) → {rc}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_declare_every_routine_of_the_fault_table() {
        for e in routines() {
            assert!(CALLED.contains(&e), "{e} is called but not declared");
        }
        assert_eq!(routines().count(), ROWS.len());
    }
}
