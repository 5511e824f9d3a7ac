//! Address spaces: process initialization on a compatible target and the answer on a runtime
//! the library declines, OpenMP version queries, the device initialization of a device the
//! target lacks, and (near the end of every unit) the release of the address-space handle.

use crate::known::Fact;
use crate::{Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::Rc;
use ompd_loader::library::Fail;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "aspace.process_initialize.compatible_target",
        requirements: &["OMPD-PROC-001", "OMPD-INIT-021", "OMPD-GEN-006"],
        summary: "ompd_initialize and ompd_process_initialize succeed on a compatible runtime, in another process than the library's and reached only through the callbacks, and give a non-NULL handle",
        severity: Severity::Must,
        entry_points: &[EntryPoint::Initialize, EntryPoint::ProcessInitialize],
        since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(process_initialize),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "aspace.process_initialize.foreign_runtime",
        requirements: &["OMPD-PROC-002"],
        summary: "ompd_process_initialize on a runtime the library does not serve (it lacks a symbol the library looks up) gives ompd_rc_incompatible (other non-ok codes warn)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ProcessInitialize],
        since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(foreign_runtime),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "aspace.omp_version.matches_model",
        requirements: &["OMPD-ASP-001", "OMPD-CB-008", "OMPD-RC-001"],
        summary: "ompd_get_omp_version reports the runtime's OpenMP version in yyyymm form (on a target of the other byte order only if converted with device_to_host)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetOmpVersion],
        real: Some(&[Fact::OmpVersion]),
        run: Run::Worker(omp_version),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "aspace.omp_version_string.tool_owned",
        requirements: &["OMPD-ASP-002", "OMPD-MEM-003"],
        summary: "ompd_get_omp_version_string returns a string allocated with alloc_memory that names the same version",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetOmpVersionString],
        real: Some(&[]),
        run: Run::Worker(omp_version_string),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "aspace.device_initialize.unsupported_device",
        requirements: &["OMPD-PROC-010", "OMPD-PROC-013"],
        summary: "ompd_device_initialize for a device the target does not have gives no handle (ompd_rc_unsupported)",
        severity: Severity::Should,
        entry_points: &[EntryPoint::DeviceInitialize],
        real: Some(&[]),
        run: Run::Worker(device_unsupported),
        ..Check::TARGET
    },
];

/// Runs last in every unit but the callback contract: after every other handle of the unit is gone.
pub static RELEASE: &[Check] = &[Check {
    at: crate::here!(),
    id: "aspace.release.ok",
    requirements: &["OMPD-REL-001", "OMPD-OWN-003"],
    summary: "releasing the unit's address-space handle, after every other handle of it is gone, returns ok",
    severity: Severity::Must,
    entry_points: &[EntryPoint::RelAddressSpaceHandle],
    since: Profile::Tr2,
    real: Some(&[]),
    run: Run::Worker(release),
    ..Check::TARGET
}];

fn device_unsupported(ctx: &mut Ctx, _: &str) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    // A context the library has never seen, standing for a CUDA device of this host-only target.
    let device = match ctx.fresh_target() {
        Ok(t) => t,
        Err(v) => return v,
    };
    let mut j = Judge::new(
        ctx,
        "no device handle for a device the target does not have: unsupported (other errors warn)",
    );
    match ctx
        .lib
        .device_initialize(ah, device, ompd_abi::device_kind::CUDA, &[0u8; 8])
    {
        Ok(_) => j.fail("ok: a device handle for a CUDA device the host-only target does not have"),
        Err(Fail::Rc(Rc::UNSUPPORTED)) => j.holds(),
        Err(Fail::Rc(rc)) => j.allowed(
            "OMPD-PROC-010",
            format!("{rc} (the spec names unsupported)"),
        ),
        Err(e) => j.fail(e.to_string()),
    }
    j.verdict()
}

fn process_initialize(ctx: &mut Ctx, _: &str) -> Verdict {
    if let Some(why) = ctx.setup.declined() {
        return Verdict::skip(format!(
            "{why}; aspace.process_initialize.foreign_runtime judges the answer"
        ));
    }
    let mut j = Judge::new(ctx, "ok with a handle");
    match (&ctx.setup.initialize, &ctx.setup.process_initialize) {
        (Some(Err(e)), _) => j.fail(format!("ompd_initialize: {e}")),
        (_, Some(Err(e))) => j.fail(format!("ompd_process_initialize: {e}")),
        (_, Some(Ok(()))) => j.expect(ctx.aspace.is_some(), || "no handle".into()),
        _ => j.fail("setup did not run"),
    }
    j.verdict()
}

/// A runtime the library declined (it looked up symbols the target does not define): the
/// answer must be `incompatible` (OMPD-PROC-002; another non-ok code warns).
fn foreign_runtime(ctx: &mut Ctx, _: &str) -> Verdict {
    if ctx.setup.declined().is_none() {
        return Verdict::skip(
            "the library did not decline the target for a symbol the runtime lacks",
        );
    }
    let mut j = Judge::new(ctx, "incompatible (other non-ok codes warn)");
    match &ctx.setup.process_initialize {
        Some(Err(Fail::Rc(Rc::INCOMPATIBLE))) => j.holds(),
        Some(Err(Fail::Rc(rc))) => j.allowed(
            "OMPD-PROC-002",
            format!("{rc} (the spec names incompatible)"),
        ),
        Some(Err(e)) => j.fail(e.to_string()),
        _ => j.fail("setup did not run"),
    }
    j.verdict()
}

fn omp_version(ctx: &mut Ctx, _: &str) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, format!("ok {}", ctx.model.omp_version));
    match ctx.lib.get_omp_version(ah) {
        Ok(v) => {
            let (year, month) = (v / 100, v % 100);
            j.expect(year >= 1997 && (1..=12).contains(&month), || {
                format!("{v} is not yyyymm")
            });
            j.expect(v == ctx.model.omp_version, || format!("reported {v}"));
        }
        Err(e) => j.fail(e.to_string()),
    }
    j.verdict()
}

fn omp_version_string(ctx: &mut Ctx, _: &str) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let want = ctx.model.omp_version.to_string();
    let mut j = Judge::new(ctx, format!("an alloc_memory string containing {want}"));
    match ctx.lib.get_omp_version_string(ah) {
        Ok(s) => j.expect(s.contains(&want), || format!("{s:?}")),
        Err(e) => j.fail(e.to_string()),
    }
    j.verdict()
}

fn release(ctx: &mut Ctx, _: &str) -> Verdict {
    if let Err(v) = ctx.aspace() {
        return v;
    }
    let ah = ctx.aspace.take().expect("checked just above");
    let mut j = Judge::new(ctx, "ok");
    let rc = ah.release();
    j.expect(rc.is_ok(), || {
        format!("ompd_rel_address_space_handle: {rc}")
    });
    j.verdict()
}
