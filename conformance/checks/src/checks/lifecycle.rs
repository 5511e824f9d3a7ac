//! Lifecycles of address spaces in one tool process, as a debugger of several processes (the
//! ranks of an MPI job, or a process and a core file of another build) holds them: a second
//! address space opened while the first is open, over the same runtime state lowered for
//! another pointer width, byte order and layout, must answer from its own target, and the
//! first must go on answering from its own (a library that keeps type sizes, symbol addresses
//! or a context from the first `ompd_process_initialize` in process-wide state fails here);
//! releasing it and initializing another one works again, leaves the thread handles the first
//! holds intact, and leaves no block behind. On a
//! real target (a live process, a core file) the second address space is a copy of the first.

use crate::ctx::native_id_bytes;
use crate::known::Fact;
use crate::{Check, Ctx, Judge, Property, Run, Severity, Verdict};
use ompd_abi::{thread_id_kind, EntryPoint};
use ompd_loader::library::AspaceH;
use ompd_serve::arch::Arch;
use ompd_serve::callbacks::{self, Target};
use sim_target::image::ServedImage;
use sim_target::layout::Policy;
use sim_target::model::{Model, ThreadId};

/// The entry points a survey of one address space calls.
const SURVEY: &[EntryPoint] = &[
    EntryPoint::ProcessInitialize,
    EntryPoint::GetOmpVersion,
    EntryPoint::GetThreadHandle,
    EntryPoint::RelAddressSpaceHandle,
];

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "lifecycle.second_process.own_answers",
        requirements: &["OMPD-PROC-001", "OMPD-PROC-004"],
        summary: "a second address space, opened while the first is open, over the same runtime state lowered for another pointer width, byte order and layout (on a real target, a copy of it), answers from its own target (the OpenMP version, a handle for every thread by its pthread id), and the first still answers from its own",
        severity: Severity::Must,
        entry_points: SURVEY,
        real: Some(&[Fact::Threads]),
        // The law is the lifecycle's, not the runtime state's: the scenarios judge it.
        property: Property::ScenariosOnly,
        run: Run::Worker(second_process),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lifecycle.reinitialize.after_release",
        requirements: &["OMPD-PROC-001", "OMPD-REL-001"],
        summary: "an extra address space over a copy of the unit's target, released while the unit's stays open, can be initialized again over a new context, and each answers from its target",
        severity: Severity::Must,
        entry_points: SURVEY,
        real: Some(&[Fact::Threads]),
        // The law is the lifecycle's, not the runtime state's: the scenarios judge it.
        property: Property::ScenariosOnly,
        run: Run::Worker(reinitialize),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lifecycle.release.held_handles_intact",
        requirements: &["OMPD-HANDLE-THREAD-008", "OMPD-REL-001"],
        summary: "thread handles of the unit's address space, made before a second address space was opened and released, still answer the ids they answered before and compare equal to new handles of the same threads",
        severity: Severity::Must,
        entry_points: &[
            EntryPoint::ProcessInitialize,
            EntryPoint::GetThreadHandle,
            EntryPoint::GetThreadId,
            EntryPoint::ThreadHandleCompare,
            EntryPoint::RelAddressSpaceHandle,
        ],
        real: Some(&[Fact::Threads]),
        // The law is the lifecycle's, not the runtime state's: the scenarios judge it.
        property: Property::ScenariosOnly,
        run: Run::Worker(held_handles),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lifecycle.release.no_leak",
        requirements: &["OMPD-MEM-009"],
        summary: "initializing, surveying and releasing a second address space leaves no alloc_memory block behind (after a first round fills any process-wide cache)",
        severity: Severity::Should,
        entry_points: SURVEY,
        real: Some(&[Fact::Threads]),
        // The law is the lifecycle's, not the runtime state's: the scenarios judge it.
        property: Property::ScenariosOnly,
        run: Run::Worker(no_leak),
        ..Check::TARGET
    },
];

/// Another architecture than `a`: the other pointer width and the other byte order.
fn other_arch(a: Arch) -> Arch {
    match (a.pointer, a == Arch::LP64_LE || a == Arch::ILP32_LE) {
        (8, true) => Arch::ILP32_BE,
        (8, false) => Arch::ILP32_LE,
        (_, true) => Arch::LP64_BE,
        (_, false) => Arch::LP64_LE,
    }
}

/// Another layout than `p`, one every architecture supports.
fn other_policy(p: Policy) -> Policy {
    match p {
        Policy::Packed => Policy::Natural,
        _ => Policy::Packed,
    }
}

/// The unit's runtime state lowered for another architecture and layout, served as a new
/// target the library has never seen; on a real target, a copy of it (the same architecture).
fn other_target(ctx: &Ctx) -> Result<(&'static Target, Arch), Verdict> {
    if ctx.target().image().is_none() {
        return Ok((ctx.fresh_target()?, ctx.arch));
    }
    let arch = other_arch(ctx.arch);
    let image = sim_target::image::lower(ctx.model, arch, other_policy(ctx.policy))
        .map_err(|e| Verdict::harness_error(format!("cannot lower the second target: {e}")))?;
    Ok((Target::leak_source(Box::new(image)), arch))
}

/// What one address space answers, judged against the model lowered for `arch`: the OpenMP
/// version and a handle for every thread by its pthread id (what a debugger asks first of a
/// process it attaches to; the answers through a handle are the other families' to judge).
/// Each wrong answer is one failed fact naming `which` address space.
fn survey(j: &mut Judge, ctx: &Ctx, ah: &AspaceH, arch: Arch, which: &str) {
    let truth: Model = ctx.model.normalized(arch);
    // A real runtime's version is known only where its OpenMP API shows it.
    if ctx.known.has(Fact::OmpVersion) {
        match ctx.lib.get_omp_version(ah) {
            Ok(v) => j.expect(v == truth.omp_version, || {
                format!(
                    "{which}: OpenMP version {v}, the runtime's is {}",
                    truth.omp_version
                )
            }),
            Err(e) => j.fail(format!("{which}: ompd_get_omp_version: {e}")),
        }
    }
    for (i, t) in truth.threads.iter().enumerate() {
        let id = native_id_bytes(&truth, arch, &t.native, thread_id_kind::PTHREAD);
        if let Err(e) = ctx.lib.get_thread_handle(ah, thread_id_kind::PTHREAD, &id) {
            j.fail(format!("{which}: thread {i} by pthread id {id:02x?}: {e}"));
        }
    }
}

/// Opens an address space over a new target of another architecture, or says why it cannot
/// judge (a refusal of the second `ompd_process_initialize` is itself a finding).
fn open_other<'l>(ctx: &Ctx<'l>, j: &mut Judge) -> Result<Option<(AspaceH<'l>, Arch)>, Verdict> {
    let (target, arch) = other_target(ctx)?;
    match ctx.lib.process_initialize(target) {
        Ok(ah) => Ok(Some((ah, arch))),
        Err(e) => {
            j.fail(format!(
                "ompd_process_initialize of a second address space ({}): {e}",
                arch.name()
            ));
            Ok(None)
        }
    }
}

fn second_process(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "both address spaces answer from their own targets, whichever was opened or asked first",
    );
    let (ah2, arch2) = match open_other(ctx, &mut j) {
        Ok(Some(x)) => x,
        Ok(None) => return j.verdict(),
        Err(v) => return v,
    };
    survey(&mut j, ctx, &ah2, arch2, "the second address space");
    survey(
        &mut j,
        ctx,
        ah,
        ctx.arch,
        "the first address space, after the second opened",
    );
    survey(
        &mut j,
        ctx,
        &ah2,
        arch2,
        "the second address space, asked again",
    );
    let rc = ah2.release();
    j.expect(rc.is_ok(), || {
        format!("releasing the second address space: {rc}")
    });
    survey(
        &mut j,
        ctx,
        ah,
        ctx.arch,
        "the first address space, after the second was released",
    );
    j.verdict()
}

fn reinitialize(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "a new address space after a release answers from its target",
    );
    // Copies of the unit's own target: the other architecture is the second-process check's.
    for round in ["first", "second"] {
        let target = match ctx.fresh_target() {
            Ok(t) => t,
            Err(v) => return v,
        };
        let ah2 = match ctx.lib.process_initialize(target) {
            Ok(ah) => ah,
            Err(e) => {
                j.fail(format!(
                    "ompd_process_initialize of the {round} extra address space: {e}"
                ));
                return j.verdict();
            }
        };
        survey(
            &mut j,
            ctx,
            &ah2,
            ctx.arch,
            &format!("the {round} extra address space"),
        );
        let rc = ah2.release();
        j.expect(rc.is_ok(), || {
            format!("releasing the {round} extra address space: {rc}")
        });
    }
    j.verdict()
}

fn held_handles(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(
        ctx,
        EntryPoint::GetThreadId,
        EntryPoint::ThreadHandleCompare
    );
    let kind = thread_id_kind::PTHREAD;
    // The handles kept, with the id each answered before: one per thread the library finds and
    // answers (finding them and their ids are other checks' law; here only the lifecycle is).
    let held: Vec<_> = (0..ctx.model.threads.len())
        .filter_map(|i| {
            let id = ctx.thread_id(ThreadId(i), kind);
            let h = ctx.lib.get_thread_handle(ah, kind, &id).ok()?;
            let before = ctx.lib.get_thread_id(&h, kind, id.len()).ok()?;
            Some((i, h, id, before))
        })
        .collect();
    if held.is_empty() {
        return Verdict::skip("the library gives no thread handle and id to keep");
    }
    let mut j = Judge::new(
        ctx,
        "every kept thread handle answers the id it answered before and compares 0 with a new handle of its thread",
    );
    let (ah2, _) = match open_other(ctx, &mut j) {
        Ok(Some(x)) => x,
        Ok(None) => return j.verdict(),
        Err(v) => return v,
    };
    let rc = ah2.release();
    j.expect(rc.is_ok(), || {
        format!("releasing the second address space: {rc}")
    });
    for (i, h, id, before) in &held {
        match ctx.lib.get_thread_id(h, kind, id.len()) {
            Ok(got) => j.expect(&got == before, || {
                format!("thread {i}'s kept handle answers id {got:02x?}, before {before:02x?}")
            }),
            Err(e) => j.fail(format!("thread {i}'s kept handle, ompd_get_thread_id: {e}")),
        }
        let Ok(new) = ctx.lib.get_thread_handle(ah, kind, id) else {
            continue;
        };
        match ctx.lib.thread_compare(h, &new) {
            Ok(c) => j.expect(c == 0, || {
                format!("thread {i}'s kept handle compares {c} with a new one")
            }),
            Err(e) => j.fail(format!(
                "thread {i}'s kept handle, ompd_thread_handle_compare: {e}"
            )),
        }
    }
    j.verdict()
}

/// The library's blocks live now.
fn live_blocks() -> usize {
    callbacks::ledger().live().count()
}

fn no_leak(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "as many live blocks after the round as before it");
    // The answers are judged by the other checks of the family: only the blocks count here.
    let mut answers = Judge::new(ctx, "");
    let mut round = || -> Result<(), Verdict> {
        let (target, arch) = other_target(ctx)?;
        let ah2 = ctx.lib.process_initialize(target).map_err(|e| {
            Verdict::skip(format!(
                "a second ompd_process_initialize failed ({e}); \
                 lifecycle.second_process.own_answers judges it"
            ))
        })?;
        survey(&mut answers, ctx, &ah2, arch, "the extra address space");
        let _ = ah2.release();
        Ok(())
    };
    // The first round may fill a process-wide cache, which stays.
    if let Err(v) = round() {
        return v;
    }
    let before = live_blocks();
    if let Err(v) = round() {
        return v;
    }
    let after = live_blocks();
    j.expect(after <= before, || {
        format!(
            "{} block(s) stay live after ompd_process_initialize, a survey and \
             ompd_rel_address_space_handle ({before} before, {after} after)",
            after - before
        )
    });
    j.verdict()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_arch_differs_in_width_and_byte_order() {
        for a in Arch::ALL {
            let o = other_arch(a);
            assert_ne!(o.pointer, a.pointer, "{}", a.name());
            assert_ne!(o.endian, a.endian, "{}", a.name());
            assert!(other_policy(Policy::Intel2026_2).supports(o));
        }
    }
}
