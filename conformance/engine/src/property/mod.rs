//! Property runs: the target-stage checks over generated runtime states (depth, team sizes,
//! serialized levels, task trees, states, ICVs) × arch variant × layout policy. Every check is a
//! property that must hold in every case; a failing case is shrunk by proptest to a minimal
//! scenario, written as a replayable model file, and reported with the command that replays it.
//!
//! Two populations of cases are judged and reported apart ([`Population`]): the cases with the
//! layouts drawn with them (scenario `generated`), and the first of the same cases placed at
//! the address extremes (`generated-far`), so that a defect only far placement shows cannot
//! mask another on the same check, nor the other way round.
//!
//! The checks run on the cases wave by wave, a batch of cases per worker ([`crate::batch`]: each
//! case against a library instance of its own); a check that failed on a case of an earlier
//! wave is not run again. Each case has its own generator seed, so a check's
//! first failing case can be regenerated; every failing check is then shrunk from it (`shrink`:
//! checks on the same candidate share a worker, each walking as it would alone).

mod population;
mod shrink;

pub use population::{far_cases, Population, FAR_SHARE, FAR_SHRINK_SHARE};

use crate::supervisor::{self, Exec};
use crate::worker::{Scenario, Target, Unit};
use ompd_checks::Stage;
use ompd_report::{Outcome, ResultRecord};
use ompd_serve::arch::Arch;
use ompd_vendors::Resolved;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use sim_target::layout::Policy;
use sim_target::model::Model;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Whether the property phase runs `check` (its registry entry says so: `Property::Cases`).
pub fn runs(check: &ompd_checks::Check) -> bool {
    check.property == ompd_checks::Property::Cases
}

/// The scenario name of results from generated cases.
pub const SCENARIO: &str = ompd_report::GENERATED_SCENARIO;

/// The scenario name of results from the far population of generated cases.
pub const FAR_SCENARIO: &str = ompd_report::GENERATED_FAR_SCENARIO;

/// Generated cases per library by default.
pub const DEFAULT_CASES: u32 = 1024;

/// How the property phase runs.
#[derive(Clone, Debug)]
pub struct PropertyOptions {
    /// Cases per runner pass (0 disables the phase).
    pub cases: u32,
    /// Cases of the far population ([`far_cases`]).
    pub far_cases: u32,
    /// Seed of the case generator (runs are reproducible).
    pub seed: u64,
    /// Shrink steps allowed per finding.
    pub max_shrink_iters: u32,
    /// Where minimal reproducers are written.
    pub replay_dir: PathBuf,
}

impl Default for PropertyOptions {
    fn default() -> Self {
        PropertyOptions {
            cases: DEFAULT_CASES,
            far_cases: far_cases(DEFAULT_CASES, false),
            seed: supervisor::DEFAULT_SEED,
            max_shrink_iters: 128,
            replay_dir: default_replay_dir(),
        }
    }
}

/// `target/ompd-replays` beside the vendor cache.
pub fn default_replay_dir() -> PathBuf {
    ompd_vendors::beside_cache("ompd-replays")
}

/// A whole generated case.
pub fn case() -> impl Strategy<Value = (Model, Arch, Policy)> {
    (sim_target::strategy::model(), sim_target::strategy::arch())
        .prop_flat_map(|(m, a)| (Just(m), Just(a), sim_target::strategy::policy(a)))
}

/// What the passes saw of a check that was never refuted.
#[derive(Default)]
struct Tally {
    /// Cases in which the check gave a verdict other than skip.
    evaluated: usize,
    /// The first non-failing deviation (warn or not-supported) and its case.
    first_deviation: Option<(ResultRecord, Model)>,
}

fn unit(
    lib: &Resolved,
    pop: Population,
    (m, a, p): (&Model, Arch, Policy),
    checks: &[String],
) -> Unit {
    let target = Target::Simulated {
        scenario: Scenario::model(pop.scenario(), m.clone()),
        arch: a,
        layout: p,
    };
    supervisor::unit_of(lib, Stage::Target, target, checks.to_vec())
}

/// Writes the model of a case of scenario `scenario` as a replay file; returns its path.
fn write_replay(
    dir: &Path,
    lib: &str,
    scenario: &str,
    check: &str,
    m: &Model,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let safe = ompd_report::file_safe;
    let far = if scenario == FAR_SCENARIO { "-far" } else { "" };
    let path = dir.join(format!("{}-{}{far}.json", safe(lib), safe(check)));
    let text = serde_json::to_string_pretty(m).map_err(|e| e.to_string())?;
    ompd_report::write_atomic(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Adds the reproducer to a record: the replay command in its own field, and the file and the
/// command to its detail.
fn with_replay(
    mut r: ResultRecord,
    lib: &Resolved,
    dir: &Path,
    m: &Model,
    what: &str,
) -> ResultRecord {
    let how = match write_replay(dir, &lib.name, &r.scenario, &r.check, m) {
        Ok(path) => {
            let command = format!(
                "ompd-conform run {} --replay {} --arch {} --layout {} --check {}",
                lib.command_name(),
                path.display(),
                r.arch,
                r.layout.as_deref().unwrap_or("*"),
                r.check
            );
            let how = format!(
                "{what}: {} thread(s), {} region(s), {} task(s) in {}; replay: {command}",
                m.threads.len(),
                m.regions.len(),
                m.tasks.len(),
                path.display(),
            );
            r.replay = Some(command);
            how
        }
        Err(e) => format!("{what} (not written: {e})"),
    };
    r.detail = if r.detail.is_empty() {
        how
    } else {
        format!("{}; {how}", r.detail)
    };
    r
}

/// A library for the tests: a name and a path, never loaded.
#[cfg(test)]
fn test_library() -> Resolved {
    Resolved {
        name: "lib".into(),
        path: "/lib.so".into(),
        preload: Vec::new(),
        needs_cxx_runtime: false,
        version: None,
    }
}

/// A generated case's value tree (shrinkable).
type CaseTree = Box<dyn proptest::strategy::ValueTree<Value = (Model, Arch, Policy)>>;

/// The value tree of case `i` of population `pop`: each case has its own generator seed, so any
/// case can be regenerated (and shrunk) on its own.
fn case_tree(seed: u64, pop: Population, i: u32) -> Result<CaseTree, String> {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..12].copy_from_slice(&i.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    );
    population::case_of(pop)
        .new_tree(&mut runner)
        .map(|t| Box::new(t) as Box<_>)
        .map_err(|e| e.to_string())
}

fn failed(r: &ResultRecord) -> bool {
    r.outcome.is_failure() || r.outcome == Outcome::HarnessError
}

/// Runs the property phase for one library and returns one record per target-stage check that
/// passes the `filters` (see [`supervisor::selected`]):
/// every check runs on the generated cases until it fails (`run_cases`); each check that fails
/// is shrunk from its first failing case (all of them together, `shrink::shrink_all`). Cases,
/// and then each shrinking round's units, run `jobs` at a time.
/// Stops early when the run is stopped (the report is then marked incomplete).
pub(crate) fn run_library(
    lib: &Resolved,
    filters: &[String],
    popts: &PropertyOptions,
    exec: Exec,
    jobs: usize,
) -> Vec<ResultRecord> {
    let all: Vec<String> = supervisor::stage_checks(Stage::Target, filters)
        .filter(|c| runs(c))
        .map(|c| c.id.to_string())
        .collect();
    let pops: Vec<(Population, Cases)> = Population::ALL
        .into_iter()
        .filter(|pop| pop.cases(popts) > 0)
        .map(|pop| (pop, run_cases(lib, pop, &all, popts, exec, jobs)))
        .collect();
    let first: BTreeMap<(Population, String), u32> = pops
        .iter()
        .flat_map(|(pop, cases)| {
            let firsts = cases.first_failure.iter();
            firsts.map(|(check, (i, _, _))| ((*pop, check.clone()), *i))
        })
        .collect();
    // Both populations' failing checks shrink together: a round's units share the cores.
    let shrunk = match exec.stop.reason() {
        None => shrink::shrink_all(lib, exec, popts, &first, jobs),
        Some(_) => BTreeMap::new(),
    };
    let nothing = sim_target::model::ModelBuilder::new()
        .build()
        .expect("the empty model is valid");
    let sums: Vec<Summary> = pops
        .iter()
        .map(|(pop, cases)| Summary {
            lib,
            pop: *pop,
            popts,
            exec,
            cases,
            shrunk: &shrunk,
            over_all_cases: unit(lib, *pop, (&nothing, Arch::LP64_LE, Policy::Natural), &[]),
        })
        .collect();
    let per_check: Vec<(&Summary, &String)> = sums
        .iter()
        .flat_map(|sum| all.iter().map(move |id| (sum, id)))
        .collect();
    crate::parallel::parallel_map(per_check.len(), jobs, |k| {
        let (sum, id) = per_check[k];
        sum.record(id)
    })
}

/// What the cases of a library gave, turned into one record per check.
struct Summary<'a> {
    lib: &'a Resolved,
    pop: Population,
    popts: &'a PropertyOptions,
    exec: Exec<'a>,
    cases: &'a Cases,
    /// Each failing check's smallest failing case, by population (`None`: it passed when run
    /// again); none when the run stopped before shrinking.
    shrunk: &'a BTreeMap<(Population, String), Option<(ResultRecord, Model)>>,
    /// The unit that results summing up every case are reported against.
    over_all_cases: Unit,
}

impl Summary<'_> {
    /// A result that sums up every case, reported against every arch and layout.
    fn base(&self, id: &str, outcome: Outcome, actual: String, detail: String) -> ResultRecord {
        ResultRecord {
            arch: "*".into(),
            layout: Some(self.pop.layout().into()),
            ..supervisor::record(&self.over_all_cases, id, outcome, "", actual, detail)
        }
    }

    /// The record of check `id`: shrunk from its first failing case, its first deviating case,
    /// or how many cases it held in.
    fn record(&self, id: &str) -> ResultRecord {
        let (lib, popts, cases) = (self.lib, self.popts, self.cases);
        if let Some(why) = &cases.harness {
            return self.base(id, Outcome::HarnessError, String::new(), why.clone());
        }
        if let Some((i, r, m)) = cases.first_failure.get(id) {
            let shrunk = self.shrunk.get(&(self.pop, id.to_string())).cloned();
            return failing(lib, popts, self.exec, shrunk, *i, r, m).unwrap_or_else(|| {
                self.base(
                    id,
                    Outcome::Warn,
                    format!("failed on generated case {i} once, then passed when run again"),
                    "a flaky check or library".into(),
                )
            });
        }
        match cases.tally.get(id) {
            Some(Tally {
                first_deviation: Some((r, m)),
                ..
            }) => with_replay(r.clone(), lib, &popts.replay_dir, m, "first deviating case"),
            Some(Tally { evaluated, .. }) if *evaluated > 0 => self.held(id, *evaluated),
            _ => {
                let why = match self.exec.stop.reason() {
                    Some(why) => format!("not reached: the run stopped ({why})"),
                    None => format!("not applicable in any {}", self.pop.nouns().0),
                };
                self.base(id, Outcome::Skip, String::new(), why)
            }
        }
    }

    /// The pass of a check that held in the `evaluated` cases that judged it.
    fn held(&self, id: &str, evaluated: usize) -> ResultRecord {
        let (ran, seed) = (self.cases.ran, self.popts.seed);
        let detail = if let Some(why) = self.exec.stop.reason() {
            format!(
                "seed {seed}; the run stopped after {ran} of {} cases ({why})",
                self.pop.cases(self.popts)
            )
        } else if evaluated < ran as usize {
            format!("seed {seed}; the other cases skipped it")
        } else {
            format!("seed {seed}")
        };
        let actual = format!("held in {evaluated} of {ran} {}", self.pop.nouns().1);
        self.base(id, Outcome::Pass, actual, detail)
    }
}

/// What the generated cases of a library gave, check by check.
#[derive(Default)]
struct Cases {
    /// Each failing check's first failing case: its index, record and model.
    first_failure: BTreeMap<String, (u32, ResultRecord, Model)>,
    /// How many cases ran.
    ran: u32,
    tally: BTreeMap<String, Tally>,
    /// Why the cases could not be generated, if they could not.
    harness: Option<String>,
}

/// What one generated case gave: each check's outcome, with the record when it failed or
/// deviated (the model is kept only then).
struct CaseRun {
    outcomes: Vec<(String, Outcome, Option<ResultRecord>)>,
    model: Option<Model>,
}

/// Runs the cases `cases` of population `pop`, the checks `todo` on each, in one worker
/// ([`crate::batch::run_batch`]; none when `todo` is empty). One answer per case, in order:
/// `None` for a case not started because the run was stopped.
fn run_batch_of_cases(
    lib: &Resolved,
    pop: Population,
    todo: &[String],
    popts: &PropertyOptions,
    exec: Exec,
    cases: std::ops::Range<u32>,
) -> Vec<Option<Result<CaseRun, String>>> {
    if exec.stop.reason().is_some() {
        return cases.map(|_| None).collect();
    }
    if todo.is_empty() {
        let nothing = || CaseRun {
            outcomes: Vec::new(),
            model: None,
        };
        return cases.map(|_| Some(Ok(nothing()))).collect();
    }
    let generated: Vec<_> = cases
        .map(|i| {
            crate::phases::timed(crate::phases::Phase::Generate, || {
                case_tree(popts.seed, pop, i).map(|t| t.current())
            })
        })
        .collect();
    let units: Vec<Unit> = generated
        .iter()
        .flatten()
        .map(|(m, a, p)| unit(lib, pop, (m, *a, *p), todo))
        .collect();
    let mut runs = crate::batch::run_batch(&units, exec).into_iter();
    generated
        .into_iter()
        .map(|g| match g {
            Err(e) => Some(Err(format!("the case generator failed: {e}"))),
            Ok((m, _, _)) => runs.next().map(|run| Ok(case_run(run, m))),
        })
        .collect()
}

/// What a case's unit gave: each check's outcome, with the record (and the case's model) kept
/// when it failed or deviated.
fn case_run(run: supervisor::UnitRun, m: Model) -> CaseRun {
    let notable =
        |r: &ResultRecord| failed(r) || matches!(r.outcome, Outcome::Warn | Outcome::NotSupported);
    let outcomes: Vec<_> = run
        .records
        .into_iter()
        .map(|r| (r.check.clone(), r.outcome, notable(&r).then_some(r)))
        .collect();
    let keep = outcomes.iter().any(|(_, _, r)| r.is_some());
    CaseRun {
        outcomes,
        model: keep.then_some(m),
    }
}

/// Cases judged between two looks at which checks have failed: a check that failed on a case
/// of an earlier wave is not run again (its record comes from that case's shrink, and no later
/// case can be its first failing one). A fixed size, so which checks a case runs does not
/// depend on the number of jobs or on timing.
const WAVE: u32 = 32;

/// Runs every check `all` on every case of population `pop`, `jobs` cases at a time, wave by
/// wave ([`WAVE`]), until the run is stopped; the cases are folded in index order, so the first
/// failing case of a check is the same whatever the number of jobs.
fn run_cases(
    lib: &Resolved,
    pop: Population,
    all: &[String],
    popts: &PropertyOptions,
    exec: Exec,
    jobs: usize,
) -> Cases {
    let mut c = Cases::default();
    for wave in waves(pop.cases(popts)) {
        let todo = c.still_to_run(all);
        // Batches of cases, each judged in one worker ([`crate::batch`]).
        let at = |k: usize| wave.start + k as u32;
        let batches: Vec<_> = crate::batch::pieces(wave.len(), jobs)
            .into_iter()
            .map(|r| at(r.start)..at(r.end))
            .collect();
        let runs = crate::parallel::parallel_map(batches.len(), jobs, |b| {
            run_batch_of_cases(lib, pop, &todo, popts, exec, batches[b].clone())
        });
        for (i, run) in wave.zip(runs.into_iter().flatten()) {
            if !c.take(i, run) {
                return c;
            }
        }
    }
    c
}

/// The case indices `0..cases`, wave by wave ([`WAVE`]).
fn waves(cases: u32) -> impl Iterator<Item = std::ops::Range<u32>> {
    (0..cases)
        .step_by(WAVE as usize)
        .map(move |start| start..start.saturating_add(WAVE).min(cases))
}

impl Cases {
    /// The checks of `all` that have not failed on a case folded in so far.
    fn still_to_run(&self, all: &[String]) -> Vec<String> {
        all.iter()
            .filter(|id| !self.first_failure.contains_key(*id))
            .cloned()
            .collect()
    }

    /// Folds in case `i`'s run; false when the cases end there (the run was stopped, or the
    /// case could not be generated).
    fn take(&mut self, i: u32, run: Option<Result<CaseRun, String>>) -> bool {
        let run = match run {
            None => return false,
            Some(Err(e)) => {
                self.harness = Some(e);
                return false;
            }
            Some(Ok(run)) => run,
        };
        self.ran += 1;
        for (check, outcome, rec) in run.outcomes {
            let e = self.tally.entry(check.clone()).or_default();
            if outcome != Outcome::Skip {
                e.evaluated += 1;
            }
            let (Some(r), Some(m)) = (rec, run.model.as_ref()) else {
                continue;
            };
            if failed(&r) {
                self.first_failure
                    .entry(check)
                    .or_insert_with(|| (i, r, m.clone()));
            } else if e.first_deviation.is_none() {
                e.first_deviation = Some((r, m.clone()));
            }
        }
        true
    }
}

/// The record of a check that failed on case `i` (record `r`, model `m`), given its shrink
/// (`shrunk`: none when the run stopped before shrinking; `Some(None)`: it passed when run
/// again): its smallest failing case, with its replay file. A stop during shrinking leaves the
/// smallest case found so far; a stop before it, the case that failed first. `None`: it passed
/// when run again.
fn failing(
    lib: &Resolved,
    popts: &PropertyOptions,
    exec: Exec,
    shrunk: Option<Option<(ResultRecord, Model)>>,
    i: u32,
    r: &ResultRecord,
    m: &Model,
) -> Option<ResultRecord> {
    let dir = &popts.replay_dir;
    match (shrunk, exec.stop.reason()) {
        (Some(Some((r, m))), None) => Some(with_replay(r, lib, dir, &m, "minimal failing case")),
        (Some(Some((r, m))), Some(why)) => {
            let note = format!("smallest failing case found before the stop ({why})");
            Some(with_replay(r, lib, dir, &m, &note))
        }
        (Some(None) | None, None) => None,
        (_, Some(why)) => {
            let note = format!("failing case {i}, not shrunk ({why})");
            Some(with_replay(r.clone(), lib, dir, m, &note))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_far_case_is_the_drawn_case_placed_far_and_shrinks_placed_far() {
        for i in 0..16 {
            let (m, a, _) = case_tree(7, Population::Drawn, i).unwrap().current();
            let mut far = case_tree(7, Population::Far, i).unwrap();
            assert_eq!(far.current(), (m, a, Policy::Far), "case {i}");
            for _ in 0..8 {
                if !far.simplify() {
                    break;
                }
                assert_eq!(far.current().2, Policy::Far, "case {i} while shrinking");
            }
        }
    }

    #[test]
    fn the_waves_cover_every_case_once_in_order() {
        let all: Vec<u32> = waves(70).flatten().collect();
        assert_eq!(all, (0..70).collect::<Vec<_>>());
        let sizes: Vec<usize> = waves(70).map(|w| w.len()).collect();
        assert_eq!(sizes, [32, 32, 6]);
        assert_eq!(waves(0).count(), 0);
        assert_eq!(
            waves(u32::MAX).last(),
            Some(u32::MAX - u32::MAX % WAVE..u32::MAX)
        );
    }

    fn record(check: &str, outcome: Outcome) -> ResultRecord {
        let lib = test_library();
        let m = sim_target::model::ModelBuilder::new().build().unwrap();
        let u = unit(
            &lib,
            Population::Drawn,
            (&m, Arch::LP64_LE, Policy::Natural),
            &[],
        );
        supervisor::record(&u, check, outcome, "", String::new(), String::new())
    }

    fn run(outcomes: &[(&str, Outcome)]) -> Option<Result<CaseRun, String>> {
        let outcomes = outcomes
            .iter()
            .map(|&(c, o)| {
                let notable = matches!(o, Outcome::Fail | Outcome::Warn);
                (c.to_string(), o, notable.then(|| record(c, o)))
            })
            .collect();
        let model = Some(sim_target::model::ModelBuilder::new().build().unwrap());
        Some(Ok(CaseRun { outcomes, model }))
    }

    #[test]
    fn a_failed_check_keeps_its_first_failing_case_and_is_not_run_again() {
        let all = ["a".to_string(), "b".to_string()];
        let mut c = Cases::default();
        assert!(c.take(0, run(&[("a", Outcome::Pass), ("b", Outcome::Warn)])));
        assert!(c.take(1, run(&[("a", Outcome::Fail), ("b", Outcome::Pass)])));
        assert!(c.take(2, run(&[("a", Outcome::Fail), ("b", Outcome::Skip)])));
        assert_eq!(c.first_failure["a"].0, 1, "the first failing case");
        assert_eq!(c.still_to_run(&all), ["b"]);
        let b = &c.tally["b"];
        assert_eq!(b.evaluated, 2, "a skip is no verdict");
        assert_eq!(b.first_deviation.as_ref().unwrap().0.outcome, Outcome::Warn);
        assert_eq!(c.ran, 3);
        assert!(!c.take(3, None), "a stop ends the cases");
        assert!(!c.take(3, Some(Err("no generator".into()))));
        assert_eq!(c.harness.as_deref(), Some("no generator"));
        assert_eq!(c.ran, 3);
    }
}
