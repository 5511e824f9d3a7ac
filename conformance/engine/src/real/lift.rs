//! Lifting a fixture's records into a model of the target's OpenMP state, with the facts
//! ([`Known`]) the records cover.

use super::ompt;
use super::open::Recorded;
use fixture_protocol::truth::{OmpView, Role, ThreadTruth};
use ompd_abi::state;
use ompd_checks::known::{Fact, Known};
use sim_target::model::{
    GtidMode, Model, NativeId, Region, RegionId, SchedKind, SchedModifier, Schedule, Task,
    TaskIcvs, TaskId, TaskKind, TeamsPart, Thread, ThreadId,
};
use std::collections::BTreeMap;

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
        Fact::Teams,
        Fact::Tasks,
        Fact::States,
        Fact::StateWords,
        Fact::ToolData,
        Fact::Frames,
    ] {
        known.missing(f, why.to_string());
    }
    add_unrecorded(&mut known);
    known.insert(Fact::RuntimeInterface);
    Lifted {
        model: empty_model(),
        known,
    }
}

fn empty_model() -> Model {
    sim_target::model::ModelBuilder::new()
        .build()
        .expect("the empty model is valid")
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

/// The recorded OpenMP threads: each with its OpenMP API view.
pub(super) type Omp<'r> = [(&'r ThreadTruth, &'r OmpView)];

/// Lifts a fixture's records into a model of the target's OpenMP state. `env` is the
/// environment the fixture ran with (`OMP_NUM_THREADS` and `OMP_PROC_BIND` lists).
pub fn lift(rec: &Recorded, env: &[(String, String)]) -> Result<Lifted, String> {
    let omp = recorded_threads(rec)?;
    let mut l = Lifting::new(&omp, u64::from(rec.truth.omp_debug))?;
    let in_teams = omp.iter().any(|(_, o)| o.num_teams > 1);
    let mut states = match in_teams {
        true => l.teams()?,
        false => {
            let region_of = l.regions()?;
            l.threads(&region_of)?
        }
    };
    l.explicit_tasks()?;
    l.current_task_icvs()?;
    l.globals(rec, env);
    let Lifting {
        mut model, order, ..
    } = l;
    if let (Some(ompt), Ok(())) = (&rec.ompt, &states) {
        states = ompt::cross_check_states(&model, &order, &omp, ompt);
    }
    let mut known = known_facts(env, states, in_teams);
    let blocked = omp.iter().any(|(t, _)| t.role.blocks_in_runtime());
    ompt::tool_data_and_frames(
        &mut model,
        &order,
        &omp,
        rec.ompt.as_ref(),
        blocked,
        &mut known,
    );
    if in_teams {
        let why = "the OMPT view's regions of a teams construct are not lifted";
        known.missing(Fact::ToolData, why);
        known.missing(Fact::Frames, why);
    }
    model
        .validate()
        .map_err(|e| format!("the lifted model is inconsistent: {e}"))?;
    Ok(Lifted { model, known })
}

/// The recorded OpenMP threads, each index the record gives bounded first (the record comes
/// from the target's memory).
fn recorded_threads(rec: &Recorded) -> Result<Vec<(&ThreadTruth, &OmpView)>, String> {
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
    Ok(omp)
}

/// The facts the API view covers; `states` says whether thread states are known, or why not;
/// `in_teams`: the threads are in a teams construct. The OMPT view adds tool data and frames.
fn known_facts(env: &[(String, String)], states: Result<(), String>, in_teams: bool) -> Known {
    let mut known = Known::default();
    for f in [Fact::Threads, Fact::Tasks, Fact::RuntimeInterface] {
        known.insert(f);
    }
    if in_teams {
        known.insert(Fact::Teams);
        known.missing(
            Fact::Regions,
            "the threads are in a teams construct, whose regions the text and the runtime's \
             memory answer differently: the teams checks judge them",
        );
    } else {
        known.insert(Fact::Regions);
        known.missing(Fact::Teams, "the program is in no teams construct");
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
    match states {
        Ok(()) => known.insert(Fact::States),
        Err(why) => known.missing(Fact::States, why),
    }
    add_unrecorded(&mut known);
    known
}

/// A model being lifted from the recorded threads.
struct Lifting<'r, 'o> {
    omp: &'o Omp<'r>,
    /// Indices into `omp`: the initial thread first, then in record order; a thread's place
    /// here is its [`ThreadId`].
    order: Vec<usize>,
    /// The initial thread (level-0 member of the initial region), an index into `omp`.
    initial: usize,
    model: Model,
}

impl<'r, 'o> Lifting<'r, 'o> {
    /// An empty model of the recorded threads' address space (`ompd_state` from the record).
    fn new(omp: &'o Omp<'r>, ompd_state: u64) -> Result<Self, String> {
        let initial = omp
            .iter()
            .position(|(_, o)| o.ancestor.iter().skip(1).all(|a| *a == 0))
            .ok_or("no recorded thread is the initial thread (thread 0 at every level)")?;
        let mut order: Vec<usize> = vec![initial];
        order.extend((0..omp.len()).filter(|i| *i != initial));
        let mut model = empty_model();
        model.omp_version = 0;
        model.ompd_state = ompd_state;
        model.gtid_mode = GtidMode::Tls;
        model.threads.clear();
        model.regions.clear();
        model.tasks.clear();
        Ok(Lifting {
            omp,
            order,
            initial,
            model,
        })
    }

    fn tid_of(&self, i: usize) -> ThreadId {
        ThreadId(self.order.iter().position(|x| *x == i).expect("ordered"))
    }

    /// Regions by key, outermost first (the initial region is level 0), each with its members
    /// and implicit tasks.
    fn regions(&mut self) -> Result<BTreeMap<Key, RegionId>, String> {
        let mut keys: Vec<Key> = vec![(0, vec![])];
        for (_, o) in self.omp {
            for l in 1..=o.level as usize {
                let k: Key = (l, o.ancestor[1..l].to_vec());
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        keys.sort();
        let mut region_of: BTreeMap<Key, RegionId> = BTreeMap::new();
        for key in keys {
            let parent = self.enclosing(&key, &region_of)?;
            let members = (0..self.team_size(&key)?)
                .map(|n| self.member(&key, n))
                .collect::<Result<Vec<usize>, String>>()?;
            let generating = parent.map(|pr| self.encountering_task(pr, &key.1));
            let r = self.push_region(parent, members, None, generating);
            region_of.insert(key, r);
        }
        Ok(region_of)
    }

    /// A host teams construct, as a kmp runtime keeps it (`TeamsPart`): the encountering
    /// thread's initial region, the league of the initial threads by team number, and for each
    /// team its initial team's region and, under it, the parallel region its initial thread
    /// forked in the teams region (a team one level deeper). The answer says whether the states
    /// are known, or why not.
    fn teams(&mut self) -> Result<Result<(), String>, String> {
        if self.omp.iter().any(|(_, o)| o.level > 1) {
            return Err("a region nested two levels deep in a teams region is not lifted".into());
        }
        let nteams = self.omp.iter().map(|(_, o)| o.num_teams).max().unwrap_or(1);
        let initials = (0..nteams)
            .map(|k| self.initial_of_team(k))
            .collect::<Result<Vec<usize>, String>>()?;
        self.initial = initials[0];
        self.order = vec![self.initial];
        self.order
            .extend((0..self.omp.len()).filter(|i| *i != self.initial));
        let root = self.push_region(None, vec![self.initial], None, None);
        let league = self.push_region(Some(root), initials.clone(), Some(TeamsPart::League), None);
        for (k, initial) in initials.iter().enumerate() {
            let generating = self.model.regions[league.0].implicit_tasks[k];
            let nested = self.nested_members(k as i64)?;
            // The threads the runtime keeps in the team: what the initial thread's
            // omp_get_num_threads answers in the teams body; the nested region's team otherwise.
            let threads = match nested.len() {
                0 => usize::try_from(self.omp[*initial].1.num_threads).unwrap_or(1),
                n => n,
            };
            let part = Some(TeamsPart::InitialTeam {
                threads: threads.max(1),
            });
            let team = self.push_region(Some(league), vec![*initial], part, Some(generating));
            if !nested.is_empty() {
                self.push_region(Some(team), nested, None, None);
            }
        }
        self.teams_threads()
    }

    /// The recorded thread that is team `k`'s initial thread.
    fn initial_of_team(&self, k: i64) -> Result<usize, String> {
        let initial = |o: &OmpView| o.team_num == k && o.ancestor.get(1).is_none_or(|a| *a == 0);
        self.omp
            .iter()
            .position(|(_, o)| initial(o))
            .ok_or_else(|| format!("the initial thread of team {k} did not record"))
    }

    /// The members of the parallel region team `k`'s initial thread forked in the teams region
    /// (by thread number; none when it is in the teams body).
    fn nested_members(&self, k: i64) -> Result<Vec<usize>, String> {
        let nested: Vec<usize> = (0..self.omp.len())
            .filter(|i| self.omp[*i].1.team_num == k && self.omp[*i].1.level == 1)
            .collect();
        let Some(first) = nested.first() else {
            return Ok(Vec::new());
        };
        (0..self.omp[*first].1.team_size[1])
            .map(|n| {
                nested
                    .iter()
                    .copied()
                    .find(|i| self.omp[*i].1.thread_num == n)
                    .ok_or_else(|| format!("thread {n} of team {k}'s region did not record"))
            })
            .collect()
    }

    /// Adds a region of the recorded threads `members` (indices into the record), with an
    /// implicit task each, generated by `generating`.
    fn push_region(
        &mut self,
        parent: Option<RegionId>,
        members: Vec<usize>,
        teams: Option<TeamsPart>,
        generating: Option<TaskId>,
    ) -> RegionId {
        let r = RegionId(self.model.regions.len());
        let mut implicit = Vec::new();
        for n in 0..members.len() {
            implicit.push(TaskId(self.model.tasks.len()));
            let kind = TaskKind::Implicit {
                region: r,
                index: n,
            };
            let generating =
                generating.or(parent.map(|p| self.model.regions[p.0].implicit_tasks[0]));
            self.model.tasks.push(bare_task(kind, r, generating, None));
        }
        let members = members.iter().map(|i| self.tid_of(*i)).collect();
        self.model.regions.push(Region {
            parent,
            members,
            implicit_tasks: implicit,
            function: 0,
            tool_data: 0,
            teams,
        });
        r
    }

    /// Each recorded thread in the innermost region it is a member of, running that region's
    /// implicit task, in the state its role implies.
    fn teams_threads(&mut self) -> Result<Result<(), String>, String> {
        let mut states = Ok(());
        for k in 0..self.order.len() {
            let t = self.omp[self.order[k]].0;
            let tid = ThreadId(k);
            let r = (0..self.model.regions.len())
                .rev()
                .map(RegionId)
                .find(|r| self.model.regions[r.0].members.contains(&tid))
                .ok_or_else(|| format!("thread {}: in no region of the teams construct", t.tid))?;
            let n = self.model.thread_num(r, tid).expect("a member");
            let task = self.model.regions[r.0].implicit_tasks[n];
            states = states.and(self.push_thread(self.order[k], r, task)?);
        }
        Ok(states)
    }

    /// The size of the team of the region at `key`: any member's team size at its level.
    fn team_size(&self, (level, p): &Key) -> Result<i64, String> {
        if *level == 0 {
            return Ok(1);
        }
        self.omp
            .iter()
            .find(|(_, o)| o.level as usize >= *level && o.ancestor[1..*level] == p[..])
            .map(|(_, o)| o.team_size[*level])
            .ok_or_else(|| format!("no member recorded for the region at {p:?}"))
    }

    /// The region enclosing the one at `key` (none for the initial region).
    fn enclosing(
        &self,
        (level, p): &Key,
        region_of: &BTreeMap<Key, RegionId>,
    ) -> Result<Option<RegionId>, String> {
        if *level == 0 {
            return Ok(None);
        }
        region_of
            .get(&(level - 1, p[..level.saturating_sub(2)].to_vec()))
            .copied()
            .map(Some)
            .ok_or_else(|| format!("no enclosing region recorded for the region at {p:?}"))
    }

    /// The recorded thread that is member `n` of the region at `key`.
    fn member(&self, (level, p): &Key, n: i64) -> Result<usize, String> {
        let who = if *level == 0 {
            Some(self.initial)
        } else {
            member_at(self.omp, p, n)
        };
        who.ok_or_else(|| {
            format!("thread {n} of the region at {p:?} did not record (the truth is incomplete)")
        })
    }

    /// The encountering task of the region at `path` inside `parent`: the implicit task of its
    /// primary in the parent region.
    fn encountering_task(&self, parent: RegionId, path: &[i64]) -> TaskId {
        let primary = self.tid_of(member_at(self.omp, path, 0).unwrap_or(self.initial));
        let pm: &Region = &self.model.regions[parent.0];
        let k = pm.members.iter().position(|m| *m == primary).unwrap_or(0);
        pm.implicit_tasks[k]
    }

    /// Threads: innermost region, current implicit task, state. The answer says whether the
    /// states are known, or why not.
    fn threads(
        &mut self,
        region_of: &BTreeMap<Key, RegionId>,
    ) -> Result<Result<(), String>, String> {
        let mut states = Ok(());
        for k in 0..self.order.len() {
            let i = self.order[k];
            let (t, o) = self.omp[i];
            let level = o.level as usize;
            let r = *region_of
                .get(&(level, o.ancestor[1..level.max(1)].to_vec()))
                .ok_or_else(|| format!("thread {}: no region at level {level}", t.tid))?;
            let task = usize::try_from(o.thread_num)
                .ok()
                .and_then(|n| self.model.regions[r.0].implicit_tasks.get(n).copied())
                .ok_or_else(|| {
                    format!(
                        "thread {}: thread number {} out of range",
                        t.tid, o.thread_num
                    )
                })?;
            states = states.and(self.push_thread(i, r, task)?);
        }
        Ok(states)
    }

    /// Adds recorded thread `i` (an index into the record) in region `r`, running `task`, in
    /// the state its role implies. The answer says whether its state is known, or why not.
    fn push_thread(
        &mut self,
        i: usize,
        r: RegionId,
        task: TaskId,
    ) -> Result<Result<(), String>, String> {
        let (t, o) = self.omp[i];
        let (state, wait_id) = state_of(t, o)?;
        self.model.threads.push(Thread {
            native: NativeId {
                pthread: t.pthread,
                lwp: t.tid as u32,
            },
            region: r,
            current_task: task,
            state,
            wait_id,
            tool_data: 0,
        });
        Ok(match t.role {
            Role::Critical => Err(
                "the wait id of a thread waiting for a critical section (the \
                 runtime's lock) is not recorded"
                    .to_string(),
            ),
            _ => Ok(()),
        })
    }

    /// Explicit tasks, by the fixture's ids: each becomes its thread's current task.
    fn explicit_tasks(&mut self) -> Result<(), String> {
        let mut explicit: BTreeMap<i64, TaskId> = BTreeMap::new();
        for k in 0..self.order.len() {
            let (_, o) = self.omp[self.order[k]];
            let Some(x) = &o.task else { continue };
            let r = self.model.threads[k].region;
            let generator = if x.parent == 0 {
                self.implicit_of(r, x.creator)
                    .ok_or("task creator out of range")?
            } else {
                match explicit.get(&x.parent) {
                    Some(t) => *t,
                    None => {
                        let id = self.unrecorded_parent(k, x.parent)?;
                        explicit.insert(x.parent, id);
                        id
                    }
                }
            };
            explicit.insert(x.id, self.push_explicit(k, generator));
        }
        Ok(())
    }

    /// Implicit task `num` of region `r`.
    fn implicit_of(&self, r: RegionId, num: i64) -> Option<TaskId> {
        self.model.regions[r.0]
            .implicit_tasks
            .get(num as usize)
            .copied()
    }

    /// An explicit task generated by `generator`, scheduled on thread `k` over its current task,
    /// which it becomes.
    fn push_explicit(&mut self, k: usize, generator: TaskId) -> TaskId {
        let id = TaskId(self.model.tasks.len());
        let r = self.model.threads[k].region;
        let sched = self.model.threads[k].current_task;
        self.model.tasks.push(bare_task(
            TaskKind::Explicit,
            r,
            Some(generator),
            Some(sched),
        ));
        self.model.threads[k].current_task = id;
        id
    }

    /// An explicit parent task `parent` no thread executes right now (an included task's
    /// generator is suspended under it on thread `k`). Its own record is not there; the
    /// fixture's protocol is that thread 0's implicit task creates every top-level explicit
    /// task, which the recorded top-level tasks confirm (a record that breaks it makes the truth
    /// unusable).
    fn unrecorded_parent(&mut self, k: usize, parent: i64) -> Result<TaskId, String> {
        let protocol = self.omp.iter().all(|(_, o)| {
            o.task
                .as_ref()
                .is_none_or(|t| t.parent != 0 || t.creator == 0)
        });
        if !protocol {
            return Err(format!(
                "task {parent} is not recorded and the top-level tasks were not all created by \
                 thread 0"
            ));
        }
        let r = self.model.threads[k].region;
        let generator = self.implicit_of(r, 0).ok_or("no primary")?;
        Ok(self.push_explicit(k, generator))
    }

    /// Every current task's ICVs and final flag, from the record of the thread executing it.
    fn current_task_icvs(&mut self) -> Result<(), String> {
        for (k, &i) in self.order.iter().enumerate() {
            let (_, o) = self.omp[i];
            let cur = self.model.threads[k].current_task;
            let task = &mut self.model.tasks[cur.0];
            task.is_final = o.in_final;
            task.icvs = icvs_of(o)?;
        }
        Ok(())
    }

    /// Address-space-wide ICVs the fixture recorded or set, and its foreign threads.
    fn globals(&mut self, rec: &Recorded, env: &[(String, String)]) {
        let (_, o0) = self.omp[self.initial];
        let g = &mut self.model.globals;
        g.avail_proc = o0.num_procs as i32;
        g.cancellation = o0.cancellation;
        g.max_task_priority = o0.max_task_priority as i32;
        g.nthreads_list = env
            .iter()
            .find(|(k, _)| k == "OMP_NUM_THREADS")
            .map(|(_, v)| {
                v.split(',')
                    .filter_map(|x| x.trim().parse::<i32>().ok())
                    .collect()
            })
            .unwrap_or_default();
        g.bind_list = bind_list(env);
        self.model.foreign_threads = rec
            .truth
            .threads
            .iter()
            .filter(|t| t.role == Role::Foreign)
            .map(|t| NativeId {
                pthread: t.pthread,
                lwp: t.tid as u32,
            })
            .collect();
    }
}

/// The state and wait id a thread's role implies.
fn state_of(t: &ThreadTruth, o: &OmpView) -> Result<(i64, u64), String> {
    Ok(match t.role {
        Role::Spin | Role::TaskSpin => (state::WORK_PARALLEL, 0),
        Role::Serial => (state::WORK_SERIAL, 0),
        Role::Barrier => (0x14, 0),
        Role::Taskwait => (0x20, 0),
        Role::Lock => (0x41, o.wait_addr.unwrap_or(0)),
        Role::Critical => (0x42, 0),
        other => {
            return Err(format!(
                "thread {}: role {other:?} is not an OpenMP thread's",
                t.tid
            ))
        }
    })
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
fn member_at(omp: &Omp, path: &[i64], n: i64) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::super::applies;
    use super::*;
    use fixture_protocol::truth::{OmpView, Role, ThreadTruth, Truth};
    use ompd_serve::source::TargetKind;

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
            team_num: 0,
            num_teams: 1,
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

    fn check(id: &str) -> &'static ompd_checks::Check {
        ompd_checks::find(id).expect("a registered check")
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
        assert!(applies(check("icv.value.nthreads-var"), &l.known, TargetKind::Live).is_ok());
        assert!(applies(
            check("task.function.matches_model"),
            &l.known,
            TargetKind::Live
        )
        .is_err());
        assert!(applies(check("corrupt.pointer.null"), &l.known, TargetKind::Core).is_err());
        // Without the start environment the list ICVs are not judged.
        let l = lift(&nested(), &[]).unwrap();
        assert!(applies(check("icv.value.nthreads-var"), &l.known, TargetKind::Core).is_err());
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
