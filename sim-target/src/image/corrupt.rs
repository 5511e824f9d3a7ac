//! Corruptions of a lowered image: the torn and wild runtime state a debugger meets in a core file
//! taken mid-update or after a wild write.
//!
//! A [`Corruption`] is a handful of bytes written over an [`Image`] (and, for strings, at most one
//! new region), with the object it hits and one readable line naming it
//! (`task 3 td_parent → task 3 (cycle)`). [`strategy`] draws the corruptions of one [`Kind`] that
//! an image offers, from where the lowering placed each thread, team, task and serialized-region
//! record ([`super::Placement`]) and from the layout's field offsets: only fields the OMPD
//! libraries follow (see the object graph in `image/lower.rs`) are hit.

use super::Image;
use ompd_serve::memory::{MemError, Memory};
use proptest::prelude::*;
use proptest::sample::select;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// What a corruption does to the runtime state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A team's `t_parent` points at the team itself or at a team nested in it.
    TeamParentCycle,
    /// A task's `td_parent` points at the task itself or at a task it generated.
    TaskParentCycle,
    /// A serialized-region record's `parent` points at itself or at a record inside it.
    LwtParentCycle,
    /// A pointer of the object graph is NULL.
    NullPointer,
    /// A pointer of the object graph points at unmapped memory or at an object of another type.
    WildPointer,
    /// A pointer of the object graph is off by 1 to 7 bytes.
    MisalignedPointer,
    /// A team size, thread count, level or list length is huge.
    HugeCount,
    /// A string the library reads runs to the end of its region without a NUL.
    UnterminatedString,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 8] = [
        Kind::TeamParentCycle,
        Kind::TaskParentCycle,
        Kind::LwtParentCycle,
        Kind::NullPointer,
        Kind::WildPointer,
        Kind::MisalignedPointer,
        Kind::HugeCount,
        Kind::UnterminatedString,
    ];

    /// A stable dotted name (`parent_cycle.team`, `pointer.null`, ...).
    pub fn id(self) -> &'static str {
        match self {
            Kind::TeamParentCycle => "parent_cycle.team",
            Kind::TaskParentCycle => "parent_cycle.task",
            Kind::LwtParentCycle => "parent_cycle.lwt",
            Kind::NullPointer => "pointer.null",
            Kind::WildPointer => "pointer.wild",
            Kind::MisalignedPointer => "pointer.misaligned",
            Kind::HugeCount => "count.huge",
            Kind::UnterminatedString => "string.unterminated",
        }
    }

    /// The kind named `id` (see [`Kind::id`]).
    pub fn from_id(id: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.id() == id)
    }
}

/// The runtime object a corruption hits, by the model's ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Object {
    /// The `kmp_info_t` of the thread with this gtid, or its `__kmp_threads` slot.
    Thread(usize),
    /// The team serving this region (the first region it serves, for serial teams).
    Team(usize),
    /// The `kmp_taskdata_t` of this task (the first task it serves).
    Task(usize),
    /// The `ompt_lw_taskteam_t` record of this outer serialized region.
    Lwt(usize),
    /// A global of the runtime (thread table, nested lists, strings, environment block).
    Global,
}

/// One change to target memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Patch {
    /// Bytes written over mapped memory (target byte order).
    Write {
        /// First byte.
        addr: u64,
        /// The new bytes.
        bytes: Vec<u8>,
    },
    /// A new region mapped at a free address.
    Map {
        /// First byte.
        addr: u64,
        /// Its contents.
        bytes: Vec<u8>,
        /// Its label.
        label: String,
    },
}

/// A corruption of one field: what it hits, the patches, and what they mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corruption {
    /// The kind.
    pub kind: Kind,
    /// The object hit.
    pub object: Object,
    /// The field, as a reader names it (`task 3 td_parent`, `__kmp_threads[2]`).
    pub location: String,
    /// What the field holds now (`task 3 (cycle)`, `NULL`, `0x7fffffff (huge)`).
    pub meaning: String,
    /// The changes, applied in order.
    pub patches: Vec<Patch>,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {}", self.location, self.meaning)
    }
}

/// Why a corruption could not be applied to some memory.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// A write outside mapped memory.
    #[error(transparent)]
    Memory(#[from] MemError),
    /// A new region would overlap mapped memory.
    #[error("a new region at {addr:#x}+{len} overlaps mapped memory")]
    Overlap {
        /// First byte.
        addr: u64,
        /// Length.
        len: u64,
    },
}

impl Corruption {
    /// Applies the patches to `memory` (a copy of the image's, usually).
    pub fn apply(&self, memory: &mut Memory) -> Result<(), ApplyError> {
        for p in &self.patches {
            match p {
                Patch::Write { addr, bytes } => memory.write(*addr, bytes)?,
                Patch::Map { addr, bytes, label } => {
                    let len = bytes.len() as u64;
                    if memory.overlaps(*addr, len) {
                        return Err(ApplyError::Overlap { addr: *addr, len });
                    }
                    memory.map(*addr, len, label.clone());
                    memory.write(*addr, bytes)?;
                }
            }
        }
        Ok(())
    }

    /// Applies the patches to `image`'s memory.
    pub fn apply_to(&self, image: &mut Image) -> Result<(), ApplyError> {
        self.apply(&mut image.memory)
    }
}

/// Corruptions of `kind` that `image` offers, or `None` when it offers none (an image without
/// serialized-region records has no lwt cycle, one without strings no unterminated string).
pub fn strategy(image: &Image, kind: Kind) -> Option<BoxedStrategy<Corruption>> {
    let g = Graph::new(image);
    let cycles = |groups: Vec<Vec<Corruption>>| {
        // The corrupted object first, then where its link now leads: every object is as likely
        // as the root that all others descend from.
        let groups: Vec<Vec<Corruption>> = groups.into_iter().filter(|v| !v.is_empty()).collect();
        (!groups.is_empty()).then(|| select(groups).prop_flat_map(select).boxed())
    };
    let all = match kind {
        Kind::TeamParentCycle => return cycles(g.team_cycles()),
        Kind::TaskParentCycle => return cycles(g.task_cycles()),
        Kind::LwtParentCycle => return cycles(g.lwt_cycles()),
        Kind::NullPointer => g
            .pointers()
            .into_iter()
            .filter(|s| s.value != 0)
            .map(|s| s.corrupt(kind, 0, "NULL".into(), image))
            .collect(),
        Kind::UnterminatedString => g.unterminated(),
        Kind::MisalignedPointer => {
            let sites: Vec<Site> = g.pointers().into_iter().filter(|s| s.value != 0).collect();
            if sites.is_empty() {
                return None;
            }
            let image = Arc::new(image.clone());
            return Some(
                (select(sites), 1u64..=7)
                    .prop_map(move |(s, k)| {
                        let v = s.value.wrapping_add(k) & width_mask(s.width);
                        s.corrupt(kind, v, format!("{v:#x} (+{k}, misaligned)"), &image)
                    })
                    .boxed(),
            );
        }
        Kind::WildPointer => {
            let sites = g.pointers();
            if sites.is_empty() {
                return None;
            }
            let mut foreign: Vec<(u64, String, Class)> = g.objects.clone();
            if foreign.is_empty() {
                foreign.push((0, String::new(), Class::Scalar));
            }
            let spans: Arc<Vec<(u64, u64)>> = Arc::new(
                image
                    .memory
                    .regions()
                    .map(|(b, r)| (b, b + r.bytes.len() as u64))
                    .collect(),
            );
            let top = image.arch.address_limit().min(1 << 47);
            let image = Arc::new(image.clone());
            let unmapped = (0x1000u64..top)
                .prop_map(|a| a & !7)
                .prop_filter("an unmapped address", move |a| {
                    !spans.iter().any(|(b, e)| a + 16 > *b && *a < e + 16)
                });
            return Some(
                (select(sites), any::<bool>(), unmapped, select(foreign))
                    .prop_map(move |(s, into_object, wild, (obj, name, class))| {
                        if into_object && class != s.class && obj != s.value {
                            let what = format!(
                                "{name} (a {}, not a {})",
                                class.c_type(),
                                s.class.c_type()
                            );
                            s.corrupt(kind, obj, what, &image)
                        } else {
                            s.corrupt(kind, wild, format!("{wild:#x} (unmapped)"), &image)
                        }
                    })
                    .boxed(),
            );
        }
        Kind::HugeCount => {
            let sites = g.counts();
            if sites.is_empty() {
                return None;
            }
            let image = Arc::new(image.clone());
            return Some(
                (select(sites), 0usize..4)
                    .prop_map(move |(s, i)| {
                        let bits = 8 * s.width.min(8) as u32;
                        let values = [
                            width_mask(s.width) >> 1,
                            width_mask(s.width),
                            1u64 << (bits - 1),
                            // Large but allocatable where it sizes an allocation.
                            if bits == 64 { 1 << 20 } else { 1 << 30 },
                        ];
                        let mut v = values[i];
                        if v == s.value {
                            v = values[(i + 1) % values.len()];
                        }
                        s.corrupt(kind, v, format!("{v:#x} (huge)"), &image)
                    })
                    .boxed(),
            );
        }
    };
    (!all.is_empty()).then(|| select(all).boxed())
}

fn width_mask(width: u64) -> u64 {
    if width >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width)) - 1
    }
}

/// What a pointer field should point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Thread,
    Team,
    Task,
    Lwt,
    /// An array of `kmp_info_t *`.
    ThreadArray,
    /// An array of `kmp_taskdata_t`.
    TaskArray,
    /// An array of `int`.
    IntArray,
    /// A C string.
    String,
    /// Not a pointer (a count).
    Scalar,
}

impl Class {
    fn c_type(self) -> &'static str {
        match self {
            Class::Thread => "kmp_info_t",
            Class::Team => "kmp_team_p",
            Class::Task => "kmp_taskdata_t",
            Class::Lwt => "ompt_lw_taskteam_t",
            Class::ThreadArray => "kmp_info_t *[]",
            Class::TaskArray => "kmp_taskdata_t[]",
            Class::IntArray => "int[]",
            Class::String => "char[]",
            Class::Scalar => "scalar",
        }
    }
}

/// A field that can be corrupted.
#[derive(Clone, Debug)]
struct Site {
    object: Object,
    location: String,
    addr: u64,
    width: u64,
    value: u64,
    class: Class,
}

impl Site {
    fn corrupt(&self, kind: Kind, value: u64, meaning: String, image: &Image) -> Corruption {
        Corruption {
            kind,
            object: self.object,
            location: self.location.clone(),
            meaning,
            patches: vec![Patch::Write {
                addr: self.addr,
                bytes: image.arch.encode(value, self.width as usize),
            }],
        }
    }
}

/// The object graph of an image, as the corruption strategies see it.
struct Graph<'a> {
    image: &'a Image,
    /// Distinct teams: (first region served, address of the `kmp_base_team_t`).
    teams: Vec<(usize, u64)>,
    /// Distinct tasks: (first task served, address of the `kmp_taskdata_t`).
    tasks: Vec<(usize, u64)>,
    /// Objects a wild pointer may hit: (address, name, class).
    objects: Vec<(u64, String, Class)>,
    /// Names of object addresses (the address a pointer to the object holds).
    names: BTreeMap<u64, String>,
    /// Offset of `t` in `kmp_team_p` (team pointers hold the `kmp_team_p` address).
    t_off: u64,
}

fn distinct(addrs: &[u64]) -> Vec<(usize, u64)> {
    let mut out: Vec<(usize, u64)> = Vec::new();
    for (i, a) in addrs.iter().enumerate() {
        if !out.iter().any(|(_, b)| b == a) {
            out.push((i, *a));
        }
    }
    out
}

impl<'a> Graph<'a> {
    fn new(image: &'a Image) -> Graph<'a> {
        let pl = &image.placement;
        let t_off = image.layout.field("kmp_team_p", "t").offset;
        let th_off = image.layout.field("kmp_info_t", "th").offset;
        let teams = distinct(&pl.team);
        let tasks = distinct(&pl.task);
        let mut objects = Vec::new();
        for (g, a) in pl.thread.iter().enumerate() {
            objects.push((a - th_off, format!("thread {g}"), Class::Thread));
        }
        for (r, a) in &teams {
            objects.push((a - t_off, format!("team of region {r}"), Class::Team));
        }
        for (t, a) in &tasks {
            objects.push((*a, format!("task {t}"), Class::Task));
        }
        for (r, a) in &pl.lwt {
            objects.push((*a, format!("lwt record of region {r}"), Class::Lwt));
        }
        let names = objects.iter().map(|(a, n, _)| (*a, n.clone())).collect();
        Graph {
            image,
            teams,
            tasks,
            objects,
            names,
            t_off,
        }
    }

    fn p(&self) -> u64 {
        self.image.arch.pointer as u64
    }

    /// Address and width of member `path` of the `ty` object at `base`, if the layout has it.
    fn field(&self, base: u64, ty: &str, path: &[&str]) -> Option<(u64, u64)> {
        self.image
            .layout
            .resolve(ty, path)
            .map(|f| (base + f.offset, f.size.min(8)))
    }

    fn read(&self, addr: u64, width: u64) -> Option<u64> {
        self.image
            .memory
            .read(addr, width)
            .ok()
            .map(|b| self.image.arch.decode(b))
    }

    fn site(
        &self,
        object: Object,
        location: String,
        at: Option<(u64, u64)>,
        class: Class,
    ) -> Option<Site> {
        let (addr, width) = at?;
        let value = self.read(addr, width)?;
        Some(Site {
            object,
            location,
            addr,
            width,
            value,
            class,
        })
    }

    /// Every pointer field of the object graph that a library follows.
    fn pointers(&self) -> Vec<Site> {
        let (pl, p) = (&self.image.placement, self.p());
        let mut out = Vec::new();
        let bi = "kmp_base_info_t";
        for (g, th) in pl.thread.iter().enumerate() {
            let o = Object::Thread(g);
            for (f, class) in [("th_team", Class::Team), ("th_current_task", Class::Task)] {
                out.extend(self.site(
                    o,
                    format!("thread {g} {f}"),
                    self.field(*th, bi, &[f]),
                    class,
                ));
            }
        }
        let bt = "kmp_base_team_t";
        for (r, t) in &self.teams {
            let o = Object::Team(*r);
            for (f, class) in [
                ("t_parent", Class::Team),
                ("t_threads", Class::ThreadArray),
                ("t_implicit_task_taskdata", Class::TaskArray),
                ("ompt_serialized_team_info", Class::Lwt),
            ] {
                out.extend(self.site(
                    o,
                    format!("team of region {r} {f}"),
                    self.field(*t, bt, &[f]),
                    class,
                ));
            }
            let nproc = self
                .field(*t, bt, &["t_nproc"])
                .and_then(|(a, w)| self.read(a, w))
                .unwrap_or(0);
            let arr = self
                .field(*t, bt, &["t_threads"])
                .and_then(|(a, w)| self.read(a, w))
                .unwrap_or(0);
            for i in 0..nproc.min(64) {
                out.extend(self.site(
                    o,
                    format!("team of region {r} t_threads[{i}]"),
                    (arr != 0).then_some((arr + p * i, p)),
                    Class::Thread,
                ));
            }
        }
        let td = "kmp_taskdata_t";
        for (t, a) in &self.tasks {
            let o = Object::Task(*t);
            for (path, class) in [
                (&["td_team"][..], Class::Team),
                (&["td_parent"][..], Class::Task),
                (&["ompt_task_info", "scheduling_parent"][..], Class::Task),
            ] {
                out.extend(self.site(
                    o,
                    format!("task {t} {}", path.join(".")),
                    self.field(*a, td, path),
                    class,
                ));
            }
        }
        let lt = "ompt_lw_taskteam_t";
        for (r, a) in &pl.lwt {
            let o = Object::Lwt(*r);
            for (path, class) in [
                (&["parent"][..], Class::Lwt),
                (&["ompt_task_info", "scheduling_parent"][..], Class::Task),
            ] {
                out.extend(self.site(
                    o,
                    format!("lwt record of region {r} {}", path.join(".")),
                    self.field(*a, lt, path),
                    class,
                ));
            }
        }
        if let Some(sym) = self.image.symbol("__kmp_threads") {
            out.extend(self.site(
                Object::Global,
                "__kmp_threads".into(),
                Some((sym, p)),
                Class::ThreadArray,
            ));
            if let Some(arr) = self.read(sym, p) {
                for g in 0..pl.thread.len() as u64 {
                    out.extend(self.site(
                        Object::Thread(g as usize),
                        format!("__kmp_threads[{g}]"),
                        Some((arr + p * g, p)),
                        Class::Thread,
                    ));
                }
            }
        }
        for (sym, ty, f) in [
            ("__kmp_nested_nth", "kmp_nested_nthreads_t", "nth"),
            (
                "__kmp_nested_proc_bind",
                "kmp_nested_proc_bind_t",
                "bind_types",
            ),
        ] {
            if let Some(a) = self.image.symbol(sym) {
                out.extend(self.site(
                    Object::Global,
                    format!("{sym}.{f}"),
                    self.field(a, ty, &[f]),
                    Class::IntArray,
                ));
            }
        }
        for sym in STRING_GLOBALS {
            if let Some(a) = self.image.symbol(sym) {
                out.extend(self.site(Object::Global, sym.to_string(), Some((a, p)), Class::String));
            }
        }
        out
    }

    /// Every size, count and level a library reads.
    fn counts(&self) -> Vec<Site> {
        let mut out = Vec::new();
        for (r, t) in &self.teams {
            for f in ["t_nproc", "t_level", "t_active_level"] {
                out.extend(self.site(
                    Object::Team(*r),
                    format!("team of region {r} {f}"),
                    self.field(*t, "kmp_base_team_t", &[f]),
                    Class::Scalar,
                ));
            }
        }
        for (sym, width) in [
            ("__kmp_all_nth", 4),
            ("__kmp_threads_capacity", 4),
            ("ompd_env_block_size", 8),
        ] {
            if let Some(a) = self.image.symbol(sym) {
                out.extend(self.site(Object::Global, sym.into(), Some((a, width)), Class::Scalar));
            }
        }
        for (sym, ty) in [
            ("__kmp_nested_nth", "kmp_nested_nthreads_t"),
            ("__kmp_nested_proc_bind", "kmp_nested_proc_bind_t"),
        ] {
            if let Some(a) = self.image.symbol(sym) {
                for f in ["used", "size"] {
                    out.extend(self.site(
                        Object::Global,
                        format!("{sym}.{f}"),
                        self.field(a, ty, &[f]),
                        Class::Scalar,
                    ));
                }
            }
        }
        out
    }

    /// A pointer chain from `start` through the field at `link` (an offset), as addresses;
    /// stops at NULL, an unreadable pointer or a repeat.
    fn chain(&self, start: u64, link: u64) -> Vec<u64> {
        let mut out = vec![start];
        let mut at = start;
        while let Some(next) = self.read(at + link, self.p()) {
            if next == 0 || out.contains(&next) || out.len() > 4096 {
                break;
            }
            out.push(next);
            at = next;
        }
        out
    }

    fn name(&self, addr: u64) -> String {
        self.names
            .get(&addr)
            .cloned()
            .unwrap_or_else(|| format!("{addr:#x}"))
    }

    /// For each object of `objs` (pointer value, name, object, address of its link field), every
    /// object whose chain through `link` reaches it (itself included): pointing its link there
    /// closes a cycle. One group per object.
    fn cycles(
        &self,
        kind: Kind,
        objs: &[(u64, String, Object, u64)],
        field: &str,
        link: u64,
    ) -> Vec<Vec<Corruption>> {
        let mut groups = Vec::new();
        for (target, name, object, field_addr) in objs {
            let mut out = Vec::new();
            for (other, _, _, _) in objs {
                if !self.chain(*other, link).contains(target) {
                    continue;
                }
                let what = if other == target {
                    format!("{} (cycle)", self.name(*other))
                } else {
                    format!("{} (cycle through a descendant)", self.name(*other))
                };
                out.push(Corruption {
                    kind,
                    object: *object,
                    location: format!("{name} {field}"),
                    meaning: what,
                    patches: vec![Patch::Write {
                        addr: *field_addr,
                        bytes: self.image.arch.encode(*other, self.p() as usize),
                    }],
                });
            }
            groups.push(out);
        }
        groups
    }

    fn team_cycles(&self) -> Vec<Vec<Corruption>> {
        let Some(f) = self.image.layout.resolve("kmp_base_team_t", &["t_parent"]) else {
            return Vec::new();
        };
        // A team's t_parent holds the parent's kmp_team_p address; the link is read there.
        let link = self.t_off + f.offset;
        let objs: Vec<_> = self
            .teams
            .iter()
            .map(|(r, t)| {
                let team_p = t - self.t_off;
                (
                    team_p,
                    format!("team of region {r}"),
                    Object::Team(*r),
                    t + f.offset,
                )
            })
            .collect();
        self.cycles(Kind::TeamParentCycle, &objs, "t_parent", link)
    }

    fn task_cycles(&self) -> Vec<Vec<Corruption>> {
        let Some(f) = self.image.layout.resolve("kmp_taskdata_t", &["td_parent"]) else {
            return Vec::new();
        };
        let objs: Vec<_> = self
            .tasks
            .iter()
            .map(|(t, a)| (*a, format!("task {t}"), Object::Task(*t), a + f.offset))
            .collect();
        self.cycles(Kind::TaskParentCycle, &objs, "td_parent", f.offset)
    }

    fn lwt_cycles(&self) -> Vec<Vec<Corruption>> {
        let Some(f) = self.image.layout.resolve("ompt_lw_taskteam_t", &["parent"]) else {
            return Vec::new();
        };
        let objs: Vec<_> = self
            .image
            .placement
            .lwt
            .iter()
            .map(|(r, a)| {
                (
                    *a,
                    format!("lwt record of region {r}"),
                    Object::Lwt(*r),
                    a + f.offset,
                )
            })
            .collect();
        self.cycles(Kind::LwtParentCycle, &objs, "parent", f.offset)
    }

    /// Strings whose terminator is overwritten (so they run to the end of their region), and
    /// string pointers moved to a new region of 600 non-NUL bytes (longer than the 512 bytes the
    /// libraries read at most, so `read_string` answers `ompd_rc_incomplete`).
    fn unterminated(&self) -> Vec<Corruption> {
        let p = self.p();
        let mut out = Vec::new();
        let fresh = self.free_address(LONG_STRING + 256);
        for sym in STRING_GLOBALS {
            let Some(a) = self.image.symbol(sym) else {
                continue;
            };
            let Some(s) = self.read(a, p).filter(|s| *s != 0) else {
                continue;
            };
            let Ok(text) = self.image.memory.read_cstr(s, u64::MAX >> 1) else {
                continue;
            };
            let text = text.to_vec();
            let nul = s + text.len() as u64;
            let what = format!("{sym} text");
            if sym == "ompd_env_block" {
                // The library reads ompd_env_block_size bytes and splits them at newlines: a
                // block without any newline or NUL leaves its one entry unterminated.
                let mut patches: Vec<Patch> = text
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| Patch::Write {
                        addr: s + i as u64,
                        bytes: vec![b' '],
                    })
                    .collect();
                patches.push(Patch::Write {
                    addr: nul,
                    bytes: vec![b'X'],
                });
                out.push(Corruption {
                    kind: Kind::UnterminatedString,
                    object: Object::Global,
                    location: what,
                    meaning: format!(
                        "{} bytes without a newline or NUL before the region ends",
                        text.len() + 1
                    ),
                    patches,
                });
            } else {
                out.push(Corruption {
                    kind: Kind::UnterminatedString,
                    object: Object::Global,
                    location: what,
                    meaning: format!(
                        "{} bytes without a NUL before the region ends",
                        text.len() + 1
                    ),
                    patches: vec![Patch::Write {
                        addr: nul,
                        bytes: vec![b'X'],
                    }],
                });
            }
            if let Some(f) = fresh {
                out.push(Corruption {
                    kind: Kind::UnterminatedString,
                    object: Object::Global,
                    location: sym.to_string(),
                    meaning: format!("{f:#x} ({LONG_STRING} bytes without a NUL)"),
                    patches: vec![
                        Patch::Map {
                            addr: f,
                            bytes: vec![b'A'; LONG_STRING as usize],
                            label: "unterminated string".into(),
                        },
                        Patch::Write {
                            addr: a,
                            bytes: self.image.arch.encode(f, p as usize),
                        },
                    ],
                });
            }
        }
        out
    }

    /// An address where `len` bytes (plus guard gaps) are unmapped, from a few fixed candidates.
    fn free_address(&self, len: u64) -> Option<u64> {
        let limit = self.image.arch.address_limit();
        [0x7000_0000, 0x3000_0000, 0x0800_0000, limit - 0x8_0000]
            .into_iter()
            .find(|a| !self.image.memory.overlaps(a - 256, len + 512))
    }
}

/// Length of the region of non-NUL bytes the long-string corruption maps.
const LONG_STRING: u64 = 600;

/// Globals holding a pointer to a string the libraries read.
const STRING_GLOBALS: [&str; 4] = [
    "__kmp_affinity_format",
    "__kmp_tool_libraries",
    "__kmp_tool_verbose_init",
    "ompd_env_block",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::lower;
    use crate::layout::Policy;
    use crate::model;
    use ompd_serve::arch::Arch;
    use proptest::test_runner::{Config, TestRng, TestRunner};

    fn images() -> Vec<(String, Image)> {
        let mut out = Vec::new();
        for s in model::default_scenarios() {
            for (arch, policy) in [
                (Arch::LP64_LE, Policy::Natural),
                (Arch::ILP32_BE, Policy::Packed),
                (Arch::LP64_BE, Policy::Random(5)),
                (Arch::ILP32_LE, Policy::Random(9)),
                (Arch::LP64_LE, Policy::Intel2026_2),
            ] {
                let img = lower(&s.model, arch, policy).unwrap();
                out.push((format!("{}/{arch}/{policy}", s.name), img));
            }
        }
        out
    }

    /// The bytes of `after` that differ from `before` (new regions: every byte), by address.
    fn changed(before: &Memory, after: &Memory) -> BTreeMap<u64, u8> {
        let old: BTreeMap<u64, &Vec<u8>> = before.regions().map(|(b, r)| (b, &r.bytes)).collect();
        let mut out = BTreeMap::new();
        for (b, r) in after.regions() {
            match old.get(&b) {
                Some(o) if *o == &r.bytes => {}
                Some(o) => {
                    assert_eq!(o.len(), r.bytes.len(), "region {b:#x} resized");
                    for (i, (x, y)) in o.iter().zip(&r.bytes).enumerate() {
                        if x != y {
                            out.insert(b + i as u64, *y);
                        }
                    }
                }
                None => out.extend(r.bytes.iter().enumerate().map(|(i, y)| (b + i as u64, *y))),
            }
        }
        out
    }

    fn samples(image: &Image, kind: Kind, n: usize) -> Vec<Corruption> {
        let Some(s) = strategy(image, kind) else {
            return Vec::new();
        };
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
        );
        (0..n)
            .map(|_| s.new_tree(&mut runner).unwrap().current())
            .collect()
    }

    #[test]
    fn each_kind_changes_the_bytes_it_claims_and_nothing_else() {
        let mut seen: BTreeMap<Kind, usize> = BTreeMap::new();
        for (name, image) in images() {
            for kind in Kind::ALL {
                for c in samples(&image, kind, 24) {
                    let mut m = image.memory.clone();
                    c.apply(&mut m)
                        .unwrap_or_else(|e| panic!("{name}: {c}: {e}"));
                    let diff = changed(&image.memory, &m);
                    let mut claimed = BTreeMap::new();
                    for p in &c.patches {
                        let (addr, data, new) = match p {
                            Patch::Write { addr, bytes } => (addr, bytes, false),
                            Patch::Map { addr, bytes, .. } => (addr, bytes, true),
                        };
                        assert_eq!(image.memory.overlaps(*addr, data.len() as u64), !new);
                        for (i, b) in data.iter().enumerate() {
                            claimed.insert(addr + i as u64, *b);
                        }
                    }
                    assert!(!diff.is_empty(), "{name}: {c} changes nothing");
                    // Every changed byte is claimed, and every claimed byte holds its value.
                    for (a, b) in &diff {
                        assert_eq!(claimed.get(a), Some(b), "{name}: {c}: {a:#x}");
                    }
                    for (a, b) in &claimed {
                        let now = m.read(*a, 1).unwrap()[0];
                        assert_eq!(now, *b, "{name}: {c}: {a:#x}");
                    }
                    assert_eq!(
                        m.regions().count(),
                        image.memory.regions().count()
                            + c.patches
                                .iter()
                                .filter(|p| matches!(p, Patch::Map { .. }))
                                .count()
                    );
                    assert!(c.kind == kind && !c.to_string().is_empty());
                    *seen.entry(kind).or_default() += 1;
                }
            }
        }
        for kind in Kind::ALL {
            assert!(
                seen.get(&kind).copied().unwrap_or(0) > 0,
                "{kind:?} never drawn"
            );
        }
    }

    #[test]
    fn corruptions_name_themselves_in_one_line() {
        let m = model::scenario("nested-tasks").unwrap().model;
        let image = lower(&m, Arch::LP64_LE, Policy::Natural).unwrap();
        let cycles = Graph::new(&image).task_cycles().concat();
        assert!(cycles
            .iter()
            .any(|c| c.to_string() == "task 3 td_parent → task 3 (cycle)"));
        for kind in Kind::ALL {
            for c in samples(&image, kind, 8) {
                let line = c.to_string();
                assert!(!line.contains('\n') && line.contains(" → "), "{line}");
            }
            assert_eq!(Kind::from_id(kind.id()), Some(kind));
        }
    }

    #[test]
    fn cycles_close_on_the_object_or_a_descendant() {
        let m = model::scenario("serialized").unwrap().model;
        let image = lower(&m, Arch::ILP32_BE, Policy::Packed).unwrap();
        let g = Graph::new(&image);
        let lwt = g.lwt_cycles().concat();
        assert!(!image.placement.lwt.is_empty() && !lwt.is_empty());
        for c in lwt
            .iter()
            .chain(&g.team_cycles().concat())
            .chain(&g.task_cycles().concat())
        {
            let mut mem = image.memory.clone();
            c.apply(&mut mem).unwrap();
            let Patch::Write { addr, bytes } = &c.patches[0] else {
                panic!("{c}: a cycle is one write");
            };
            // Following the new pointer leads back to the corrupted field.
            let target = image.arch.decode(bytes);
            let link = addr
                - match c.object {
                    Object::Team(_) => {
                        let t = image
                            .layout
                            .resolve("kmp_base_team_t", &["t_parent"])
                            .unwrap();
                        t.offset + g.t_off
                    }
                    Object::Task(_) => {
                        image
                            .layout
                            .resolve("kmp_taskdata_t", &["td_parent"])
                            .unwrap()
                            .offset
                    }
                    _ => {
                        image
                            .layout
                            .resolve("ompt_lw_taskteam_t", &["parent"])
                            .unwrap()
                            .offset
                    }
                };
            let mut at = target;
            let mut steps = 0;
            while at != link && steps < 64 {
                let off = addr - link;
                at = image
                    .arch
                    .decode(mem.read(at + off, image.arch.pointer as u64).unwrap());
                steps += 1;
            }
            assert_eq!(at, link, "{c}: no cycle");
        }
        assert!(Graph::new(
            &lower(
                &model::scenario("serial").unwrap().model,
                Arch::LP64_LE,
                Policy::Natural
            )
            .unwrap()
        )
        .lwt_cycles()
        .concat()
        .is_empty());
    }
}
