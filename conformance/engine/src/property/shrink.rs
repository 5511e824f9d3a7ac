//! Shrinking the failing generated cases, every failing check at once. Each check is shrunk as
//! proptest shrinks a value alone: from its first failing case, `simplify` after a candidate that
//! still fails it, `complicate` after one that does not, at most its population's share of
//! `max_shrink_iters` steps. That walk depends only on the check's answers, so checks that
//! failed on the same case of the same population and have answered alike so far stand on the
//! same candidate: such a group is judged in one worker,
//! and a group splits where its checks' answers part. Each check visits exactly the candidates
//! it would visit alone, for the cost of one unit per group and step.
//!
//! A walk often comes back to a candidate it was judged on (proptest's `complicate` undoes a
//! `simplify` that passed): a unit the same as one judged earlier in the shrink (the same
//! checks on the same case, with the same entry points quarantined) takes that unit's records
//! again instead of a worker ([`Judged`]).

use super::{case_tree, failed, unit, CaseTree, Population, PropertyOptions};
use crate::supervisor::Exec;
use crate::worker::{Quarantined, Unit};
use ompd_report::ResultRecord;
use ompd_vendors::Resolved;
use sim_target::model::Model;
use std::collections::{BTreeMap, HashMap};

/// Where one check's shrink stands.
struct Walk {
    /// The population of its case, and the check.
    key: (Population, String),
    /// The case it first failed on.
    case: u32,
    tree: CaseTree,
    /// Its answers so far (true: the candidate failed it); with `case`, the candidate's key.
    answers: Vec<bool>,
    steps: u32,
    /// The smallest failing candidate so far, with its record.
    best: Option<(ResultRecord, Model)>,
    done: bool,
}

impl Walk {
    /// Takes the answer on the current candidate (`Some`: it failed, with its record) and moves
    /// the tree as proptest's shrinking loop does.
    fn answer(&mut self, failing: Option<ResultRecord>, max: u32) {
        let first = self.answers.is_empty();
        self.answers.push(failing.is_some());
        let model = self.tree.current().0;
        match failing {
            Some(r) => {
                self.best = Some((r, model));
                self.done = !self.tree.simplify();
            }
            // A first candidate that passes: the check no longer fails on its own case.
            None if first => self.done = true,
            None => self.done = !self.tree.complicate(),
        }
        if !first {
            self.steps += 1;
        }
        self.done |= self.steps >= max;
    }
}

/// Shrinks each failing check (`first`: its population and id → its first failing case there)
/// to its smallest failing case: the check's record and model there, or `None` when its first
/// failing case no longer fails it. A stop leaves each check at the smallest failing case found
/// so far.
pub(super) fn shrink_all(
    lib: &Resolved,
    exec: Exec,
    popts: &PropertyOptions,
    first: &BTreeMap<(Population, String), u32>,
    jobs: usize,
) -> BTreeMap<(Population, String), Option<(ResultRecord, Model)>> {
    let mut walks: Vec<Walk> = first
        .iter()
        .filter_map(|(key, &case)| {
            Some(Walk {
                key: key.clone(),
                case,
                tree: case_tree(popts.seed, key.0, case).ok()?,
                answers: Vec::new(),
                steps: 0,
                best: None,
                done: false,
            })
        })
        .collect();
    let mut judged = Judged::default();
    while exec.stop.reason().is_none() && walks.iter().any(|w| !w.done) {
        round(lib, (exec, jobs), popts, &mut walks, &mut judged);
    }
    walks.into_iter().map(|w| (w.key, w.best)).collect()
}

/// The records of each unit a shrink ran, by the unit's whole description (its JSON, with the
/// entry points quarantined when it ran): the same unit judged again gives the same records.
#[derive(Default)]
struct Judged(HashMap<String, Vec<ResultRecord>>);

impl Judged {
    /// Each unit's records, with `quarantined` the entry points quarantined now: the earlier
    /// ones where there are; the rest are judged by `run` (one list of records per unit given it,
    /// `None` when the run was stopped before every unit was judged, and so is this).
    fn records(
        &mut self,
        units: &[Unit],
        quarantined: &[Quarantined],
        run: impl FnOnce(&[Unit]) -> Option<Vec<Vec<ResultRecord>>>,
    ) -> Option<Vec<Vec<ResultRecord>>> {
        // A unit that cannot be written has no key: it always runs.
        let keys: Vec<Option<String>> = units
            .iter()
            .map(|u| serde_json::to_string(&(u, quarantined)).ok())
            .collect();
        let fresh: Vec<usize> = (0..units.len())
            .filter(|&k| keys[k].as_ref().is_none_or(|key| !self.0.contains_key(key)))
            .collect();
        let to_run: Vec<Unit> = fresh.iter().map(|&k| units[k].clone()).collect();
        let mut ran: HashMap<usize, Vec<ResultRecord>> = HashMap::new();
        for (&k, records) in fresh.iter().zip(run(&to_run)?) {
            if let Some(key) = &keys[k] {
                self.0.insert(key.clone(), records.clone());
            }
            ran.insert(k, records);
        }
        let earlier = |k: usize| keys[k].as_ref().and_then(|key| self.0.get(key)).cloned();
        Some(
            (0..units.len())
                .map(|k| ran.remove(&k).or_else(|| earlier(k)).unwrap_or_default())
                .collect(),
        )
    }
}

/// Runs `units` `jobs` at a time, in batches: each unit's records, or `None` when the run was
/// stopped (the units were cut short: their "not reached" answers are no answers).
fn run_units(units: &[Unit], (exec, jobs): (Exec, usize)) -> Option<Vec<Vec<ResultRecord>>> {
    let pieces = crate::batch::pieces(units.len(), jobs);
    let runs = crate::parallel::parallel_map(pieces.len(), jobs, |b| {
        let batch = &units[pieces[b].clone()];
        crate::phases::shrinking(|| crate::batch::run_padded(batch, exec))
    });
    if exec.stop.reason().is_some() {
        return None;
    }
    let records = runs.into_iter().flatten();
    Some(
        records
            .map(|r| r.map(|r| r.records).unwrap_or_default())
            .collect(),
    )
}

/// One step of every walk still going: one unit per group of walks on the same candidate.
fn round(
    lib: &Resolved,
    (exec, jobs): (Exec, usize),
    popts: &PropertyOptions,
    walks: &mut [Walk],
    judged: &mut Judged,
) {
    let mut groups: BTreeMap<(Population, u32, &[bool]), Vec<usize>> = BTreeMap::new();
    for (k, w) in walks.iter().enumerate().filter(|(_, w)| !w.done) {
        let key = (w.key.0, w.case, w.answers.as_slice());
        groups.entry(key).or_default().push(k);
    }
    let groups: Vec<Vec<usize>> = groups.into_values().collect();
    let units: Vec<_> = groups
        .iter()
        .map(|members| {
            let (m, a, p) = walks[members[0]].tree.current();
            let checks: Vec<String> = members.iter().map(|&k| walks[k].key.1.clone()).collect();
            unit(lib, walks[members[0]].key.0, (&m, a, p), &checks)
        })
        .collect();
    let quarantined = exec.quarantine.active(&lib.path);
    let run = |units: &[Unit]| run_units(units, (exec, jobs));
    let Some(records) = judged.records(&units, &quarantined, run) else {
        return;
    };
    for (members, records) in groups.iter().zip(records) {
        for &k in members {
            let w = &mut walks[k];
            let failing = records
                .iter()
                .find(|r| r.check == w.key.1 && failed(r))
                .cloned();
            w.answer(failing, w.key.0.shrink_iters(popts));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervisor;
    use ompd_report::Outcome;

    fn unit_of(case: u32, checks: &[&str]) -> Unit {
        let lib = crate::property::test_library();
        let (m, a, p) = super::case_tree(7, Population::Drawn, case)
            .unwrap()
            .current();
        let checks: Vec<String> = checks.iter().map(|c| c.to_string()).collect();
        super::unit(&lib, Population::Drawn, (&m, a, p), &checks)
    }

    /// A run that judges each unit's first check failed, naming the unit's place in `ran`.
    fn judge(ran: &mut Vec<Unit>) -> impl FnMut(&[Unit]) -> Option<Vec<Vec<ResultRecord>>> + '_ {
        move |units| {
            let out = units.iter().map(|u| {
                let detail = format!("run {}", ran.len());
                ran.push(u.clone());
                let r = supervisor::record(u, &u.checks[0], Outcome::Fail, "", "".into(), detail);
                vec![r]
            });
            Some(out.collect())
        }
    }

    #[test]
    fn a_unit_judged_before_takes_its_records_and_runs_no_worker() {
        let (a, b) = (unit_of(1, &["x"]), unit_of(2, &["x"]));
        let mut judged = Judged::default();
        let mut ran = Vec::new();
        let first = judged.records(std::slice::from_ref(&a), &[], judge(&mut ran));
        let again = judged.records(&[b.clone(), a.clone()], &[], judge(&mut ran));
        assert_eq!(ran, vec![a.clone(), b.clone()], "only the new unit runs");
        let (first, again) = (first.unwrap(), again.unwrap());
        assert_eq!(again[1], first[0], "the earlier unit's own records");
        assert_eq!(again[0][0].detail, "run 1");
        // Another check set, or another quarantine, is another unit.
        let quarantined = [Quarantined {
            entry_point: "ompd_get_state".into(),
            outcome: Outcome::Timeout,
            note: "not run".into(),
        }];
        let _ = judged.records(&[unit_of(1, &["y"])], &[], judge(&mut ran));
        let _ = judged.records(std::slice::from_ref(&a), &quarantined, judge(&mut ran));
        assert_eq!(ran.len(), 4);
    }

    #[test]
    fn a_stopped_run_leaves_nothing_judged() {
        let a = unit_of(1, &["x"]);
        let mut judged = Judged::default();
        assert_eq!(
            judged.records(std::slice::from_ref(&a), &[], |_| None),
            None
        );
        let mut ran = Vec::new();
        let _ = judged.records(std::slice::from_ref(&a), &[], judge(&mut ran));
        assert_eq!(ran, vec![a], "the stopped unit runs again");
    }
}
