//! Shrinking the failing generated cases, every failing check at once. Each check is shrunk as
//! proptest shrinks a value alone: from its first failing case, `simplify` after a candidate that
//! still fails it, `complicate` after one that does not, at most its population's share of
//! `max_shrink_iters` steps. That walk depends only on the check's answers, so checks that
//! failed on the same case of the same population and have answered alike so far stand on the
//! same candidate: such a group is judged in one worker,
//! and a group splits where its checks' answers part. Each check visits exactly the candidates
//! it would visit alone, for the cost of one unit per group and step.

use super::{case_tree, failed, unit, CaseTree, Population, PropertyOptions};
use crate::supervisor::Exec;
use ompd_report::ResultRecord;
use ompd_vendors::Resolved;
use sim_target::model::Model;
use std::collections::BTreeMap;

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
    while exec.stop.reason().is_none() && walks.iter().any(|w| !w.done) {
        round(lib, exec, popts, &mut walks, jobs);
    }
    walks.into_iter().map(|w| (w.key, w.best)).collect()
}

/// One step of every walk still going: one unit per group of walks on the same candidate.
fn round(lib: &Resolved, exec: Exec, popts: &PropertyOptions, walks: &mut [Walk], jobs: usize) {
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
    let pieces = crate::batch::pieces(units.len(), jobs);
    let judged = crate::parallel::parallel_map(pieces.len(), jobs, |b| {
        let batch = &units[pieces[b].clone()];
        crate::phases::shrinking(|| crate::batch::run_padded(batch, exec))
    });
    if exec.stop.reason().is_some() {
        // The units were cut short: their "not reached" answers are no answers.
        return;
    }
    for (members, run) in groups.iter().zip(judged.into_iter().flatten()) {
        let records = run.map(|r| r.records).unwrap_or_default();
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
