//! `ompd_process_initialize` under faults for a library whose instance opens one address space
//! only (lifecycle.second_process.own_answers judges that): each call goes to a fresh copy of the
//! library, on the unit the checks that load fresh copies run on.

use super::{callbacks, describe, judge, noted, Answer, Kind, Subjects, Target};
use crate::{Ctx, Verdict};
use ompd_abi::EntryPoint;
use ompd_loader::library::{AspaceH, Call};

impl<'l> Subjects<'_, 'l> {
    /// These subjects, sending `ompd_process_initialize` to fresh copies of the library when
    /// the unit's instance refuses a second address space.
    pub(super) fn with_copies_if_needed(mut self, ctx: &Ctx<'l>) -> Self {
        self.copies = self
            .fresh
            .is_some_and(|t| ctx.lib.process_initialize(t).is_err());
        self
    }

    /// With `copies`: these subjects with the blocks a copy's fault-free call keeps.
    fn with_kept(mut self, ctx: &Ctx<'l>) -> Self {
        if let Some(target) = self.fresh.filter(|_| self.copies) {
            let mark = callbacks::ledger().mark();
            let _ = initialize_copy(ctx, target);
            let l = callbacks::ledger();
            self.kept = l.since(mark).new_live.iter().map(|b| b.size).collect();
        }
        self
    }
}

/// `ompd_process_initialize` of `target` by a fresh copy of the unit's library, its answer the
/// OpenMP version the address space reports (the address space and the copy go before it
/// returns); `Err` when no copy can be made.
pub(super) fn initialize_copy<'l>(
    ctx: &Ctx,
    target: &'static Target,
) -> Result<Call<Answer<'l>>, String> {
    let copy = crate::checks::layout::fresh_library(ctx)?;
    let got = copy.process_initialize(target).map(|ah| {
        let version = describe(&copy.get_omp_version(&ah));
        Answer::Text(format!("an address space of OpenMP version {version}"))
    });
    Ok(got)
}

/// `ompd_process_initialize` judged on fresh copies of the library, one per call, on the unit
/// the checks that load fresh copies run on ([`crate::checks::layout::elsewhere`]).
pub(super) fn on_copies(ctx: &Ctx, ah: &AspaceH, s: Subjects, kind: Kind) -> Verdict {
    if let Some(skip) = crate::checks::layout::elsewhere(ctx) {
        return skip;
    }
    let s = s.with_kept(ctx);
    let v = judge(ctx, ah, &s, EntryPoint::ProcessInitialize, kind);
    noted(
        v,
        "on fresh copies of the library, one per call: the unit's instance opens no second address space",
    )
}
