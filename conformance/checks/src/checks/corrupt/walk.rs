//! One walk over the entry points that reach a corrupted object: every call is made on the
//! corrupted image, measured (failed reads, callback violations) and kept for judging, with the
//! handles it obtained.

use super::plan::Plan;
use crate::{Ctx, IcvEntry};
use ompd_abi::EntryPoint;
use ompd_abi::{thread_id_kind, Rc, Scope};
use ompd_loader::library::{AnyHandle, AspaceH, Call, Fail, ParallelH, TaskH, ThreadH};
use ompd_serve::callbacks::{self, Substitution};
use ompd_serve::ledger::Violation;
use sim_target::model::ThreadId;

/// A thread index no team of the scenarios has, past every array a library indexes.
const FAR_INDEX: i32 = 1000;

/// The ICVs the walks read, by name, with the enumerated id and scope.
pub(super) struct Ids {
    entries: Vec<IcvEntry>,
}

impl Ids {
    pub(super) fn new(ctx: &Ctx, ah: &AspaceH) -> Ids {
        Ids {
            entries: ctx.icvs_before_break(ah).unwrap_or_default(),
        }
    }

    fn get(&self, name: &str) -> Option<(u64, Scope)> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| (e.id, e.scope))
    }

    fn address_space(&self) -> impl Iterator<Item = &IcvEntry> {
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

/// A result a walk keeps: a value, or a handle it obtained (kept alive until judged).
enum Got<'l> {
    Value(String),
    Thread(ThreadH<'l>),
    Parallel(ParallelH<'l>),
    Task(TaskH<'l>),
}

/// A kept answer: a value, or the index of a handle in the walk's arenas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Answer {
    Value(String),
    Thread(usize),
    Parallel(usize),
    Task(usize),
}

/// One judged call.
pub(super) struct Probe {
    /// Position in the walk and routine, e.g. `parallel[1] ompd_get_thread_in_parallel(0)`.
    pub(super) label: String,
    pub(super) got: Call<Answer>,
    /// Reads of this call that failed.
    pub(super) failed_reads: u64,
    /// Callback-contract violations during this call (the budget's included).
    pub(super) violations: Vec<Violation>,
    /// For `ok` after a failed read: whether the same call on the intact image answers the same
    /// (`Err` says how it differs).
    pub(super) reference: Option<Result<(), String>>,
}

/// A thread handle of a walk: the one taken on the intact image, or one the walk obtained.
#[derive(Clone, Copy)]
enum At {
    Before,
    Thread(usize),
}

/// One walk over the entry points reaching the corrupted object, and what each call answered.
pub(super) struct Walk<'w, 'l> {
    ctx: &'w Ctx<'l>,
    ah: &'w AspaceH<'l>,
    ids: &'w Ids,
    before: &'w ThreadH<'l>,
    /// The corrupted memory being served (paused to ask the intact image).
    served: &'w Substitution<'w>,
    pub(super) probes: Vec<Probe>,
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

/// An ICV getter's answer: `ok` and `incomplete` are values, any other code a failure.
fn icv_value<'a>(c: Call<(Rc, Option<i64>)>) -> Call<Got<'a>> {
    match c {
        Ok((rc, v)) if rc == Rc::OK || rc == Rc::INCOMPLETE => {
            Ok(Got::Value(format!("{rc} {v:?}")))
        }
        Ok((rc, _)) => Err(Fail::Rc(rc)),
        Err(e) => Err(e),
    }
}

/// A value answer, shown as its debug form.
fn value<'a, T: std::fmt::Debug>(c: Call<T>) -> Call<Got<'a>> {
    c.map(|v| Got::Value(format!("{v:?}")))
}

impl<'w, 'l> Walk<'w, 'l> {
    pub(super) fn new(
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

    fn at(&self, at: At) -> &ThreadH<'l> {
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
        self.probe(format!("{label} ompd_get_icv_from_scope({name})"), |w| {
            icv_value(w.ctx.lib.get_icv(handle(w), scope, id))
        });
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

    /// Walks every entry point `plan` reaches, in a fixed order: the address space's ICVs and
    /// display control variables, the thread, its enclosing-region chain, its generating and
    /// scheduling chains.
    pub(super) fn run(&mut self, plan: &Plan) {
        if plan.aspace {
            self.address_space();
        }
        let th = self.thread(plan.thread);
        self.enclosing_chain(th, plan.parallel_steps);
        self.task_chains(th, plan);
    }

    /// The display control variables and every address-space ICV (values and strings).
    fn address_space(&mut self) {
        let (lib, ah) = (self.ctx.lib, self.ah);
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
            self.probe(format!("{}({name})", EntryPoint::GetIcvFromScope), |_| {
                icv_value(lib.get_icv(AnyHandle::Aspace(ah), scope, id))
            });
        }
        for name in STRING_ICVS {
            self.icv_string("", name, Scope::ADDRESS_SPACE, |w| AnyHandle::Aspace(w.ah));
        }
    }

    /// The thread handle of OpenMP thread `t` and the calls on it; the handle the other calls
    /// use (the one taken on the intact image when the corrupted one gives none).
    fn thread(&mut self, t: ThreadId) -> At {
        let (lib, ah) = (self.ctx.lib, self.ah);
        let th = match self.probe(EntryPoint::GetThreadHandle.to_string(), |w| {
            w.ctx.thread_handle(ah, t).map(Got::Thread)
        }) {
            Some(Answer::Thread(i)) => At::Thread(i),
            _ => At::Before,
        };
        let size = self.ctx.model.pthread_size(self.ctx.arch) as usize;
        self.probe("thread ompd_get_thread_id".into(), |w| {
            value(lib.get_thread_id(w.at(th), thread_id_kind::PTHREAD, size))
        });
        self.probe("thread ompd_get_state".into(), |w| {
            value(lib.get_state(w.at(th), true))
        });
        self.probe("thread ompd_get_tool_data".into(), |w| {
            value(lib.get_tool_data(AnyHandle::Thread(w.at(th)), Scope::THREAD))
        });
        self.probe("thread ompd_thread_handle_compare".into(), |w| {
            value(lib.thread_compare(w.at(th), w.before))
        });
        for name in THREAD_ICVS {
            self.icv("thread", name, |w| AnyHandle::Thread(w.at(th)));
        }
        self.icv_string("thread", "nthreads-var", Scope::THREAD, |w| {
            AnyHandle::Thread(w.at(th))
        });
        th
    }

    /// The thread's current region and `steps` steps along its enclosing chain.
    fn enclosing_chain(&mut self, th: At, steps: usize) {
        let lib = self.ctx.lib;
        let mut p = self.probe("thread ompd_get_curr_parallel_handle".into(), |w| {
            lib.get_curr_parallel_handle(w.at(th)).map(Got::Parallel)
        });
        for k in 0..steps {
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
    }

    /// The thread's current task, its generating chain and its scheduling chain.
    fn task_chains(&mut self, th: At, plan: &Plan) {
        let lib = self.ctx.lib;
        let current = self.probe("thread ompd_get_curr_task_handle".into(), |w| {
            lib.get_curr_task_handle(w.at(th)).map(Got::Task)
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
