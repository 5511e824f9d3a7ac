//! Reading an image back into a model, walking the object graph the way the libraries do.
//!
//! Used to round-trip the lowering: `read(lower(m)) == m.normalized(arch)` for every model,
//! architecture and layout policy.

use super::Image;
use crate::model::{
    Globals, GtidMode, Model, NativeId, Region, RegionId, SchedKind, SchedModifier, Schedule, Task,
    TaskIcvs, TaskId, TaskKind, Thread, ThreadId,
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

/// Rebuilds the model an image was lowered from.
pub fn read(img: &Image) -> Result<Model, ReadError> {
    let mut r = Reader {
        img,
        budget: 1_000_000,
    };
    let p = img.arch.pointer as u64;
    let nth = r.global("__kmp_all_nth", 4)? as usize;
    let arr = r.global("__kmp_threads", p)?;
    let th_off = img.layout.field("kmp_info_t", "th").offset;
    let t_off = img.layout.field("kmp_team_p", "t").offset;
    let td_size = img.layout.ty("kmp_taskdata_t").size;
    let bi = "kmp_base_info_t";
    let bt = "kmp_base_team_t";
    let td = "kmp_taskdata_t";

    // Threads.
    let mut thread_addr = Vec::new();
    for g in 0..nth {
        let info = r.ptr(arr + p * g as u64)?;
        thread_addr.push(info + th_off);
    }
    let by_thread_addr: BTreeMap<u64, usize> = thread_addr
        .iter()
        .enumerate()
        .map(|(g, a)| (*a, g))
        .collect();

    // Teams: discovered from every thread's team and the parent chains.
    let mut team_order: Vec<u64> = Vec::new();
    for th in &thread_addr {
        let mut t = r.get(*th, bi, &["th_team"])? + t_off;
        let mut chain = Vec::new();
        while t != t_off && !team_order.contains(&t) && !chain.contains(&t) {
            chain.push(t);
            t = r.get(t, bt, &["t_parent"])? + t_off;
        }
        chain.reverse();
        team_order.extend(chain);
    }
    // Regions: a team, plus one region per lwt record for a serialized run (outermost first).
    struct TeamInfo {
        regions: Vec<RegionId>,
        lwts: Vec<u64>,
    }
    let mut regions: Vec<Region> = Vec::new();
    let mut team_info: BTreeMap<u64, TeamInfo> = BTreeMap::new();
    let mut tasks: Vec<Task> = Vec::new();
    let mut task_of_addr: BTreeMap<u64, TaskId> = BTreeMap::new();
    // Team order has parents before children, so parent regions exist when needed.
    for t in &team_order {
        let parent_team = r.get(*t, bt, &["t_parent"])?;
        let parent = if parent_team == 0 {
            None
        } else {
            let info = team_info
                .get(&(parent_team + t_off))
                .ok_or_else(|| ReadError::Graph("team parent order".into()))?;
            Some(*info.regions.last().expect("a team serves a region"))
        };
        let mut lwts = Vec::new();
        let mut l = r.get(*t, bt, &["ompt_serialized_team_info"])?;
        while l != 0 {
            if lwts.contains(&l) || lwts.len() > 1024 {
                return Err(ReadError::Graph("cyclic lwt chain".into()));
            }
            lwts.push(l);
            l = r.get(l, "ompt_lw_taskteam_t", &["parent"])?;
        }
        let nproc = r.get(*t, bt, &["t_nproc"])? as usize;
        let threads_arr = r.get(*t, bt, &["t_threads"])?;
        let tasks_arr = r.get(*t, bt, &["t_implicit_task_taskdata"])?;
        let pkfn = r.get(*t, bt, &["t_pkfn"])?;
        let team_data = r.data_value(*t, bt, &["ompt_team_info", "parallel_data"])?;
        let mut members = Vec::new();
        for n in 0..nproc {
            let info = r.ptr(threads_arr + p * n as u64)?;
            let g = by_thread_addr.get(&(info + th_off)).ok_or_else(|| {
                ReadError::Graph(format!("team member {n} is not a known thread"))
            })?;
            members.push(ThreadId(*g));
        }
        let mut ids = Vec::new();
        let mut par = parent;
        // Outer serialized levels (outermost first): from the lwt chain, last record first.
        for l in lwts.iter().rev() {
            let id = RegionId(regions.len());
            let data = r.data_value(
                *l,
                "ompt_lw_taskteam_t",
                &["ompt_team_info", "parallel_data"],
            )?;
            let task = TaskId(tasks.len());
            let lt = "ompt_lw_taskteam_t";
            let exit_frame = r.data_ptr(*l, lt, &["ompt_task_info", "frame", "exit_frame"])?;
            let enter_frame = r.data_ptr(*l, lt, &["ompt_task_info", "frame", "enter_frame"])?;
            let tool_data = r.data_value(*l, lt, &["ompt_task_info", "task_data"])?;
            // ICVs, flags and function of hidden levels are those of the serial team's task
            // (filled in below); generating links follow the nesting.
            tasks.push(Task {
                kind: TaskKind::Implicit {
                    region: id,
                    index: 0,
                },
                region: id,
                generating: None,
                scheduling: None,
                is_final: false,
                icvs: TaskIcvs::default(),
                function: pkfn,
                exit_frame,
                enter_frame,
                tool_data,
            });
            regions.push(Region {
                parent: par,
                members: members.clone(),
                implicit_tasks: vec![task],
                function: pkfn,
                tool_data: data,
            });
            ids.push(id);
            par = Some(id);
        }
        let id = RegionId(regions.len());
        let mut implicit = Vec::new();
        for n in 0..nproc {
            let a = tasks_arr + td_size * n as u64;
            let task = TaskId(tasks.len() + n);
            task_of_addr.insert(a, task);
            implicit.push(task);
        }
        for n in 0..nproc {
            tasks.push(Task {
                kind: TaskKind::Implicit {
                    region: id,
                    index: n,
                },
                region: id,
                generating: None,
                scheduling: None,
                is_final: false,
                icvs: TaskIcvs::default(),
                function: pkfn,
                exit_frame: 0,
                enter_frame: 0,
                tool_data: 0,
            });
        }
        regions.push(Region {
            parent: par,
            members,
            implicit_tasks: implicit,
            function: pkfn,
            tool_data: team_data,
        });
        ids.push(id);
        team_info.insert(*t, TeamInfo { regions: ids, lwts });
    }

    // Tasks: implicit ones are known; explicit ones are found from current tasks and links.
    let mut pending: Vec<u64> = task_of_addr.keys().copied().collect();
    for th in &thread_addr {
        pending.push(r.get(*th, bi, &["th_current_task"])?);
    }
    let mut links: BTreeMap<TaskId, (u64, u64)> = BTreeMap::new();
    while let Some(a) = pending.pop() {
        if a == 0 {
            continue;
        }
        let id = match task_of_addr.get(&a) {
            Some(id) if links.contains_key(id) => continue,
            Some(id) => *id,
            None => {
                let id = TaskId(tasks.len());
                task_of_addr.insert(a, id);
                tasks.push(Task {
                    kind: TaskKind::Explicit,
                    region: RegionId(0),
                    generating: None,
                    scheduling: None,
                    is_final: false,
                    icvs: TaskIcvs::default(),
                    function: 0,
                    exit_frame: 0,
                    enter_frame: 0,
                    tool_data: 0,
                });
                id
            }
        };
        let flags = r.get(a, td, &["td_flags"])?;
        let team = r.get(a, td, &["td_team"])? + t_off;
        let parent = r.get(a, td, &["td_parent"])?;
        let sched = r.get(a, td, &["ompt_task_info", "scheduling_parent"])?;
        let chunk = r.get_signed(a, td, &["td_icvs", "sched", "chunk"])? as i32;
        let icvs = TaskIcvs {
            dynamic: r.get(a, td, &["td_icvs", "dynamic"])? != 0,
            nthreads: r.get_signed(a, td, &["td_icvs", "nproc"])? as i32,
            thread_limit: r.get_signed(a, td, &["td_icvs", "thread_limit"])? as i32,
            max_active_levels: r.get_signed(a, td, &["td_icvs", "max_active_levels"])? as i32,
            proc_bind: r.get_signed(a, td, &["td_icvs", "proc_bind"])? as i32,
            default_device: r.get_signed(a, td, &["td_icvs", "default_device"])? as i32,
            schedule: sched_from(r.get(a, td, &["td_icvs", "sched", "r_sched_type"])?, chunk)?,
        };
        let region = *team_info
            .get(&team)
            .ok_or_else(|| ReadError::Graph(format!("task at {a:#x} names an unknown team")))?
            .regions
            .last()
            .expect("team serves a region");
        let task = &mut tasks[id.0];
        task.is_final = flags & img.layout.mask("final") != 0;
        let explicit = flags & img.layout.mask("tasktype") != 0;
        if explicit != (task.kind == TaskKind::Explicit) {
            return Err(ReadError::Graph(format!(
                "task at {a:#x}: tasktype flag disagrees with its place"
            )));
        }
        task.icvs = icvs;
        task.exit_frame = r.data_ptr(a, td, &["ompt_task_info", "frame", "exit_frame"])?;
        task.enter_frame = r.data_ptr(a, td, &["ompt_task_info", "frame", "enter_frame"])?;
        task.tool_data = r.data_value(a, td, &["ompt_task_info", "task_data"])?;
        if explicit {
            task.region = region;
            task.function = r.get(a + td_size, "kmp_task_t", &["routine"])?;
        }
        links.insert(id, (parent, sched));
        pending.push(parent);
        pending.push(sched);
    }
    for (id, (parent, sched)) in &links {
        tasks[id.0].generating = if *parent == 0 {
            None
        } else {
            Some(task_of_addr[parent])
        };
        tasks[id.0].scheduling = if *sched == 0 {
            None
        } else {
            Some(task_of_addr[sched])
        };
    }
    // Serialized runs: hidden levels take the serial task's ICVs and flags; the generating chain
    // goes innermost → outer levels → the run's encountering task.
    for info in team_info.values() {
        if info.lwts.is_empty() {
            continue;
        }
        let inner = *info.regions.last().expect("non-empty");
        let inner_task = regions[inner.0].implicit_tasks[0];
        let encountering = tasks[inner_task.0].generating;
        let icvs = tasks[inner_task.0].icvs;
        let is_final = tasks[inner_task.0].is_final;
        let mut prev: Option<TaskId> = encountering;
        for reg in &info.regions {
            let t = regions[reg.0].implicit_tasks[0];
            tasks[t.0].generating = prev;
            if *reg != inner {
                tasks[t.0].icvs = icvs;
                tasks[t.0].is_final = is_final;
            }
            prev = Some(t);
        }
    }
    // Lwt scheduling parents.
    for info in team_info.values() {
        for (k, l) in info.lwts.iter().enumerate() {
            let reg = info.regions[info.lwts.len() - 1 - k];
            let t = regions[reg.0].implicit_tasks[0];
            let s = r.get(
                *l,
                "ompt_lw_taskteam_t",
                &["ompt_task_info", "scheduling_parent"],
            )?;
            tasks[t.0].scheduling = if s == 0 {
                None
            } else {
                task_of_addr.get(&s).copied()
            };
        }
    }

    let mut threads = Vec::new();
    for (g, th) in thread_addr.iter().enumerate() {
        let team = r.get(*th, bi, &["th_team"])? + t_off;
        let region = *team_info[&team]
            .regions
            .last()
            .expect("team serves a region");
        let cur = r.get(*th, bi, &["th_current_task"])?;
        let native = img
            .threads
            .iter()
            .find(|t| t.gtid == g as i32)
            .map(|t| t.native)
            .ok_or_else(|| ReadError::Graph(format!("no native thread for gtid {g}")))?;
        let pthread = r.get(*th, bi, &["th_info", "ds", "ds_thread"])?;
        if pthread != native.pthread & (u64::MAX >> (64 - 8 * p)) {
            return Err(ReadError::Graph(format!(
                "gtid {g}: ds_thread disagrees with the thread table"
            )));
        }
        let native = NativeId { pthread, ..native };
        threads.push(Thread {
            native,
            region,
            current_task: task_of_addr[&cur],
            state: r.get_signed(*th, bi, &["ompt_thread_info", "state"])?,
            wait_id: r.get(*th, bi, &["ompt_thread_info", "wait_id"])?,
            tool_data: r.data_value(*th, bi, &["ompt_thread_info", "thread_data"])?,
        });
    }
    let mask = u64::MAX >> (64 - 8 * p);
    let foreign_threads: Vec<NativeId> = img
        .threads
        .iter()
        .filter(|t| t.gtid < 0)
        .map(|t| NativeId {
            pthread: t.native.pthread & mask,
            ..t.native
        })
        .collect();

    let read_list =
        |r: &mut Reader, name: &str, ty: &str, field: &str| -> Result<Vec<i32>, ReadError> {
            let obj = r.sym(name)?;
            let used = r.get(obj, ty, &["used"])? as usize;
            let items = r.get(obj, ty, &[field])?;
            (0..used)
                .map(|k| {
                    Ok(r.img
                        .arch
                        .decode_signed(r.bytes(items + 4 * k as u64, 4, name)?)
                        as i32)
                })
                .collect()
        };
    let env_ptr = r.global("ompd_env_block", p)?;
    let env = r.string_at(env_ptr)?.unwrap_or_default();
    let globals = Globals {
        avail_proc: r.global("__kmp_avail_proc", 4)? as i32,
        stacksize: r.global("__kmp_stksize", p)?,
        cancellation: r.global("__kmp_omp_cancellation", 4)? != 0,
        max_task_priority: r.global("__kmp_max_task_priority", 4)? as i32,
        display_affinity: r.global("__kmp_display_affinity", 4)? != 0,
        tool: r.global("__kmp_tool", 4)? as i32,
        affinity_format: {
            let a = r.global("__kmp_affinity_format", p)?;
            r.string_at(a)?
        },
        tool_libraries: {
            let a = r.global("__kmp_tool_libraries", p)?;
            r.string_at(a)?
        },
        tool_verbose_init: {
            let a = r.global("__kmp_tool_verbose_init", p)?;
            r.string_at(a)?
        },
        nthreads_list: read_list(&mut r, "__kmp_nested_nth", "kmp_nested_nthreads_t", "nth")?,
        bind_list: read_list(
            &mut r,
            "__kmp_nested_proc_bind",
            "kmp_nested_proc_bind_t",
            "bind_types",
        )?,
        display_env: env
            .lines()
            .map(|l| {
                let (k, v) = l.split_once('=').unwrap_or((l, ""));
                (k.to_string(), v.to_string())
            })
            .collect(),
    };
    Ok(Model {
        omp_version: r.global("__kmp_openmp_version", 4)? as i32 as i64,
        ompd_state: r.global("ompd_state", 8)?,
        gtid_mode: if r.global("__kmp_gtid_mode", 4)? == 3 {
            GtidMode::Tls
        } else {
            GtidMode::Scan
        },
        globals,
        threads,
        foreign_threads,
        regions,
        tasks,
    })
}
