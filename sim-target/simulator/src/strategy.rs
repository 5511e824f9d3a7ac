//! proptest strategies for whole runtime states, architectures and layout policies.
//!
//! A model is generated as a short program run through [`ModelBuilder`]: forks (active or
//! serialized), tasks executed at once, and tasks executed by another thread of the team; then
//! ICVs, globals, states and tool data are drawn. Every generated model is valid by construction
//! and shrinks towards fewer, smaller regions and tasks.

use crate::layout::Policy;
use crate::model::{
    Model, ModelBuilder, SchedKind, SchedModifier, Schedule, TaskIcvs, TaskKind, ThreadId,
};
use ompd_abi::state;
use ompd_serve::arch::Arch;
use proptest::collection::vec;
use proptest::prelude::*;

/// One step of the generating program.
#[derive(Clone, Debug)]
pub enum Action {
    /// Thread `thread % n` forks a region of `size` threads (1 = serialized).
    Fork {
        /// Thread selector.
        thread: usize,
        /// Team size.
        size: usize,
    },
    /// Thread `thread % n` creates a task that runs at once.
    Task {
        /// Thread selector.
        thread: usize,
    },
    /// The current task of `generator % n` creates a task run by `executor % n` (same team).
    TaskFrom {
        /// Generating thread selector.
        generator: usize,
        /// Executing thread selector.
        executor: usize,
    },
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => (any::<usize>(), prop_oneof![2 => Just(1usize), 3 => 2usize..=4]).prop_map(|(thread, size)| Action::Fork { thread, size }),
        2 => any::<usize>().prop_map(|thread| Action::Task { thread }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(generator, executor)| Action::TaskFrom { generator, executor }),
    ]
}

/// A strategy for data-environment ICVs.
pub fn task_icvs() -> impl Strategy<Value = TaskIcvs> {
    (
        any::<bool>(),
        1i32..=64,
        1i32..=1024,
        0i32..=8,
        0i32..=4,
        0i32..=3,
        prop_oneof![
            Just(SchedKind::Static),
            Just(SchedKind::Dynamic),
            Just(SchedKind::Guided),
            Just(SchedKind::Auto)
        ],
        0i32..=16,
        prop_oneof![
            Just(None),
            Just(Some(SchedModifier::Monotonic)),
            Just(Some(SchedModifier::Nonmonotonic))
        ],
    )
        .prop_map(
            |(
                dynamic,
                nthreads,
                thread_limit,
                max_active_levels,
                proc_bind,
                default_device,
                kind,
                chunk,
                modifier,
            )| {
                TaskIcvs {
                    dynamic,
                    nthreads,
                    thread_limit,
                    max_active_levels,
                    proc_bind,
                    default_device,
                    schedule: Schedule {
                        kind,
                        chunk,
                        modifier,
                    },
                }
            },
        )
}

/// Applies a program to a fresh builder whose initial task has `icvs` and whose
/// `OMP_NUM_THREADS`/`OMP_PROC_BIND` lists are given, skipping steps the runtime could not
/// represent.
pub fn build(
    actions: &[Action],
    icvs: TaskIcvs,
    nthreads_list: Vec<i32>,
    bind_list: Vec<i32>,
) -> ModelBuilder {
    let mut b = ModelBuilder::new();
    b.model_mut().tasks[0].icvs = icvs;
    b.model_mut().globals.nthreads_list = nthreads_list;
    b.model_mut().globals.bind_list = bind_list;
    for a in actions {
        let n = b.model_mut().threads.len();
        match *a {
            Action::Fork { thread, size } => {
                let t = ThreadId(thread % n);
                if n + size > 16 {
                    continue;
                }
                let m = b.model_mut();
                let cur = &m.tasks[m.threads[t.0].current_task.0];
                // A serialized region nested in a serialized region must be encountered by the
                // outer region's implicit task (the runtime keeps one implicit taskdata per run).
                if size == 1
                    && m.is_serialized(m.threads[t.0].region)
                    && cur.kind == TaskKind::Explicit
                {
                    continue;
                }
                b.parallel(t, size);
            }
            Action::Task { thread } => {
                if b.model_mut().tasks.len() < 48 {
                    b.explicit_task(ThreadId(thread % n));
                }
            }
            Action::TaskFrom {
                generator,
                executor,
            } => {
                let m = b.model_mut();
                let (g, e) = (ThreadId(generator % n), ThreadId(executor % n));
                if m.threads[g.0].region != m.threads[e.0].region || m.tasks.len() >= 48 {
                    continue;
                }
                let gen = m.threads[g.0].current_task;
                b.explicit_task_from(gen, e);
            }
        }
    }
    b
}

/// A strategy for whole runtime states.
pub fn model() -> impl Strategy<Value = Model> {
    (
        vec(action(), 0..12),
        task_icvs(),
        (
            1i32..=256,
            vec(1i32..=8, 0..4),
            vec(0i32..=4, 0..4),
            any::<bool>(),
            0i32..=16,
            0usize..=2,
        ),
        vec((0usize..state::ALL.len(), any::<u64>(), any::<u64>()), 16),
        vec(any::<u64>(), 64),
        any::<bool>(),
    )
        .prop_map(
            |(actions, icvs, (procs, nth, bind, cancel, prio, foreign), states, data, debug)| {
                let mut b = build(&actions, icvs, nth, bind);
                for _ in 0..foreign {
                    b.foreign_thread();
                }
                let m = b.model_mut();
                m.ompd_state = debug as u64;
                m.globals.avail_proc = procs;
                m.globals.cancellation = cancel;
                m.globals.max_task_priority = prio;
                for (t, (s, wait, tool)) in m.threads.iter_mut().zip(states) {
                    t.state = state::ALL[s].0;
                    t.wait_id = if state::is_wait(t.state) { wait } else { 0 };
                    t.tool_data = tool;
                }
                for (i, t) in m.tasks.iter_mut().enumerate() {
                    t.tool_data = data[i % data.len()];
                }
                for (i, r) in m.regions.iter_mut().enumerate() {
                    r.tool_data = data[(i * 7 + 3) % data.len()];
                }
                b.build()
                    .expect("generated models are valid by construction")
            },
        )
}

/// A strategy for the four architecture variants.
pub fn arch() -> impl Strategy<Value = Arch> {
    prop_oneof![
        Just(Arch::LP64_LE),
        Just(Arch::LP64_BE),
        Just(Arch::ILP32_LE),
        Just(Arch::ILP32_BE)
    ]
}

/// A strategy for layout policies valid on `arch`.
pub fn policy(arch: Arch) -> impl Strategy<Value = Policy> {
    let mut options: Vec<BoxedStrategy<Policy>> = vec![
        Just(Policy::Natural).boxed(),
        Just(Policy::Packed).boxed(),
        any::<u64>().prop_map(Policy::Random).boxed(),
    ];
    if Policy::Intel2026_2.supports(arch) {
        options.push(Just(Policy::Intel2026_2).boxed());
    }
    proptest::strategy::Union::new(options)
}
