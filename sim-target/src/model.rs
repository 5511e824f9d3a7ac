//! The logical model of OpenMP runtime state: threads, parallel regions (active and serialized),
//! implicit and explicit tasks, ICVs, states, frames and tool data.
//!
//! The model holds no bytes and no addresses: it is the truth the conformance checks judge a
//! library's answers against. `image::lower` turns it into memory; `image::read` turns memory back
//! into a model.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Index of a thread in [`Model::threads`]; equal to its global thread id (gtid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ThreadId(pub usize);

/// Index of a parallel region in [`Model::regions`]; region 0 is the implicit initial region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RegionId(pub usize);

/// Index of a task in [`Model::tasks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskId(pub usize);

/// The native identity of a thread as a debugger sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NativeId {
    /// `pthread_t` value (kind `OMPD_THREAD_ID_PTHREAD`, pointer-sized on the target).
    pub pthread: u64,
    /// Kernel thread id (kind `OMPD_THREAD_ID_LWP`, 4 bytes on the target).
    pub lwp: u32,
}

/// An OpenMP thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// Native ids.
    pub native: NativeId,
    /// The innermost parallel region the thread is a member of.
    pub region: RegionId,
    /// The task the thread is executing.
    pub current_task: TaskId,
    /// OMPT state (`ompt_state_t` value).
    pub state: i64,
    /// OMPT wait id (meaningful in wait states).
    pub wait_id: u64,
    /// OMPT tool data (`ompt_data_t.value`) of the thread.
    pub tool_data: u64,
}

/// A parallel region (a team). Region 0 is the implicit initial region of the initial thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    /// The enclosing region; `None` only for region 0.
    pub parent: Option<RegionId>,
    /// Team members; the index is the thread number (thread-num-var).
    pub members: Vec<ThreadId>,
    /// Implicit tasks; `implicit_tasks[i]` is executed by `members[i]`.
    pub implicit_tasks: Vec<TaskId>,
    /// Outlined function of the region (the runtime's `t_pkfn`); all ones for region 0.
    pub function: u64,
    /// OMPT tool data (`ompt_data_t.value`) of the region.
    pub tool_data: u64,
}

/// The kind of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskKind {
    /// The implicit task of thread `index` in `region`.
    Implicit {
        /// Region the implicit task belongs to.
        region: RegionId,
        /// Thread number of the executing thread.
        index: usize,
    },
    /// An explicit task (from a `task` construct).
    Explicit,
}

/// A schedule kind (`omp_sched_t` semantics, runtime encoding chosen by the lowering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SchedKind {
    /// `static`.
    Static,
    /// `dynamic`.
    Dynamic,
    /// `guided`.
    Guided,
    /// `auto`.
    Auto,
}

/// A schedule modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SchedModifier {
    /// `monotonic:`.
    Monotonic,
    /// `nonmonotonic:`.
    Nonmonotonic,
}

/// run-sched-var.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Schedule {
    /// Kind.
    pub kind: SchedKind,
    /// Chunk size (0 = unspecified).
    pub chunk: i32,
    /// Optional modifier.
    pub modifier: Option<SchedModifier>,
}

/// Per-task (data environment) ICVs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TaskIcvs {
    /// dyn-var.
    pub dynamic: bool,
    /// First element of nthreads-var.
    pub nthreads: i32,
    /// thread-limit-var.
    pub thread_limit: i32,
    /// max-active-levels-var.
    pub max_active_levels: i32,
    /// First element of bind-var (`omp_proc_bind_t`: 0 false, 1 true, 2 primary, 3 close, 4 spread).
    pub proc_bind: i32,
    /// default-device-var.
    pub default_device: i32,
    /// run-sched-var.
    pub schedule: Schedule,
}

impl Default for TaskIcvs {
    fn default() -> Self {
        TaskIcvs {
            dynamic: false,
            nthreads: 4,
            thread_limit: i32::MAX,
            max_active_levels: 4,
            proc_bind: 0,
            default_device: 0,
            schedule: Schedule {
                kind: SchedKind::Static,
                chunk: 0,
                modifier: None,
            },
        }
    }
}

/// A task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// Implicit or explicit.
    pub kind: TaskKind,
    /// The region whose team the task belongs to (`td_team`).
    pub region: RegionId,
    /// The generating task (the task that encountered the construct); `None` for the initial task.
    pub generating: Option<TaskId>,
    /// The scheduling parent: the task this one was scheduled in place of on the same thread.
    pub scheduling: Option<TaskId>,
    /// True for a final task (final-task-var).
    pub is_final: bool,
    /// Data-environment ICVs.
    pub icvs: TaskIcvs,
    /// Entry point of the task body (explicit: the task routine; implicit: the region function).
    pub function: u64,
    /// OMPT exit frame address (0 = unset).
    pub exit_frame: u64,
    /// OMPT enter frame address (0 = unset).
    pub enter_frame: u64,
    /// OMPT tool data (`ompt_data_t.value`) of the task.
    pub tool_data: u64,
}

/// Address-space-wide state: device ICVs, lists, strings and the display-control block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Globals {
    /// num-procs-var.
    pub avail_proc: i32,
    /// stacksize-var in bytes.
    pub stacksize: u64,
    /// cancel-var.
    pub cancellation: bool,
    /// max-task-priority-var.
    pub max_task_priority: i32,
    /// display-affinity-var.
    pub display_affinity: bool,
    /// tool-var (1 = enabled).
    pub tool: i32,
    /// affinity-format-var (`None` = NULL pointer in the runtime).
    pub affinity_format: Option<String>,
    /// tool-libraries-var.
    pub tool_libraries: Option<String>,
    /// tool-verbose-init-var.
    pub tool_verbose_init: Option<String>,
    /// The `OMP_NUM_THREADS` list (empty when unset).
    pub nthreads_list: Vec<i32>,
    /// The `OMP_PROC_BIND` list (empty when unset).
    pub bind_list: Vec<i32>,
    /// Display control variables, in order (`NAME`, `value`).
    pub display_env: Vec<(String, String)>,
}

impl Default for Globals {
    fn default() -> Self {
        Globals {
            avail_proc: 8,
            stacksize: 8 << 20,
            cancellation: false,
            max_task_priority: 0,
            display_affinity: false,
            tool: 1,
            affinity_format: Some("OMP: pid %P tid %i thread %n bound to OS proc set {%A}".into()),
            tool_libraries: None,
            tool_verbose_init: None,
            nthreads_list: Vec::new(),
            bind_list: vec![0],
            display_env: vec![
                ("OMP_DEBUG".into(), "enabled".into()),
                ("OMP_DYNAMIC".into(), "false".into()),
                ("OMP_NUM_THREADS".into(), "".into()),
            ],
        }
    }
}

/// How the runtime finds the calling thread's gtid (Intel libraries honour both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GtidMode {
    /// Native TLS (`__kmp_gtid_mode == 3`): `__kmp_gtid` is read through the thread context.
    Tls,
    /// Scan `__kmp_threads` comparing native ids (`__kmp_gtid_mode != 3`).
    Scan,
}

/// The whole runtime state of one process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Model {
    /// Runtime OpenMP version (`_OPENMP`-style yyyymm).
    pub omp_version: i64,
    /// The runtime's `ompd_state` word; non-zero means `OMP_DEBUG=enabled` (debug-var true).
    pub ompd_state: u64,
    /// Gtid lookup mode.
    pub gtid_mode: GtidMode,
    /// Address-space-wide state.
    pub globals: Globals,
    /// OpenMP threads, indexed by gtid.
    pub threads: Vec<Thread>,
    /// Native threads of the process that never entered OpenMP.
    pub foreign_threads: Vec<NativeId>,
    /// Parallel regions; region 0 is the implicit initial region.
    pub regions: Vec<Region>,
    /// Tasks.
    pub tasks: Vec<Task>,
}

/// A structural error in a model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid model: {0}")]
pub struct ModelError(pub String);

impl Model {
    /// Nesting level of a region (levels-var): 0 for the initial region.
    pub fn level(&self, r: RegionId) -> usize {
        let mut level = 0;
        let mut cur = r;
        while let Some(p) = self.regions[cur.0].parent {
            level += 1;
            cur = p;
        }
        level
    }

    /// Number of active (more than one thread) regions enclosing and including `r`
    /// (active-levels-var).
    pub fn active_level(&self, r: RegionId) -> usize {
        self.region_chain(r)
            .iter()
            .filter(|x| self.is_active(**x))
            .count()
    }

    /// True when the region's team has more than one thread.
    pub fn is_active(&self, r: RegionId) -> bool {
        self.regions[r.0].members.len() > 1
    }

    /// True for a serialized region: a non-initial region with a one-thread team.
    pub fn is_serialized(&self, r: RegionId) -> bool {
        r.0 != 0 && self.regions[r.0].members.len() == 1
    }

    /// The region and its ancestors, innermost first.
    pub fn region_chain(&self, r: RegionId) -> Vec<RegionId> {
        let mut out = vec![r];
        let mut cur = r;
        while let Some(p) = self.regions[cur.0].parent {
            out.push(p);
            cur = p;
        }
        out
    }

    /// Thread number of `t` in region `r` (thread-num-var), if it is a member.
    pub fn thread_num(&self, r: RegionId, t: ThreadId) -> Option<usize> {
        self.regions[r.0].members.iter().position(|m| *m == t)
    }

    /// The generating chain of a task, starting with the task itself.
    pub fn generating_chain(&self, t: TaskId) -> Vec<TaskId> {
        chain(t, |x| self.tasks[x.0].generating)
    }

    /// The scheduling chain of a task, starting with the task itself.
    pub fn scheduling_chain(&self, t: TaskId) -> Vec<TaskId> {
        chain(t, |x| self.tasks[x.0].scheduling)
    }

    /// nthreads-var of a task as a list: its own value, then the `OMP_NUM_THREADS` entries for
    /// deeper levels.
    pub fn nthreads_var(&self, t: TaskId) -> Vec<i64> {
        let task = &self.tasks[t.0];
        let level = self.level(task.region);
        let mut v = vec![task.icvs.nthreads as i64];
        v.extend(
            self.globals
                .nthreads_list
                .iter()
                .skip(level + 1)
                .map(|x| *x as i64),
        );
        v
    }

    /// bind-var of a task as a list, like [`Model::nthreads_var`].
    pub fn bind_var(&self, t: TaskId) -> Vec<i64> {
        let task = &self.tasks[t.0];
        let level = self.level(task.region);
        let mut v = vec![task.icvs.proc_bind as i64];
        v.extend(
            self.globals
                .bind_list
                .iter()
                .skip(level + 1)
                .map(|x| *x as i64),
        );
        v
    }

    /// True when debug-var is enabled (state tracking on).
    pub fn debug_enabled(&self) -> bool {
        self.ompd_state != 0
    }

    /// Checks every structural invariant the lowering relies on.
    pub fn validate(&self) -> Result<(), ModelError> {
        let err = |m: String| Err(ModelError(m));
        if self.threads.is_empty() {
            return err("no threads".into());
        }
        if self.regions.is_empty() || self.regions[0].parent.is_some() {
            return err("region 0 must be the initial region without parent".into());
        }
        if self.regions[0].members != [ThreadId(0)] {
            return err("the initial region's team is exactly gtid 0".into());
        }
        for (i, r) in self.regions.iter().enumerate() {
            if r.members.is_empty() || r.members.len() != r.implicit_tasks.len() {
                return err(format!(
                    "region {i}: members and implicit tasks differ in number"
                ));
            }
            if let Some(p) = r.parent {
                if p.0 >= i {
                    return err(format!("region {i}: parent {} must come first", p.0));
                }
                if self.thread_num(p, r.members[0]).is_none() {
                    return err(format!(
                        "region {i}: primary thread is not in the parent team"
                    ));
                }
            } else if i != 0 {
                return err(format!("region {i} has no parent"));
            }
            if let Some(p) = r.parent {
                let gen = self
                    .tasks
                    .get(r.implicit_tasks[0].0)
                    .and_then(|t| t.generating);
                let parent_task = self.regions[p.0].implicit_tasks.first().copied();
                if self.is_serialized(RegionId(i)) && self.is_serialized(p) && gen != parent_task {
                    return err(format!(
                        "region {i}: a serialized region inside a serialized region must be \
                         encountered by the outer region's implicit task"
                    ));
                }
            }
            for (n, t) in r.implicit_tasks.iter().enumerate() {
                let task = self
                    .tasks
                    .get(t.0)
                    .ok_or_else(|| ModelError(format!("task {}", t.0)))?;
                if task.kind
                    != (TaskKind::Implicit {
                        region: RegionId(i),
                        index: n,
                    })
                {
                    return err(format!("region {i}: implicit task {n} has the wrong kind"));
                }
            }
            let mut primaries: Vec<ThreadId> = self
                .regions
                .iter()
                .filter(|c| c.parent == Some(RegionId(i)))
                .map(|c| c.members[0])
                .collect();
            let n_children = primaries.len();
            primaries.sort();
            primaries.dedup();
            if primaries.len() != n_children {
                return err(format!(
                    "region {i}: one thread forks two nested regions at once"
                ));
            }
            let mut seen = r.members.clone();
            seen.sort();
            seen.dedup();
            if seen.len() != r.members.len() {
                return err(format!("region {i}: a thread appears twice"));
            }
        }
        for (g, t) in self.threads.iter().enumerate() {
            if t.region.0 >= self.regions.len() || t.current_task.0 >= self.tasks.len() {
                return err(format!("thread {g}: dangling region or task"));
            }
            let mut r = t.region;
            let mut thread = ThreadId(g);
            loop {
                if self.thread_num(r, thread).is_none() {
                    return err(format!("thread {g}: not a member of region {}", r.0));
                }
                match self.regions[r.0].parent {
                    Some(p) => {
                        // The thread that forked r is r's primary thread.
                        thread = self.regions[r.0].members[0];
                        r = p;
                    }
                    None => break,
                }
            }
        }
        for (i, task) in self.tasks.iter().enumerate() {
            for (what, link) in [
                ("generating", task.generating),
                ("scheduling", task.scheduling),
            ] {
                if let Some(l) = link {
                    if l.0 >= self.tasks.len() || l.0 == i {
                        return err(format!("task {i}: bad {what} link"));
                    }
                }
            }
            for next in [|t: &Task| t.generating, |t: &Task| t.scheduling] {
                let mut seen = vec![false; self.tasks.len()];
                let mut cur = Some(TaskId(i));
                while let Some(c) = cur {
                    if std::mem::replace(&mut seen[c.0], true) {
                        return err(format!("task {i}: cyclic parent chain"));
                    }
                    cur = next(&self.tasks[c.0]);
                }
            }
        }
        Ok(())
    }
}

impl Model {
    /// The same state with regions and tasks renumbered in a canonical order (regions by the
    /// path of primary threads from the initial region, implicit tasks by region, explicit tasks
    /// in discovery order from each thread's current task), so that two models describing the
    /// same state compare equal whatever order they were built in.
    pub fn canonical(&self) -> Model {
        let key = |r: RegionId| -> Vec<usize> {
            let mut k: Vec<usize> = self
                .region_chain(r)
                .iter()
                .map(|x| self.regions[x.0].members[0].0)
                .collect();
            k.reverse();
            k
        };
        let mut rorder: Vec<usize> = (0..self.regions.len()).collect();
        rorder.sort_by_key(|r| key(RegionId(*r)));
        let mut rmap = vec![0; self.regions.len()];
        for (new, old) in rorder.iter().enumerate() {
            rmap[*old] = new;
        }
        let mut torder: Vec<usize> = Vec::new();
        let mut seen = vec![false; self.tasks.len()];
        fn visit(t: TaskId, torder: &mut Vec<usize>, seen: &mut [bool]) {
            if !seen[t.0] {
                seen[t.0] = true;
                torder.push(t.0);
            }
        }
        for r in &rorder {
            for t in &self.regions[*r].implicit_tasks {
                visit(*t, &mut torder, &mut seen);
            }
        }
        // Depth-first over both links from each thread's current task, generating link first.
        let mut expanded = vec![false; self.tasks.len()];
        for th in &self.threads {
            let mut stack = vec![th.current_task];
            while let Some(t) = stack.pop() {
                // Implicit tasks are already numbered; their links must still be followed.
                if std::mem::replace(&mut expanded[t.0], true) {
                    continue;
                }
                visit(t, &mut torder, &mut seen);
                let task = &self.tasks[t.0];
                stack.extend(task.scheduling);
                stack.extend(task.generating);
            }
        }
        for t in 0..self.tasks.len() {
            visit(TaskId(t), &mut torder, &mut seen);
        }
        let mut tmap = vec![0; self.tasks.len()];
        for (new, old) in torder.iter().enumerate() {
            tmap[*old] = new;
        }
        let rid = |r: RegionId| RegionId(rmap[r.0]);
        let tid = |t: TaskId| TaskId(tmap[t.0]);
        Model {
            threads: self
                .threads
                .iter()
                .map(|t| Thread {
                    region: rid(t.region),
                    current_task: tid(t.current_task),
                    ..t.clone()
                })
                .collect(),
            regions: rorder
                .iter()
                .map(|r| {
                    let reg = &self.regions[*r];
                    Region {
                        parent: reg.parent.map(rid),
                        implicit_tasks: reg.implicit_tasks.iter().map(|t| tid(*t)).collect(),
                        ..reg.clone()
                    }
                })
                .collect(),
            tasks: torder
                .iter()
                .map(|t| {
                    let task = &self.tasks[*t];
                    Task {
                        kind: match task.kind {
                            TaskKind::Implicit { region, index } => TaskKind::Implicit {
                                region: rid(region),
                                index,
                            },
                            TaskKind::Explicit => TaskKind::Explicit,
                        },
                        region: rid(task.region),
                        generating: task.generating.map(tid),
                        scheduling: task.scheduling.map(tid),
                        ..task.clone()
                    }
                })
                .collect(),
            ..self.clone()
        }
    }

    /// What survives a trip through a runtime image of `arch`: pointer-sized values are truncated
    /// to the pointer width, implicit tasks run their region's function, and the outer levels of
    /// a run of nested serialized regions carry the innermost level's ICVs, flags and function
    /// (the runtime keeps only their OMPT data in memory the libraries can see).
    pub fn normalized(&self, arch: crate::arch::Arch) -> Model {
        let mask = u64::MAX >> (64 - 8 * arch.pointer as u32);
        let mut m = self.clone();
        m.globals.stacksize &= mask;
        for t in &mut m.threads {
            t.native.pthread &= mask;
        }
        for t in &mut m.foreign_threads {
            t.pthread &= mask;
        }
        for r in &mut m.regions {
            r.function &= mask;
        }
        for t in &mut m.tasks {
            t.exit_frame &= mask;
            t.enter_frame &= mask;
            t.function &= mask;
        }
        for i in 0..m.tasks.len() {
            if let TaskKind::Implicit { region, .. } = m.tasks[i].kind {
                m.tasks[i].function = m.regions[region.0].function;
            }
        }
        // Innermost region of each serialized run, found from the deepest level outwards.
        for i in (0..m.regions.len()).rev() {
            let r = RegionId(i);
            if !m.is_serialized(r) {
                continue;
            }
            let child = (i + 1..m.regions.len())
                .find(|c| m.regions[*c].parent == Some(r) && m.is_serialized(RegionId(*c)));
            if let Some(c) = child {
                // c has already taken its run's innermost values.
                let inner_task = m.tasks[m.regions[c].implicit_tasks[0].0].clone();
                m.regions[i].function = m.regions[c].function;
                let t = m.regions[i].implicit_tasks[0].0;
                m.tasks[t].icvs = inner_task.icvs;
                m.tasks[t].is_final = inner_task.is_final;
                m.tasks[t].function = inner_task.function;
            }
        }
        m
    }
}

fn chain(start: TaskId, next: impl Fn(TaskId) -> Option<TaskId>) -> Vec<TaskId> {
    let mut out = vec![start];
    let mut cur = start;
    // Bounded so that a cyclic model (rejected by validate) cannot hang a caller.
    while let Some(n) = next(cur) {
        if out.len() > 4096 || out.contains(&n) {
            break;
        }
        out.push(n);
        cur = n;
    }
    out
}

/// Builds valid models step by step, the way a program would create them.
///
/// ```
/// use sim_target::model::ModelBuilder;
/// let mut b = ModelBuilder::new();
/// let outer = b.parallel(b.initial_thread(), 4);
/// let t2 = b.member(outer, 2);
/// let inner = b.parallel(t2, 2);
/// let task = b.explicit_task(b.member(inner, 1));
/// let model = b.build().unwrap();
/// assert_eq!(model.level(inner), 2);
/// # let _ = task;
/// ```
#[derive(Clone, Debug)]
pub struct ModelBuilder {
    model: Model,
    next_native: u64,
    next_addr: u64,
}

impl Default for ModelBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelBuilder {
    /// A process with only the initial thread executing the initial task in serial code.
    pub fn new() -> Self {
        let initial_task = Task {
            kind: TaskKind::Implicit {
                region: RegionId(0),
                index: 0,
            },
            region: RegionId(0),
            generating: None,
            scheduling: None,
            is_final: false,
            icvs: TaskIcvs::default(),
            function: u64::MAX,
            exit_frame: 0,
            enter_frame: 0,
            tool_data: 0x1000,
        };
        let model = Model {
            omp_version: 201611,
            ompd_state: 1,
            gtid_mode: GtidMode::Tls,
            globals: Globals::default(),
            threads: vec![Thread {
                native: NativeId {
                    pthread: 0x7f00_0000_1000,
                    lwp: 1000,
                },
                region: RegionId(0),
                current_task: TaskId(0),
                state: ompd_abi::state::WORK_SERIAL,
                wait_id: 0,
                tool_data: 0x2000,
            }],
            foreign_threads: Vec::new(),
            regions: vec![Region {
                parent: None,
                members: vec![ThreadId(0)],
                implicit_tasks: vec![TaskId(0)],
                function: u64::MAX,
                tool_data: 0x3000,
            }],
            tasks: vec![initial_task],
        };
        ModelBuilder {
            model,
            next_native: 1,
            next_addr: 0x40_1000,
        }
    }

    /// The initial thread (gtid 0).
    pub fn initial_thread(&self) -> ThreadId {
        ThreadId(0)
    }

    /// Direct access to the model under construction (for ICVs, globals, states).
    pub fn model_mut(&mut self) -> &mut Model {
        &mut self.model
    }

    /// Thread number `n` of region `r`.
    pub fn member(&self, r: RegionId, n: usize) -> ThreadId {
        self.model.regions[r.0].members[n]
    }

    fn fresh_code_addr(&mut self) -> u64 {
        self.next_addr += 0x140;
        self.next_addr
    }

    fn fresh_thread(&mut self, region: RegionId, task: TaskId) -> ThreadId {
        let n = self.next_native;
        self.next_native += 1;
        self.model.threads.push(Thread {
            native: NativeId {
                pthread: 0x7f00_0000_1000 + n * 0x80_0000,
                lwp: 1000 + n as u32,
            },
            region,
            current_task: task,
            state: ompd_abi::state::WORK_PARALLEL,
            wait_id: 0,
            tool_data: 0x2000 + n,
        });
        ThreadId(self.model.threads.len() - 1)
    }

    /// The encountering thread `primary` forks a parallel region with `team_size` threads
    /// (1 gives a serialized region). New worker threads are created for the other members.
    /// Every member starts executing its implicit task.
    pub fn parallel(&mut self, primary: ThreadId, team_size: usize) -> RegionId {
        assert!(team_size >= 1, "a team has at least one thread");
        let parent = self.model.threads[primary.0].region;
        let encountering = self.model.threads[primary.0].current_task;
        let r = RegionId(self.model.regions.len());
        let function = self.fresh_code_addr();
        let parent_icvs = self.model.tasks[encountering.0].icvs;
        let level = self.model.level(parent) + 1;
        let mut icvs = parent_icvs;
        if team_size > 1 {
            // nthreads-var of the implicit tasks: the list entry for the new level, if any.
            if let Some(n) = self.model.globals.nthreads_list.get(level) {
                icvs.nthreads = *n;
            }
        }
        let enter_frame = 0x7ff0_0000 - 0x400 * self.model.tasks.len() as u64;
        self.model.tasks[encountering.0].enter_frame = enter_frame;
        let mut members = Vec::with_capacity(team_size);
        let mut implicit = Vec::with_capacity(team_size);
        for n in 0..team_size {
            let task = TaskId(self.model.tasks.len());
            self.model.tasks.push(Task {
                kind: TaskKind::Implicit {
                    region: r,
                    index: n,
                },
                region: r,
                generating: Some(encountering),
                scheduling: None,
                is_final: false,
                icvs,
                function,
                exit_frame: if n == 0 {
                    enter_frame - 0x80
                } else {
                    0x7e00_0000 + 0x100 * n as u64
                },
                enter_frame: 0,
                tool_data: 0x5000 + task.0 as u64,
            });
            let thread = if n == 0 {
                primary
            } else {
                self.fresh_thread(r, task)
            };
            members.push(thread);
            implicit.push(task);
        }
        self.model.regions.push(Region {
            parent: Some(parent),
            members: members.clone(),
            implicit_tasks: implicit.clone(),
            function,
            tool_data: 0x4000 + r.0 as u64,
        });
        for (thread, task) in members.iter().zip(&implicit) {
            let t = &mut self.model.threads[thread.0];
            t.region = r;
            t.current_task = *task;
            t.state = ompd_abi::state::WORK_PARALLEL;
        }
        r
    }

    /// `thread` encounters a `task` construct whose task runs at once on the same thread
    /// (undeferred, or executed at a task scheduling point): the new task becomes current,
    /// generated and scheduled by the previous current task.
    pub fn explicit_task(&mut self, thread: ThreadId) -> TaskId {
        let cur = self.model.threads[thread.0].current_task;
        self.explicit_task_from(cur, thread)
    }

    /// A task generated by `generator` and now executed by `thread`, in place of `thread`'s
    /// current task (its scheduling parent).
    pub fn explicit_task_from(&mut self, generator: TaskId, thread: ThreadId) -> TaskId {
        let scheduling = self.model.threads[thread.0].current_task;
        let gen = &self.model.tasks[generator.0];
        let (region, icvs) = (gen.region, gen.icvs);
        let function = self.fresh_code_addr();
        let id = TaskId(self.model.tasks.len());
        let enter_frame = 0x7d00_0000 - 0x200 * id.0 as u64;
        self.model.tasks[scheduling.0].enter_frame = enter_frame;
        self.model.tasks.push(Task {
            kind: TaskKind::Explicit,
            region,
            generating: Some(generator),
            scheduling: Some(scheduling),
            is_final: false,
            icvs,
            function,
            exit_frame: enter_frame - 0x60,
            enter_frame: 0,
            tool_data: 0x6000 + id.0 as u64,
        });
        self.model.threads[thread.0].current_task = id;
        id
    }

    /// Adds a native thread that never entered OpenMP.
    pub fn foreign_thread(&mut self) -> NativeId {
        let n = self.next_native;
        self.next_native += 1;
        let id = NativeId {
            pthread: 0x7e00_0000_1000 + n * 0x80_0000,
            lwp: 5000 + n as u32,
        };
        self.model.foreign_threads.push(id);
        id
    }

    /// Finishes and validates the model.
    pub fn build(self) -> Result<Model, ModelError> {
        self.model.validate()?;
        Ok(self.model)
    }
}

/// A named model from the default scenario set.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Stable name used in reports.
    pub name: &'static str,
    /// One line describing the state.
    pub description: &'static str,
    /// The model.
    pub model: Model,
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)
    }
}

/// The default scenario set every check runs on.
pub fn default_scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "serial",
            description: "initial thread in serial code, one foreign native thread",
            model: serial(),
        },
        Scenario {
            name: "nested-tasks",
            description: "4-thread region, nested 4-thread region, 3-deep explicit task tree",
            model: nested_tasks(),
        },
        Scenario {
            name: "serialized",
            description: "2-thread region, inside it 3 nested serialized regions on thread 1",
            model: serialized(),
        },
        Scenario {
            name: "untracked",
            description: "OMP_DEBUG disabled (ompd_state 0): 2-thread region, an explicit task",
            model: untracked(),
        },
    ]
}

/// Looks up a default scenario by name.
pub fn scenario(name: &str) -> Option<Scenario> {
    default_scenarios().into_iter().find(|s| s.name == name)
}

fn serial() -> Model {
    let mut b = ModelBuilder::new();
    b.foreign_thread();
    let m = b.model_mut();
    m.globals.avail_proc = 2;
    m.globals.nthreads_list = vec![];
    b.build().expect("serial scenario is valid")
}

fn nested_tasks() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        m.globals.nthreads_list = vec![4, 2];
        m.globals.bind_list = vec![4, 3];
        m.globals.avail_proc = 6;
        m.globals.max_task_priority = 7;
        m.globals.cancellation = true;
        m.globals.tool_libraries = Some("libtool.so".into());
        m.globals.tool_verbose_init = Some("ompt-init.log".into());
        m.globals.affinity_format = Some("tid=%i host=%H {%A}".into());
        m.globals.display_env = [
            ("OMP_DEBUG", "enabled"),
            ("OMP_DYNAMIC", "true"),
            ("OMP_NUM_THREADS", "4,2"),
            ("OMP_PROC_BIND", "spread,close"),
            ("OMP_SCHEDULE", "nonmonotonic:dynamic,4"),
            ("OMP_CANCELLATION", "true"),
            ("OMP_MAX_TASK_PRIORITY", "7"),
            ("OMP_AFFINITY_FORMAT", "tid=%i host=%H {%A}"),
            ("OMP_TOOL_LIBRARIES", "libtool.so"),
            ("OMP_TOOL_VERBOSE_INIT", "ompt-init.log"),
            ("KMP_BLOCKTIME", "200ms"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let icvs = &mut m.tasks[0].icvs;
        icvs.nthreads = 4;
        icvs.proc_bind = 4;
        icvs.thread_limit = 64;
        icvs.max_active_levels = 3;
        icvs.dynamic = true;
        icvs.default_device = 1;
        icvs.schedule = Schedule {
            kind: SchedKind::Dynamic,
            chunk: 4,
            modifier: Some(SchedModifier::Nonmonotonic),
        };
    }
    b.foreign_thread();
    let outer = b.parallel(b.initial_thread(), 4);
    let t2 = b.member(outer, 2);
    let inner = b.parallel(t2, 4);
    let worker = b.member(inner, 1);
    let x1 = b.explicit_task(worker);
    let x2 = b.explicit_task(worker);
    let x3 = b.explicit_task(worker);
    let (o1, o3) = (b.member(outer, 1), b.member(outer, 3));
    {
        let m = b.model_mut();
        m.tasks[x3.0].is_final = true;
        // A task routine in a shared library mapped above 2 GiB, as on 32-bit Linux.
        m.tasks[x1.0].function = 0xb7f0_2140;
        m.tasks[x2.0].icvs.default_device = 2;
        m.threads[o3.0].state = 0x014; // wait_barrier_explicit
        m.threads[o3.0].wait_id = 0x1234_5678;
        m.threads[o1.0].state = 0x041; // wait_lock
        m.threads[o1.0].wait_id = 0x5555_0000;
    }
    // A task generated on thread 0 of the outer region and executed by thread 1.
    let gen = b.model_mut().threads[0].current_task;
    let y = b.explicit_task_from(gen, b.member(outer, 1));
    let _ = (x1, x2, y);
    // Tool data a tool stored as full 64-bit values: the pointer member of the union differs
    // from the value on 32-bit targets, and task data has the sign bit set.
    let m = b.model_mut();
    for (g, t) in m.threads.iter_mut().enumerate() {
        t.tool_data = 0x0bad_cafe_0000_2000 + g as u64;
    }
    for (i, r) in m.regions.iter_mut().enumerate() {
        r.tool_data = 0x7ea1_0000_0000_4000 + i as u64;
    }
    for (i, t) in m.tasks.iter_mut().enumerate() {
        t.tool_data = 0xdead_beef_0000_6000 + i as u64;
    }
    b.build().expect("nested-tasks scenario is valid")
}

fn serialized() -> Model {
    let mut b = ModelBuilder::new();
    b.model_mut().globals.nthreads_list = vec![2, 1];
    let outer = b.parallel(b.initial_thread(), 2);
    let t1 = b.member(outer, 1);
    b.parallel(t1, 1);
    b.parallel(t1, 1);
    b.parallel(t1, 1);
    b.build().expect("serialized scenario is valid")
}

fn untracked() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        m.ompd_state = 0;
        m.globals.nthreads_list = vec![2];
        m.globals.display_env = vec![
            ("OMP_DEBUG".into(), "disabled".into()),
            ("OMP_NUM_THREADS".into(), "2".into()),
        ];
        m.tasks[0].icvs.nthreads = 2;
    }
    let outer = b.parallel(b.initial_thread(), 2);
    b.explicit_task(b.member(outer, 1));
    b.build().expect("untracked scenario is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_scenarios_are_valid() {
        for s in default_scenarios() {
            s.model.validate().unwrap();
        }
    }

    #[test]
    fn nested_scenario_meets_the_minimum_shape() {
        let m = scenario("nested-tasks").unwrap().model;
        assert!(m.threads.len() >= 4);
        let inner = m
            .regions
            .iter()
            .enumerate()
            .map(|(i, _)| RegionId(i))
            .max_by_key(|r| m.level(*r))
            .unwrap();
        assert_eq!(m.level(inner), 2);
        assert_eq!(m.active_level(inner), 2);
        assert!(
            m.regions[inner.0].members.len() >= 4,
            "the nested active region has 4 threads"
        );
        let deepest = (0..m.tasks.len())
            .map(|t| m.generating_chain(TaskId(t)).len())
            .max()
            .unwrap();
        assert!(deepest >= 5, "explicit chain of 3 above two implicit tasks");
    }

    #[test]
    fn serialized_levels_count_but_are_not_active() {
        let m = scenario("serialized").unwrap().model;
        let t = &m.threads[1];
        assert_eq!(m.level(t.region), 4);
        assert_eq!(m.active_level(t.region), 1);
        assert!(m.is_serialized(t.region));
    }

    #[test]
    fn some_scenario_tracks_no_state_and_some_has_wide_tool_data() {
        let all = default_scenarios();
        assert!(all.iter().any(|s| !s.model.debug_enabled()));
        assert!(all.iter().any(|s| s.model.debug_enabled()));
        let m = scenario("nested-tasks").unwrap().model;
        assert!(m.tasks.iter().all(|t| t.tool_data > u32::MAX as u64));
        assert!(m.globals.display_env.len() > 3);
    }

    #[test]
    fn validate_rejects_a_cycle() {
        let mut m = scenario("nested-tasks").unwrap().model;
        let last = m.tasks.len() - 1;
        m.tasks[1].generating = Some(TaskId(last));
        m.tasks[last].generating = Some(TaskId(1));
        assert!(m.validate().is_err());
    }
}
