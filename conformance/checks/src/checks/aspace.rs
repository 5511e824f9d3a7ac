//! Address spaces: process initialization on a compatible target and on a process the library
//! cannot serve (a runtime it declines; on the simulated target, no runtime), OpenMP versions, a
//! device the target lacks, and (near the end of every unit) the release of the address space.

use crate::known::Fact;
use crate::{Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::Rc;
use ompd_loader::library::Fail;
use ompd_serve::callbacks::Target;
use sim_target::image::ServedImage;

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
        summary: "ompd_process_initialize on a process the library cannot serve declines it (a non-ok code, never ok): on the simulated target a fresh copy of the library over the unit's image with every symbol withheld, on a real target a runtime that lacks a symbol the library looks up",
        severity: Severity::Must,
        entry_points: &[EntryPoint::ProcessInitialize],
        since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(foreign_runtime),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "aspace.process_initialize.foreign_runtime_code",
        requirements: &["OMPD-PROC-002"],
        summary: "where ompd_process_initialize declines a process it cannot serve (foreign_runtime's processes), its code is ompd_rc_incompatible, the one the text names (another non-ok code warns)",
        severity: Severity::Should,
        entry_points: &[EntryPoint::ProcessInitialize],
        since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(foreign_runtime_code),
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

fn device_unsupported(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
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

fn process_initialize(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
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

/// A process the library cannot serve (OMPD-PROC-002): the answer is non-ok (`ok` fails). On a
/// simulated target, a fresh copy of the library is given a process without the runtime (the
/// unit's image with every symbol withheld, so every lookup fails); on a real target, the unit's
/// own runtime when the library declined it for a symbol the runtime lacks.
fn foreign_runtime(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    declined(ctx, false)
}

/// Where [`foreign_runtime`]'s process is declined, the code is `incompatible` (another code
/// warns; an `ok` answer is the decline check's).
fn foreign_runtime_code(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    declined(ctx, true)
}

/// [`foreign_runtime`] (`code`: [`foreign_runtime_code`]).
fn declined(ctx: &mut Ctx, code: bool) -> Verdict {
    match ctx.target().image() {
        Some(image) => absent_runtime(ctx, image, code),
        None => declined_runtime(ctx, code),
    }
}

/// A fresh copy of the library on the unit's image with every symbol withheld (the image is
/// copied only on the unit that judges it).
fn absent_runtime(ctx: &Ctx, image: &sim_target::image::Image, code: bool) -> Verdict {
    if let Some(skip) = super::layout::elsewhere(ctx) {
        return skip;
    }
    let mut image = image.clone();
    image.symbols.clear();
    let lib = match super::layout::fresh_library(ctx) {
        Ok(l) => l,
        Err(why) => return Verdict::harness_error(format!("no fresh copy of the library: {why}")),
    };
    let answer = lib.process_initialize(Target::leak(image)).map(drop);
    let what = "a process whose every symbol lookup fails (no OpenMP runtime in it)";
    judged(ctx, answer, what, code)
}

/// The unit's real runtime, when the library declined it for a symbol the runtime lacks.
fn declined_runtime(ctx: &Ctx, code: bool) -> Verdict {
    if ctx.setup.declined().is_none() {
        return Verdict::skip(
            "the library did not decline the target for a symbol the runtime lacks",
        );
    }
    match &ctx.setup.process_initialize {
        Some(answer) => judged(
            ctx,
            answer.clone(),
            "a runtime that lacks a symbol it looks up",
            code,
        ),
        None => Verdict::harness_error("setup did not run"),
    }
}

/// The verdict on the answer of `ompd_process_initialize` for `what`, a process it cannot serve:
/// whether it declined, or (`code`) with which code.
fn judged(ctx: &Ctx, answer: Result<(), Fail>, what: &str, code: bool) -> Verdict {
    if !code {
        let mut j = Judge::new(ctx, "a non-ok code");
        match answer {
            Ok(()) => j.fail(format!("ok for {what}")),
            Err(Fail::Rc(_)) => j.holds(),
            Err(e) => j.fail(e.to_string()),
        }
        return j.verdict();
    }
    let mut j = Judge::new(ctx, "incompatible");
    match answer {
        Err(Fail::Rc(Rc::INCOMPATIBLE)) => j.holds(),
        Err(Fail::Rc(rc)) => j.fail(format!("{rc} for {what} (the spec names incompatible)")),
        _ => {}
    }
    j.verdict_or_skip(|| {
        format!("the library did not decline {what}: aspace.process_initialize.foreign_runtime judges its answer")
    })
}

fn omp_version(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
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

fn omp_version_string(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let want = ctx.model.omp_version.to_string();
    let mut j = Judge::new(ctx, format!("an alloc_memory string containing {want}"));
    match ctx.lib.get_omp_version_string(ah) {
        Ok(s) => j.expect(s.contains(&want), || format!("{s:?}")),
        Err(e) => j.fail(e.to_string()),
    }
    j.verdict()
}

fn release(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
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
