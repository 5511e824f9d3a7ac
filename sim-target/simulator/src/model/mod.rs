//! The logical model of OpenMP runtime state: threads, parallel regions (active and serialized),
//! implicit and explicit tasks, ICVs, states, frames and tool data.
//!
//! The model holds no bytes and no addresses: it is the truth the conformance checks judge a
//! library's answers against. `image::lower` turns it into memory; `image::read` turns memory back
//! into a model.
//!
//! The builder ([`ModelBuilder`]), the default [`Scenario`]s, [`Model::validate`] and
//! [`Model::canonical`] live in submodules of their own.
//!
//! # What a kmp runtime's memory can show
//!
//! The checks judge a library against the specification, limited only by what the runtime keeps
//! where its OMPD self-description (the `ompd_sizeof__`/`ompd_access__` words,
//! `llvm-kmp-model.md` §2.2) lets a library look. Each limit, once, with its evidence:
//! - The outer levels of a run of nested serialized regions keep only their OMPT data (an
//!   `ompt_lw_taskteam_t` record each); their ICVs, flags and function are the innermost level's
//!   ([`Model::normalized`]).
//! - The initial task runs no outlined code: the runtime stores the all-ones word in its team's
//!   `t_pkfn` (live Intel and LLVM runtimes, §5), so it has no entry point and
//!   `ompd_get_task_function` answers `unavailable`.
//! - def-sched-var, wait-policy-var, place-partition-var, target-offload-var,
//!   def-allocator-var, nteams-var and teams-thread-limit-var live in runtime globals no layout
//!   word describes, so the model holds no value for them (`ompd_checks`' `icv::UNMODELLED`).
//! - Frame flags: the runtime's `ompt_frame_t` flag words have no layout word in the 5.x
//!   self-description (only Intel's runtimes up to 2023.2 published them), so a flag is judged
//!   only for being a valid combination, never against a value.
//! - Native ids: a thread's `ds_thread` holds its pthread id; no lwp is kept.
//! - An unset tool-libraries-var is a NULL pointer in the runtime, which is the specification's
//!   initial value, the empty string (Table 2.1 of 5.0 and 5.1); an unset affinity-format-var or
//!   tool-verbose-init-var has no value the model asserts.
//! - OMPT support shows only in the layout words: a runtime that describes no tool-data member
//!   (`layout::TOOL_DATA`) keeps none ([`Model::ompt_support`]). No shipped kmp runtime does
//!   (LLVM's build refuses OMPD without OMPT), so the `no-ompt` scenario simulates one.

use serde::{Deserialize, Serialize};

mod builder;
mod canonical;
mod scenarios;
mod validate;

pub use builder::ModelBuilder;
pub use scenarios::{
    default_scenarios, known_names, scenario, scenario_names, variant, Scenario, Set, Variant,
};

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
    /// The part the region plays in a host `teams` construct, if any; such a region adds no
    /// nesting level ([`Model::level`]) and is never active ([`Model::active_level`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<TeamsPart>,
}

/// What a kmp runtime keeps for a host `teams` construct (`llvm-kmp-model.md`; LLVM's
/// `__kmp_teams_master`): a league team of the initial threads, and under it one team per
/// initial team, formed at once with the threads a parallel region nested in the teams region
/// will use (they wait at the fork barrier). Both are at nesting level 0; a parallel region an
/// initial thread forks is a team of those threads one level deeper, under its initial team's
/// (what live LLVM 21 and Intel 2024.2–2026.2 runtimes show a library).
///
/// OpenMP 6.0 §1.3 gives each initial team "an implicit parallel region"; what such a region's
/// team size is, and what encloses it, the memory and the text answer differently, so the checks
/// that judge them accept every answer either allows (`ompd_checks`' `teams` family).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TeamsPart {
    /// The league: member `k` is the initial thread of team `k` (the team number).
    League,
    /// An initial team's region in the teams body: member 0 is the initial thread, the others
    /// the threads parked for a nested parallel region.
    InitialTeam {
        /// The threads the runtime keeps in the team (`t_nproc`, what a kmp runtime's
        /// `omp_get_num_threads` answers there). A simulated team's are its members (the
        /// lowering writes those); a real target's record may name only the initial thread.
        threads: usize,
    },
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
    /// True when the runtime's display-control block does not end in a newline after its last
    /// variable (a boundary a library that splits at newlines may miss).
    #[serde(default)]
    pub display_env_unterminated: bool,
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
            display_env_unterminated: false,
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

/// How wide the runtime's native thread ids (`kmp_thread_t`, a `pthread_t`) are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThreadIdWidth {
    /// The target's pointer width (every Linux ABI).
    #[default]
    Pointer,
    /// The other width: 8 bytes on a 32-bit target, 4 on a 64-bit one (an ABI whose
    /// `pthread_t` is no pointer).
    Other,
}

/// The whole runtime state of one process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Model {
    /// Runtime OpenMP version (`_OPENMP`-style yyyymm).
    pub omp_version: i64,
    /// The runtime's `ompd_state` word; non-zero means `OMP_DEBUG=enabled` (debug-var true).
    pub ompd_state: u64,
    /// The runtime supports OMPT: it keeps a tool's `ompt_data_t` for every thread, region and
    /// task, and its layout words describe those members. `false` models a runtime built without
    /// OMPT support, whose layout describes no tool-data member ([`crate::layout::TOOL_DATA`]);
    /// the tool data of its threads, regions and tasks are then no fact of its memory.
    #[serde(default = "supported")]
    pub ompt_support: bool,
    /// The runtime publishes the older self-description of Intel's runtimes up to 2023.2: no
    /// `ompd_state` switch (its state words are always kept, `ompd_state` stands for that), no
    /// length of the display-control block, and none of the layout words
    /// [`crate::layout::newer_only`] names.
    #[serde(default)]
    pub older_description: bool,
    /// Gtid lookup mode.
    pub gtid_mode: GtidMode,
    /// The width of the runtime's native thread ids.
    #[serde(default)]
    pub thread_id_width: ThreadIdWidth,
    /// Slots of `__kmp_threads` left NULL before the last thread, ascending: gtids of root
    /// threads that registered and left (the runtime clears their slot). The OpenMP threads,
    /// then the idle ones, take the other gtids in order ([`Model::runtime_gtid`]).
    #[serde(default)]
    pub vacant_gtids: Vec<usize>,
    /// Address-space-wide state.
    pub globals: Globals,
    /// OpenMP threads, indexed by gtid.
    pub threads: Vec<Thread>,
    /// Native threads of the process that never entered OpenMP.
    pub foreign_threads: Vec<NativeId>,
    /// OpenMP threads of the runtime's pool that are in no team (between parallel regions),
    /// with the gtids after those of `threads`: the runtime keeps them in `__kmp_threads` with
    /// no team and no current task, in the idle state.
    #[serde(default)]
    pub idle_threads: Vec<NativeId>,
    /// Parallel regions; region 0 is the implicit initial region.
    pub regions: Vec<Region>,
    /// Tasks.
    pub tasks: Vec<Task>,
}

/// The default of [`Model::ompt_support`] in a model file that predates it.
fn supported() -> bool {
    true
}

/// A structural error in a model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid model: {0}")]
pub struct ModelError(pub String);

impl Model {
    /// The size in bytes of the runtime's native thread ids (`kmp_thread_t`) on `arch`.
    pub fn pthread_size(&self, arch: ompd_serve::arch::Arch) -> u8 {
        match self.thread_id_width {
            ThreadIdWidth::Pointer => arch.pointer,
            ThreadIdWidth::Other => 12 - arch.pointer,
        }
    }

    /// The runtime's gtid of thread `i` (OpenMP threads, then idle ones): its slot of
    /// `__kmp_threads`, the `i`-th that is not vacant.
    pub fn runtime_gtid(&self, i: usize) -> usize {
        // Each vacant slot at or before the gtid reached so far moves it one on (ascending).
        self.vacant_gtids
            .iter()
            .fold(i, |g, v| if *v <= g { g + 1 } else { g })
    }

    /// Nesting level of a region (levels-var): the parallel regions of its chain, the region
    /// itself included; the initial region and the regions of a teams construct add none.
    pub fn level(&self, r: RegionId) -> usize {
        self.region_chain(r)
            .iter()
            .filter(|x| self.adds_level(**x))
            .count()
    }

    /// Number of active (more than one thread) regions enclosing and including `r`
    /// (active-levels-var).
    pub fn active_level(&self, r: RegionId) -> usize {
        self.region_chain(r)
            .iter()
            .filter(|x| self.adds_level(**x) && self.is_active(**x))
            .count()
    }

    /// True for a parallel region a program forked: neither the initial region nor a region
    /// of a teams construct.
    fn adds_level(&self, r: RegionId) -> bool {
        let region = &self.regions[r.0];
        region.parent.is_some() && region.teams.is_none()
    }

    /// The part region `r` plays in a teams construct, if any.
    pub fn teams_part(&self, r: RegionId) -> Option<TeamsPart> {
        self.regions[r.0].teams
    }

    /// True when the region's team has more than one thread.
    pub fn is_active(&self, r: RegionId) -> bool {
        self.regions[r.0].members.len() > 1
    }

    /// True for a serialized region: a non-initial region with a one-thread team.
    pub fn is_serialized(&self, r: RegionId) -> bool {
        r.0 != 0 && self.regions[r.0].members.len() == 1 && self.regions[r.0].teams.is_none()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_a_scenario_and_states_are_none() {
        for v in Variant::ALL {
            assert!(known_names().any(|n| variant(n) == Some(v)), "{v:?}");
        }
        assert_eq!(variant("thread-scan"), Some(Variant::ThreadLookup));
        assert_eq!(variant("empty-env"), Some(Variant::Strings));
        for state in ["serial", "no-ompt", "replay:case"] {
            assert_eq!(variant(state), None, "{state}");
        }
    }

    #[test]
    fn threads_take_the_gtids_the_vacant_slots_leave() {
        let mut m = scenario("nested-tasks").unwrap().model;
        m.vacant_gtids = vec![1, 3];
        let gtids: Vec<usize> = (0..5).map(|i| m.runtime_gtid(i)).collect();
        assert_eq!(gtids, [0, 2, 4, 5, 6]);
        m.validate().unwrap();
        m.vacant_gtids = vec![3, 1];
        assert!(m.validate().is_err(), "vacant gtids out of order");
    }

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
    fn a_teams_construct_adds_no_level_and_its_nested_region_one() {
        let m = scenario("teams").unwrap().model;
        let part = |p| -> Vec<usize> {
            let regions = &m.regions;
            (0..regions.len())
                .filter(|r| regions[*r].teams == p)
                .collect()
        };
        let league = part(Some(TeamsPart::League));
        let teams = part(Some(TeamsPart::InitialTeam { threads: 2 }));
        assert_eq!((league.len(), teams.len()), (1, 3));
        assert_eq!(m.regions[league[0]].members.len(), 3);
        for r in league.iter().chain(&teams) {
            assert_eq!(
                (m.level(RegionId(*r)), m.active_level(RegionId(*r))),
                (0, 0)
            );
            assert!(!m.is_serialized(RegionId(*r)));
        }
        let nested = m.threads[1].region;
        let team = m.regions[nested.0].parent.unwrap();
        assert_eq!(m.regions[team.0].parent, Some(RegionId(league[0])));
        assert_eq!((m.level(nested), m.active_level(nested)), (1, 1));
    }

    #[test]
    fn validate_rejects_an_initial_team_outside_a_league() {
        let mut m = scenario("teams").unwrap().model;
        for r in &mut m.regions {
            if r.teams == Some(TeamsPart::League) {
                r.teams = None;
            }
        }
        assert!(m.validate().is_err());
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
