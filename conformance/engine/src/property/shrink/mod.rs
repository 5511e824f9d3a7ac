//! Shrinking the failing generated cases, every failing check at once. Each check is shrunk as
//! proptest shrinks a value alone: from its first failing case, `simplify` after a candidate that
//! still fails it, `complicate` after one that does not, at most its population's share of
//! `max_shrink_iters` steps. That walk depends only on the check's answers, so checks that
//! failed on the same case of the same population and have answered alike so far stand on the
//! same candidate: such a group is judged in one unit, and a group splits where its checks'
//! answers part. Each check visits exactly the candidates it would visit alone, for the cost of
//! one unit per group and step.
//!
//! Groups move on independently ([`schedule`]): a group's next candidate is judged as soon as
//! its last one was, in the next worker free, so no group waits for a slower one.
//!
//! A walk often comes back to a candidate it was judged on (proptest's `complicate` undoes a
//! `simplify` that passed): a unit the same as one judged earlier in the shrink (the same
//! checks on the same case, with the same entry points quarantined) takes that unit's records
//! again instead of a worker ([`Judged`]).

mod schedule;

use super::{case_tree, failed, CaseTree, Population, PropertyOptions};
use crate::supervisor::Exec;
use crate::worker::{Quarantined, Unit};
use ompd_report::{Outcome, ResultRecord};
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
    /// The steps it is allowed (its population's share).
    max: u32,
    /// The smallest failing candidate so far, with its record.
    best: Option<(ResultRecord, Model)>,
    /// Whether the last candidate failed it by crashing or hanging (its worker ends there, so
    /// its next candidate goes last in its batch).
    ended_worker: bool,
    done: bool,
}

impl Walk {
    /// The walk of check `key.1` from its first failing case `case` of population `key.0`.
    fn new(key: (Population, String), case: u32, popts: &PropertyOptions) -> Option<Walk> {
        Some(Walk {
            tree: case_tree(popts.seed, key.0, case).ok()?,
            max: key.0.shrink_iters(popts),
            key,
            case,
            answers: Vec::new(),
            steps: 0,
            best: None,
            ended_worker: false,
            done: false,
        })
    }

    /// Takes the answer on the current candidate (`Some`: it failed, with its record) and moves
    /// the tree as proptest's shrinking loop does.
    fn answer(&mut self, failing: Option<ResultRecord>) {
        let first = self.answers.is_empty();
        self.answers.push(failing.is_some());
        self.ended_worker = failing
            .as_ref()
            .is_some_and(|r| matches!(r.outcome, Outcome::Crash | Outcome::Timeout));
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
        self.done |= self.steps >= self.max;
    }

    /// Takes the records of the unit that judged its current candidate.
    fn answer_from(&mut self, records: &[ResultRecord]) {
        let failing = records
            .iter()
            .find(|r| r.check == self.key.1 && failed(r))
            .cloned();
        self.answer(failing);
    }
}

/// Shrinks each failing check (`first`: its population and id → its first failing case there)
/// to its smallest failing case: the check's record and model there, or `None` when its first
/// failing case no longer fails it. Units run in batches, `jobs` workers at a time. A stop
/// leaves each check at the smallest failing case found so far.
pub(super) fn shrink_all(
    lib: &Resolved,
    exec: Exec,
    popts: &PropertyOptions,
    first: &BTreeMap<(Population, String), u32>,
    jobs: usize,
) -> BTreeMap<(Population, String), Option<(ResultRecord, Model)>> {
    let walks: Vec<Walk> = first
        .iter()
        .filter_map(|(key, &case)| Walk::new(key.clone(), case, popts))
        .collect();
    let mut shrink = schedule::Shrink::new(lib, walks);
    shrink.drive(&Workers { lib, exec }, jobs);
    shrink.into_best()
}

/// The records of each unit a shrink ran, by the unit's whole description (its JSON, with the
/// entry points quarantined when it ran): the same unit judged again gives the same records.
#[derive(Default)]
struct Judged(HashMap<String, Vec<ResultRecord>>);

impl Judged {
    /// The key of `unit` run with `quarantined` quarantined (none for a unit that cannot be
    /// written: it always runs).
    fn key(unit: &Unit, quarantined: &[Quarantined]) -> Option<String> {
        serde_json::to_string(&(unit, quarantined)).ok()
    }

    /// The records of the unit of `key`, when it was judged before.
    fn get(&self, key: Option<&String>) -> Option<&[ResultRecord]> {
        key.and_then(|k| self.0.get(k)).map(Vec::as_slice)
    }

    /// Keeps the records of the unit of `key`.
    fn put(&mut self, key: Option<String>, records: &[ResultRecord]) {
        if let Some(k) = key {
            self.0.insert(k, records.to_vec());
        }
    }
}

/// How a shrink's units are judged: in workers of the run, or, in the tests, as a test says.
trait Judge: Sync {
    /// The records of each of `units`, judged one after the other in one worker; `None` when
    /// the run was stopped (the units were cut short: their "not reached" answers are no
    /// answers).
    fn run(&self, units: &[Unit]) -> Option<Vec<Vec<ResultRecord>>>;
    /// The entry points quarantined now.
    fn quarantined(&self) -> Vec<Quarantined>;
    /// Whether the run was stopped.
    fn stopped(&self) -> bool;
}

/// The run's workers.
struct Workers<'a> {
    lib: &'a Resolved,
    exec: Exec<'a>,
}

impl Judge for Workers<'_> {
    fn run(&self, units: &[Unit]) -> Option<Vec<Vec<ResultRecord>>> {
        let runs = crate::phases::shrinking(|| crate::batch::run_padded(units, self.exec));
        if self.stopped() {
            return None;
        }
        let records = runs.into_iter().map(|r| r.map(|r| r.records));
        Some(records.map(Option::unwrap_or_default).collect())
    }

    fn quarantined(&self) -> Vec<Quarantined> {
        self.exec.quarantine.active(&self.lib.path)
    }

    fn stopped(&self) -> bool {
        self.exec.stop.reason().is_some()
    }
}
