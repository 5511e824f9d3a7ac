//! The OpenMP 5.2 device routines: the thread-id kinds of an address space, and the address
//! space of a thread. They run on libraries of the 5.2 profile on, and on any library that
//! exports them (Intel's reports 201811 and exports both).

use crate::known::Fact;
use crate::{Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::{EntryPoint, Generation};

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "device.thread_id_kinds.well_formed",
        requirements: &["OMPD-PROC-020", "OMPD-PROC-022"],
        summary: "ompd_get_device_thread_id_kinds on the host handle: ok, at least one kind, the kinds and the sizes in two separate tool-owned blocks of count entries",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetDeviceThreadIdKinds],
        since: Generation::V5_2,
        real: Some(&[]),
        run: Run::Worker(kinds_well_formed),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "device.thread_id_kinds.round_trip",
        requirements: &["OMPD-PROC-021"],
        summary: "every listed (kind, size) pair the suite can name an id of maps every OpenMP thread to a handle and back to the same id",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetDeviceThreadIdKinds, EntryPoint::GetThreadHandle, EntryPoint::GetThreadId],
        since: Generation::V5_2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(kinds_round_trip),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "device.from_thread.identity",
        requirements: &["OMPD-HANDLE-THREAD-030"],
        summary: "ompd_get_device_from_thread gives, for every OpenMP thread, the very address-space handle ompd_process_initialize returned",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetDeviceFromThread],
        since: Generation::V5_2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(from_thread_identity),
        ..Check::TARGET
    },
];

fn kinds_well_formed(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "ok with count >= 1 and two separate blocks of count entries",
    );
    match ctx.lib.get_device_thread_id_kinds(ah) {
        Ok(pairs) => j.expect(!pairs.is_empty(), || "count 0 for the host".into()),
        Err(e) => j.fail(e.to_string()),
    }
    j.verdict()
}

fn kinds_round_trip(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let pairs = match ctx.lib.get_device_thread_id_kinds(ah) {
        Ok(p) => p,
        // device.thread_id_kinds.well_formed judges the refusal.
        Err(e) => return Verdict::skip(format!("no kinds listed: {e}")),
    };
    let mut j = Judge::new(
        ctx,
        "a handle for every thread by every listed kind, and the same id back",
    );
    for (kind, size) in pairs {
        for t in ctx.threads() {
            let id = ctx.thread_id(t, kind);
            if !crate::knows_kind(kind) {
                continue;
            }
            let what = format!("gtid {} by kind {kind}", t.0);
            if id.len() as u64 != size {
                j.fail(format!(
                    "{what}: listed size {size}, the kind's ids have {} bytes",
                    id.len()
                ));
                continue;
            }
            match ctx.lib.get_thread_handle(ah, kind, &id) {
                Ok(th) => match ctx.lib.get_thread_id(&th, kind, id.len()) {
                    Ok(back) => j.expect(back == id, || {
                        format!("{what}: got {back:02x?}, want {id:02x?}")
                    }),
                    Err(e) => j.fail(format!("{what}: ompd_get_thread_id: {e}")),
                },
                Err(e) => j.fail(format!("{what}: ompd_get_thread_handle: {e}")),
            }
        }
    }
    j.verdict_or_skip(|| "no listed kind is one the suite can name an id of (pthread, lwp)".into())
}

fn from_thread_identity(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "the address-space handle itself, for every thread");
    for t in ctx.threads() {
        let th = match ctx.thread_handle(ah, t) {
            Ok(h) => h,
            Err(e) => {
                j.fail(format!("gtid {}: no handle: {e}", t.0));
                continue;
            }
        };
        match ctx.lib.get_device_from_thread(&th) {
            Ok(a) => j.expect(a == ah.addr(), || {
                format!("gtid {}: {a:#x}, not the handle {:#x}", t.0, ah.addr())
            }),
            Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
        }
    }
    j.verdict()
}
