//! The callback contract, judged after the checks of a unit ran: the library wrote nothing to
//! stdout or stderr itself, and the ledger saw no callback contract violation.

use crate::{Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_serve::callbacks;

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
pub static CONTRACT: &[Check] = &[Check {
    id: "callbacks.contract.no_violations",
    requirements: &["OMPD-CB-001", "OMPD-CB-005", "OMPD-MEM-004", "OMPD-PROC-004"],
    summary: "the library calls back only inside entry points, with contexts the tool gave it, and frees only its own blocks once",
    severity: Severity::Must,
    entry_points: &[EntryPoint::ProcessInitialize],
    real: Some(&[]),
    run: Run::Worker(no_violations),
    ..Check::TARGET
}];

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
    let mut j = Judge::new(ctx, "no callback contract violation");
    for (check, v) in &ctx.earlier_violations {
        j.fail(format!(
            "{v} (during {check}, in an earlier worker of the unit)"
        ));
    }
    for v in callbacks::ledger().violations() {
        j.fail(format!("{v:?}"));
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
