//! The handles the families judge, reached the ways a debugger reaches them: every region with
//! its parallel handle, every task the handle API reaches ([`TaskSubject`]), and one thread's
//! handles ([`ThreadHandles`]).

use crate::{innermost_region, is_implicit, Ctx, Judge};
use ompd_abi::{self as abi, EntryPoint, Rc};
use ompd_loader::library::{AnyHandle, AspaceH, ParallelH, TaskH, ThreadH};
use sim_target::model::{RegionId, TaskId, ThreadId};

/// Walks over the model's regions and tasks.
impl<'l> Ctx<'l> {
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
    /// An ICV (handle, scope, id) the getter (the string getter when `string`) answers with
    /// `ok`: the first of [`ThreadHandles::answered_icvs`], found without asking past it.
    pub fn answered_icv<'a>(
        &'a self,
        ctx: &Ctx<'l>,
        ah: &'a AspaceH<'l>,
        string: bool,
    ) -> Option<(AnyHandle<'a, 'l>, abi::Scope, u64)> {
        let all = self.icvs_with_handles(ctx, ah);
        let first = all.first().map(|(_, icv)| *icv);
        let answered = all.into_iter().find(|(_, icv)| answers(ctx, *icv, string));
        answered.map(|(_, icv)| icv).or(first)
    }

    /// Every ICV (name, and handle, scope, id) the getter (the string getter when `string`)
    /// answers with `ok` through one of these handles (or `ah`) of its enumerated scope, in
    /// enumeration order; the first with a handle when none answers.
    pub fn answered_icvs<'a>(
        &'a self,
        ctx: &Ctx<'l>,
        ah: &'a AspaceH<'l>,
        string: bool,
    ) -> Vec<(String, (AnyHandle<'a, 'l>, abi::Scope, u64))> {
        let mut all = self.icvs_with_handles(ctx, ah);
        let first = all.first().cloned();
        all.retain(|(_, icv)| answers(ctx, *icv, string));
        if all.is_empty() {
            all.extend(first);
        }
        all
    }

    /// Every enumerated ICV (name, and handle, scope, id) whose scope one of these handles (or
    /// `ah`) stands for, in enumeration order, up to where the enumeration breaks.
    fn icvs_with_handles<'a>(
        &'a self,
        ctx: &Ctx<'l>,
        ah: &'a AspaceH<'l>,
    ) -> Vec<(String, (AnyHandle<'a, 'l>, abi::Scope, u64))> {
        use abi::Scope;
        let Ok(table) = ctx.icvs_before_break(ah) else {
            return Vec::new();
        };
        let implicit = is_implicit(ctx.model, ctx.model.threads[self.gtid.0].current_task);
        let handle = |scope| match scope {
            Scope::GLOBAL | Scope::ADDRESS_SPACE => Some(AnyHandle::Aspace(ah)),
            Scope::THREAD => self.thread.as_ref().map(AnyHandle::Thread),
            Scope::PARALLEL => self.parallel.as_ref().map(AnyHandle::Parallel),
            Scope::TASK => self.task.as_ref().map(AnyHandle::Task),
            Scope::IMPLICIT_TASK if implicit => self.task.as_ref().map(AnyHandle::Task),
            _ => None,
        };
        table
            .into_iter()
            .filter_map(|e| Some((e.name, (handle(e.scope)?, e.scope, e.id))))
            .collect()
    }
}

/// True when the getter (the string getter when `string`) answers `ok` for the ICV.
fn answers(ctx: &Ctx, (h, scope, id): (AnyHandle, abi::Scope, u64), string: bool) -> bool {
    if string {
        ctx.lib.get_icv_string(h, scope, id).is_ok()
    } else {
        matches!(ctx.lib.get_icv(h, scope, id), Ok((Rc::OK, _)))
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
