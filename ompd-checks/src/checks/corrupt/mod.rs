//! Corrupted images: the torn and wild runtime state a debugger meets in a core file taken
//! mid-update or after a wild write. One check per corruption kind of
//! [`sim_target::image::corrupt`] (parent cycles of teams, tasks and serialized-region records;
//! NULL, wild and misaligned pointers; huge counts; unterminated strings), all run by one driver.
//!
//! Each check draws [`CASES`] corruptions of the unit's image with a proptest [`TestRunner`]
//! seeded from the unit (reproducible), and for each one:
//! 1. takes a thread handle on the intact image ("before"), chosen by the model so that
//!    navigating from it reaches the corrupted object;
//! 2. serves the corrupted copy of the image through the unit's own target
//!    ([`ompd_serve::callbacks::Target::substitute`]) and walks every entry point that reaches
//!    the object from that thread: the thread lookup ("after"), ids, state, tool data, ICVs
//!    (values and strings), the enclosing-region, generating-task and scheduling-task chains (each
//!    bounded by the model's length plus one), threads and tasks of each region, frames, task
//!    functions, compares, and for globals the address-space ICVs and display control variables;
//! 3. judges every call (asking the intact image again where needed) and restores it:
//!    - more target-access callbacks than the ledger's budget in one call fails (the library
//!      does not terminate on the corrupted state; OMPD-HANDLE-PAR-005 and OMPD-HANDLE-TASK-002
//!      require chain walks to terminate);
//!    - `ok` with an invalid output (unwritten, NULL, an unterminated string) fails
//!      (OMPD-RC-002);
//!    - `ok` after one of the call's own reads failed (the pointer was wild, the string had no
//!      terminator) must give the answer the same call, with the same arguments, gives on the
//!      intact image without a failed read (values equal, handles comparing equal), else it
//!      fails (OMPD-CB-030);
//!    - any other non-ok passes, and `ok` on intact data passes (a cycle of valid objects is
//!      indistinguishable from a deep but valid chain within one call);
//!    - a crash is attributed by the supervisor;
//! 4. releases every handle and string; a block left live warns (OMPD-RC-006).
//!
//! The corrupted image is served through the unit's own address space rather than a second
//! `ompd_process_initialize` on a fresh copy: Intel's library cannot initialize a second address
//! space in one process (compare.*.other_address_space skips there), and the layout caches the
//! libraries key by context stay valid because no layout word is ever corrupted. A failing case is
//! shrunk by proptest to the simplest corruption that still fails, named in the detail with the
//! routine.

use crate::{Check, Ctx, Profile, Severity, Stage, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{thread_id_kind, Rc, Scope};
use ompd_loader::library::{AnyHandle, AspaceH, Call, Fail, ParallelH, TaskH, ThreadH};
use ompd_report::Outcome;
use ompd_serve::callbacks::{self, Substitution};
use ompd_serve::ledger::Violation;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use sim_target::image::corrupt::{self, Corruption, Kind, Object};
use sim_target::image::ServedImage;
use sim_target::model::{Model, TaskId, ThreadId};
use std::cell::RefCell;

/// Corruptions drawn per unit and kind (the family runs on every scenario × arch × layout unit).
pub const CASES: u32 = 6;

/// Shrink steps allowed when a case fails.
const MAX_SHRINK_ITERS: u32 = 8;

/// A thread index no team of the scenarios has, past every array a library indexes.
const FAR_INDEX: i32 = 1000;

macro_rules! corrupt_checks {
    ($($kind:literal [$($req:literal),+] $summary:literal;)*) => {
        /// Checks of this family, one per corruption kind.
        pub static CHECKS: &[Check] = &[$(
            Check {
                id: concat!("corrupt.", $kind),
                requirements: &[$($req),+],
                summary: $summary,
                severity: Severity::Must,
                entry_points: WALKED,
                stage: Stage::Target,
                since: Profile::V5_0,
                arg: $kind,
                run,
            },
        )*];
    };
}

corrupt_checks! {
    "parent_cycle.team" ["OMPD-HANDLE-PAR-005", "OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-006"]
        "with a team's t_parent pointing at the team itself or a team nested in it, every call terminates within the callback budget and answers ok only with the intact answer or from intact data";
    "parent_cycle.task" ["OMPD-HANDLE-TASK-002", "OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-006"]
        "with a task's td_parent pointing at the task itself or a task it generated, every call terminates within the callback budget and answers ok only with the intact answer or from intact data";
    "parent_cycle.lwt" ["OMPD-HANDLE-PAR-005", "OMPD-HANDLE-TASK-002", "OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-006"]
        "with a serialized-region record's parent pointing at itself or a record inside it, every call terminates within the callback budget and answers ok only with the intact answer or from intact data";
    "pointer.null" ["OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-002", "OMPD-RC-006"]
        "with a NULL pointer anywhere in the runtime's object graph, no call crashes or exceeds the callback budget, and ok comes only with the intact answer or from intact data";
    "pointer.wild" ["OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-002", "OMPD-RC-006"]
        "with a pointer of the object graph aimed at unmapped memory or an object of another type, no call crashes or exceeds the callback budget, and ok comes only with the intact answer or from intact data";
    "pointer.misaligned" ["OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-002", "OMPD-RC-006"]
        "with a pointer of the object graph off by 1 to 7 bytes, no call crashes or exceeds the callback budget, and ok comes only with the intact answer or from intact data";
    "count.huge" ["OMPD-CB-030", "OMPD-CB-034", "OMPD-MEM-006", "OMPD-RC-002", "OMPD-RC-006"]
        "with a huge team size, level, thread count, list length or environment-block size, no call crashes or exceeds the callback budget, and ok comes only with the intact answer or from intact data";
    "string.unterminated" ["OMPD-CB-007", "OMPD-CB-030", "OMPD-CB-034", "OMPD-RC-002", "OMPD-RC-006"]
        "with a string the library reads running to the end of its region without a NUL, no call crashes, and ok comes only with the intact answer and a terminated string";
}

/// Every entry point a walk may call (any kind's walk reaches any of them: the thread, its
/// current region and task are probed whatever the corrupted object), plus the releases.
const WALKED: &[EntryPoint] = &[
    EntryPoint::GetThreadHandle,
    EntryPoint::GetThreadId,
    EntryPoint::GetState,
    EntryPoint::GetToolData,
    EntryPoint::ThreadHandleCompare,
    EntryPoint::EnumerateIcvs,
    EntryPoint::GetIcvFromScope,
    EntryPoint::GetIcvStringFromScope,
    EntryPoint::GetCurrParallelHandle,
    EntryPoint::GetEnclosingParallelHandle,
    EntryPoint::GetThreadInParallel,
    EntryPoint::GetTaskInParallel,
    EntryPoint::ParallelHandleCompare,
    EntryPoint::GetCurrTaskHandle,
    EntryPoint::GetGeneratingTaskHandle,
    EntryPoint::GetSchedulingTaskHandle,
    EntryPoint::GetTaskParallelHandle,
    EntryPoint::GetTaskFrame,
    EntryPoint::GetTaskFunction,
    EntryPoint::TaskHandleCompare,
    EntryPoint::GetDisplayControlVars,
    EntryPoint::RelDisplayControlVars,
    EntryPoint::RelThreadHandle,
    EntryPoint::RelParallelHandle,
    EntryPoint::RelTaskHandle,
];

/// What the family expects, in one line.
const EXPECTED: &str = "every call on the corrupted image terminates within the callback budget; ok only from intact reads or with the intact image's answer, never with an invalid output";

fn run(ctx: &mut Ctx, arg: &'static str) -> Verdict {
    let Some(kind) = Kind::from_id(arg) else {
        return Verdict::harness_error(format!("unknown corruption kind {arg:?}"));
    };
    let ah = crate::aspace_or_skip!(ctx);
    // Like every family, a check skips when an entry point it calls is not exported (the
    // inventory checks judge the exports).
    let exported = ctx.lib.api.exported();
    if let Some(missing) = WALKED.iter().find(|e| !exported.contains(e)) {
        return Verdict::skip(format!("{missing} is not exported"));
    }
    if ctx.model.threads.is_empty() {
        return Verdict::skip("the scenario has no OpenMP thread");
    }
    let target = ctx.target();
    let Some(image) = target.image() else {
        return Verdict::skip(format!(
            "corrupting memory needs a simulated image, not a {} target",
            target.kind().name()
        ));
    };
    let Some(strategy) = corrupt::strategy(image, kind) else {
        return Verdict::skip(format!(
            "the image offers no {} corruption (e.g. no serialized-region record)",
            kind.id()
        ));
    };
    // Everything cached per unit is filled before the first mark, so it never counts as a leak.
    let ids = Ids::new(ctx, ah);
    // The cases and the shrinking are driven here rather than by `TestRunner::run`, which
    // prints to stderr when it stops shrinking (that output would count as the library's).
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed(ctx, arg)),
    );
    let tally = RefCell::new(Tally::default());
    let mut result = Ok(());
    for _ in 0..CASES {
        let mut tree = match strategy.new_tree(&mut runner) {
            Ok(t) => t,
            Err(why) => {
                result = Err(Err(why));
                break;
            }
        };
        let first = tree.current();
        if let Err(why) = run_case(ctx, ah, &ids, &first, &tally) {
            result = Err(Ok(shrink(&mut *tree, (first, why), |c| {
                run_case(ctx, ah, &ids, c, &tally)
            })));
            break;
        }
    }
    let tally = tally.into_inner();
    match result {
        Err(Ok((c, why))) => Verdict::new(
            Outcome::Fail,
            EXPECTED,
            why,
            format!(
                "minimal corruption: {c}; {} calls judged over {} corrupted images (drawn and shrunk)",
                tally.calls, tally.cases
            ),
        ),
        Err(Err(why)) => Verdict::new(
            Outcome::HarnessError,
            EXPECTED,
            "",
            format!("the corruption generator gave up: {why}"),
        ),
        Ok(()) if tally.cases == 0 => {
            Verdict::skip("no corrupted image reached a thread handle on the intact image")
        }
        Ok(()) => match tally.leaks.first() {
            Some(leak) => Verdict::new(
                Outcome::Warn,
                EXPECTED,
                leak.clone(),
                format!(
                    "{} of {} corrupted images left a block live (OMPD-RC-006)",
                    tally.leaks.len(),
                    tally.cases
                ),
            ),
            None => Verdict::new(
                Outcome::Pass,
                EXPECTED,
                format!(
                    "{} calls judged over {} corrupted images",
                    tally.calls, tally.cases
                ),
                "",
            ),
        },
    }
}

/// Shrinks a failing case: simpler corruptions are tried while they still fail, at most
/// [`MAX_SHRINK_ITERS`] of them; returns the simplest failing one with its finding.
fn shrink(
    tree: &mut dyn ValueTree<Value = Corruption>,
    mut best: (Corruption, String),
    mut fails: impl FnMut(&Corruption) -> Result<(), String>,
) -> (Corruption, String) {
    if !tree.simplify() {
        return best;
    }
    for _ in 0..MAX_SHRINK_ITERS {
        let c = tree.current();
        let more = match fails(&c) {
            Err(why) => {
                best = (c, why);
                tree.simplify()
            }
            Ok(()) => tree.complicate(),
        };
        if !more {
            break;
        }
    }
    best
}

/// FNV-1a of `text`: stable across Rust releases, unlike the standard hasher.
fn fnv(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A seed for the unit: the same unit draws the same corruptions in every run.
fn seed(ctx: &Ctx, kind: &str) -> [u8; 32] {
    let h = fnv(&format!(
        "{kind}/{}/{}/{}",
        ctx.scenario,
        ctx.arch.name(),
        ctx.policy
    ));
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&(h ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes());
    }
    out
}

/// What the cases of one check saw (cases that passed, calls judged, leaks).
#[derive(Default)]
struct Tally {
    cases: usize,
    calls: usize,
    leaks: Vec<String>,
}

/// The ICVs the walks read, by name, with the enumerated id and scope.
struct Ids {
    entries: Vec<crate::IcvEntry>,
}

impl Ids {
    fn new(ctx: &Ctx, ah: &AspaceH) -> Ids {
        Ids {
            entries: ctx.icvs(ah).unwrap_or_default(),
        }
    }

    fn get(&self, name: &str) -> Option<(u64, Scope)> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| (e.id, e.scope))
    }

    fn address_space(&self) -> impl Iterator<Item = &crate::IcvEntry> {
        self.entries
            .iter()
            .filter(|e| e.scope == Scope::ADDRESS_SPACE || e.scope == Scope::GLOBAL)
    }
}

/// ICVs read through a thread handle (their own field, the current task's, the nested list).
const THREAD_ICVS: [&str; 3] = ["thread-num-var", "dyn-var", "nthreads-var"];
/// ICVs read through a parallel handle (team size, levels).
const PARALLEL_ICVS: [&str; 3] = ["team-size-var", "levels-var", "active-levels-var"];
/// ICVs read through a task handle (the team's level and the nested list, the flags).
const TASK_ICVS: [&str; 2] = ["bind-var", "final-task-var"];
/// ICVs whose string form the walks read (list ICVs and the runtime's strings).
const STRING_ICVS: [&str; 5] = [
    "nthreads-var",
    "bind-var",
    "affinity-format-var",
    "tool-libraries-var",
    "tool-verbose-init-var",
];

/// Where a walk starts and how far it goes, from the model.
#[derive(Clone, Copy, Debug)]
struct Plan {
    thread: ThreadId,
    /// Address-space ICVs and display control variables.
    aspace: bool,
    /// Parallel handles probed along the enclosing chain (1: the current region only).
    parallel_steps: usize,
    /// Task handles probed along the generating chain (1: the current task only).
    task_steps: usize,
    /// Steps along the scheduling chain.
    scheduling_steps: usize,
}

impl Plan {
    /// A walk from the thread whose navigation reaches `object`.
    fn new(m: &Model, object: Object) -> Plan {
        let region_len = |t: ThreadId| m.region_chain(m.threads[t.0].region).len();
        let gen_len = |t: ThreadId| m.generating_chain(m.threads[t.0].current_task).len();
        let sched_len = |t: ThreadId| m.scheduling_chain(m.threads[t.0].current_task).len();
        let threads = || (0..m.threads.len()).map(ThreadId);
        let near = |thread: ThreadId| Plan {
            thread,
            aspace: false,
            parallel_steps: 1,
            task_steps: 1,
            scheduling_steps: 1,
        };
        let full = |thread: ThreadId| Plan {
            parallel_steps: region_len(thread) + 1,
            task_steps: gen_len(thread) + 1,
            scheduling_steps: sched_len(thread) + 1,
            ..near(thread)
        };
        // The thread whose chain holds `x` closest to its start.
        let closest = |pos: &dyn Fn(ThreadId) -> Option<usize>| {
            threads()
                .filter_map(|t| pos(t).map(|p| (p, t)))
                .min()
                .map(|(_, t)| t)
        };
        match object {
            Object::Thread(g) => near(ThreadId(g.min(m.threads.len() - 1))),
            Object::Team(r) | Object::Lwt(r) => {
                let t = closest(&|t| {
                    m.region_chain(m.threads[t.0].region)
                        .iter()
                        .position(|x| x.0 == r)
                });
                full(t.unwrap_or(ThreadId(0)))
            }
            Object::Task(k) => {
                let task = TaskId(k);
                let t = closest(&|t| {
                    m.generating_chain(m.threads[t.0].current_task)
                        .iter()
                        .position(|x| *x == task)
                })
                .or_else(|| {
                    closest(&|t| {
                        m.scheduling_chain(m.threads[t.0].current_task)
                            .iter()
                            .position(|x| *x == task)
                    })
                });
                full(t.unwrap_or(ThreadId(0)))
            }
            Object::Global => Plan {
                aspace: true,
                ..near(ThreadId(0))
            },
        }
    }
}

/// A result a walk keeps: a value, or a handle it obtained (kept alive until judged).
enum Got<'l> {
    Value(String),
    Thread(ThreadH<'l>),
    Parallel(ParallelH<'l>),
    Task(TaskH<'l>),
}

/// A kept answer: a value, or the index of a handle in the walk's arenas.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    Value(String),
    Thread(usize),
    Parallel(usize),
    Task(usize),
}

/// One judged call.
struct Probe {
    /// Position in the walk and routine, e.g. `parallel[1] ompd_get_thread_in_parallel(0)`.
    label: String,
    got: Call<Answer>,
    /// Reads of this call that failed.
    failed_reads: u64,
    /// Callback-contract violations during this call (the budget's included).
    violations: Vec<Violation>,
    /// For `ok` after a failed read: whether the same call on the intact image answers the same
    /// (`Err` says how it differs).
    reference: Option<Result<(), String>>,
}

/// A thread handle of a walk: the one taken on the intact image, or one the walk obtained.
#[derive(Clone, Copy)]
enum At {
    Before,
    Thread(usize),
}

/// One walk over the entry points reaching the corrupted object, and what each call answered.
struct Walk<'w, 'l> {
    ctx: &'w Ctx<'l>,
    ah: &'w AspaceH<'l>,
    ids: &'w Ids,
    before: &'w ThreadH<'l>,
    /// The corrupted memory being served (paused to ask the intact image).
    served: &'w Substitution<'w>,
    probes: Vec<Probe>,
    threads: Vec<ThreadH<'l>>,
    parallels: Vec<ParallelH<'l>>,
    tasks: Vec<TaskH<'l>>,
}

/// Runs `call`, returning its result with the reads that failed and the violations recorded
/// meanwhile (taken from the ledger: they are this family's findings).
fn measured<T>(call: impl FnOnce() -> T) -> (T, u64, Vec<Violation>) {
    let (mark, failed) = {
        let l = callbacks::ledger();
        (l.mark(), l.counters().failed_reads)
    };
    let out = call();
    let mut l = callbacks::ledger();
    let violations = l.take_violations_since(mark);
    let failed = l.counters().failed_reads - failed;
    (out, failed, violations)
}

fn value<'a, T: std::fmt::Debug>(c: Call<T>) -> Call<Got<'a>> {
    c.map(|v| Got::Value(format!("{v:?}")))
}

impl<'w, 'l> Walk<'w, 'l> {
    fn new(
        ctx: &'w Ctx<'l>,
        ah: &'w AspaceH<'l>,
        ids: &'w Ids,
        before: &'w ThreadH<'l>,
        served: &'w Substitution<'w>,
    ) -> Self {
        Walk {
            ctx,
            ah,
            ids,
            before,
            served,
            probes: Vec::new(),
            threads: Vec::new(),
            parallels: Vec::new(),
            tasks: Vec::new(),
        }
    }

    fn thread(&self, at: At) -> &ThreadH<'l> {
        match at {
            At::Before => self.before,
            At::Thread(i) => &self.threads[i],
        }
    }

    /// Makes one call, measuring its failed reads and violations, and keeps the answer. When
    /// the call answers `ok` after a failed read, the same call is made again on the intact image
    /// to see whether the answer is still right.
    fn probe(&mut self, label: String, call: impl Fn(&Self) -> Call<Got<'l>>) -> Option<Answer> {
        let (got, failed_reads, violations) = measured(|| call(self));
        if matches!(got, Err(Fail::Missing(_))) {
            return None;
        }
        let reference = match &got {
            Ok(g) if failed_reads > 0 => {
                let _intact = self.served.pause();
                let (again, again_failed, _) = measured(|| call(self));
                Some(self.same(g, again, again_failed))
            }
            _ => None,
        };
        let got = got.map(|g| match g {
            Got::Value(v) => Answer::Value(v),
            Got::Thread(h) => {
                self.threads.push(h);
                Answer::Thread(self.threads.len() - 1)
            }
            Got::Parallel(h) => {
                self.parallels.push(h);
                Answer::Parallel(self.parallels.len() - 1)
            }
            Got::Task(h) => {
                self.tasks.push(h);
                Answer::Task(self.tasks.len() - 1)
            }
        });
        let answer = got.as_ref().ok().cloned();
        self.probes.push(Probe {
            label,
            got,
            failed_reads,
            violations,
            reference,
        });
        answer
    }

    /// Whether `got` (on the corrupted image) is what the same call answered on the intact one.
    fn same(&self, got: &Got<'l>, intact: Call<Got<'l>>, failed: u64) -> Result<(), String> {
        let intact = match intact {
            Ok(_) if failed > 0 => {
                return Err(
                    "its answer rests on garbage: the same call fails its reads on the \
                     intact image too (its input came from the corrupted state)"
                        .into(),
                )
            }
            Ok(g) => g,
            Err(e) => return Err(format!("the same call on the intact image answers {e}")),
        };
        let lib = self.ctx.lib;
        let equal = |c: Call<i32>| match c {
            Ok(0) => Ok(()),
            Ok(v) => Err(format!(
                "its handle compares {v} with the intact image's answer"
            )),
            Err(e) => Err(format!("comparing with the intact image's handle: {e}")),
        };
        match (got, &intact) {
            (Got::Value(x), Got::Value(y)) if x == y => Ok(()),
            (Got::Value(x), Got::Value(y)) => {
                Err(format!("it answers {x} where the intact image answers {y}"))
            }
            (Got::Thread(x), Got::Thread(y)) => equal(lib.thread_compare(x, y)),
            (Got::Parallel(x), Got::Parallel(y)) => equal(lib.parallel_compare(x, y)),
            (Got::Task(x), Got::Task(y)) => equal(lib.task_compare(x, y)),
            _ => Err("an answer of another kind than the intact image's".into()),
        }
    }

    /// An ICV's value through `handle` (`ok` and `incomplete` are answers).
    fn icv(&mut self, label: &str, name: &str, handle: impl Fn(&Self) -> AnyHandle<'_, 'l>) {
        let Some((id, scope)) = self.ids.get(name) else {
            return;
        };
        self.probe(
            format!("{label} ompd_get_icv_from_scope({name})"),
            |w| match w.ctx.lib.get_icv(handle(w), scope, id) {
                Ok((rc, v)) if rc == Rc::OK || rc == Rc::INCOMPLETE => {
                    Ok(Got::Value(format!("{rc} {v:?}")))
                }
                Ok((rc, _)) => Err(Fail::Rc(rc)),
                Err(e) => Err(e),
            },
        );
    }

    /// An ICV's string form through `handle`, when the library enumerates it at `scope`.
    fn icv_string(
        &mut self,
        label: &str,
        name: &str,
        at: Scope,
        handle: impl Fn(&Self) -> AnyHandle<'_, 'l>,
    ) {
        let Some((id, scope)) = self.ids.get(name).filter(|(_, s)| *s == at) else {
            return;
        };
        self.probe(
            format!("{label} ompd_get_icv_string_from_scope({name})"),
            |w| value(w.ctx.lib.get_icv_string(handle(w), scope, id)),
        );
    }

    fn run(&mut self, plan: &Plan) {
        let (lib, ah) = (self.ctx.lib, self.ah);
        if plan.aspace {
            self.probe(EntryPoint::GetDisplayControlVars.to_string(), |_| {
                lib.get_display_control_vars(ah).map(|v| {
                    let texts: Vec<&str> = v.entries.iter().map(|e| e.text.as_str()).collect();
                    Got::Value(texts.join("\n"))
                })
            });
            let entries: Vec<(u64, Scope, String)> = self
                .ids
                .address_space()
                .map(|e| (e.id, e.scope, e.name.clone()))
                .collect();
            for (id, scope, name) in entries {
                self.probe(
                    format!("{}({name})", EntryPoint::GetIcvFromScope),
                    |_| match lib.get_icv(AnyHandle::Aspace(ah), scope, id) {
                        Ok((rc, v)) if rc == Rc::OK || rc == Rc::INCOMPLETE => {
                            Ok(Got::Value(format!("{rc} {v:?}")))
                        }
                        Ok((rc, _)) => Err(Fail::Rc(rc)),
                        Err(e) => Err(e),
                    },
                );
            }
            for name in STRING_ICVS {
                self.icv_string("", name, Scope::ADDRESS_SPACE, |w| AnyHandle::Aspace(w.ah));
            }
        }
        let t = plan.thread;
        let th = match self.probe(EntryPoint::GetThreadHandle.to_string(), |w| {
            w.ctx.thread_handle(ah, t).map(Got::Thread)
        }) {
            Some(Answer::Thread(i)) => At::Thread(i),
            _ => At::Before,
        };
        let size = self.ctx.arch.pointer as usize;
        self.probe("thread ompd_get_thread_id".into(), |w| {
            value(lib.get_thread_id(w.thread(th), thread_id_kind::PTHREAD, size))
        });
        self.probe("thread ompd_get_state".into(), |w| {
            value(lib.get_state(w.thread(th), true))
        });
        self.probe("thread ompd_get_tool_data".into(), |w| {
            value(lib.get_tool_data(AnyHandle::Thread(w.thread(th)), Scope::THREAD))
        });
        self.probe("thread ompd_thread_handle_compare".into(), |w| {
            value(lib.thread_compare(w.thread(th), w.before))
        });
        for name in THREAD_ICVS {
            self.icv("thread", name, |w| AnyHandle::Thread(w.thread(th)));
        }
        self.icv_string("thread", "nthreads-var", Scope::THREAD, |w| {
            AnyHandle::Thread(w.thread(th))
        });
        let mut p = self.probe("thread ompd_get_curr_parallel_handle".into(), |w| {
            lib.get_curr_parallel_handle(w.thread(th))
                .map(Got::Parallel)
        });
        for k in 0..plan.parallel_steps {
            let Some(Answer::Parallel(i)) = p else { break };
            self.parallel(k, i);
            p = self.probe(
                format!("parallel[{k}] ompd_get_enclosing_parallel_handle"),
                |w| {
                    lib.get_enclosing_parallel_handle(&w.parallels[i])
                        .map(Got::Parallel)
                },
            );
        }
        let current = self.probe("thread ompd_get_curr_task_handle".into(), |w| {
            lib.get_curr_task_handle(w.thread(th)).map(Got::Task)
        });
        let mut task = current.clone();
        for k in 0..plan.task_steps {
            let Some(Answer::Task(i)) = task else { break };
            self.task(k, i);
            task = self.probe(format!("task[{k}] ompd_get_generating_task_handle"), |w| {
                lib.get_generating_task_handle(&w.tasks[i]).map(Got::Task)
            });
        }
        let mut sched = current;
        for k in 0..plan.scheduling_steps {
            let Some(Answer::Task(i)) = sched else { break };
            sched = self.probe(
                format!("scheduling[{k}] ompd_get_scheduling_task_handle"),
                |w| lib.get_scheduling_task_handle(&w.tasks[i]).map(Got::Task),
            );
        }
    }

    /// The calls on parallel handle `i`, the `k`-th of the enclosing chain.
    fn parallel(&mut self, k: usize, i: usize) {
        let lib = self.ctx.lib;
        let label = format!("parallel[{k}]");
        for name in PARALLEL_ICVS {
            self.icv(&label, name, |w| AnyHandle::Parallel(&w.parallels[i]));
        }
        self.probe(format!("{label} ompd_get_tool_data"), |w| {
            value(lib.get_tool_data(AnyHandle::Parallel(&w.parallels[i]), Scope::PARALLEL))
        });
        for n in [0, FAR_INDEX] {
            self.probe(format!("{label} ompd_get_thread_in_parallel({n})"), |w| {
                lib.get_thread_in_parallel(&w.parallels[i], n)
                    .map(Got::Thread)
            });
            self.probe(format!("{label} ompd_get_task_in_parallel({n})"), |w| {
                lib.get_task_in_parallel(&w.parallels[i], n).map(Got::Task)
            });
        }
    }

    /// The calls on task handle `i`, the `k`-th of the generating chain.
    fn task(&mut self, k: usize, i: usize) {
        let lib = self.ctx.lib;
        let label = format!("task[{k}]");
        for name in TASK_ICVS {
            self.icv(&label, name, |w| AnyHandle::Task(&w.tasks[i]));
        }
        if k == 0 {
            self.icv_string(&label, "bind-var", Scope::TASK, |w| {
                AnyHandle::Task(&w.tasks[i])
            });
        }
        self.probe(format!("{label} ompd_get_tool_data"), |w| {
            value(lib.get_tool_data(AnyHandle::Task(&w.tasks[i]), Scope::TASK))
        });
        self.probe(format!("{label} ompd_get_task_frame"), |w| {
            value(lib.get_task_frame(&w.tasks[i]))
        });
        self.probe(format!("{label} ompd_get_task_function"), |w| {
            value(lib.get_task_function(&w.tasks[i]))
        });
        self.probe(format!("{label} ompd_get_task_parallel_handle"), |w| {
            lib.get_task_parallel_handle(&w.tasks[i]).map(Got::Parallel)
        });
    }
}

/// Runs one corrupted image; `Err` is the finding (routine and what it did).
fn run_case(
    ctx: &Ctx,
    ah: &AspaceH,
    ids: &Ids,
    c: &Corruption,
    tally: &RefCell<Tally>,
) -> Result<(), String> {
    let target = ctx.target();
    let plan = Plan::new(ctx.model, c.object);
    let mark = callbacks::ledger().mark();
    let verdict = {
        let Ok(before) = ctx.thread_handle(ah, plan.thread) else {
            return Ok(());
        };
        let Some(image) = target.image() else {
            return Err("harness: corrupting memory needs a simulated image".to_string());
        };
        let mut memory = image.memory.clone();
        if let Err(e) = c.apply(&mut memory) {
            return Err(format!("harness: the corruption does not apply: {e}"));
        }
        let served = target.substitute(memory);
        let mut walk = Walk::new(ctx, ah, ids, &before, &served);
        walk.run(&plan);
        tally.borrow_mut().calls += walk.probes.len();
        judge(&walk.probes)
        // The walk's handles and strings are released here, then the intact image is back.
    };
    let leak = {
        let l = callbacks::ledger();
        let live = l.since(mark).new_live;
        live.first().map(|b| {
            format!(
                "{} block(s) still live after releasing every handle and string of the walk \
                 (first: {} bytes from {}) on {c}",
                live.len(),
                b.size,
                b.site
            )
        })
    };
    let mut t = tally.borrow_mut();
    t.cases += 1;
    if let (Some(leak), Ok(())) = (leak, &verdict) {
        t.leaks.push(leak);
    }
    verdict
}

/// Judges every call of a walk over the corrupted image.
fn judge(probes: &[Probe]) -> Result<(), String> {
    for p in probes {
        if let Some(v) = p.violations.first() {
            return Err(match v {
                Violation::BudgetExceeded { cap, .. } => format!(
                    "{}: more than {cap} target-access callbacks in one call (it does not terminate on the corrupted state)",
                    p.label
                ),
                other => format!("{}: callback contract violation {other:?}", p.label),
            });
        }
        if let Err(Fail::Invalid(m)) = &p.got {
            return Err(format!("{}: ok with an invalid output: {m}", p.label));
        }
        if let Some(Err(why)) = &p.reference {
            return Err(format!(
                "{}: ok after {} failed read(s), but {why}",
                p.label, p.failed_reads
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_check_per_kind() {
        let kinds: Vec<&str> = CHECKS.iter().map(|c| c.arg).collect();
        let all: Vec<&str> = Kind::ALL.iter().map(|k| k.id()).collect();
        assert_eq!(kinds, all);
        for c in CHECKS {
            assert_eq!(c.id, format!("corrupt.{}", c.arg));
        }
    }

    fn probe(got: Call<Answer>, failed_reads: u64) -> Probe {
        Probe {
            label: "parallel[0] ompd_get_thread_in_parallel(0)".into(),
            got,
            failed_reads,
            violations: Vec::new(),
            reference: None,
        }
    }

    #[test]
    fn judging_fails_on_budget_invalid_output_and_wrong_answers_after_failed_reads() {
        let ok = || Ok(Answer::Value("ok Some(4)".into()));
        // Non-ok passes, and ok on intact data passes.
        assert!(judge(&[probe(Err(Fail::Rc(Rc::ERROR)), 2), probe(ok(), 0)]).is_ok());
        // Ok after a failed read passes only with the intact image's answer.
        let mut same = probe(ok(), 1);
        same.reference = Some(Ok(()));
        assert!(judge(&[same]).is_ok());
        let mut wrong = probe(ok(), 1);
        wrong.reference = Some(Err("it answers 0 where the intact image answers 4".into()));
        let e = judge(&[wrong]).unwrap_err();
        assert!(
            e.contains("thread_in_parallel(0): ok after 1 failed read"),
            "{e}"
        );
        let mut looping = probe(Err(Fail::Rc(Rc::ERROR)), 0);
        looping.violations.push(Violation::BudgetExceeded {
            site: EntryPoint::GetThreadInParallel.name(),
            callback: "read_memory",
            cap: 10,
        });
        assert!(judge(&[looping])
            .unwrap_err()
            .contains("does not terminate"));
        let invalid = probe(Err(Fail::Invalid("thread handle is NULL".into())), 0);
        assert!(judge(&[invalid]).unwrap_err().contains("invalid output"));
    }

    #[test]
    fn seeds_differ_by_unit_and_reproduce() {
        let a = fnv("pointer.wild/serial/lp64-le/natural");
        assert_eq!(a, fnv("pointer.wild/serial/lp64-le/natural"));
        assert_ne!(a, fnv("pointer.wild/serial/lp64-le/packed"));
    }

    #[test]
    fn plans_start_where_navigation_reaches_the_object() {
        let m = sim_target::model::scenario("serialized").unwrap().model;
        // The serialized run's records belong to the thread inside it (gtid 1).
        let p = Plan::new(&m, Object::Lwt(2));
        assert_eq!(p.thread, ThreadId(1));
        assert!(p.parallel_steps >= 5 && p.task_steps >= 2);
        let g = Plan::new(&m, Object::Global);
        assert!(g.aspace && g.parallel_steps == 1);
        let n = sim_target::model::scenario("nested-tasks").unwrap().model;
        let deepest = n.tasks.len() - 1;
        let t = Plan::new(&n, Object::Task(deepest));
        let chain = n.generating_chain(n.threads[t.thread.0].current_task);
        assert!(chain.contains(&TaskId(deepest)));
    }
}
