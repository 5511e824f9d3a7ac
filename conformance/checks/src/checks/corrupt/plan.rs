//! Where a walk over a corrupted image starts and how far it goes, chosen from the model so that
//! navigating from the start reaches the corrupted object.

use sim_target::image::corrupt::Object;
use sim_target::model::{Model, TaskId, ThreadId};

/// Where a walk starts and how far it goes, from the model.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    /// The thread the walk starts from.
    pub(super) thread: ThreadId,
    /// Address-space ICVs and display control variables.
    pub(super) aspace: bool,
    /// Parallel handles probed along the enclosing chain (1: the current region only).
    pub(super) parallel_steps: usize,
    /// Task handles probed along the generating chain (1: the current task only).
    pub(super) task_steps: usize,
    /// Steps along the scheduling chain.
    pub(super) scheduling_steps: usize,
}

impl Plan {
    /// A walk from the thread whose navigation reaches `object`.
    pub(super) fn new(m: &Model, object: Object) -> Plan {
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

#[cfg(test)]
mod tests {
    use super::*;

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
