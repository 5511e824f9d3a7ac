//! Real targets: a live process (stopped under ptrace) or an ELF core file, served to the library
//! through the same callbacks as a simulated image, with the truth the checks judge against
//! lifted from what the fixture program recorded about itself (`fixture_protocol::truth`).
//!
//! A simulated target knows everything about itself; a real one knows only what its fixture
//! recorded through the OpenMP API and the OMPT tool. [`Known`] says which facts those are, and
//! [`applies`] lets a check run on a real target only when it is listed with the facts it
//! judges against and all of them are known. A check not listed stays simulated-only, so a new
//! check never judges a real process against a value nobody recorded.

use fixture_protocol::truth::{OmpView, Ompt, Role, ThreadTruth, Truth};
use ompd_abi::state;
pub use ompd_checks::known::{Fact, Known};
use ompd_serve::arch::Arch;
use ompd_serve::source::{Source, SymbolError, TargetKind};
use serde::{Deserialize, Serialize};
use sim_target::model::{
    GtidMode, Model, NativeId, Region, RegionId, SchedKind, SchedModifier, Schedule, Task,
    TaskIcvs, TaskId, TaskKind, Thread, ThreadId,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A real target a unit runs against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RealSpec {
    /// A running process, attached by pid.
    Live {
        /// Its pid.
        pid: i32,
    },
    /// An ELF core file.
    Core {
        /// Its path.
        path: PathBuf,
    },
}

impl RealSpec {
    /// The kind reports name.
    pub fn kind(&self) -> TargetKind {
        match self {
            RealSpec::Live { .. } => TargetKind::Live,
            RealSpec::Core { .. } => TargetKind::Core,
        }
    }
}

/// The per-ICV checks whose truth a fixture records (its current task's data environment, its
/// region, the address-space-wide ICVs the fixture sets); nthreads-var and bind-var, which also
/// need the start environment, are in [`REAL`].
const RECORDED_ICVS: &[&str] = &[
    "dyn-var",
    "run-sched-var",
    "thread-limit-var",
    "max-active-levels-var",
    "active-levels-var",
    "levels-var",
    "cancel-var",
    "default-device-var",
    "max-task-priority-var",
    "debug-var",
    "num-procs-var",
    "ompd-num-procs-var",
    "thread-num-var",
    "ompd-thread-num-var",
    "final-task-var",
    "ompd-final-var",
    "ompd-final-task-var",
    "implicit-task-var",
    "ompd-implicit-var",
    "ompd-implicit-task-var",
    "team-size-var",
    "ompd-team-size-var",
];

/// The checks that run on real targets, by id or glob ([`ompd_report::glob`]), with the facts
/// each judges against; the other per-ICV value checks follow [`RECORDED_ICVS`]. Everything else is
/// simulated-only.
pub(crate) const REAL: &[(&str, &[Fact])] = {
    use Fact::*;
    &[
        ("aspace.process_initialize.compatible_target", &[]),
        ("aspace.omp_version.matches_model", &[OmpVersion]),
        ("aspace.omp_version_string.tool_owned", &[]),
        ("aspace.device_initialize.unsupported_device", &[]),
        ("aspace.release.ok", &[]),
        ("thread.*", &[Threads]),
        ("parallel.*", &[Threads, Regions]),
        ("task.curr.*", &[Threads, Regions, Tasks]),
        ("task.generating.*", &[Threads, Regions, Tasks]),
        ("task.scheduling.*", &[Threads, Regions, Tasks]),
        ("task.in_parallel.*", &[Threads, Regions, Tasks]),
        ("task.parallel.*", &[Threads, Regions, Tasks]),
        (
            "task.frame.matches_model",
            &[Threads, Regions, Tasks, Frames],
        ),
        ("task.frame.flags_*", &[Threads, Regions, Tasks]),
        ("task.function.*", &[Threads, Regions, Tasks, Functions]),
        ("state.enumerate.*", &[]),
        ("state.get.*", &[Threads, States]),
        ("icv.enumerate.*", &[]),
        ("icv.value.unknown_id", &[Threads, Regions, Tasks]),
        (
            "icv.value.nthreads-var",
            &[Threads, Regions, Tasks, IcvLists],
        ),
        ("icv.value.bind-var", &[Threads, Regions, Tasks, IcvLists]),
        ("icv.value.scope_mismatch", &[Threads, Regions, Tasks]),
        ("icv.string.unknown_id", &[Threads, Regions, Tasks]),
        ("icv.string.scope_mismatch", &[Threads, Regions, Tasks]),
        ("icv.string.integer_agrees", &[Threads, Regions, Tasks]),
        ("icv.string.run-sched-var", &[Threads, Regions, Tasks]),
        (
            "icv.string.nthreads-var",
            &[Threads, Regions, Tasks, IcvLists],
        ),
        ("icv.string.bind-var", &[Threads, Regions, Tasks, IcvLists]),
        (
            "icv.scope.every_pair_answerable",
            &[Threads, Regions, Tasks],
        ),
        ("tool_data.*", &[Threads, Regions, Tasks, ToolData]),
        ("dcv.get.well_formed", &[]),
        ("dcv.get.memory_owned", &[]),
        ("dcv.get.names_match_model", &[DisplayEnv]),
        ("dcv.get.values_match_model", &[DisplayEnv]),
        ("dcv.rel.*", &[]),
        ("compare.*", &[Threads, Regions, Tasks]),
        ("own.*", &[Threads, Regions, Tasks]),
        ("null.*", &[Threads, Regions, Tasks]),
        ("fault.*", &[Threads, Regions, Tasks]),
        ("corrupt.*", &[Image]),
        ("runtime.*", &[RuntimeInterface]),
        ("callbacks.contract.*", &[]),
    ]
};

/// Whether check `id` runs on a target that knows `known`: `Err` gives the skip reason.
pub fn applies(id: &str, known: &Known, kind: TargetKind) -> Result<(), String> {
    // The table first; then a per-ICV check by whether the fixture records its ICV.
    let needs = lookup(id).or_else(|| {
        let icv = id.strip_prefix("icv.value.")?;
        Some(if RECORDED_ICVS.contains(&icv) {
            &[Fact::Threads, Fact::Regions, Fact::Tasks][..]
        } else {
            &[Fact::UnrecordedGlobals][..]
        })
    });
    let Some(needs) = needs else {
        return Err(format!(
            "not judged on {} targets: the check reads model facts a fixture does not record",
            kind.name()
        ));
    };
    match needs.iter().find(|f| !known.has(**f)) {
        None => Ok(()),
        Some(f) => Err(known.reason(*f)),
    }
}

fn lookup(id: &str) -> Option<&'static [Fact]> {
    REAL.iter()
        .find(|(pat, _)| ompd_report::glob(pat, id))
        .map(|(_, f)| *f)
}

/// A source shared between address spaces of one unit (a live process can be attached only
/// once, so a second address space serves the same attachment).
#[derive(Debug, Clone)]
pub struct Shared(pub Arc<dyn Source>);

impl Source for Shared {
    fn kind(&self) -> TargetKind {
        self.0.kind()
    }
    fn arch(&self) -> Arch {
        self.0.arch()
    }
    fn read(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        self.0.read(addr, len)
    }
    fn read_cstr(&self, addr: u64, max: u64) -> Result<Vec<u8>, String> {
        self.0.read_cstr(addr, max)
    }
    fn symbol(&self, name: &str, thread: Option<usize>) -> Result<u64, SymbolError> {
        self.0.symbol(name, thread)
    }
    fn thread_count(&self) -> usize {
        self.0.thread_count()
    }
    fn find_thread(&self, kind: u64, id: &[u8]) -> Option<usize> {
        self.0.find_thread(kind, id)
    }
    fn thread_id_bytes(&self, index: usize, kind: u64) -> Option<Vec<u8>> {
        self.0.thread_id_bytes(index, kind)
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        self.0.as_any()
    }
    fn duplicate(&self) -> Option<Box<dyn Source>> {
        Some(Box::new(self.clone()))
    }
}

/// Opens a real target: attaches to the process (held until the source is dropped) or reads the
/// core file.
pub fn open(spec: &RealSpec) -> Result<Shared, String> {
    let source: Arc<dyn Source> = match spec {
        RealSpec::Live { pid } => Arc::new(
            live_target::live::LiveTarget::attach(*pid)
                .map_err(|e| format!("cannot attach to pid {pid}: {e}"))?,
        ),
        RealSpec::Core { path } => Arc::new(
            live_target::core::CoreTarget::open(path)
                .map_err(|e| format!("cannot read core file {}: {e}", path.display()))?,
        ),
    };
    Ok(Shared(source))
}

/// The environment process `pid` started with (`/proc/PID/environ`); empty when unreadable.
pub fn start_environment(pid: i32) -> Vec<(String, String)> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter_map(|kv| {
                    let kv = String::from_utf8_lossy(kv);
                    kv.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a record of `size` bytes at symbol `name`: `Ok(None)` when no module defines it.
fn record(source: &dyn Source, name: &str, size: usize) -> Result<Option<Vec<u8>>, String> {
    match source.symbol(name, None) {
        Ok(addr) => source
            .read(addr, size as u64)
            .map(Some)
            .map_err(|e| format!("reading {name} at {addr:#x}: {e}")),
        Err(SymbolError::NotFound) => Ok(None),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

/// What a real target's fixture recorded: the truth, and the OMPT view when the tool ran.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The OpenMP API view.
    pub truth: Truth,
    /// The OMPT view.
    pub ompt: Option<Ompt>,
}

/// Reads the fixture's records from the target: `Ok(None)` for a program that is no fixture.
pub fn recorded(source: &dyn Source) -> Result<Option<Recorded>, String> {
    use fixture_protocol::truth as t;
    let Some(bytes) = record(source, t::TRUTH_SYMBOL, t::TRUTH_SIZE)? else {
        return Ok(None);
    };
    let truth = Truth::decode(&bytes).map_err(|e| format!("fixture truth: {e}"))?;
    let ompt = match record(source, t::OMPT_SYMBOL, t::OMPT_SIZE)? {
        Some(b) if truth.ompt => Some(Ompt::decode(&b).map_err(|e| format!("OMPT truth: {e}"))?),
        _ => None,
    };
    Ok(Some(Recorded { truth, ompt }))
}

/// A real target's model and what of it is known.
#[derive(Clone, Debug)]
pub struct Lifted {
    /// The model: every known fact, placeholders elsewhere (never judged: see [`Known`]).
    pub model: Model,
    /// What the model's facts cover.
    pub known: Known,
}

/// The model of a target with no fixture record: nothing is known about its OpenMP state, so
/// only the checks that judge no model fact run.
pub fn unknown_state(why: &str) -> Lifted {
    let mut known = Known::default();
    for f in [
        Fact::Threads,
        Fact::Regions,
        Fact::Tasks,
        Fact::States,
        Fact::ToolData,
        Fact::Frames,
    ] {
        known.missing(f, why.to_string());
    }
    add_unrecorded(&mut known);
    known.insert(Fact::RuntimeInterface);
    Lifted {
        model: sim_target::model::ModelBuilder::new()
            .build()
            .expect("the empty model is valid"),
        known,
    }
}

fn add_unrecorded(known: &mut Known) {
    known.missing(
        Fact::Functions,
        "a fixture cannot name its outlined task bodies, so task entry points are not recorded",
    );
    known.missing(
        Fact::OmpVersion,
        "the runtime's OpenMP version is not visible through the OpenMP API",
    );
    known.missing(
        Fact::DisplayEnv,
        "the runtime's display-control variables are not recorded",
    );
    known.missing(
        Fact::UnrecordedGlobals,
        "the fixture does not set or record this ICV",
    );
    known.missing(
        Fact::Image,
        "memory of a real target is not corrupted by the harness",
    );
}

/// Region key: its level, and the ancestor thread numbers of its members at levels 1..level
/// (which thread of each enclosing team forked it).
type Key = (usize, Vec<i64>);

/// Lifts a fixture's records into a model of the target's OpenMP state. `env` is the
/// environment the fixture ran with (`OMP_NUM_THREADS` and `OMP_PROC_BIND` lists).
pub fn lift(rec: &Recorded, env: &[(String, String)]) -> Result<Lifted, String> {
    let omp: Vec<(&ThreadTruth, &OmpView)> = rec
        .truth
        .threads
        .iter()
        .filter_map(|t| t.omp.as_ref().map(|o| (t, o)))
        .collect();
    if omp.is_empty() {
        return Err("the fixture recorded no OpenMP thread".into());
    }
    for (t, o) in &omp {
        // The record comes from the target's memory: every index it gives is bounded first.
        let Some(l) = usize::try_from(o.level)
            .ok()
            .filter(|l| *l < fixture_protocol::truth::MAX_LEVELS)
        else {
            return Err(format!("thread {}: level {} out of range", t.tid, o.level));
        };
        if o.ancestor.len() != l + 1 || o.team_size.len() != l + 1 {
            return Err(format!(
                "thread {}: ancestor/team lists do not span level {l}",
                t.tid
            ));
        }
    }
    // Regions by key, outermost first; the initial region is level 0.
    let mut keys: Vec<Key> = vec![(0, vec![])];
    for (_, o) in &omp {
        for l in 1..=o.level as usize {
            let k: Key = (l, o.ancestor[1..l].to_vec());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.sort();
    // Threads: the initial thread (level-0 member of the initial region) first.
    let initial = omp
        .iter()
        .position(|(_, o)| o.ancestor.iter().skip(1).all(|a| *a == 0))
        .ok_or("no recorded thread is the initial thread (thread 0 at every level)")?;
    let mut order: Vec<usize> = vec![initial];
    order.extend((0..omp.len()).filter(|i| *i != initial));
    let tid_of = |i: usize| ThreadId(order.iter().position(|x| *x == i).expect("ordered"));
    let mut model = sim_target::model::ModelBuilder::new()
        .build()
        .expect("the empty model is valid");
    model.omp_version = 0;
    model.ompd_state = u64::from(rec.truth.omp_debug);
    model.gtid_mode = GtidMode::Tls;
    model.threads.clear();
    model.regions.clear();
    model.tasks.clear();
    // Regions and their implicit tasks.
    let mut region_of: BTreeMap<Key, RegionId> = BTreeMap::new();
    for key in &keys {
        let r = RegionId(model.regions.len());
        let (level, p) = (key.0, &key.1);
        let size = if level == 0 {
            1
        } else {
            // Any member's team_size at this level.
            omp.iter()
                .find(|(_, o)| o.level as usize >= level && o.ancestor[1..level] == p[..])
                .map(|(_, o)| o.team_size[level])
                .ok_or_else(|| format!("no member recorded for the region at {p:?}"))?
        };
        let parent = if level == 0 {
            None
        } else {
            Some(
                *region_of
                    .get(&(level - 1, p[..level.saturating_sub(2)].to_vec()))
                    .ok_or_else(|| {
                        format!("no enclosing region recorded for the region at {p:?}")
                    })?,
            )
        };
        let mut members = Vec::new();
        let mut implicit = Vec::new();
        for n in 0..size {
            let who = if level == 0 {
                Some(initial)
            } else {
                member_at(&omp, p, n)
            };
            let who = who.ok_or_else(|| {
                format!(
                    "thread {n} of the region at {p:?} did not record (the truth is incomplete)"
                )
            })?;
            members.push(tid_of(who));
            let task = TaskId(model.tasks.len());
            let generating = parent.map(|pr| {
                // The encountering task: the implicit task of the primary in the parent region.
                let primary = tid_of(member_at(&omp, p, 0).unwrap_or(initial));
                let pm: &Region = &model.regions[pr.0];
                let k = pm.members.iter().position(|m| *m == primary).unwrap_or(0);
                pm.implicit_tasks[k]
            });
            model.tasks.push(bare_task(
                TaskKind::Implicit {
                    region: r,
                    index: n as usize,
                },
                r,
                generating,
                None,
            ));
            implicit.push(task);
        }
        model.regions.push(Region {
            parent,
            members,
            implicit_tasks: implicit,
            function: 0,
            tool_data: 0,
        });
        region_of.insert(key.clone(), r);
    }
    // Threads: innermost region, current implicit task, state.
    let mut states_known = true;
    let mut why_states = String::new();
    for &i in &order {
        let (t, o) = omp[i];
        let level = o.level as usize;
        let r = *region_of
            .get(&(level, o.ancestor[1..level.max(1)].to_vec()))
            .ok_or_else(|| format!("thread {}: no region at level {level}", t.tid))?;
        let task = usize::try_from(o.thread_num)
            .ok()
            .and_then(|n| model.regions[r.0].implicit_tasks.get(n).copied())
            .ok_or_else(|| {
                format!(
                    "thread {}: thread number {} out of range",
                    t.tid, o.thread_num
                )
            })?;
        let (st, wait) = match t.role {
            Role::Spin | Role::TaskSpin => (state::WORK_PARALLEL, 0),
            Role::Serial => (state::WORK_SERIAL, 0),
            Role::Barrier => (0x14, 0),
            Role::Taskwait => (0x20, 0),
            Role::Lock => (0x41, o.wait_addr.unwrap_or(0)),
            Role::Critical => {
                states_known = false;
                why_states = "the wait id of a thread waiting for a critical section (the runtime's lock) is not recorded".into();
                (0x42, 0)
            }
            other => {
                return Err(format!(
                    "thread {}: role {other:?} is not an OpenMP thread's",
                    t.tid
                ))
            }
        };
        model.threads.push(Thread {
            native: NativeId {
                pthread: t.pthread,
                lwp: t.tid as u32,
            },
            region: r,
            current_task: task,
            state: st,
            wait_id: wait,
            tool_data: 0,
        });
    }
    // Explicit tasks, by the fixture's ids, and every current task's ICVs.
    let mut explicit: BTreeMap<i64, TaskId> = BTreeMap::new();
    for (k, &i) in order.iter().enumerate() {
        let (_, o) = omp[i];
        let Some(x) = &o.task else { continue };
        let r = model.threads[k].region;
        let implicit_of = |num: i64| -> Option<TaskId> {
            model.regions[r.0].implicit_tasks.get(num as usize).copied()
        };
        let generator = if x.parent == 0 {
            implicit_of(x.creator).ok_or("task creator out of range")?
        } else {
            match explicit.get(&x.parent) {
                Some(t) => *t,
                None => {
                    // An explicit parent no thread executes right now (an included task's
                    // generator is suspended under it on the same thread). Its own record is
                    // not there; the fixture's protocol is that thread 0's implicit task
                    // creates every top-level explicit task, which the recorded top-level tasks
                    // confirm (a record that breaks it makes the truth unusable).
                    let protocol = omp.iter().all(|(_, o)| {
                        o.task
                            .as_ref()
                            .is_none_or(|t| t.parent != 0 || t.creator == 0)
                    });
                    if !protocol {
                        return Err(format!(
                            "task {} is not recorded and the top-level tasks were not all \
                             created by thread 0",
                            x.parent
                        ));
                    }
                    let id = TaskId(model.tasks.len());
                    let sched = model.threads[k].current_task;
                    let generator = implicit_of(0).ok_or("no primary")?;
                    model.tasks.push(bare_task(
                        TaskKind::Explicit,
                        r,
                        Some(generator),
                        Some(sched),
                    ));
                    explicit.insert(x.parent, id);
                    model.threads[k].current_task = id;
                    id
                }
            }
        };
        let id = TaskId(model.tasks.len());
        let sched = model.threads[k].current_task;
        model.tasks.push(bare_task(
            TaskKind::Explicit,
            r,
            Some(generator),
            Some(sched),
        ));
        explicit.insert(x.id, id);
        model.threads[k].current_task = id;
    }
    for (k, &i) in order.iter().enumerate() {
        let (_, o) = omp[i];
        let cur = model.threads[k].current_task;
        let task = &mut model.tasks[cur.0];
        task.is_final = o.in_final;
        task.icvs = icvs_of(o)?;
    }
    // Address-space-wide ICVs the fixture recorded or set.
    let (_, o0) = omp[initial];
    model.globals.avail_proc = o0.num_procs as i32;
    model.globals.cancellation = o0.cancellation;
    model.globals.max_task_priority = o0.max_task_priority as i32;
    model.globals.nthreads_list = env
        .iter()
        .find(|(k, _)| k == "OMP_NUM_THREADS")
        .map(|(_, v)| {
            v.split(',')
                .filter_map(|x| x.trim().parse::<i32>().ok())
                .collect()
        })
        .unwrap_or_default();
    model.globals.bind_list = bind_list(env);
    model.foreign_threads = rec
        .truth
        .threads
        .iter()
        .filter(|t| t.role == Role::Foreign)
        .map(|t| NativeId {
            pthread: t.pthread,
            lwp: t.tid as u32,
        })
        .collect();
    // Cross-check the two first-party views: a thread running user code recorded its OMPT state
    // at the same point, so the OMPT state must be the one its role implies.
    if let Some(ompt) = &rec.ompt {
        for (k, &i) in order.iter().enumerate() {
            let (t, _) = omp[i];
            if t.role.blocks_in_runtime() {
                continue;
            }
            if let Some(view) = ompt.threads.iter().find(|v| v.tid == t.tid) {
                if view.state != model.threads[k].state && states_known {
                    states_known = false;
                    why_states = format!(
                        "the OMPT view disagrees with the fixture: thread {} is {:?} but OMPT \
                         reports state {:#x}",
                        t.tid, t.role, view.state
                    );
                }
            }
        }
    }
    let blocked = omp.iter().any(|(t, _)| t.role.blocks_in_runtime());
    let mut known = Known::default();
    for f in [
        Fact::Threads,
        Fact::Regions,
        Fact::Tasks,
        Fact::RuntimeInterface,
    ] {
        known.insert(f);
    }
    if env.iter().any(|(k, _)| k.starts_with("OMP_")) {
        known.insert(Fact::IcvLists);
    } else {
        known.missing(
            Fact::IcvLists,
            "the environment the process started with is not known (OMP_NUM_THREADS and \
             OMP_PROC_BIND give nthreads-var and bind-var beyond the current level)",
        );
    }
    if states_known {
        known.insert(Fact::States);
    } else {
        known.missing(Fact::States, why_states);
    }
    add_unrecorded(&mut known);
    match &rec.ompt {
        Some(ompt) => {
            // OMPT's ancestor levels are the generating chain in the specification; LLVM-family
            // runtimes walk the scheduling chain instead. Either reading that agrees across
            // every thread identifies each observation's task.
            let mut tried = Vec::new();
            let mut taken = None;
            for (name, chain) in [
                (
                    "generating",
                    Model::generating_chain as fn(&Model, TaskId) -> Vec<TaskId>,
                ),
                ("scheduling", scheduling_then_generating),
            ] {
                let mut m = model.clone();
                match ompt_facts(&mut m, &order, &omp, ompt, !blocked, chain) {
                    Ok(frames) => {
                        taken = Some((m, frames));
                        break;
                    }
                    Err(e) => tried.push(format!("as the {name} chain: {e}")),
                }
            }
            match taken {
                Some((m, frames)) => {
                    model = m;
                    known.insert(Fact::ToolData);
                    match frames {
                        Ok(()) => known.insert(Fact::Frames),
                        Err(why) => known.missing(Fact::Frames, why),
                    }
                }
                None => {
                    let why = format!("the OMPT record is inconsistent {}", tried.join("; "));
                    known.missing(Fact::ToolData, why.clone());
                    known.missing(Fact::Frames, why);
                }
            }
        }
        None => {
            let why = "the OMPT truth tool was not active in the fixture";
            known.missing(Fact::ToolData, why);
            known.missing(Fact::Frames, why);
        }
    }
    model
        .validate()
        .map_err(|e| format!("the lifted model is inconsistent: {e}"))?;
    Ok(Lifted { model, known })
}

/// A task of the lifted model with its place in the tree and nothing else: its ICVs and final
/// flag are filled from the record of the thread executing it (when one does), its tool data
/// and frames from the OMPT view, and its entry point stays unknown (`Fact::Functions`).
fn bare_task(
    kind: TaskKind,
    region: RegionId,
    generating: Option<TaskId>,
    scheduling: Option<TaskId>,
) -> Task {
    Task {
        kind,
        region,
        generating,
        scheduling,
        is_final: false,
        icvs: TaskIcvs::default(),
        function: 0,
        exit_frame: 0,
        enter_frame: 0,
        tool_data: 0,
    }
}

/// The OS thread that is member `n` of the region at `path`.
fn member_at(omp: &[(&ThreadTruth, &OmpView)], path: &[i64], n: i64) -> Option<usize> {
    let l = path.len() + 1;
    omp.iter().position(|(_, o)| {
        let level = o.level as usize;
        level >= l
            && o.ancestor[1..l] == path[..]
            && o.ancestor[l] == n
            && o.ancestor[l + 1..].iter().all(|a| *a == 0)
    })
}

fn bind_list(env: &[(String, String)]) -> Vec<i32> {
    let Some((_, v)) = env.iter().find(|(k, _)| k == "OMP_PROC_BIND") else {
        return vec![0];
    };
    v.split(',')
        .map(|x| match x.trim().to_ascii_lowercase().as_str() {
            "false" => 0,
            "true" => 1,
            "primary" | "master" => 2,
            "close" => 3,
            "spread" => 4,
            _ => -1,
        })
        .collect()
}

fn icvs_of(o: &OmpView) -> Result<TaskIcvs, String> {
    // omp_sched_t: 1 static, 2 dynamic, 3 guided, 4 auto; bit 31 the monotonic modifier.
    let raw = o.sched_kind;
    let modifier = if raw as u64 & 0x8000_0000 != 0 {
        Some(SchedModifier::Monotonic)
    } else {
        None
    };
    let kind = match raw & 0x7fff_ffff {
        1 => SchedKind::Static,
        2 => SchedKind::Dynamic,
        3 => SchedKind::Guided,
        4 => SchedKind::Auto,
        k => {
            return Err(format!(
                "omp_get_schedule kind {k:#x} is not a standard kind"
            ))
        }
    };
    Ok(TaskIcvs {
        dynamic: o.dynamic,
        nthreads: o.max_threads as i32,
        thread_limit: o.thread_limit as i32,
        max_active_levels: o.max_active_levels as i32,
        proc_bind: o.proc_bind as i32,
        default_device: o.default_device as i32,
        schedule: Schedule {
            kind,
            chunk: o.sched_chunk as i32,
            modifier,
        },
    })
}

/// A task's ancestors as LLVM-family runtimes report them through OMPT: the scheduling parent
/// where there is one (an explicit task), else the generating task (the encountering task of an
/// implicit task).
fn scheduling_then_generating(m: &Model, t: TaskId) -> Vec<TaskId> {
    let mut out = vec![t];
    let mut cur = t;
    while let Some(next) = m.tasks[cur.0].scheduling.or(m.tasks[cur.0].generating) {
        if out.contains(&next) {
            break;
        }
        out.push(next);
        cur = next;
    }
    out
}

/// Tool data and frames from the OMPT view: each thread's ancestor levels are its region chain
/// and its current task's generating chain. Tool data seen differently from two threads makes
/// the record unusable (`Err`). Frames are taken only when every observation of a task agrees
/// and `frames` is true (no thread entered the runtime after recording, which moves its task's
/// enter frame); the answer says whether they were taken, or why not.
fn ompt_facts(
    model: &mut Model,
    order: &[usize],
    omp: &[(&ThreadTruth, &OmpView)],
    ompt: &Ompt,
    frames: bool,
    chain: fn(&Model, TaskId) -> Vec<TaskId>,
) -> Result<Result<(), String>, String> {
    let mut region_data: BTreeMap<usize, u64> = BTreeMap::new();
    let mut task_data: BTreeMap<usize, u64> = BTreeMap::new();
    let mut task_frames: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    let mut frames_ok: Result<(), String> = if frames {
        Ok(())
    } else {
        Err("a thread waiting in the runtime entered it after its OMPT record, which moved its task's enter frame".into())
    };
    for (k, &i) in order.iter().enumerate() {
        let (t, _) = omp[i];
        let Some(view) = ompt.threads.iter().find(|v| v.tid == t.tid) else {
            return Err(format!("thread {} has no OMPT record", t.tid));
        };
        model.threads[k].tool_data = view.thread_data;
        let regions = model.region_chain(model.threads[k].region);
        for (level, p) in view.parallel.iter().enumerate() {
            let Some(r) = regions.get(level) else { break };
            if *region_data.entry(r.0).or_insert(p.data) != p.data {
                return Err(format!("region {} has two parallel data values", r.0));
            }
        }
        let tasks = chain(model, model.threads[k].current_task);
        for (level, x) in view.tasks.iter().enumerate() {
            let Some(task) = tasks.get(level) else { break };
            if *task_data.entry(task.0).or_insert(x.data) != x.data {
                return Err(format!("task {} has two task data values", task.0));
            }
            let f = (x.exit_frame, x.enter_frame);
            if frames_ok.is_ok() && *task_frames.entry(task.0).or_insert(f) != f {
                frames_ok = Err(format!(
                    "task {} was seen with two frames (threads recorded at different moments)",
                    task.0
                ));
            }
        }
    }
    // Every task and region gets its data from an observation, or the record does not cover
    // what the checks judge.
    if let Some(t) = (0..model.tasks.len()).find(|t| !task_data.contains_key(t)) {
        return Err(format!("task {t} is on no thread's ancestor chain"));
    }
    if let Some(r) = (0..model.regions.len()).find(|r| !region_data.contains_key(r)) {
        return Err(format!("region {r} is on no thread's ancestor chain"));
    }
    for (r, d) in region_data {
        model.regions[r].tool_data = d;
    }
    for (t, d) in task_data {
        model.tasks[t].tool_data = d;
    }
    if frames_ok.is_ok() {
        for (t, (exit, enter)) in task_frames {
            model.tasks[t].exit_frame = exit;
            model.tasks[t].enter_frame = enter;
        }
    }
    Ok(frames_ok)
}
/// The OMPD libraries a real target's runtime names in `ompd_dll_locations`, as paths that
/// exist: absolute entries as they are, relative ones in the runtime's directory (where the
/// runtimes ship them) and then as given. `Err` names what is missing.
pub fn discover(spec: &RealSpec) -> Result<Vec<PathBuf>, String> {
    let (source, modules): (Box<dyn Source>, live_target::modules::Modules) = match spec {
        RealSpec::Live { pid } => {
            let t = live_target::live::LiveTarget::attach(*pid)
                .map_err(|e| format!("cannot attach to pid {pid}: {e}"))?;
            let m = t.modules().clone();
            (Box::new(t), m)
        }
        RealSpec::Core { path } => {
            let t = live_target::core::CoreTarget::open(path)
                .map_err(|e| format!("cannot read core file {}: {e}", path.display()))?;
            let m = t.modules().clone();
            (Box::new(t), m)
        }
    };
    let listed = ompd_checks::dll_locations_of(source.as_ref())
        .map_err(|e| format!("no OMPD library named by the target: {e}"))?;
    let runtime_dir = modules
        .lookup("ompd_dll_locations")
        .and_then(|(i, _)| modules.list().get(i))
        .and_then(|m| m.path.parent().map(|d| d.to_path_buf()));
    let mut found = Vec::new();
    for entry in &listed {
        let p = PathBuf::from(entry);
        let candidates: Vec<PathBuf> = if p.is_absolute() {
            vec![p]
        } else {
            let mut c: Vec<PathBuf> = runtime_dir.iter().map(|d| d.join(&p)).collect();
            c.push(p);
            c
        };
        if let Some(hit) = candidates.into_iter().find(|c| c.is_file()) {
            if !found.contains(&hit) {
                found.push(hit);
            }
        }
    }
    if found.is_empty() {
        return Err(format!(
            "ompd_dll_locations lists {listed:?}, none of which exists here (runtime directory: {})",
            runtime_dir.map_or("unknown".into(), |d| d.display().to_string())
        ));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixture_protocol::truth::{OmpView, Role, ThreadTruth, Truth};

    /// A 2×2 nested record: thread (outer, inner) has tid 100 + 2·outer + inner.
    fn nested() -> Recorded {
        let view = |outer: i64, inner: i64| OmpView {
            thread_num: inner,
            num_threads: 2,
            level: 2,
            active_level: 2,
            ancestor: vec![0, outer, inner],
            team_size: vec![1, 2, 2],
            in_final: false,
            max_threads: 3,
            dynamic: false,
            max_active_levels: 3,
            thread_limit: 12,
            sched_kind: 2,
            sched_chunk: 7,
            proc_bind: 3,
            default_device: 1,
            num_procs: 2,
            cancellation: true,
            max_task_priority: 5,
            task: None,
            wait_addr: None,
        };
        let threads = (0..4)
            .map(|k| ThreadTruth {
                slot: k as usize,
                role: Role::Spin,
                tid: 100 + k,
                pthread: 0x7000 + k as u64,
                function: None,
                omp: Some(view(k / 2, k % 2)),
            })
            .collect();
        Recorded {
            truth: Truth {
                version: 1,
                scenario: 1,
                expected: 4,
                arrived: 4,
                omp_debug: true,
                ompt: false,
                pid: 1,
                threads,
            },
            ompt: None,
        }
    }

    #[test]
    fn a_nested_record_lifts_into_the_model_it_describes() {
        let env = vec![("OMP_NUM_THREADS".to_string(), "5,4,3".to_string())];
        let l = lift(&nested(), &env).unwrap();
        let m = &l.model;
        assert_eq!(m.threads.len(), 4);
        // The initial region, the outer team, and one inner team per outer thread.
        assert_eq!(m.regions.len(), 4);
        for t in &m.threads {
            assert_eq!(m.level(t.region), 2);
            assert_eq!(m.active_level(t.region), 2);
            assert_eq!(m.regions[t.region.0].members.len(), 2);
        }
        // Thread tid 102 (outer 1, inner 0) is the primary of its inner team and thread 1 of
        // the outer one.
        let t = m.threads.iter().position(|t| t.native.lwp == 102).unwrap();
        let outer = m.regions[m.threads[t].region.0].parent.unwrap();
        assert_eq!(m.thread_num(outer, ThreadId(t)), Some(1));
        assert_eq!(m.globals.nthreads_list, vec![5, 4, 3]);
        assert!(l.known.has(Fact::Threads) && l.known.has(Fact::IcvLists));
        assert!(!l.known.has(Fact::ToolData), "no OMPT record");
        assert!(applies("icv.value.nthreads-var", &l.known, TargetKind::Live).is_ok());
        assert!(applies("task.function.matches_model", &l.known, TargetKind::Live).is_err());
        assert!(applies("corrupt.pointer.null", &l.known, TargetKind::Core).is_err());
        // Without the start environment the list ICVs are not judged.
        let l = lift(&nested(), &[]).unwrap();
        assert!(applies("icv.value.nthreads-var", &l.known, TargetKind::Core).is_err());
    }

    #[test]
    fn records_that_do_not_add_up_are_refused_not_indexed() {
        let mut r = nested();
        r.truth.threads[3].omp.as_mut().unwrap().level = -1;
        assert!(lift(&r, &[]).unwrap_err().contains("out of range"));
        let mut r = nested();
        r.truth.threads[1].omp.as_mut().unwrap().thread_num = 99;
        assert!(lift(&r, &[]).is_err());
        let mut r = nested();
        r.truth.threads.pop();
        assert!(lift(&r, &[]).unwrap_err().contains("did not record"));
    }
}
