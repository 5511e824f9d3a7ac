//! Lowering a model into memory, following the LLVM-family object graph.
//!
//! Threads are `kmp_info_t` objects reached through `__kmp_threads[gtid]`; each active region (and
//! the initial region) is a `kmp_team_p` with its thread array and implicit-task array; a run of
//! nested serialized regions on one thread is one serial team that holds the innermost region,
//! plus an `ompt_lw_taskteam_t` chain holding the outer ones (innermost-but-one first), as the
//! real runtime keeps them. Explicit tasks are a `kmp_taskdata_t` followed by a `kmp_task_t`.

use super::{Image, NativeThread, Placement};
use crate::layout::{Layout, Policy, UnsupportedLayout};
use crate::model::{
    GtidMode, Model, ModelError, Region, RegionId, SchedKind, SchedModifier, TaskKind, TeamsPart,
};
use ompd_serve::arch::Arch;
use ompd_serve::memory::Memory;
use std::collections::BTreeMap;

mod legacy;
mod place;

use place::Placer;

/// Why a model could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// The policy does not exist for the architecture.
    #[error(transparent)]
    Layout(#[from] UnsupportedLayout),
    /// The model is structurally invalid.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A value does not fit the target (e.g. an address above 4 GiB on a 32-bit target).
    #[error("{0}")]
    Range(String),
}

/// The runtime's `kmp_sched_t` encoding of a schedule.
pub fn sched_type(kind: SchedKind, chunk: i32, modifier: Option<SchedModifier>) -> u64 {
    let base = match kind {
        SchedKind::Static if chunk == 0 => 34,
        SchedKind::Static => 33,
        SchedKind::Dynamic => 35,
        SchedKind::Guided => 36,
        SchedKind::Auto => 38,
    };
    base | match modifier {
        None => 0,
        Some(SchedModifier::Monotonic) => 1 << 29,
        Some(SchedModifier::Nonmonotonic) => 1 << 30,
    }
}

struct Lowering {
    arch: Arch,
    layout: Layout,
    mem: Memory,
    placer: Placer,
    symbols: BTreeMap<String, u64>,
}

impl Lowering {
    fn alloc(&mut self, size: u64, align: u64, label: &str) -> u64 {
        self.placer.place(&mut self.mem, size, align, label)
    }

    fn scalar(&mut self, addr: u64, width: u64, value: u64) {
        let bytes = self.arch.encode(value, width as usize);
        self.mem
            .write(addr, &bytes)
            .expect("lowering writes inside its own objects");
    }

    fn ptr(&mut self, addr: u64, value: u64) {
        self.scalar(addr, self.arch.pointer as u64, value)
    }

    /// Writes `value` into the member `path` of the `ty` object at `base`, with the member's size.
    /// Members a preset leaves out are skipped: the libraries never read them.
    fn put(&mut self, base: u64, ty: &str, path: &[&str], value: u64) {
        if let Some(f) = self.layout.resolve(ty, path) {
            self.scalar(base + f.offset, f.size.min(8), value);
        }
    }

    /// Writes an `ompt_data_t` through its `value` member (8 bytes), as a tool does.
    fn put_data_value(&mut self, base: u64, ty: &str, path: &[&str], value: u64) {
        let mut p = path.to_vec();
        p.push("value");
        self.put(base, ty, &p, value);
    }

    /// Writes an `ompt_data_t` through its `ptr` member (pointer-sized), as the runtime does for
    /// frame addresses.
    fn put_data_ptr(&mut self, base: u64, ty: &str, path: &[&str], value: u64) {
        let mut p = path.to_vec();
        p.push("ptr");
        if let Some(f) = self.layout.resolve(ty, &p) {
            self.ptr(base + f.offset, value);
        }
    }

    /// Writes the `ompt_task_info` member of the `ty` object at `base` for `task`: its
    /// frames (through `.ptr`, as the runtime does), its tool data and its scheduling parent.
    fn put_task_info(
        &mut self,
        base: u64,
        ty: &str,
        task: &crate::model::Task,
        scheduling_parent: u64,
    ) {
        let info = "ompt_task_info";
        self.put_data_ptr(base, ty, &[info, "frame", "exit_frame"], task.exit_frame);
        self.put_data_ptr(base, ty, &[info, "frame", "enter_frame"], task.enter_frame);
        self.put_data_value(base, ty, &[info, "task_data"], task.tool_data);
        self.put(base, ty, &[info, "scheduling_parent"], scheduling_parent);
    }

    fn global(&mut self, name: &str, size: u64, value: u64) -> u64 {
        let addr = self.alloc(size, size, name);
        self.scalar(addr, size, value);
        self.symbols.insert(name.to_string(), addr);
        addr
    }

    fn cstring(&mut self, s: &str, label: &str) -> u64 {
        let mut bytes = s.as_bytes().to_vec();
        bytes.push(0);
        let addr = self.alloc(bytes.len() as u64, 1, label);
        self.mem.write(addr, &bytes).expect("string fits");
        addr
    }
}

/// Serial-team grouping: for every region, the region whose info the serving team holds, and for
/// serialized runs the outer levels kept in the lwt chain.
struct Teams {
    /// For each region: the representative (innermost) region of its team.
    rep: Vec<RegionId>,
    /// For each representative: the outer serialized regions, innermost-but-one first.
    lwt: BTreeMap<RegionId, Vec<RegionId>>,
    /// For each representative: the outermost region of its run (whose parent is the team parent).
    head: BTreeMap<RegionId, RegionId>,
}

fn group_teams(m: &Model) -> Teams {
    let n = m.regions.len();
    let mut rep: Vec<RegionId> = (0..n).map(RegionId).collect();
    // A serialized region whose only child region is serialized too is represented by the
    // innermost region of the run.
    for i in (0..n).rev() {
        let r = RegionId(i);
        if !m.is_serialized(r) {
            continue;
        }
        let child =
            (i + 1..n).find(|c| m.regions[*c].parent == Some(r) && m.is_serialized(RegionId(*c)));
        if let Some(c) = child {
            rep[i] = rep[c];
        }
    }
    let mut lwt: BTreeMap<RegionId, Vec<RegionId>> = BTreeMap::new();
    let mut head = BTreeMap::new();
    for (i, r) in rep.iter().enumerate() {
        // Regions are numbered parents first, so the first region of a run is its head.
        head.entry(*r).or_insert(RegionId(i));
        if *r != RegionId(i) {
            lwt.entry(*r).or_default().push(RegionId(i));
        }
    }
    for chain in lwt.values_mut() {
        chain.reverse(); // innermost-but-one first
    }
    Teams { rep, lwt, head }
}

/// Where the objects of a model were placed, before any field is written.
struct Objects {
    /// The `kmp_info_t` of each thread, by gtid.
    info: Vec<u64>,
    /// The `kmp_base_info_t` (`th` member) of each thread, by gtid.
    thread: Vec<u64>,
    /// The `kmp_base_team_t` (`t` member) serving each region, by region id.
    team: Vec<u64>,
    /// The `t_threads` array of each representative region.
    team_threads: BTreeMap<usize, u64>,
    /// The `t_implicit_task_taskdata` array of each representative region.
    team_tasks: BTreeMap<usize, u64>,
    /// The `kmp_taskdata_t` of each task, by task id.
    task: Vec<u64>,
    /// The `ompt_lw_taskteam_t` of each outer serialized region kept in an lwt chain.
    lwt: BTreeMap<RegionId, u64>,
    /// Offset of the `t` member in `kmp_team_p` (a team pointer is `team - t_off`).
    t_off: u64,
    /// Size of a `kmp_taskdata_t` (an explicit task's `kmp_task_t` follows it).
    td_size: u64,
}

/// Lowers `model` for `arch` under `policy`.
pub fn lower(model: &Model, arch: Arch, policy: Policy) -> Result<Image, LowerError> {
    model.validate()?;
    let layout = Layout::with_thread_ids(arch, policy, model.pthread_size(arch))?;
    check_frames_fit(model, arch)?;
    check_teams_held(model)?;
    let placer = Placer::new(arch, policy);
    let mut lo = Lowering {
        arch,
        layout,
        mem: Memory::default(),
        placer,
        symbols: BTreeMap::new(),
    };

    // Layout words: every one an 8-byte target-endian word; a runtime without OMPT support
    // describes no tool-data member.
    for (name, value) in lo.layout.symbols() {
        let ompt = model.ompt_support || !crate::layout::describes_tool_data(&name);
        let described = !model.older_description || !crate::layout::newer_only(&name);
        if ompt && described {
            lo.global(&name, 8, value);
        }
    }

    let teams = group_teams(model);
    // Objects first, so that every pointer is known before any field is written.
    let o = lo.place_objects(model, &teams);
    lo.write_threads(model, &o);
    lo.write_teams(model, &teams, &o);
    lo.write_tasks(model, &teams, &o);
    lo.write_globals(model, &o.info);
    lo.write_contention_group(model);
    let threads = lo.gtid_slots(model);

    let placement = Placement {
        thread: o.thread,
        team: o.team,
        task: o.task,
        lwt: o.lwt.into_iter().map(|(r, a)| (r.0, a)).collect(),
    };
    let index = super::index::ThreadIndex::of(&threads, lo.layout.thread_id_size() as usize);
    Ok(Image {
        arch,
        layout: lo.layout,
        memory: lo.mem,
        symbols: lo.symbols,
        threads,
        placement,
        index,
    })
}

/// Refuses an initial team that keeps threads the model does not hold: the lowering writes a
/// team's members only.
fn check_teams_held(model: &Model) -> Result<(), LowerError> {
    let apart = |r: &Region| match r.teams {
        Some(TeamsPart::InitialTeam { threads }) => threads != r.members.len(),
        _ => false,
    };
    if model.regions.iter().any(apart) {
        return Err(LowerError::Range(
            "an initial team keeps threads the model does not hold: only its members are lowered"
                .into(),
        ));
    }
    Ok(())
}

/// Refuses frame addresses a 32-bit target cannot hold.
fn check_frames_fit(model: &Model, arch: Arch) -> Result<(), LowerError> {
    let limit = arch.address_limit();
    for t in &model.tasks {
        for (what, v) in [("frame", t.exit_frame), ("frame", t.enter_frame)] {
            if arch.pointer == 4 && v >= limit {
                return Err(LowerError::Range(format!(
                    "{what} address {v:#x} does not fit {arch}"
                )));
            }
        }
    }
    Ok(())
}

impl Lowering {
    fn size_of(&self, ty: &str) -> u64 {
        self.layout.ty(ty).size
    }

    /// Places every thread, team, task and lwt object, in that order.
    fn place_objects(&mut self, model: &Model, teams: &Teams) -> Objects {
        let p = self.arch.pointer as u64;
        let info: Vec<u64> = (0..model.threads.len() + model.idle_threads.len())
            .map(|g| {
                let size = self.size_of("kmp_info_t");
                self.alloc(size, 64, &format!("kmp_info_t gtid {g}"))
            })
            .collect();
        let th_off = self.layout.field("kmp_info_t", "th").offset;
        let thread: Vec<u64> = info.iter().map(|a| a + th_off).collect();
        let t_off = self.layout.field("kmp_team_p", "t").offset;

        let mut team = vec![0u64; model.regions.len()];
        let mut team_threads = BTreeMap::new();
        let mut team_tasks = BTreeMap::new();
        let td_size = self.size_of("kmp_taskdata_t");
        for (i, r) in model.regions.iter().enumerate() {
            if teams.rep[i] != RegionId(i) {
                continue;
            }
            let size = self.size_of("kmp_team_p");
            let obj = self.alloc(size, 64, &format!("kmp_team_p region {i}"));
            team[i] = obj + t_off;
            let n = r.members.len() as u64;
            team_threads.insert(i, self.alloc(p * n, p, &format!("t_threads region {i}")));
            team_tasks.insert(
                i,
                self.alloc(
                    td_size * n,
                    64,
                    &format!("t_implicit_task_taskdata region {i}"),
                ),
            );
        }
        for i in 0..model.regions.len() {
            team[i] = team[teams.rep[i].0];
        }
        let mut task = vec![0u64; model.tasks.len()];
        for (i, t) in model.tasks.iter().enumerate() {
            if let TaskKind::Implicit { region, index } = t.kind {
                let rep = teams.rep[region.0];
                // Hidden outer serialized levels share the serial team's one implicit taskdata.
                let idx = if rep == region { index } else { 0 };
                task[i] = team_tasks[&rep.0] + td_size * idx as u64;
            }
        }
        let task_t_size = self.size_of("kmp_task_t");
        for (i, t) in model.tasks.iter().enumerate() {
            if t.kind == TaskKind::Explicit {
                task[i] = self.alloc(td_size + task_t_size, 64, &format!("explicit task {i}"));
            }
        }
        let lwt_size = self.size_of("ompt_lw_taskteam_t");
        let mut lwt: BTreeMap<RegionId, u64> = BTreeMap::new();
        for chain in teams.lwt.values() {
            for r in chain {
                let label = format!("ompt_lw_taskteam_t region {}", r.0);
                lwt.insert(*r, self.alloc(lwt_size, 64, &label));
            }
        }
        Objects {
            info,
            thread,
            team,
            team_threads,
            team_tasks,
            task,
            lwt,
            t_off,
            td_size,
        }
    }

    fn write_threads(&mut self, model: &Model, o: &Objects) {
        for (g, t) in model.threads.iter().enumerate() {
            let th = o.thread[g];
            let bi = "kmp_base_info_t";
            self.put(th, bi, &["th_info", "ds", "ds_thread"], t.native.pthread);
            let tid = model
                .thread_num(t.region, crate::model::ThreadId(g))
                .expect("validated membership");
            self.put(th, bi, &["th_info", "ds", "ds_tid"], tid as u64);
            self.put(
                th,
                bi,
                &["th_info", "ds", "ds_gtid"],
                model.runtime_gtid(g) as u64,
            );
            self.put(th, bi, &["th_team"], o.team[t.region.0] - o.t_off);
            self.put(th, bi, &["th_current_task"], o.task[t.current_task.0]);
            self.put(th, bi, &["ompt_thread_info", "state"], t.state as u64);
            self.put(th, bi, &["ompt_thread_info", "wait_id"], t.wait_id);
            self.put_data_value(th, bi, &["ompt_thread_info", "thread_data"], t.tool_data);
        }
        let first = model.threads.len();
        for (k, native) in model.idle_threads.iter().enumerate() {
            let th = o.thread[first + k];
            let bi = "kmp_base_info_t";
            self.put(th, bi, &["th_info", "ds", "ds_thread"], native.pthread);
            self.put(th, bi, &["th_info", "ds", "ds_tid"], 0);
            let gtid = model.runtime_gtid(first + k) as u64;
            self.put(th, bi, &["th_info", "ds", "ds_gtid"], gtid);
            self.put(th, bi, &["th_team"], 0);
            self.put(th, bi, &["th_current_task"], 0);
            self.put(
                th,
                bi,
                &["ompt_thread_info", "state"],
                ompd_abi::state::IDLE as u64,
            );
        }
    }

    fn write_teams(&mut self, model: &Model, teams: &Teams, o: &Objects) {
        let p = self.arch.pointer as u64;
        let bt = "kmp_base_team_t";
        for (i, r) in model.regions.iter().enumerate() {
            let rid = RegionId(i);
            if teams.rep[i] != rid {
                continue;
            }
            let t = o.team[i];
            let head = teams.head[&rid];
            let parent_team = model.regions[head.0]
                .parent
                .map(|pr| o.team[pr.0] - o.t_off)
                .unwrap_or(0);
            self.put(t, bt, &["t_parent"], parent_team);
            self.put(t, bt, &["t_nproc"], r.members.len() as u64);
            self.put(t, bt, &["t_level"], model.level(rid) as u64);
            self.put(t, bt, &["t_active_level"], model.active_level(rid) as u64);
            self.put(t, bt, &["t_pkfn"], r.function);
            self.put(t, bt, &["t_threads"], o.team_threads[&i]);
            self.put(t, bt, &["t_implicit_task_taskdata"], o.team_tasks[&i]);
            self.put_data_value(t, bt, &["ompt_team_info", "parallel_data"], r.tool_data);
            let chain = teams.lwt.get(&rid).cloned().unwrap_or_default();
            self.put(
                t,
                bt,
                &["ompt_serialized_team_info"],
                chain.first().map(|c| o.lwt[c]).unwrap_or(0),
            );
            for (n, m) in r.members.iter().enumerate() {
                let slot = o.team_threads[&i] + p * n as u64;
                self.ptr(slot, o.info[m.0]);
            }
            self.write_lwt_chain(model, &chain, o);
        }
    }

    /// The `ompt_lw_taskteam_t` records of one serialized run, innermost-but-one first.
    fn write_lwt_chain(&mut self, model: &Model, chain: &[RegionId], o: &Objects) {
        for (k, lr) in chain.iter().enumerate() {
            let a = o.lwt[lr];
            let lt = "ompt_lw_taskteam_t";
            let next = chain.get(k + 1).map(|c| o.lwt[c]).unwrap_or(0);
            self.put(a, lt, &["parent"], next);
            self.put(a, lt, &["heap"], 1);
            self.put_data_value(
                a,
                lt,
                &["ompt_team_info", "parallel_data"],
                model.regions[lr.0].tool_data,
            );
            let task = &model.tasks[model.regions[lr.0].implicit_tasks[0].0];
            let sched = task.scheduling.map(|s| o.task[s.0]).unwrap_or(0);
            self.put_task_info(a, lt, task, sched);
        }
    }

    /// Every task (hidden outer serialized levels are written only through their lwt record).
    fn write_tasks(&mut self, model: &Model, teams: &Teams, o: &Objects) {
        let td = "kmp_taskdata_t";
        for (i, t) in model.tasks.iter().enumerate() {
            let hidden = matches!(t.kind, TaskKind::Implicit { region, .. } if teams.rep[region.0] != region);
            if hidden {
                continue;
            }
            let a = o.task[i];
            let mut flags = self.layout.mask("tiedness") | self.layout.mask("started");
            if t.kind == TaskKind::Explicit {
                flags |= self.layout.mask("tasktype");
            }
            if t.is_final {
                flags |= self.layout.mask("final");
            }
            self.put(a, td, &["td_flags"], flags);
            self.put(a, td, &["td_team"], o.team[t.region.0] - o.t_off);
            // The encountering task of a serialized run is the parent of the serial team's task.
            let generating = match t.kind {
                TaskKind::Implicit { region, .. } if teams.lwt.contains_key(&region) => {
                    let head = teams.head[&region];
                    model.tasks[model.regions[head.0].implicit_tasks[0].0].generating
                }
                _ => t.generating,
            };
            self.put(
                a,
                td,
                &["td_parent"],
                generating.map(|g| o.task[g.0]).unwrap_or(0),
            );
            self.put(a, td, &["td_level"], model.level(t.region) as u64);
            self.write_task_icvs(a, &t.icvs);
            let sched = t.scheduling.map(|s| o.task[s.0]).unwrap_or(0);
            self.put_task_info(a, td, t, sched);
            if t.kind == TaskKind::Explicit {
                self.put(a + o.td_size, "kmp_task_t", &["routine"], t.function);
            }
        }
    }

    /// The `td_icvs` member of the `kmp_taskdata_t` at `a`.
    fn write_task_icvs(&mut self, a: u64, ic: &crate::model::TaskIcvs) {
        let td = "kmp_taskdata_t";
        self.put(a, td, &["td_icvs", "dynamic"], ic.dynamic as u64);
        self.put(a, td, &["td_icvs", "nproc"], ic.nthreads as u32 as u64);
        let thread_limit = ic.thread_limit as u32 as u64;
        self.put(a, td, &["td_icvs", "thread_limit"], thread_limit);
        let max_active_levels = ic.max_active_levels as u32 as u64;
        self.put(a, td, &["td_icvs", "max_active_levels"], max_active_levels);
        self.put(a, td, &["td_icvs", "proc_bind"], ic.proc_bind as u32 as u64);
        let default_device = ic.default_device as u32 as u64;
        self.put(a, td, &["td_icvs", "default_device"], default_device);
        let s = ic.schedule;
        let kind = sched_type(s.kind, s.chunk, s.modifier);
        self.put(a, td, &["td_icvs", "sched", "r_sched_type"], kind);
        self.put(a, td, &["td_icvs", "sched", "chunk"], s.chunk as u32 as u64);
    }

    /// The contention group's thread limit (the initial task's) and its size word, which
    /// Intel's libraries up to 2023.2 read for thread-limit-var at the address-space scope.
    /// Written last, so that it moves no other object of the image.
    fn write_contention_group(&mut self, model: &Model) {
        self.global("ompd_sizeof____kmp_cg_max_nth", 8, 4);
        let limit = model.tasks[0].icvs.thread_limit as u32 as u64;
        self.global("__kmp_cg_max_nth", 4, limit);
    }

    /// The runtime's global variables, `__kmp_threads` (over the `kmp_info_t`s `info`) among them.
    fn write_globals(&mut self, model: &Model, info: &[u64]) {
        let p = self.arch.pointer as u64;
        let g = &model.globals;
        if !model.older_description {
            self.global("ompd_state", 8, model.ompd_state);
        }
        self.write_legacy_tables(model);
        self.global("__kmp_openmp_version", 4, model.omp_version as u64);
        let lib_ver = b"\0@(#) sim-target OMP version: 5.0.20261121\0";
        let a = self.alloc(lib_ver.len() as u64, 1, "__kmp_version_lib_ver");
        self.mem.write(a, lib_ver).expect("fits");
        self.symbols.insert("__kmp_version_lib_ver".into(), a);
        let all = (model.threads.len() + model.idle_threads.len()) as u64;
        // Vacant slots stay NULL (memory is mapped zeroed).
        let capacity = all + model.vacant_gtids.len() as u64 + 2;
        let arr = self.alloc(capacity * p, p, "__kmp_threads array");
        for (k, i) in info.iter().enumerate() {
            self.ptr(arr + p * model.runtime_gtid(k) as u64, *i);
        }
        self.global("__kmp_threads", p, arr);
        self.global("__kmp_threads_capacity", 4, capacity);
        self.global("__kmp_all_nth", 4, all);
        self.global("__kmp_hidden_helper_threads_num", 4, 0);
        let gtid_mode = if model.gtid_mode == GtidMode::Tls {
            3
        } else {
            1
        };
        self.global("__kmp_gtid_mode", 4, gtid_mode);
        self.global("__kmp_avail_proc", 4, g.avail_proc as u32 as u64);
        self.global("__kmp_stksize", p, g.stacksize);
        self.global("__kmp_omp_cancellation", 4, g.cancellation as u64);
        let priority = g.max_task_priority as u32 as u64;
        self.global("__kmp_max_task_priority", 4, priority);
        self.global("__kmp_display_affinity", 4, g.display_affinity as u64);
        self.global("__kmp_tool", 4, g.tool as u32 as u64);
        self.write_string_globals(g);
        self.write_nested_lists(g);
        let mut block: String = g
            .display_env
            .iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect();
        if g.display_env_unterminated {
            block.pop();
        }
        let block_addr = self.cstring(&block, "ompd_env_block text");
        self.global("ompd_env_block", p, block_addr);
        if !model.older_description {
            self.global("ompd_env_block_size", 8, block.len() as u64);
        }
    }

    /// The `char *` globals: a pointer to a string, or null.
    fn write_string_globals(&mut self, g: &crate::model::Globals) {
        let p = self.arch.pointer as u64;
        for (name, value) in [
            ("__kmp_affinity_format", &g.affinity_format),
            ("__kmp_tool_libraries", &g.tool_libraries),
            ("__kmp_tool_verbose_init", &g.tool_verbose_init),
        ] {
            let target = match value {
                Some(s) => self.cstring(s, name),
                None => 0,
            };
            self.global(name, p, target);
        }
    }

    /// `__kmp_nested_nth` and `__kmp_nested_proc_bind`: a list object over an array of items.
    fn write_nested_lists(&mut self, g: &crate::model::Globals) {
        for (name, ty, list_field, list) in [
            (
                "__kmp_nested_nth",
                "kmp_nested_nthreads_t",
                "nth",
                &g.nthreads_list,
            ),
            (
                "__kmp_nested_proc_bind",
                "kmp_nested_proc_bind_t",
                "bind_types",
                &g.bind_list,
            ),
        ] {
            let cap = list.len().max(1) as u64;
            let items = self.alloc(4 * cap, 4, &format!("{name} items"));
            for (k, v) in list.iter().enumerate() {
                self.scalar(items + 4 * k as u64, 4, *v as u32 as u64);
            }
            let obj = self.alloc(self.layout.ty(ty).size, 8, name);
            self.put(obj, ty, &[list_field], items);
            self.put(obj, ty, &["size"], cap);
            self.put(obj, ty, &["used"], list.len() as u64);
            self.symbols.insert(name.into(), obj);
        }
    }

    /// Thread-local gtid slots, for OpenMP threads (in teams, then idle) then foreign ones. A
    /// runtime in scan mode keeps no thread-local gtid: every slot is 0 and `__kmp_gtid` is no
    /// symbol of its image.
    fn gtid_slots(&mut self, model: &Model) -> Vec<NativeThread> {
        let tls = model.gtid_mode == GtidMode::Tls;
        let openmp = model.threads.iter().map(|t| t.native);
        let idle = model.idle_threads.iter().copied();
        let known = openmp
            .chain(idle)
            .enumerate()
            .map(|(k, n)| (n, model.runtime_gtid(k) as i32));
        // KMP_GTID_DNE: a thread the runtime does not know.
        let foreign = model.foreign_threads.iter().map(|n| (*n, -2));
        let mut threads = Vec::new();
        for (native, gtid) in known.chain(foreign).collect::<Vec<_>>() {
            let gtid_slot = if tls {
                let slot = self.alloc(4, 4, &format!("__kmp_gtid tls of {}", native.lwp));
                self.scalar(slot, 4, gtid as u32 as u64);
                slot
            } else {
                0
            };
            threads.push(NativeThread {
                native,
                gtid_slot,
                gtid,
            });
        }
        threads
    }
}
