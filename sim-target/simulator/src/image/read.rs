//! Reading an image back into a model, walking the object graph the way the libraries do.
//!
//! Used to round-trip the lowering: `read(lower(m)) == m.normalized(arch)` for every model,
//! architecture and layout policy.

use super::Image;
use crate::model::{
    Globals, GtidMode, Model, NativeId, Region, RegionId, SchedKind, SchedModifier, Schedule, Task,
    TaskIcvs, TaskId, TaskKind, TeamsPart, Thread, ThreadId,
};
use std::collections::BTreeMap;

/// Why an image could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// A memory access failed.
    #[error("{what}: {source}")]
    Memory {
        /// What was being read.
        what: String,
        /// The failure.
        source: ompd_serve::memory::MemError,
    },
    /// A required symbol is missing.
    #[error("missing symbol {0}")]
    Symbol(String),
    /// The object graph is inconsistent.
    #[error("inconsistent image: {0}")]
    Graph(String),
}

struct Reader<'a> {
    img: &'a Image,
    budget: usize,
}

impl Reader<'_> {
    fn bytes(&mut self, addr: u64, len: u64, what: &str) -> Result<&[u8], ReadError> {
        self.budget = self
            .budget
            .checked_sub(1)
            .ok_or_else(|| ReadError::Graph("read budget exhausted".into()))?;
        self.img
            .memory
            .read(addr, len)
            .map_err(|source| ReadError::Memory {
                what: what.into(),
                source,
            })
    }

    fn sym(&self, name: &str) -> Result<u64, ReadError> {
        self.img
            .symbol(name)
            .ok_or_else(|| ReadError::Symbol(name.into()))
    }

    /// Unsigned value of member `path` of the `ty` object at `base`.
    fn get(&mut self, base: u64, ty: &str, path: &[&str]) -> Result<u64, ReadError> {
        let f =
            self.img.layout.resolve(ty, path).ok_or_else(|| {
                ReadError::Graph(format!("{ty}.{} not in layout", path.join(".")))
            })?;
        let arch = self.img.arch;
        let what = format!("{ty}.{} at {base:#x}", path.join("."));
        Ok(arch.decode(self.bytes(base + f.offset, f.size.min(8), &what)?))
    }

    fn get_signed(&mut self, base: u64, ty: &str, path: &[&str]) -> Result<i64, ReadError> {
        let f = self
            .img
            .layout
            .resolve(ty, path)
            .ok_or_else(|| ReadError::Graph(format!("{ty} layout")))?;
        let arch = self.img.arch;
        Ok(arch.decode_signed(self.bytes(base + f.offset, f.size.min(8), ty)?))
    }

    fn ptr(&mut self, addr: u64) -> Result<u64, ReadError> {
        let arch = self.img.arch;
        Ok(arch.decode(self.bytes(addr, arch.pointer as u64, "pointer")?))
    }

    fn data_ptr(&mut self, base: u64, ty: &str, path: &[&str]) -> Result<u64, ReadError> {
        let mut p = path.to_vec();
        p.push("ptr");
        self.get(base, ty, &p)
    }

    fn data_value(&mut self, base: u64, ty: &str, path: &[&str]) -> Result<u64, ReadError> {
        let mut p = path.to_vec();
        p.push("value");
        self.get(base, ty, &p)
    }

    fn global(&mut self, name: &str, width: u64) -> Result<u64, ReadError> {
        let a = self.sym(name)?;
        let arch = self.img.arch;
        Ok(arch.decode(self.bytes(a, width, name)?))
    }

    fn string_at(&mut self, ptr: u64) -> Result<Option<String>, ReadError> {
        if ptr == 0 {
            return Ok(None);
        }
        let s = self
            .img
            .memory
            .read_cstr(ptr, 4096)
            .map_err(|source| ReadError::Memory {
                what: "string".into(),
                source,
            })?;
        Ok(Some(String::from_utf8_lossy(s).into_owned()))
    }
}

fn sched_from(raw: u64, chunk: i32) -> Result<Schedule, ReadError> {
    let modifier = if raw & (1 << 29) != 0 {
        Some(SchedModifier::Monotonic)
    } else if raw & (1 << 30) != 0 {
        Some(SchedModifier::Nonmonotonic)
    } else {
        None
    };
    let kind = match raw & !(3 << 29) {
        33 | 34 => SchedKind::Static,
        35 => SchedKind::Dynamic,
        36 => SchedKind::Guided,
        38 => SchedKind::Auto,
        other => return Err(ReadError::Graph(format!("unknown schedule {other}"))),
    };
    Ok(Schedule {
        kind,
        chunk,
        modifier,
    })
}

/// Offsets and sizes every step of the walk needs.
struct Offsets {
    /// Pointer width.
    p: u64,
    /// The mask of a native thread id's width.
    tid_mask: u64,
    /// Offset of `th` in `kmp_info_t` (a thread is `info + th_off`).
    th_off: u64,
    /// Offset of `t` in `kmp_team_p` (a team is `team pointer + t_off`).
    t_off: u64,
    /// Size of a `kmp_taskdata_t` (an explicit task's `kmp_task_t` follows it).
    td_size: u64,
}

/// The regions a team serves, plus one lwt record per outer serialized level of its run.
struct TeamInfo {
    /// Outermost first; the last is the team's own region.
    regions: Vec<RegionId>,
    /// The lwt chain, innermost-but-one first.
    lwts: Vec<u64>,
}

/// What the walk has rebuilt so far.
#[derive(Default)]
struct Graph {
    regions: Vec<Region>,
    tasks: Vec<Task>,
    team_info: BTreeMap<u64, TeamInfo>,
    task_of_addr: BTreeMap<u64, TaskId>,
}

const BI: &str = "kmp_base_info_t";
const BT: &str = "kmp_base_team_t";
const TD: &str = "kmp_taskdata_t";
const LT: &str = "ompt_lw_taskteam_t";

/// A task of the model with every field but its kind, region and function at its default.
fn bare_task(kind: TaskKind, region: RegionId, function: u64) -> Task {
    Task {
        kind,
        region,
        generating: None,
        scheduling: None,
        is_final: false,
        icvs: TaskIcvs::default(),
        function,
        exit_frame: 0,
        enter_frame: 0,
        tool_data: 0,
    }
}

/// Rebuilds the model an image was lowered from.
pub fn read(img: &Image) -> Result<Model, ReadError> {
    let mut r = Reader {
        img,
        budget: 1_000_000,
    };
    let p = img.arch.pointer as u64;
    let nth = r.global("__kmp_all_nth", 4)? as usize;
    let arr = r.global("__kmp_threads", p)?;
    let o = Offsets {
        p,
        tid_mask: u64::MAX >> (64 - 8 * img.layout.thread_id_size()),
        th_off: img.layout.field("kmp_info_t", "th").offset,
        t_off: img.layout.field("kmp_team_p", "t").offset,
        td_size: img.layout.ty("kmp_taskdata_t").size,
    };
    let Slots {
        infos,
        gtids,
        vacant: vacant_gtids,
    } = thread_slots(&mut r, arr, p, nth)?;
    let mut thread_addr: Vec<u64> = infos.iter().map(|i| i + o.th_off).collect();
    let idle_addr = r.split_idle(&mut thread_addr)?;
    let by_thread_addr: BTreeMap<u64, usize> = thread_addr
        .iter()
        .enumerate()
        .map(|(g, a)| (*a, g))
        .collect();
    let mut g = Graph::default();
    // Team order has parents before children, so parent regions exist when needed.
    for t in r.team_order(&o, &thread_addr)? {
        r.read_team(&o, &mut g, t, &by_thread_addr)?;
    }
    r.read_tasks(&o, &mut g, &thread_addr)?;
    g.link_serialized_runs();
    r.lwt_scheduling(&mut g)?;
    let threads = r.read_threads(&o, &g, &thread_addr, &gtids)?;
    let mask = o.tid_mask;
    let foreign_threads: Vec<NativeId> = img
        .threads
        .iter()
        .filter(|t| t.gtid < 0)
        .map(|t| NativeId {
            pthread: t.native.pthread & mask,
            ..t.native
        })
        .collect();
    let idle_threads = r.read_idle(&o, &gtids[thread_addr.len()..], &idle_addr)?;
    let globals = r.read_globals(p)?;
    let older = img.symbol("ompd_state").is_none();
    Ok(Model {
        omp_version: r.global("__kmp_openmp_version", 4)? as i32 as i64,
        // An older self-description has no switch: its state words are always kept.
        ompd_state: match older {
            true => 1,
            false => r.global("ompd_state", 8)?,
        },
        ompt_support: img.symbol(crate::layout::TOOL_DATA_PROBE).is_some(),
        older_description: older,
        thread_id_width: match img.layout.thread_id_size() == p {
            true => crate::model::ThreadIdWidth::Pointer,
            false => crate::model::ThreadIdWidth::Other,
        },
        gtid_mode: if r.global("__kmp_gtid_mode", 4)? == 3 {
            GtidMode::Tls
        } else {
            GtidMode::Scan
        },
        vacant_gtids,
        globals,
        threads,
        foreign_threads,
        idle_threads,
        regions: g.regions,
        tasks: g.tasks,
    })
}

/// What the slots of `__kmp_threads` hold up to its last thread.
#[derive(Default)]
struct Slots {
    /// The `kmp_info_t` address of each thread.
    infos: Vec<u64>,
    /// Its gtid (slot index).
    gtids: Vec<usize>,
    /// The vacant (NULL) slots before the last thread, ascending.
    vacant: Vec<usize>,
}

/// The slots of the `nth` threads of `__kmp_threads` at `arr`, and the vacant ones among them.
fn thread_slots(r: &mut Reader, arr: u64, p: u64, nth: usize) -> Result<Slots, ReadError> {
    let capacity = r.global("__kmp_threads_capacity", 4)? as usize;
    let mut s = Slots::default();
    for g in 0..capacity {
        if s.infos.len() == nth {
            break;
        }
        match r.ptr(arr + p * g as u64)? {
            0 => s.vacant.push(g),
            info => {
                s.infos.push(info);
                s.gtids.push(g);
            }
        }
    }
    if s.infos.len() < nth {
        return Err(ReadError::Graph(format!(
            "__kmp_threads holds {} of its {nth} threads",
            s.infos.len()
        )));
    }
    Ok(s)
}

impl Reader<'_> {
    /// Every team, discovered from every thread's team and the parent chains, parents first.
    fn team_order(&mut self, o: &Offsets, thread_addr: &[u64]) -> Result<Vec<u64>, ReadError> {
        let mut team_order: Vec<u64> = Vec::new();
        for th in thread_addr {
            let mut t = self.get(*th, BI, &["th_team"])? + o.t_off;
            let mut chain = Vec::new();
            while t != o.t_off && !team_order.contains(&t) && !chain.contains(&t) {
                chain.push(t);
                t = self.get(t, BT, &["t_parent"])? + o.t_off;
            }
            chain.reverse();
            team_order.extend(chain);
        }
        Ok(team_order)
    }

    /// The lwt chain of team `t`, innermost-but-one first.
    fn lwt_chain(&mut self, t: u64) -> Result<Vec<u64>, ReadError> {
        let mut lwts = Vec::new();
        let mut l = self.get(t, BT, &["ompt_serialized_team_info"])?;
        while l != 0 {
            if lwts.contains(&l) || lwts.len() > 1024 {
                return Err(ReadError::Graph("cyclic lwt chain".into()));
            }
            lwts.push(l);
            l = self.get(l, LT, &["parent"])?;
        }
        Ok(lwts)
    }

    /// Team `t`: a region, plus one region per lwt record for a serialized run (outermost first).
    fn read_team(
        &mut self,
        o: &Offsets,
        g: &mut Graph,
        t: u64,
        by_thread_addr: &BTreeMap<u64, usize>,
    ) -> Result<(), ReadError> {
        let parent_team = self.get(t, BT, &["t_parent"])?;
        let parent = if parent_team == 0 {
            None
        } else {
            let info = g
                .team_info
                .get(&(parent_team + o.t_off))
                .ok_or_else(|| ReadError::Graph("team parent order".into()))?;
            Some(*info.regions.last().expect("a team serves a region"))
        };
        let lwts = self.lwt_chain(t)?;
        let nproc = self.get(t, BT, &["t_nproc"])? as usize;
        let threads_arr = self.get(t, BT, &["t_threads"])?;
        let tasks_arr = self.get(t, BT, &["t_implicit_task_taskdata"])?;
        let pkfn = self.get(t, BT, &["t_pkfn"])?;
        let team_data = self.data_value(t, BT, &["ompt_team_info", "parallel_data"])?;
        let mut members = Vec::new();
        for n in 0..nproc {
            let info = self.ptr(threads_arr + o.p * n as u64)?;
            let gtid = *by_thread_addr.get(&(info + o.th_off)).ok_or_else(|| {
                ReadError::Graph(format!("team member {n} is not a known thread"))
            })?;
            members.push(ThreadId(gtid));
        }
        let mut ids = self.read_hidden_levels(g, &lwts, parent, &members, pkfn)?;
        let par = ids.last().copied().or(parent);
        let id = RegionId(g.regions.len());
        let mut implicit = Vec::new();
        for n in 0..nproc {
            let a = tasks_arr + o.td_size * n as u64;
            let task = TaskId(g.tasks.len() + n);
            g.task_of_addr.insert(a, task);
            implicit.push(task);
        }
        for n in 0..nproc {
            let kind = TaskKind::Implicit {
                region: id,
                index: n,
            };
            g.tasks.push(bare_task(kind, id, pkfn));
        }
        let teams = match parent {
            Some(p) if lwts.is_empty() => self.teams_part(o, g, t, parent_team, p)?,
            _ => None,
        };
        g.regions.push(Region {
            parent: par,
            members,
            implicit_tasks: implicit,
            function: pkfn,
            tool_data: team_data,
            teams,
        });
        ids.push(id);
        g.team_info.insert(t, TeamInfo { regions: ids, lwts });
        Ok(())
    }

    /// The part team `t` plays in a teams construct: a team at the nesting level of its
    /// parent team `parent_team` (region `parent`), where that parent is no initial region,
    /// is an initial team of a league; its parent is marked the league.
    fn teams_part(
        &mut self,
        o: &Offsets,
        g: &mut Graph,
        t: u64,
        parent_team: u64,
        parent: RegionId,
    ) -> Result<Option<TeamsPart>, ReadError> {
        let level = self.get(t, BT, &["t_level"])?;
        let parent_level = self.get(parent_team + o.t_off, BT, &["t_level"])?;
        if level != parent_level || g.regions[parent.0].parent.is_none() {
            return Ok(None);
        }
        g.regions[parent.0].teams = Some(TeamsPart::League);
        let threads = self.get(t, BT, &["t_nproc"])? as usize;
        Ok(Some(TeamsPart::InitialTeam { threads }))
    }

    /// The outer serialized levels of a run (outermost first): from the lwt chain, last record
    /// first. Their ICVs and flags are those of the serial team's task (filled in later);
    /// generating links follow the nesting.
    fn read_hidden_levels(
        &mut self,
        g: &mut Graph,
        lwts: &[u64],
        parent: Option<RegionId>,
        members: &[ThreadId],
        pkfn: u64,
    ) -> Result<Vec<RegionId>, ReadError> {
        let mut ids = Vec::new();
        let mut par = parent;
        for l in lwts.iter().rev() {
            let id = RegionId(g.regions.len());
            let data = self.data_value(*l, LT, &["ompt_team_info", "parallel_data"])?;
            let task = TaskId(g.tasks.len());
            let info = "ompt_task_info";
            let exit_frame = self.data_ptr(*l, LT, &[info, "frame", "exit_frame"])?;
            let enter_frame = self.data_ptr(*l, LT, &[info, "frame", "enter_frame"])?;
            let tool_data = self.data_value(*l, LT, &[info, "task_data"])?;
            let kind = TaskKind::Implicit {
                region: id,
                index: 0,
            };
            g.tasks.push(Task {
                exit_frame,
                enter_frame,
                tool_data,
                ..bare_task(kind, id, pkfn)
            });
            g.regions.push(Region {
                parent: par,
                members: members.to_vec(),
                implicit_tasks: vec![task],
                function: pkfn,
                tool_data: data,
                teams: None,
            });
            ids.push(id);
            par = Some(id);
        }
        Ok(ids)
    }

    /// Every task: implicit ones are known; explicit ones are found from current tasks and
    /// links. Sets each task's generating and scheduling parents.
    fn read_tasks(
        &mut self,
        o: &Offsets,
        g: &mut Graph,
        thread_addr: &[u64],
    ) -> Result<(), ReadError> {
        let mut pending: Vec<u64> = g.task_of_addr.keys().copied().collect();
        for th in thread_addr {
            pending.push(self.get(*th, BI, &["th_current_task"])?);
        }
        let mut links: BTreeMap<TaskId, (u64, u64)> = BTreeMap::new();
        while let Some(a) = pending.pop() {
            if a == 0 {
                continue;
            }
            let id = match g.task_of_addr.get(&a) {
                Some(id) if links.contains_key(id) => continue,
                Some(id) => *id,
                None => {
                    let id = TaskId(g.tasks.len());
                    g.task_of_addr.insert(a, id);
                    g.tasks.push(bare_task(TaskKind::Explicit, RegionId(0), 0));
                    id
                }
            };
            let (parent, sched) = self.read_task(o, g, id, a)?;
            links.insert(id, (parent, sched));
            pending.push(parent);
            pending.push(sched);
        }
        let at = |a: &u64| (*a != 0).then(|| g.task_of_addr[a]);
        for (id, (parent, sched)) in &links {
            let (generating, scheduling) = (at(parent), at(sched));
            g.tasks[id.0].generating = generating;
            g.tasks[id.0].scheduling = scheduling;
        }
        Ok(())
    }

    /// The `kmp_taskdata_t` at `a` into task `id`; returns its parent and scheduling parent.
    fn read_task(
        &mut self,
        o: &Offsets,
        g: &mut Graph,
        id: TaskId,
        a: u64,
    ) -> Result<(u64, u64), ReadError> {
        let flags = self.get(a, TD, &["td_flags"])?;
        let team = self.get(a, TD, &["td_team"])? + o.t_off;
        let parent = self.get(a, TD, &["td_parent"])?;
        let sched = self.get(a, TD, &["ompt_task_info", "scheduling_parent"])?;
        let icvs = self.read_task_icvs(a)?;
        let region = *g
            .team_info
            .get(&team)
            .ok_or_else(|| ReadError::Graph(format!("task at {a:#x} names an unknown team")))?
            .regions
            .last()
            .expect("team serves a region");
        let layout = &self.img.layout;
        let task = &mut g.tasks[id.0];
        task.is_final = flags & layout.mask("final") != 0;
        let explicit = flags & layout.mask("tasktype") != 0;
        if explicit != (task.kind == TaskKind::Explicit) {
            return Err(ReadError::Graph(format!(
                "task at {a:#x}: tasktype flag disagrees with its place"
            )));
        }
        task.icvs = icvs;
        task.exit_frame = self.data_ptr(a, TD, &["ompt_task_info", "frame", "exit_frame"])?;
        task.enter_frame = self.data_ptr(a, TD, &["ompt_task_info", "frame", "enter_frame"])?;
        task.tool_data = self.data_value(a, TD, &["ompt_task_info", "task_data"])?;
        if explicit {
            task.region = region;
            task.function = self.get(a + o.td_size, "kmp_task_t", &["routine"])?;
        }
        Ok((parent, sched))
    }

    /// The `td_icvs` member of the `kmp_taskdata_t` at `a`.
    fn read_task_icvs(&mut self, a: u64) -> Result<TaskIcvs, ReadError> {
        let chunk = self.get_signed(a, TD, &["td_icvs", "sched", "chunk"])? as i32;
        Ok(TaskIcvs {
            dynamic: self.get(a, TD, &["td_icvs", "dynamic"])? != 0,
            nthreads: self.get_signed(a, TD, &["td_icvs", "nproc"])? as i32,
            thread_limit: self.get_signed(a, TD, &["td_icvs", "thread_limit"])? as i32,
            max_active_levels: self.get_signed(a, TD, &["td_icvs", "max_active_levels"])? as i32,
            proc_bind: self.get_signed(a, TD, &["td_icvs", "proc_bind"])? as i32,
            default_device: self.get_signed(a, TD, &["td_icvs", "default_device"])? as i32,
            schedule: sched_from(
                self.get(a, TD, &["td_icvs", "sched", "r_sched_type"])?,
                chunk,
            )?,
        })
    }

    /// The scheduling parent of each hidden serialized level, from its lwt record.
    fn lwt_scheduling(&mut self, g: &mut Graph) -> Result<(), ReadError> {
        for info in g.team_info.values() {
            for (k, l) in info.lwts.iter().enumerate() {
                let reg = info.regions[info.lwts.len() - 1 - k];
                let t = g.regions[reg.0].implicit_tasks[0];
                let s = self.get(*l, LT, &["ompt_task_info", "scheduling_parent"])?;
                g.tasks[t.0].scheduling = if s == 0 {
                    None
                } else {
                    g.task_of_addr.get(&s).copied()
                };
            }
        }
        Ok(())
    }

    /// Splits the idle threads (no team) off the end of `thread_addr`: the runtime numbers them
    /// after every thread of a team.
    fn split_idle(&mut self, thread_addr: &mut Vec<u64>) -> Result<Vec<u64>, ReadError> {
        let mut teamless = Vec::new();
        for th in thread_addr.iter() {
            teamless.push(self.get(*th, BI, &["th_team"])? == 0);
        }
        let first = teamless.iter().position(|t| *t).unwrap_or(teamless.len());
        if teamless[first..].iter().any(|t| !t) {
            return Err(ReadError::Graph(
                "a thread of a team has a gtid after an idle thread's".into(),
            ));
        }
        Ok(thread_addr.split_off(first))
    }

    /// The idle threads' native ids (their gtids are `gtids`), checked against the native
    /// thread table.
    fn read_idle(
        &mut self,
        o: &Offsets,
        gtids: &[usize],
        idle: &[u64],
    ) -> Result<Vec<NativeId>, ReadError> {
        let mut out = Vec::new();
        for (th, gtid) in idle.iter().zip(gtids) {
            let gtid = *gtid as i32;
            let pthread = self.get(*th, BI, &["th_info", "ds", "ds_thread"])?;
            let native = self
                .img
                .threads
                .iter()
                .find(|t| t.gtid == gtid && t.native.pthread & o.tid_mask == pthread)
                .map(|t| t.native)
                .ok_or_else(|| {
                    ReadError::Graph(format!("no native thread for idle gtid {gtid}"))
                })?;
            out.push(NativeId { pthread, ..native });
        }
        Ok(out)
    }

    /// The OpenMP threads, by gtid, checked against the native thread table.
    fn read_threads(
        &mut self,
        o: &Offsets,
        g: &Graph,
        thread_addr: &[u64],
        gtids: &[usize],
    ) -> Result<Vec<Thread>, ReadError> {
        let mut threads = Vec::new();
        for (th, gtid) in thread_addr.iter().zip(gtids.iter().copied()) {
            let team = self.get(*th, BI, &["th_team"])? + o.t_off;
            let region = *g.team_info[&team]
                .regions
                .last()
                .expect("team serves a region");
            let cur = self.get(*th, BI, &["th_current_task"])?;
            let native = self
                .img
                .threads
                .iter()
                .find(|t| t.gtid == gtid as i32)
                .map(|t| t.native)
                .ok_or_else(|| ReadError::Graph(format!("no native thread for gtid {gtid}")))?;
            let pthread = self.get(*th, BI, &["th_info", "ds", "ds_thread"])?;
            if pthread != native.pthread & o.tid_mask {
                return Err(ReadError::Graph(format!(
                    "gtid {gtid}: ds_thread disagrees with the thread table"
                )));
            }
            let native = NativeId { pthread, ..native };
            threads.push(Thread {
                native,
                region,
                current_task: g.task_of_addr[&cur],
                state: self.get_signed(*th, BI, &["ompt_thread_info", "state"])?,
                wait_id: self.get(*th, BI, &["ompt_thread_info", "wait_id"])?,
                tool_data: self.data_value(*th, BI, &["ompt_thread_info", "thread_data"])?,
            });
        }
        Ok(threads)
    }

    /// The used items of the list object `name` of type `ty`, whose items array is `field`.
    fn read_list(&mut self, name: &str, ty: &str, field: &str) -> Result<Vec<i32>, ReadError> {
        let obj = self.sym(name)?;
        let used = self.get(obj, ty, &["used"])? as usize;
        let items = self.get(obj, ty, &[field])?;
        (0..used)
            .map(|k| {
                let arch = self.img.arch;
                Ok(arch.decode_signed(self.bytes(items + 4 * k as u64, 4, name)?) as i32)
            })
            .collect()
    }

    /// The string a `char *` global points to (`None` for null).
    fn string_global(&mut self, name: &str, p: u64) -> Result<Option<String>, ReadError> {
        let a = self.global(name, p)?;
        self.string_at(a)
    }

    fn read_globals(&mut self, p: u64) -> Result<Globals, ReadError> {
        let env_ptr = self.global("ompd_env_block", p)?;
        let env = self.string_at(env_ptr)?.unwrap_or_default();
        Ok(Globals {
            avail_proc: self.global("__kmp_avail_proc", 4)? as i32,
            stacksize: self.global("__kmp_stksize", p)?,
            cancellation: self.global("__kmp_omp_cancellation", 4)? != 0,
            max_task_priority: self.global("__kmp_max_task_priority", 4)? as i32,
            display_affinity: self.global("__kmp_display_affinity", 4)? != 0,
            tool: self.global("__kmp_tool", 4)? as i32,
            affinity_format: self.string_global("__kmp_affinity_format", p)?,
            tool_libraries: self.string_global("__kmp_tool_libraries", p)?,
            tool_verbose_init: self.string_global("__kmp_tool_verbose_init", p)?,
            nthreads_list: self.read_list("__kmp_nested_nth", "kmp_nested_nthreads_t", "nth")?,
            bind_list: self.read_list(
                "__kmp_nested_proc_bind",
                "kmp_nested_proc_bind_t",
                "bind_types",
            )?,
            display_env_unterminated: !env.is_empty() && !env.ends_with('\n'),
            display_env: env
                .lines()
                .map(|l| {
                    let (k, v) = l.split_once('=').unwrap_or((l, ""));
                    (k.to_string(), v.to_string())
                })
                .collect(),
        })
    }
}

impl Graph {
    /// Serialized runs: hidden levels take the serial task's ICVs and flags; the generating chain
    /// goes innermost → outer levels → the run's encountering task.
    fn link_serialized_runs(&mut self) {
        for info in self.team_info.values() {
            if info.lwts.is_empty() {
                continue;
            }
            let inner = *info.regions.last().expect("non-empty");
            let inner_task = self.regions[inner.0].implicit_tasks[0];
            let encountering = self.tasks[inner_task.0].generating;
            let icvs = self.tasks[inner_task.0].icvs;
            let is_final = self.tasks[inner_task.0].is_final;
            let mut prev: Option<TaskId> = encountering;
            for reg in &info.regions {
                let t = self.regions[reg.0].implicit_tasks[0];
                self.tasks[t.0].generating = prev;
                if *reg != inner {
                    self.tasks[t.0].icvs = icvs;
                    self.tasks[t.0].is_final = is_final;
                }
                prev = Some(t);
            }
        }
    }
}
