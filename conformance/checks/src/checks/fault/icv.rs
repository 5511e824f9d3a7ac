//! The ICV getters under faults: every ICV the getter answers is injected in turn, not only the
//! first (each ICV reads the runtime along its own path, and a path that takes a failed read for
//! a value hides behind one that does not).

use super::{judge_into, noted, Counts, Judged, Kind, Subjects};
use crate::{Ctx, Judge, Verdict};
use ompd_abi::EntryPoint;
use ompd_loader::library::AspaceH;

/// Judges `entry` (an ICV getter) under failures of `kind` for every ICV it answers through the
/// subjects' handles, each ICV's facts led by its name.
pub(super) fn every_icv(
    ctx: &Ctx,
    ah: &AspaceH,
    base: Subjects,
    entry: EntryPoint,
    kind: Kind,
) -> Verdict {
    let string = entry == EntryPoint::GetIcvStringFromScope;
    let icvs = base.held.answered_icvs(ctx, ah, string);
    let mut j = Judge::new(ctx, kind.expected());
    let (mut injected, mut nothing, mut sum) = (Vec::new(), Vec::new(), Counts::default());
    for (name, icv) in icvs {
        let s = Subjects {
            icv: Some(icv),
            thread_id: base.thread_id.clone(),
            kept: base.kept.clone(),
            ..base
        };
        let mut one = Judge::new(ctx, "");
        match judge_into(ctx, ah, &s, entry, kind, &mut one) {
            Judged::Injected(n) => {
                sum = sum.plus(n);
                injected.push(name.clone());
            }
            Judged::Nothing(why) => nothing.push(format!("{name}: {why}")),
        }
        j.absorb(one, &name);
    }
    if injected.is_empty() {
        return j.verdict_or_skip(|| match (nothing.is_empty(), ctx.icvs_before_break(ah)) {
            (false, _) => nothing.join("; "),
            (true, Err(why)) => {
                format!("no ICV enumerated ({why}): icv.enumerate.well_formed judges it")
            }
            (true, Ok(_)) => "no ICV with a handle of its scope to pass".into(),
        });
    }
    let note = format!(
        "{} ICV(s) injected ({}), {} not; over them {}",
        injected.len(),
        injected.join(", "),
        nothing.len(),
        sum.note(kind)
    );
    noted(j.verdict(), &note)
}
