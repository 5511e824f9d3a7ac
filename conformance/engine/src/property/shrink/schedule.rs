//! The shrink's schedule: each group of walks on one candidate moves on as soon as its unit is
//! judged. Up to `jobs` batches are in flight at once, each a worker judging its units one after
//! the other; when one comes back, its groups answer and the groups ready then (not done, not
//! in flight) make the next batches. A unit judged before takes its records again at once.
//!
//! A group's walks always stand on the same candidate, and no group waits for another, so each
//! walk visits the candidates it would visit alone, whatever the order batches come back in.
//! Within a batch, the units whose last candidate crashed or hung go last: a worker ends at such
//! a unit, and the units after it would need another worker.

use super::{Judge, Judged, Walk};
use crate::batch::BATCH;
use crate::property::unit;
use crate::worker::{Quarantined, Unit};
use ompd_report::ResultRecord;
use ompd_vendors::Resolved;
use sim_target::model::Model;
use std::collections::BTreeMap;

/// Units judged in one worker: each group's walks (indices), its unit and the unit's key.
struct Batch {
    groups: Vec<Vec<usize>>,
    units: Vec<Unit>,
    keys: Vec<Option<String>>,
}

/// What [`Judge::run`] gives a batch.
type BatchRecords = Option<Vec<Vec<ResultRecord>>>;

/// A group ready to be judged: its walks, its unit and the unit's key.
type Ready = (Vec<usize>, Unit, Option<String>);

/// The walks of a shrink and what was judged for them.
pub(super) struct Shrink<'a> {
    lib: &'a Resolved,
    walks: Vec<Walk>,
    /// Whether each walk's candidate is being judged.
    in_flight: Vec<bool>,
    judged: Judged,
}

impl<'a> Shrink<'a> {
    /// The shrink of `walks`, of library `lib`'s checks.
    pub(super) fn new(lib: &'a Resolved, walks: Vec<Walk>) -> Shrink<'a> {
        let in_flight = vec![false; walks.len()];
        Shrink {
            lib,
            walks,
            in_flight,
            judged: Judged::default(),
        }
    }

    /// Each walk's check and smallest failing candidate.
    pub(super) fn into_best(
        self,
    ) -> BTreeMap<(super::Population, String), Option<(ResultRecord, Model)>> {
        self.walks.into_iter().map(|w| (w.key, w.best)).collect()
    }

    /// Judges candidates until every walk is done or the run is stopped, `jobs` batches at a
    /// time (each on a thread of its own, which `judge` runs it on).
    ///
    /// A batch that panicked ends the dispatching; the panic goes on once the batches in flight
    /// are back.
    pub(super) fn drive(&mut self, judge: &dyn Judge, jobs: usize) {
        let jobs = jobs.max(1);
        let (tx, rx) = std::sync::mpsc::channel::<(Batch, Option<BatchRecords>)>();
        std::thread::scope(|s| {
            let (mut busy, mut panicked) = (0, false);
            loop {
                if busy < jobs && !judge.stopped() && !panicked {
                    for batch in self.next_batches(&judge.quarantined(), jobs - busy) {
                        let tx = tx.clone();
                        busy += 1;
                        s.spawn(move || {
                            let run = || judge.run(&batch.units);
                            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                                Ok(records) => drop(tx.send((batch, Some(records)))),
                                Err(e) => {
                                    let _ = tx.send((batch, None));
                                    std::panic::resume_unwind(e)
                                }
                            }
                        });
                    }
                }
                if busy == 0 {
                    break;
                }
                let Ok((batch, records)) = rx.recv() else {
                    break;
                };
                busy -= 1;
                panicked |= records.is_none();
                self.take(batch, records.flatten());
            }
        });
    }

    /// The groups standing on the same candidate, among the walks neither done nor in flight:
    /// the walks of one population's case that answered alike so far, in key order.
    fn ready_groups(&self) -> Vec<Vec<usize>> {
        let mut groups: BTreeMap<(super::Population, u32, &[bool]), Vec<usize>> = BTreeMap::new();
        let idle = self.walks.iter().enumerate();
        for (k, w) in idle.filter(|(k, w)| !w.done && !self.in_flight[*k]) {
            let key = (w.key.0, w.case, w.answers.as_slice());
            groups.entry(key).or_default().push(k);
        }
        groups.into_values().collect()
    }

    /// The unit judging the candidate of the group `members`: their checks on it.
    fn unit_of(&self, members: &[usize]) -> Unit {
        let lead = &self.walks[members[0]];
        let (m, a, p) = lead.tree.current();
        let checks: Vec<String> = members
            .iter()
            .map(|&k| self.walks[k].key.1.clone())
            .collect();
        unit(self.lib, lead.key.0, (&m, a, p), &checks)
    }

    /// The ready groups whose units were judged before answer from those records, and so on
    /// while any does; the others, marked in flight, in at most `free` batches (the rest wait).
    fn next_batches(&mut self, quarantined: &[Quarantined], free: usize) -> Vec<Batch> {
        if free == 0 {
            return Vec::new();
        }
        let mut ready: Vec<Ready> = Vec::new();
        loop {
            let mut again = false;
            for members in self.ready_groups() {
                let unit = self.unit_of(&members);
                let key = Judged::key(&unit, quarantined);
                if let Some(records) = self.judged.get(key.as_ref()).map(<[_]>::to_vec) {
                    self.answer(&members, &records);
                    again = true;
                } else {
                    members.iter().for_each(|&k| self.in_flight[k] = true);
                    ready.push((members, unit, key));
                }
            }
            if !again {
                break;
            }
        }
        self.batches(ready, free)
    }

    /// `ready` in at most `free` batches of at most [`BATCH`] units, as even as their number
    /// allows: the groups that took the fewest steps first (no group waits behind others for
    /// long), and in each batch the units that end a worker last. The groups left over are no
    /// longer in flight.
    fn batches(&mut self, mut ready: Vec<Ready>, free: usize) -> Vec<Batch> {
        ready.sort_by_key(|(members, _, _)| self.walks[members[0]].answers.len());
        for (members, _, _) in ready.iter().skip(free * BATCH) {
            members.iter().for_each(|&k| self.in_flight[k] = false);
        }
        ready.truncate(free * BATCH);
        let n = ready.len();
        let count = n.min(free).max(n.div_ceil(BATCH));
        let mut rest = ready.into_iter();
        (0..count)
            .map(|b| {
                let mut part: Vec<Ready> = rest
                    .by_ref()
                    .take((b + 1) * n / count - b * n / count)
                    .collect();
                part.sort_by_key(|(members, _, _)| self.ends_worker(members));
                let mut batch = Batch {
                    groups: Vec::new(),
                    units: Vec::new(),
                    keys: Vec::new(),
                };
                for (members, unit, key) in part {
                    batch.groups.push(members);
                    batch.units.push(unit);
                    batch.keys.push(key);
                }
                batch
            })
            .collect()
    }

    /// Whether the group `members`' last candidate crashed or hung one of them.
    fn ends_worker(&self, members: &[usize]) -> bool {
        members.iter().any(|&k| self.walks[k].ended_worker)
    }

    /// Takes a batch's records (none: the run was stopped, and they are no answers).
    fn take(&mut self, batch: Batch, records: Option<Vec<Vec<ResultRecord>>>) {
        for &k in batch.groups.iter().flatten() {
            self.in_flight[k] = false;
        }
        let Some(records) = records else {
            return;
        };
        let judged = batch.groups.iter().zip(batch.keys).zip(records);
        for ((members, key), records) in judged {
            self.judged.put(key, &records);
            self.answer(members, &records);
        }
    }

    /// The walks `members` answer from their unit's records.
    fn answer(&mut self, members: &[usize], records: &[ResultRecord]) {
        for &k in members {
            self.walks[k].answer_from(records);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::property::{test_library, Population, PropertyOptions};
    use crate::supervisor;
    use crate::worker::Target;
    use ompd_report::Outcome;
    use std::sync::Mutex;

    /// Whether `check` fails on model `m`: each test check fails on models above a size.
    fn fails(check: &str, m: &Model) -> bool {
        match check {
            "threads" => m.threads.len() > 1,
            "tasks" => m.tasks.len() > 2,
            "regions" => m.regions.len() > 1,
            _ => false,
        }
    }

    fn model_of(u: &Unit) -> Model {
        match &u.target {
            Target::Simulated { scenario, .. } => scenario.runtime_state(),
            _ => unreachable!("generated cases are simulated"),
        }
    }

    fn record(u: &Unit, check: &str, outcome: Outcome) -> ResultRecord {
        supervisor::record(u, check, outcome, "", String::new(), String::new())
    }

    /// Judges by [`fails`] and keeps every unit it was given; `stop` says the run was stopped.
    struct Fake {
        ran: Mutex<Vec<Unit>>,
        stop: bool,
        panics: bool,
    }

    impl Fake {
        /// A judge; `stop`: the run was stopped; `panics`: every batch panics.
        fn new(stop: bool, panics: bool) -> Fake {
            Fake {
                ran: Mutex::new(Vec::new()),
                stop,
                panics,
            }
        }
    }

    impl Judge for Fake {
        fn run(&self, units: &[Unit]) -> Option<Vec<Vec<ResultRecord>>> {
            self.ran.lock().unwrap().extend(units.iter().cloned());
            assert!(!self.panics, "the fake judge panics");
            let judged = units.iter().map(|u| {
                let m = model_of(u);
                let outcome = |c: &str| match fails(c, &m) {
                    true => Outcome::Fail,
                    false => Outcome::Pass,
                };
                u.checks.iter().map(|c| record(u, c, outcome(c))).collect()
            });
            Some(judged.collect())
        }

        fn quarantined(&self) -> Vec<Quarantined> {
            Vec::new()
        }

        fn stopped(&self) -> bool {
            self.stop
        }
    }

    fn popts() -> PropertyOptions {
        PropertyOptions {
            seed: 7,
            max_shrink_iters: 40,
            ..PropertyOptions::default()
        }
    }

    /// Walks of the test checks from cases 0..4 of both populations.
    fn walks() -> Vec<Walk> {
        let mut out = Vec::new();
        for pop in [Population::Drawn, Population::Far] {
            for case in 0..4 {
                for check in ["threads", "tasks", "regions"] {
                    out.extend(Walk::new((pop, check.into()), case, &popts()));
                }
            }
        }
        out
    }

    /// The test walks driven by `fake`, two batches at a time: the shrink, the units `fake`
    /// was given, and whether the drive panicked.
    fn driven(lib: &Resolved, fake: Fake) -> (Shrink<'_>, Vec<Unit>, bool) {
        let mut shrink = Shrink::new(lib, walks());
        let drive = std::panic::AssertUnwindSafe(|| shrink.drive(&fake, 2));
        let panicked = std::panic::catch_unwind(drive).is_err();
        (shrink, fake.ran.into_inner().unwrap(), panicked)
    }

    /// A walk answered alone, one candidate after the other, by [`fails`].
    fn alone(mut w: Walk) -> Walk {
        while !w.done {
            let m = w.tree.current().0;
            let failing = fails(&w.key.1, &m).then(|| {
                let lib = test_library();
                let (m, a, p) = w.tree.current();
                record(
                    &unit(&lib, w.key.0, (&m, a, p), &[]),
                    &w.key.1,
                    Outcome::Fail,
                )
            });
            w.answer(failing);
        }
        w
    }

    #[test]
    fn every_walk_visits_the_candidates_it_would_visit_alone_and_no_unit_runs_twice() {
        let lib = test_library();
        let (shrink, ran, panicked) = driven(&lib, Fake::new(false, false));
        assert!(!panicked);
        let together = shrink.walks;
        let alone: Vec<Walk> = walks().into_iter().map(alone).collect();
        assert_eq!(together.len(), alone.len());
        let mut shrunk = 0;
        for (t, a) in together.iter().zip(&alone) {
            assert!(t.done, "{:?} is done", t.key);
            assert_eq!(t.answers, a.answers, "{:?} answered as alone", t.key);
            let best = |w: &Walk| w.best.as_ref().map(|(_, m)| m.clone());
            assert_eq!(best(t), best(a), "{:?} ends where alone", t.key);
            shrunk += usize::from(t.answers.len() > 2);
        }
        assert!(shrunk > 4, "the test shrinks several walks ({shrunk})");
        let keys: std::collections::BTreeSet<String> = ran
            .iter()
            .map(|u| serde_json::to_string(u).unwrap())
            .collect();
        assert_eq!(
            keys.len(),
            ran.len(),
            "a unit judged before is not run again"
        );
        let answers: usize = together.iter().map(|w| w.answers.len()).sum();
        assert!(ran.len() < answers, "walks on one candidate share its unit");
    }

    #[test]
    fn a_stopped_run_judges_nothing_and_a_cut_short_batch_answers_nothing() {
        let lib = test_library();
        let (mut shrink, ran, _) = driven(&lib, Fake::new(true, false));
        assert!(ran.is_empty());
        assert!(shrink.walks.iter().all(|w| w.answers.is_empty()));
        // A batch that comes back cut short (no records) leaves its walks where they stood, and
        // judges nothing.
        let mut batches = shrink.next_batches(&[], 1);
        let batch = batches.remove(0);
        shrink.take(batch, None);
        assert!(shrink.walks.iter().all(|w| w.answers.is_empty()));
        assert!(shrink.in_flight.iter().all(|f| !f));
        assert!(shrink.judged.0.is_empty());
    }

    #[test]
    fn a_batch_that_panics_ends_the_shrink_with_its_panic_instead_of_a_hang() {
        let lib = test_library();
        let (_, ran, panicked) = driven(&lib, Fake::new(false, true));
        assert!(panicked);
        assert_eq!(ran.len(), 8, "one batch per slot, no more");
    }

    #[test]
    fn batches_share_the_ready_units_evenly_and_units_that_end_a_worker_go_last() {
        let lib = test_library();
        let mut shrink = Shrink::new(&lib, walks());
        // Case 0's first walk crashed on its last candidate.
        shrink.walks[0].ended_worker = true;
        let batches = shrink.next_batches(&[], 2);
        let sizes: Vec<usize> = batches.iter().map(|b| b.units.len()).collect();
        // 8 groups (a population's case each): two batches of four.
        assert_eq!(sizes, [4, 4]);
        let first = &batches[0].groups;
        assert!(
            first[3].contains(&0),
            "the crashing group goes last: {first:?}"
        );
        assert!(shrink.in_flight.iter().all(|f| *f));
        assert!(shrink.next_batches(&[], 2).is_empty(), "all in flight");
        // One slot free: at most one batch, of at most BATCH units; the rest wait.
        let mut one = Shrink::new(&lib, walks());
        let batches = one.next_batches(&[], 1);
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].units.len(), 8);
    }

    #[test]
    fn the_groups_that_took_the_fewest_steps_go_first() {
        let lib = test_library();
        let walks = (0..10)
            .flat_map(|case| Walk::new((Population::Drawn, "threads".into()), case, &popts()));
        let mut shrink = Shrink::new(&lib, walks.collect());
        let judge = Fake::new(false, false);
        let first = shrink.next_batches(&[], 1).remove(0);
        assert_eq!(first.groups.concat(), (0..8).collect::<Vec<_>>());
        let records = judge.run(&first.units);
        shrink.take(first, records);
        // The two cases never judged go before the eight that took a step.
        let second = shrink.next_batches(&[], 1).remove(0);
        assert_eq!(second.groups[..2].concat(), [8, 9]);
    }
}
