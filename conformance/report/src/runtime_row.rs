//! The runtime row. The checks of the runtime (`runtime.*`) judge the OpenMP runtime a target
//! runs, from its own symbols, memory and breakpoints: they call no library, and each library's
//! unit on one target judges them alike. [`fold`] keeps one result per check and place in a row
//! of its own, [`ROW`], so that a library's row holds only what its library did and a runtime's
//! finding shows once, not once per library.
//!
//! A runtime check's result that judged nothing because the library's worker died (crash,
//! timeout, harness error) stays in that library's row: it says something of the worker, not of
//! the runtime.

use crate::{Outcome, ResultRecord};
use std::collections::BTreeMap;

/// The name of the runtime row, where a library's name would be.
pub const ROW: &str = "runtime";

/// The one rule naming the checks of the runtime: their family.
pub fn is_runtime_check(check: &str) -> bool {
    check.starts_with("runtime.")
}

/// Whether `r` moves to the runtime row: a runtime check's result the check judged.
fn folds(r: &ResultRecord) -> bool {
    is_runtime_check(&r.check)
        && !matches!(
            r.outcome,
            Outcome::Crash | Outcome::Timeout | Outcome::HarnessError
        )
}

/// Moves every judged runtime check's result of `keyed` into the runtime row: one result per
/// check and place, at the place in the order of the first, the one that says most
/// ([`Outcome::weight`]: a finding over a pass over a skip, so a library of an older profile
/// that skips a check never hides another unit's verdict). Where the libraries' units judged a
/// check differently (which would be a defect of the harness), the kept result's detail names
/// the other outcomes. Idempotent: the row's own results join their groups again, so a merge
/// of shard reports may fold once more.
pub fn fold<K>(keyed: &mut Vec<(K, ResultRecord)>) {
    let mut first: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut others: BTreeMap<usize, Vec<Outcome>> = BTreeMap::new();
    let mut keep = vec![true; keyed.len()];
    for i in 0..keyed.len() {
        if !folds(&keyed[i].1) {
            continue;
        }
        let key = (keyed[i].1.check.clone(), keyed[i].1.place());
        let Some(&at) = first.get(&key) else {
            first.insert(key, i);
            continue;
        };
        keep[i] = false;
        let (kept, new) = (keyed[at].1.outcome, keyed[i].1.outcome);
        if new.weight() > kept.weight() {
            // The position stays the first's (`at < i`); the record is the weightier one.
            let (head, tail) = keyed.split_at_mut(i);
            std::mem::swap(&mut head[at].1, &mut tail[0].1);
        }
        if kept != new && ![kept, new].contains(&Outcome::Skip) {
            others.entry(at).or_default().push(keyed[i].1.outcome);
        }
    }
    for (&at, outcomes) in &others {
        let note = outcomes.iter().map(|o| o.as_str()).collect::<Vec<_>>();
        let detail = &mut keyed[at].1.detail;
        detail.push_str(&format!(
            " (another library's unit judged it {})",
            note.join(", ")
        ));
    }
    for &at in first.values() {
        keyed[at].1.library = ROW.into();
    }
    let mut flags = keep.into_iter();
    keyed.retain(|_| flags.next().unwrap_or(true));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(library: &str, check: &str, outcome: Outcome) -> ResultRecord {
        ResultRecord {
            library: library.into(),
            check: check.into(),
            requirements: vec!["OMPD-BP-001".into()],
            scenario: "nested".into(),
            arch: "lp64-le".into(),
            layout: None,
            outcome,
            expected: String::new(),
            actual: String::new(),
            detail: String::new(),
            flaky: false,
            target: "live".into(),
            real: None,
            gate: None,
            replay: None,
        }
    }

    fn rows(keyed: &[(u32, ResultRecord)]) -> Vec<(u32, &str, &str, Outcome)> {
        keyed
            .iter()
            .map(|(k, r)| (*k, r.library.as_str(), r.check.as_str(), r.outcome))
            .collect()
    }

    #[test]
    fn a_runtime_check_shows_once_in_the_runtime_row_and_library_checks_stay() {
        let bp = "runtime.breakpoints.defined";
        let mut keyed = vec![
            (0, rec("a", bp, Outcome::Skip)),
            (1, rec("a", "task.frame.flags_written", Outcome::Pass)),
            (2, rec("b", bp, Outcome::Fail)),
            (3, rec("b", "task.frame.flags_written", Outcome::Fail)),
            (4, rec("c", bp, Outcome::Fail)),
        ];
        fold(&mut keyed);
        assert_eq!(
            rows(&keyed),
            [
                (0, ROW, bp, Outcome::Fail),
                (1, "a", "task.frame.flags_written", Outcome::Pass),
                (3, "b", "task.frame.flags_written", Outcome::Fail),
            ]
        );
        assert_eq!(keyed[0].1.detail, "", "a skip is no disagreement");
        let again = keyed.clone();
        fold(&mut keyed);
        assert_eq!(keyed, again, "folding is idempotent");
    }

    #[test]
    fn a_dead_worker_stays_in_its_library_row_and_disagreements_are_named() {
        let dll = "runtime.dll_locations.valid_vector";
        let mut keyed = vec![
            (0, rec("a", dll, Outcome::Pass)),
            (1, rec("b", dll, Outcome::Crash)),
            (2, rec("c", dll, Outcome::Fail)),
        ];
        fold(&mut keyed);
        assert_eq!(
            rows(&keyed),
            [(0, ROW, dll, Outcome::Fail), (1, "b", dll, Outcome::Crash)]
        );
        assert_eq!(
            keyed[0].1.detail,
            " (another library's unit judged it pass)"
        );
    }

    #[test]
    fn places_apart_stay_apart() {
        let dll = "runtime.dll_locations.valid_vector";
        let mut core = rec("a", dll, Outcome::Pass);
        core.target = "core".into();
        let mut keyed = vec![(0, rec("a", dll, Outcome::Pass)), (1, core)];
        fold(&mut keyed);
        assert_eq!(keyed.len(), 2);
        assert!(keyed.iter().all(|(_, r)| r.library == ROW));
    }
}
