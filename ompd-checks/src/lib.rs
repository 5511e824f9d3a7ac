//! The check registry: every check is data (id, requirement ids, severity, entry points) plus a
//! small function, registered here once; families live in one module each.
//!
//! Checks judge what a library answers against the truth of the scenario's model. They never
//! panic on a library's answer and never return `Err`: every behaviour becomes a [`Verdict`].

/// The address space of a target-stage check, or return the skip verdict naming why there is none.
macro_rules! aspace_or_skip {
    ($ctx:expr) => {
        match $ctx.aspace() {
            Ok(a) => a,
            Err(v) => return v,
        }
    };
}
pub(crate) use aspace_or_skip;

/// A required entry point, or return the skip verdict saying it is not exported (the inventory
/// checks judge what a library exports).
macro_rules! entry_or_skip {
    ($ctx:expr, $ep:expr) => {
        if !$ctx.lib.api.has($ep) {
            return $crate::Verdict::skip(format!("{} is not exported", $ep));
        }
    };
}
pub(crate) use entry_or_skip;

mod checks;
pub mod known;

use ompd_loader::library::{AnyHandle, AspaceH, Call, Fail, Library, ParallelH, TaskH, ThreadH};
pub mod profile;
pub use profile::Profile;

pub use checks::r#static::judge as judge_static;
pub use checks::runtime::dll_locations_of;

use ompd_abi::{self as abi, EntryPoint, Rc};
use ompd_report::Outcome;
use ompd_serve::arch::Arch;
use ompd_serve::callbacks::Target;
use serde::{Deserialize, Serialize};
use sim_target::layout::Policy;
use sim_target::model::{Model, RegionId, TaskId, ThreadId};

/// How strongly the specification states a requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A violation fails.
    Must,
    /// A violation warns.
    Should,
    /// The text is ambiguous: a deviation warns.
    Ambig,
}

/// When a check runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Once per library, from the file alone, before any of its code runs.
    Static,
    /// Once per library, in a fresh instance with no target (lifecycle order matters).
    Library,
    /// In every unit (scenario × arch × layout), after initialize and process initialize.
    Target,
}

/// A registered check.
#[derive(Debug, Serialize)]
pub struct Check {
    /// Stable dotted id.
    pub id: &'static str,
    /// Requirement ids from the checklist.
    pub requirements: &'static [&'static str],
    /// The requirement in one line, in our words.
    pub summary: &'static str,
    /// Severity of a violation.
    pub severity: Severity,
    /// OMPD entry points the check calls.
    pub entry_points: &'static [EntryPoint],
    /// When it runs.
    pub stage: Stage,
    /// The oldest API generation whose specification states the requirement; libraries of an
    /// older profile skip the check.
    pub since: Profile,
    /// Argument passed to `run` (e.g. the ICV name of a per-ICV check).
    #[serde(skip)]
    pub arg: &'static str,
    /// The check.
    #[serde(skip)]
    pub run: fn(&mut Ctx, &'static str) -> Verdict,
}

/// What a check concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Outcome.
    pub outcome: Outcome,
    /// What the requirement expects.
    pub expected: String,
    /// What the library did.
    pub actual: String,
    /// Where and why.
    pub detail: String,
}

impl Verdict {
    /// A verdict with every field given.
    pub fn new(
        outcome: Outcome,
        expected: impl Into<String>,
        actual: impl Into<String>,
        detail: impl Into<String>,
    ) -> Verdict {
        Verdict {
            outcome,
            expected: expected.into(),
            actual: actual.into(),
            detail: detail.into(),
        }
    }

    /// The check does not apply.
    pub fn skip(reason: impl Into<String>) -> Verdict {
        Verdict::new(Outcome::Skip, "", "", reason)
    }

    /// The harness could not run the check (a malformed table row, a failing tool).
    pub fn harness_error(detail: impl Into<String>) -> Verdict {
        Verdict::new(Outcome::HarnessError, "", "", detail)
    }
}

/// Everything a check can use.
pub struct Ctx<'l> {
    /// The library under test.
    pub lib: &'l Library,
    /// Scenario name.
    pub scenario: &'l str,
    /// The scenario's model (the truth).
    pub model: &'l Model,
    /// Architecture of the image.
    pub arch: Arch,
    /// Layout of the image.
    pub policy: Policy,
    /// The simulated target (absent for library-stage checks).
    pub target: Option<&'static Target>,
    /// The address space, when process initialization succeeded.
    pub aspace: Option<AspaceH<'l>>,
    /// Results of setting up the target (initialize, process initialize).
    pub setup: Setup,
    /// The check's severity (set by the runner before each check).
    pub severity: Severity,
    /// The API generation the library implements (detected once per worker).
    pub profile: Profile,
    /// What checks of this unit wrote to stdout/stderr so far: (check id, first bytes). The
    /// harness writes nothing there, so all of it is the library's.
    pub printed: Vec<(String, String)>,
    /// Callback contract violations recorded by earlier workers of this unit (replaced after a
    /// crash or timeout): (check id, violation). This worker's own are in the ledger.
    pub earlier_violations: Vec<(String, String)>,
    /// The library's ICV list, enumerated once per unit.
    pub icv_table: std::cell::OnceCell<Result<Vec<checks::icv::IcvEntry>, String>>,
    /// What the model's facts cover (everything for a simulated target; what the fixture
    /// recorded for a real one).
    pub known: crate::known::Known,
}

/// What setting up a target unit returned.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// `ompd_get_api_version`.
    pub api_version: Option<Call<i64>>,
    /// `ompd_initialize`.
    pub initialize: Option<Call<()>>,
    /// `ompd_process_initialize` (the handle is in [`Ctx::aspace`]).
    pub process_initialize: Option<Call<()>>,
}

/// Every registered check, in run order (built once).
pub fn registry() -> &'static [&'static Check] {
    static REGISTRY: std::sync::OnceLock<Vec<&'static Check>> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        // Within a stage checks run in registry order: the NULL-argument family is one table of
        // both stages; its version-string query runs with the other queries, before
        // `ompd_initialize`, and its target checks run after every other family (so a NULL that
        // upsets a library's state affects no other family). The corrupted-image and the
        // fault-injection families come last, for the same reason, before the contract check.
        use checks::*;
        let nulls_at = |stage: Stage| null::CHECKS.iter().filter(move |c| c.stage == stage);
        let families: &[&'static [Check]] = &[
            aspace::CHECKS,
            thread::CHECKS,
            parallel::CHECKS,
            task::CHECKS,
            state::CHECKS,
            icv::CHECKS,
            task::frames::CHECKS,
            tool_data::CHECKS,
            dcv::CHECKS,
            icv::strings::CHECKS,
            compare::CHECKS,
            own::CHECKS,
            runtime::CHECKS,
        ];
        r#static::CHECKS
            .iter()
            .chain(lib::QUERIES)
            .chain(nulls_at(Stage::Library))
            .chain(lib::INITIALIZE)
            .chain(families.iter().flat_map(|f| f.iter()))
            .chain(nulls_at(Stage::Target))
            .chain(corrupt::CHECKS)
            .chain(fault::CHECKS)
            .chain(callbacks::OUTPUT)
            .chain(aspace::RELEASE)
            .chain(callbacks::CONTRACT)
            .collect()
    })
}

/// Looks up a check by id.
pub fn find(id: &str) -> Option<&'static Check> {
    registry().iter().copied().find(|c| c.id == id)
}

/// Collects the facts a check establishes over many items and folds them into a verdict.
#[derive(Debug)]
pub struct Judge {
    expected: String,
    severity: Severity,
    failures: Vec<String>,
    allowed: Vec<String>,
    unsupported: Vec<String>,
    checked: usize,
}

impl Judge {
    /// Starts judging against `expected` (the requirement in words) at the ctx's severity.
    pub fn new(ctx: &Ctx, expected: impl Into<String>) -> Judge {
        Judge {
            expected: expected.into(),
            severity: ctx.severity,
            failures: Vec::new(),
            allowed: Vec::new(),
            unsupported: Vec::new(),
            checked: 0,
        }
    }

    /// Records one fact: `ok`, or a failure described by `what`.
    pub fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.checked += 1;
        if !ok {
            self.failures.push(what());
        }
    }

    /// Records a fact that held.
    pub fn holds(&mut self) {
        self.checked += 1;
    }

    /// Records a deviation the spec allows (graded lenient): a warning.
    pub fn allowed(&mut self, what: impl Into<String>) {
        self.checked += 1;
        self.allowed.push(what.into());
    }

    /// Records that the library declined in a way the spec permits (`ompd_rc_unsupported`).
    pub fn unsupported(&mut self, what: impl Into<String>) {
        self.checked += 1;
        self.unsupported.push(what.into());
    }

    /// Records a failure outright.
    pub fn fail(&mut self, what: impl Into<String>) {
        self.checked += 1;
        self.failures.push(what.into());
    }

    /// Folds the facts: any failure fails (warns for SHOULD/ambiguous checks), then any allowed
    /// deviation warns, then all-unsupported is not-supported, else pass. Nothing checked skips.
    pub fn verdict(self) -> Verdict {
        let summarize = |v: &[String]| {
            let mut s = v[0].clone();
            if v.len() > 1 {
                s.push_str(&format!(" (and {} more)", v.len() - 1));
            }
            s
        };
        let n = self.checked;
        if n == 0 {
            return Verdict::skip("nothing to check in this scenario");
        }
        if !self.failures.is_empty() {
            let outcome = if self.severity == Severity::Must {
                Outcome::Fail
            } else {
                Outcome::Warn
            };
            let detail = format!("{} of {n} facts violated", self.failures.len());
            return Verdict::new(outcome, self.expected, summarize(&self.failures), detail);
        }
        if !self.allowed.is_empty() {
            let detail = format!(
                "{} of {n} facts used an allowed alternative",
                self.allowed.len()
            );
            return Verdict::new(
                Outcome::Warn,
                self.expected,
                summarize(&self.allowed),
                detail,
            );
        }
        if !self.unsupported.is_empty() && self.unsupported.len() == n {
            return Verdict::new(
                Outcome::NotSupported,
                self.expected,
                summarize(&self.unsupported),
                "",
            );
        }
        Verdict::new(Outcome::Pass, self.expected, format!("{n} facts hold"), "")
    }
}

/// Describes a call result for messages.
pub fn describe<T: std::fmt::Debug>(c: &Call<T>) -> String {
    match c {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => e.to_string(),
    }
}

/// Judges a call that must fail with `want` (strict), where the codes in `lenient` are accepted
/// with a warning; `ok` or a crash-free other code fails.
pub fn expect_rc<T>(j: &mut Judge, what: &str, got: Call<T>, want: Rc, lenient: &[Rc]) {
    match got {
        Err(Fail::Rc(rc)) if rc == want => j.holds(),
        Err(Fail::Rc(rc)) if lenient.contains(&rc) => {
            j.allowed(format!("{what}: {rc} (spec prefers {want})"))
        }
        Err(Fail::Missing(n)) => j.fail(format!("{what}: {n} is not exported")),
        Err(e) => j.fail(format!("{what}: {e}, expected {want}")),
        Ok(_) => j.fail(format!("{what}: ok, expected {want}")),
    }
}

/// The id bytes (target byte order) of a native thread for `kind` (0 pthread: pointer-sized, 1
/// lwp: 4 bytes), as a debugger passes them to `ompd_get_thread_handle`.
pub fn native_id_bytes(arch: Arch, native: &sim_target::model::NativeId, kind: u64) -> Vec<u8> {
    if kind == abi::thread_id_kind::LWP {
        arch.encode(u64::from(native.lwp), 4)
    } else {
        arch.encode(native.pthread, arch.pointer as usize)
    }
}

/// Helpers shared by the target-stage families.
impl<'l> Ctx<'l> {
    /// The address space, or a skip verdict naming why there is none.
    pub fn aspace(&self) -> Result<&AspaceH<'l>, Verdict> {
        self.aspace.as_ref().ok_or_else(|| {
            let why = match &self.setup.process_initialize {
                Some(Err(e)) => format!("{} failed: {e}", EntryPoint::ProcessInitialize),
                _ => match &self.setup.initialize {
                    Some(Err(e)) => format!("{} failed: {e}", EntryPoint::Initialize),
                    _ => "no address space".to_string(),
                },
            };
            Verdict::skip(why)
        })
    }

    /// The simulated target.
    pub fn target(&self) -> &'static Target {
        self.target.expect("target-stage checks run with a target")
    }

    /// A new, never-initialized target serving this unit's target in the same state: another
    /// process (or device) under a context the library has not seen; a skip verdict when the
    /// target's kind cannot give one.
    pub fn fresh_target(&self) -> Result<&'static Target, Verdict> {
        let target = self.target();
        target
            .source()
            .duplicate()
            .map(Target::leak_source)
            .ok_or_else(|| {
                Verdict::skip(format!(
                    "a {} target cannot serve a second address space",
                    target.kind().name()
                ))
            })
    }

    /// Native id bytes (target byte order) of OpenMP thread `t` for `kind`.
    pub fn thread_id(&self, t: ThreadId, kind: u64) -> Vec<u8> {
        native_id_bytes(self.arch, &self.model.threads[t.0].native, kind)
    }

    /// A thread handle for OpenMP thread `t`, obtained by its pthread id.
    pub fn thread_handle(&self, ah: &AspaceH<'l>, t: ThreadId) -> Call<ThreadH<'l>> {
        self.lib.get_thread_handle(
            ah,
            abi::thread_id_kind::PTHREAD,
            &self.thread_id(t, abi::thread_id_kind::PTHREAD),
        )
    }

    /// Every OpenMP thread of the model.
    pub fn threads(&self) -> impl Iterator<Item = ThreadId> {
        (0..self.model.threads.len()).map(ThreadId)
    }

    /// The current parallel handle of thread `t`.
    pub fn curr_parallel(&self, ah: &AspaceH<'l>, t: ThreadId) -> Call<ParallelH<'l>> {
        let th = self.thread_handle(ah, t)?;
        self.lib.get_curr_parallel_handle(&th)
    }

    /// The current task handle of thread `t`.
    pub fn curr_task(&self, ah: &AspaceH<'l>, t: ThreadId) -> Call<TaskH<'l>> {
        let th = self.thread_handle(ah, t)?;
        self.lib.get_curr_task_handle(&th)
    }

    /// Every distinct innermost region of the model's threads with its current parallel handle,
    /// obtained through the region's first thread in gtid order. Failures to get a handle are
    /// recorded in `j` and the region is left out.
    pub fn regions_with_handles(
        &self,
        ah: &AspaceH<'l>,
        j: &mut Judge,
    ) -> Vec<(RegionId, ThreadId, ParallelH<'l>)> {
        let mut out: Vec<(RegionId, ThreadId, ParallelH<'l>)> = Vec::new();
        for t in self.threads() {
            let r = innermost_region(self.model, t);
            if out.iter().any(|(x, _, _)| *x == r) {
                continue;
            }
            match self.curr_parallel(ah, t) {
                Ok(ph) => out.push((r, t, ph)),
                Err(e) => j.fail(format!("gtid {}: no current parallel handle: {e}", t.0)),
            }
        }
        out
    }

    /// The initial (outermost) region's parallel handle, reached from gtid 0 through the
    /// enclosing chain, when that chain has exactly the model's length (a broken chain is judged
    /// by the parallel family, not by its users).
    pub fn initial_region(&self, ah: &AspaceH<'l>) -> Option<ParallelH<'l>> {
        let mut ph = self.curr_parallel(ah, ThreadId(0)).ok()?;
        let steps = self.model.level(innermost_region(self.model, ThreadId(0)));
        for _ in 0..steps {
            ph = self.lib.get_enclosing_parallel_handle(&ph).ok()?;
        }
        Some(ph)
    }

    /// Every innermost region of the model's threads (as [`Ctx::regions_with_handles`]) plus the
    /// initial region when the threads' regions do not include it.
    pub fn all_regions_with_handles(
        &self,
        ah: &AspaceH<'l>,
        j: &mut Judge,
    ) -> Vec<(RegionId, String, ParallelH<'l>)> {
        let mut out: Vec<(RegionId, String, ParallelH<'l>)> = self
            .regions_with_handles(ah, j)
            .into_iter()
            .map(|(r, t, ph)| (r, format!("region {} (via gtid {})", r.0, t.0), ph))
            .collect();
        if !out.iter().any(|(r, _, _)| r.0 == 0) {
            if let Some(ph) = self.initial_region(ah) {
                out.push((RegionId(0), "the initial region".into(), ph));
            }
        }
        out
    }

    /// Task handles for every task the handle API reaches without walking the generating chain:
    /// each thread's current task and the tasks of its scheduling chain, implicit task n of every
    /// region of [`Ctx::all_regions_with_handles`], each paired with the model task it stands
    /// for. A missing current task or implicit task is a failure recorded in `j`; a scheduling
    /// chain is followed only while the library answers (the task family judges the chains).
    pub fn task_subjects(&self, ah: &AspaceH<'l>, j: &mut Judge) -> Vec<TaskSubject<'l>> {
        let mut out = Vec::new();
        for t in self.threads() {
            let cur = self.model.threads[t.0].current_task;
            let handle = match self.curr_task(ah, t) {
                Ok(h) => h,
                Err(e) => {
                    j.fail(format!("gtid {}: no current task handle: {e}", t.0));
                    continue;
                }
            };
            let chain = self.model.scheduling_chain(cur);
            let mut parents = Vec::new();
            let mut at = self.lib.get_scheduling_task_handle(&handle);
            for (k, task) in chain.iter().enumerate().skip(1) {
                let Ok(h) = at else { break };
                at = self.lib.get_scheduling_task_handle(&h);
                parents.push(TaskSubject {
                    label: format!("scheduling parent {k} of gtid {}'s current task", t.0),
                    task: *task,
                    handle: h,
                });
            }
            out.push(TaskSubject {
                label: format!("current task of gtid {}", t.0),
                task: cur,
                handle,
            });
            out.extend(parents);
        }
        for (r, label, ph) in self.all_regions_with_handles(ah, j) {
            for (n, task) in self.model.regions[r.0].implicit_tasks.iter().enumerate() {
                match self.lib.get_task_in_parallel(&ph, n as i32) {
                    Ok(handle) => out.push(TaskSubject {
                        label: format!("implicit task {n} of {label}"),
                        task: *task,
                        handle,
                    }),
                    Err(e) => j.fail(format!("implicit task {n} of {label}: {e}")),
                }
            }
        }
        out
    }

    /// An integer ICV by name through `handle` at `scope` (looked up by enumeration).
    pub fn icv(
        &self,
        handle: ompd_loader::library::AnyHandle,
        scope: abi::Scope,
        name: &str,
    ) -> Option<Call<(Rc, Option<i64>)>> {
        let ah = self.aspace.as_ref()?;
        let id = checks::icv::icv_id(self, ah, name)?;
        Some(self.lib.get_icv(handle, scope, id))
    }
}

/// One OpenMP thread's handles, each obtained once and absent where the library refuses it: the
/// valid arguments of the families that make one call of one routine per check (NULL arguments,
/// injected faults). Released when dropped.
pub struct ThreadHandles<'l> {
    /// The thread.
    pub gtid: ThreadId,
    /// Its thread handle.
    pub thread: Option<ThreadH<'l>>,
    /// Its current parallel handle.
    pub parallel: Option<ParallelH<'l>>,
    /// Its current task handle.
    pub task: Option<TaskH<'l>>,
}

impl<'l> Ctx<'l> {
    /// The thread whose handles let the all-valid call of `entry` answer, by the model: the first
    /// with the relative the routine asks for, thread 0 for the other routines. `Err` names what no
    /// thread has.
    pub fn subject_thread(&self, entry: EntryPoint) -> Result<ThreadId, &'static str> {
        let m = self.model;
        let task = |t: &ThreadId| &m.tasks[m.threads[t.0].current_task.0];
        let (found, why) = match entry {
            EntryPoint::GetEnclosingParallelHandle => (
                self.threads()
                    .find(|t| m.regions[m.threads[t.0].region.0].parent.is_some()),
                "is in a region with an enclosing region",
            ),
            EntryPoint::GetGeneratingTaskHandle => (
                self.threads().find(|t| task(t).generating.is_some()),
                "runs a task with a generating task",
            ),
            EntryPoint::GetSchedulingTaskHandle => (
                self.threads().find(|t| task(t).scheduling.is_some()),
                "runs a task with a scheduling task",
            ),
            _ => (Some(ThreadId(0)), ""),
        };
        found.ok_or(why)
    }

    /// The thread, current parallel and current task handles of thread `t`.
    pub fn thread_handles(&self, ah: &AspaceH<'l>, t: ThreadId) -> ThreadHandles<'l> {
        let thread = self.thread_handle(ah, t).ok();
        let parallel = thread
            .as_ref()
            .and_then(|h| self.lib.get_curr_parallel_handle(h).ok());
        let task = thread
            .as_ref()
            .and_then(|h| self.lib.get_curr_task_handle(h).ok());
        ThreadHandles {
            gtid: t,
            thread,
            parallel,
            task,
        }
    }
}

impl<'l> ThreadHandles<'l> {
    /// An ICV (handle, scope, id) the getter answers with `ok`: the first enumerated ICV whose
    /// scope one of these handles (or `ah`) stands for and that the getter (the string getter
    /// when `string`) answers; the first with a handle when none answers.
    pub fn answered_icv<'a>(
        &'a self,
        ctx: &Ctx<'l>,
        ah: &'a AspaceH<'l>,
        string: bool,
    ) -> Option<(AnyHandle<'a, 'l>, abi::Scope, u64)> {
        use abi::Scope;
        let table = checks::icv::table(ctx, ah).ok()?;
        let implicit = is_implicit(ctx.model, ctx.model.threads[self.gtid.0].current_task);
        let mut first = None;
        for e in table {
            let handle = match e.scope {
                Scope::GLOBAL | Scope::ADDRESS_SPACE => Some(AnyHandle::Aspace(ah)),
                Scope::THREAD => self.thread.as_ref().map(AnyHandle::Thread),
                Scope::PARALLEL => self.parallel.as_ref().map(AnyHandle::Parallel),
                Scope::TASK => self.task.as_ref().map(AnyHandle::Task),
                Scope::IMPLICIT_TASK if implicit => self.task.as_ref().map(AnyHandle::Task),
                _ => None,
            };
            let Some(h) = handle else { continue };
            let answers = if string {
                ctx.lib.get_icv_string(h, e.scope, e.id).is_ok()
            } else {
                matches!(ctx.lib.get_icv(h, e.scope, e.id), Ok((Rc::OK, _)))
            };
            if answers {
                return Some((h, e.scope, e.id));
            }
            first.get_or_insert((h, e.scope, e.id));
        }
        first
    }
}

/// A task handle a walk reached, with the model task it stands for.
pub struct TaskSubject<'l> {
    /// How the handle was reached, for messages.
    pub label: String,
    /// The model's task.
    pub task: TaskId,
    /// The handle.
    pub handle: TaskH<'l>,
}

/// Judges the refusal of a getter whose answer may need state tracking: with the model's
/// runtime tracking no state `ompd_rc_needs_state_tracking` holds (OMPD-RC-008), with tracking
/// on it fails like every other code.
pub fn refused(j: &mut Judge, ctx: &Ctx, what: &str, e: &Fail) {
    match e {
        Fail::Rc(rc) if *rc == Rc::NEEDS_STATE_TRACKING && !ctx.model.debug_enabled() => j.holds(),
        Fail::Rc(rc) if *rc == Rc::NEEDS_STATE_TRACKING => j.fail(format!(
            "{what}: needs_state_tracking, but the runtime tracks state (ompd_state {})",
            ctx.model.ompd_state
        )),
        e => j.fail(format!("{what}: {e}")),
    }
}

/// Model facts the families share.
pub fn innermost_region(m: &Model, t: ThreadId) -> RegionId {
    m.threads[t.0].region
}

/// True when the task is an implicit task.
pub fn is_implicit(m: &Model, t: TaskId) -> bool {
    matches!(
        m.tasks[t.0].kind,
        sim_target::model::TaskKind::Implicit { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_dotted_and_cite_requirements() {
        let all = registry();
        let mut ids: Vec<_> = all.iter().map(|c| c.id).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate check ids");
        for c in all {
            assert!(
                c.id.split('.').count() >= 3,
                "{}: ids are family.api.property",
                c.id
            );
            assert!(!c.requirements.is_empty(), "{}: no requirement ids", c.id);
            assert!(
                c.requirements.iter().all(|r| r.starts_with("OMPD-")),
                "{}",
                c.id
            );
            // Static checks read the file and runtime-interface checks the target itself; every
            // other check calls the library.
            assert_eq!(
                c.entry_points.is_empty(),
                c.stage == Stage::Static || c.id.starts_with("runtime."),
                "{}: entry points",
                c.id
            );
        }
    }

    #[test]
    fn every_5_0_entry_point_has_a_positive_and_a_negative_check() {
        // Negative checks: the NULL matrix and the injected faults, plus the lifecycle checks
        // that probe refusals of routines the matrix leaves to them.
        let negative_lifecycle = [
            "lib.api_version.known_value",
            "lib.initialize.null_callbacks",
            "lib.initialize.unsupported_version",
            "lib.finalize.before_initialize",
        ];
        let is_negative = |c: &Check| {
            c.id.starts_with("null.")
                || c.id.starts_with("fault.")
                || negative_lifecycle.contains(&c.id)
        };
        for ep in &Profile::V5_0.entry_points() {
            let calling: Vec<&&Check> = registry()
                .iter()
                .filter(|c| c.entry_points.contains(ep))
                .collect();
            assert!(
                calling.iter().any(|c| !is_negative(c)),
                "{ep}: no positive check"
            );
            assert!(
                calling.iter().any(|c| is_negative(c)),
                "{ep}: no negative check"
            );
        }
    }
}
