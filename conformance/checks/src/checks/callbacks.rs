//! The callback contract, judged after the checks of a unit ran: the library wrote nothing to
//! stdout or stderr itself, the ledger saw no callback contract violation, the process kept its
//! signal configuration and its threads, and the library's code called the process heap
//! manager in no entry point (the worker's heap watch, `ompd_loader::library::heap_watch`).

use crate::{Check, Ctx, Judge, Profile, Property, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_serve::callbacks;
use std::collections::BTreeMap;

/// Runs after every other check of a unit but the address-space release.
pub static OUTPUT: &[Check] = &[Check {
    at: crate::here!(),
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
        at: crate::here!(),
        id: "callbacks.contract.no_violations",
        requirements: &["OMPD-CB-001", "OMPD-CB-005", "OMPD-MEM-004", "OMPD-PROC-004", "OMPD-MEM-010", "OMPD-CB-006", "OMPD-CB-011"],
        summary: "the library calls back only inside entry points, with contexts the tool gave it (a thread context only for a thread-local symbol, asked for with an id of the kind's size), and frees only its own blocks once",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ProcessInitialize],
        since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(no_violations),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
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
        at: crate::here!(),
        id: "callbacks.contract.signals_untouched",
        requirements: &["OMPD-THR-002"],
        summary: "loading the library and every check of the unit leave the signal dispositions (ignored, caught) and the thread's signal mask as they were",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ProcessInitialize],
        since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(signals_untouched),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "callbacks.contract.descriptors_untouched",
        requirements: &["OMPD-THR-003"],
        summary: "loading the library and every check of the unit leave the tool's file descriptors as they were: the library closes, replaces or reuses none it did not open (6.0: it may not write to a descriptor it did not open, and a closed or replaced one sends the tool's own writes elsewhere)",
        severity: Severity::MustFrom(Profile::V6_0),
        entry_points: &[EntryPoint::ProcessInitialize],
        since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(descriptors_untouched),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "callbacks.contract.no_direct_heap",
        requirements: &["OMPD-MEM-001"],
        summary: "inside no entry point does the library's own code call the process heap manager (malloc and its family, the strdup family, global operator new/delete): its dynamic memory comes from alloc_memory",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ProcessInitialize],
        since: Profile::Tr2,
        real: Some(&[]),
        // It judges the calls of the unit's other checks: a generated case shrunk with this
        // check alone would make none and read as a flake.
        property: Property::ScenariosOnly,
        run: Run::Worker(no_direct_heap),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
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

fn no_direct_output(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
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

fn no_violations(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let j = Judge::new(ctx, "no callback contract violation");
    judge_violations(j, ctx, "callbacks.contract.no_violations")
}

fn signals_untouched(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let j = Judge::new(ctx, "the signal dispositions and mask unchanged");
    judge_violations(j, ctx, "callbacks.contract.signals_untouched")
}

fn descriptors_untouched(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let j = Judge::new(ctx, "the tool's file descriptors unchanged");
    judge_violations(j, ctx, "callbacks.contract.descriptors_untouched")
}

fn no_threads(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let j = Judge::new(ctx, "no thread started");
    judge_violations(j, ctx, "callbacks.contract.no_threads")
}

/// The heap watch's tally of this worker and the `DirectHeap` violations carried from earlier
/// workers of the unit, as one fact naming every entry point with the allocators it called and
/// how often; holds over the calls made while the watch was armed, and skips (saying why) when it
/// never was.
fn no_direct_heap(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let watch = match ompd_loader::library::heap_watch() {
        Ok(w) => w,
        Err(why) => return Verdict::skip(why),
    };
    let mut j = Judge::new(
        ctx,
        "no call of the heap manager from the library's code during any entry point",
    );
    let mut seen: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for (_, v) in &ctx.earlier_violations {
        if v.judged_by != "callbacks.contract.no_direct_heap" {
            continue;
        }
        match &v.heap {
            Some(h) => {
                let by = seen.entry(h.site.as_str()).or_default();
                *by.entry(h.allocator.as_str()).or_default() += h.calls;
            }
            None => j.fail(format!("{} (in an earlier worker of the unit)", v.text)),
        }
    }
    for ((site, allocator), (calls, _)) in &watch.tally {
        *seen.entry(site).or_default().entry(allocator).or_default() += calls;
    }
    if !seen.is_empty() {
        j.fail(heap_summary(&seen));
    }
    if watch.judged > 0 {
        j.holds();
    }
    j.verdict_or_skip(|| {
        "no call into the library was made in this worker while the heap watch was armed: nothing to judge".into()
    })
}

/// One line: the heap-manager calls of every entry point, by allocator.
fn heap_summary(seen: &BTreeMap<&str, BTreeMap<&str, u64>>) -> String {
    let total: u64 = seen.values().flat_map(|a| a.values()).sum();
    let sites: Vec<String> = seen
        .iter()
        .map(|(site, by)| {
            let calls: Vec<String> = by.iter().map(|(a, n)| format!("{a} {n}")).collect();
            format!("{site} ({})", calls.join(", "))
        })
        .collect();
    format!(
        "the library's code called the heap manager {total} time(s) inside {} entry point(s): {}",
        seen.len(),
        sites.join("; ")
    )
}

fn defined_return_codes(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
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
        if v.judged_by == id {
            j.fail(format!(
                "{} (during {check}, in an earlier worker of the unit)",
                v.text
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

#[cfg(test)]
mod tests {
    use super::*;
    use ompd_serve::ledger::Violation;

    #[test]
    fn a_carried_heap_violation_keeps_its_calls_and_its_check() {
        let v = Violation::DirectHeap {
            site: "ompd_get_thread_handle",
            allocator: "operator new",
            calls: 6,
            during: "thread.handle.by_pthread_id".into(),
        };
        let wire = serde_json::to_string(&v.carried()).expect("serializes");
        let back: ompd_serve::ledger::Carried = serde_json::from_str(&wire).expect("reads back");
        assert_eq!(back.judged_by, "callbacks.contract.no_direct_heap");
        assert_eq!(back.text, format!("{v:?}"));
        let heap = back.heap.expect("the heap calls travel");
        assert_eq!(
            (heap.site.as_str(), heap.allocator.as_str(), heap.calls),
            ("ompd_get_thread_handle", "operator new", 6)
        );
    }

    #[test]
    fn the_summary_names_every_entry_point_and_allocator() {
        let mut seen: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
        seen.entry("ompd_b").or_default().insert("malloc", 2);
        seen.entry("ompd_a").or_default().insert("operator new", 3);
        seen.entry("ompd_a")
            .or_default()
            .insert("operator delete", 3);
        assert_eq!(
            heap_summary(&seen),
            "the library's code called the heap manager 8 time(s) inside 2 entry point(s): \
             ompd_a (operator delete 3, operator new 3); ompd_b (malloc 2)"
        );
    }
}
