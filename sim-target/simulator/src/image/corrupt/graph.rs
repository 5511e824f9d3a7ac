//! The object graph of an image as the corruption strategies see it: the fields they may hit
//! (pointers, counts, strings) and the links that can be closed into cycles.

use super::{Corruption, Kind, Object, Patch};
use crate::image::Image;
use std::collections::BTreeMap;

pub(super) fn width_mask(width: u64) -> u64 {
    if width >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width)) - 1
    }
}

/// What a pointer field should point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
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
    pub(super) fn c_type(self) -> &'static str {
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
pub(super) struct Site {
    pub(super) object: Object,
    pub(super) location: String,
    pub(super) addr: u64,
    pub(super) width: u64,
    pub(super) value: u64,
    pub(super) class: Class,
}

impl Site {
    pub(super) fn corrupt(
        &self,
        kind: Kind,
        value: u64,
        meaning: String,
        image: &Image,
    ) -> Corruption {
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
pub(super) struct Graph<'a> {
    pub(super) image: &'a Image,
    /// Distinct teams: (first region served, address of the `kmp_base_team_t`).
    pub(super) teams: Vec<(usize, u64)>,
    /// Distinct tasks: (first task served, address of the `kmp_taskdata_t`).
    pub(super) tasks: Vec<(usize, u64)>,
    /// Objects a wild pointer may hit: (address, name, class).
    pub(super) objects: Vec<(u64, String, Class)>,
    /// Names of object addresses (the address a pointer to the object holds).
    pub(super) names: BTreeMap<u64, String>,
    /// Offset of `t` in `kmp_team_p` (team pointers hold the `kmp_team_p` address).
    pub(super) t_off: u64,
}

pub(super) fn distinct(addrs: &[u64]) -> Vec<(usize, u64)> {
    let mut out: Vec<(usize, u64)> = Vec::new();
    for (i, a) in addrs.iter().enumerate() {
        if !out.iter().any(|(_, b)| b == a) {
            out.push((i, *a));
        }
    }
    out
}

impl<'a> Graph<'a> {
    pub(super) fn new(image: &'a Image) -> Graph<'a> {
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

    pub(super) fn p(&self) -> u64 {
        self.image.arch.pointer as u64
    }

    /// Address and width of member `path` of the `ty` object at `base`, if the layout has it.
    pub(super) fn field(&self, base: u64, ty: &str, path: &[&str]) -> Option<(u64, u64)> {
        self.image
            .layout
            .resolve(ty, path)
            .map(|f| (base + f.offset, f.size.min(8)))
    }

    pub(super) fn read(&self, addr: u64, width: u64) -> Option<u64> {
        self.image
            .memory
            .read(addr, width)
            .ok()
            .map(|b| self.image.arch.decode(b))
    }

    pub(super) fn site(
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
    pub(super) fn pointers(&self) -> Vec<Site> {
        let mut out = Vec::new();
        self.thread_pointers(&mut out);
        self.team_pointers(&mut out);
        self.task_pointers(&mut out);
        self.global_pointers(&mut out);
        out
    }

    /// One site per pointer member (path, class) of the `ty` object at `base`, which is `object`
    /// and is named `label` followed by the member's path.
    fn member_sites(
        &self,
        out: &mut Vec<Site>,
        (object, label): (Object, String),
        base: u64,
        ty: &str,
        members: &[(&[&str], Class)],
    ) {
        for (path, class) in members {
            out.extend(self.site(
                object,
                format!("{label} {}", path.join(".")),
                self.field(base, ty, path),
                *class,
            ));
        }
    }

    /// The `th_team` and `th_current_task` of every thread.
    fn thread_pointers(&self, out: &mut Vec<Site>) {
        let pl = &self.image.placement;
        let bi = "kmp_base_info_t";
        for (g, th) in pl.thread.iter().enumerate() {
            let members = [
                (&["th_team"][..], Class::Team),
                (&["th_current_task"][..], Class::Task),
            ];
            let o = (Object::Thread(g), format!("thread {g}"));
            self.member_sites(out, o, *th, bi, &members);
        }
    }

    /// The pointers of every team, its `t_threads` entries among them.
    fn team_pointers(&self, out: &mut Vec<Site>) {
        let p = self.p();
        let bt = "kmp_base_team_t";
        for (r, t) in &self.teams {
            let o = Object::Team(*r);
            let members = [
                (&["t_parent"][..], Class::Team),
                (&["t_threads"][..], Class::ThreadArray),
                (&["t_implicit_task_taskdata"][..], Class::TaskArray),
                (&["ompt_serialized_team_info"][..], Class::Lwt),
            ];
            let label = format!("team of region {r}");
            self.member_sites(out, (o, label), *t, bt, &members);
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
    }

    /// The links of every task and of every lwt record.
    fn task_pointers(&self, out: &mut Vec<Site>) {
        let pl = &self.image.placement;
        let td = "kmp_taskdata_t";
        for (t, a) in &self.tasks {
            let members = [
                (&["td_team"][..], Class::Team),
                (&["td_parent"][..], Class::Task),
                (&["ompt_task_info", "scheduling_parent"][..], Class::Task),
            ];
            let o = (Object::Task(*t), format!("task {t}"));
            self.member_sites(out, o, *a, td, &members);
        }
        let lt = "ompt_lw_taskteam_t";
        for (r, a) in &pl.lwt {
            let members = [
                (&["parent"][..], Class::Lwt),
                (&["ompt_task_info", "scheduling_parent"][..], Class::Task),
            ];
            let o = (Object::Lwt(*r), format!("lwt record of region {r}"));
            self.member_sites(out, o, *a, lt, &members);
        }
    }

    /// The pointer globals: `__kmp_threads` and its entries, the nested lists, the strings.
    fn global_pointers(&self, out: &mut Vec<Site>) {
        let pl = &self.image.placement;
        let p = self.p();
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
    }

    /// Every size, count and level a library reads.
    pub(super) fn counts(&self) -> Vec<Site> {
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
    pub(super) fn chain(&self, start: u64, link: u64) -> Vec<u64> {
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

    pub(super) fn name(&self, addr: u64) -> String {
        self.names
            .get(&addr)
            .cloned()
            .unwrap_or_else(|| format!("{addr:#x}"))
    }

    /// For each object of `objs` (pointer value, name, object, address of its link field), every
    /// object whose chain through `link` reaches it (itself included): pointing its link there
    /// closes a cycle. One group per object.
    pub(super) fn cycles(
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

    pub(super) fn team_cycles(&self) -> Vec<Vec<Corruption>> {
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

    pub(super) fn task_cycles(&self) -> Vec<Vec<Corruption>> {
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

    pub(super) fn lwt_cycles(&self) -> Vec<Vec<Corruption>> {
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
    pub(super) fn unterminated(&self) -> Vec<Corruption> {
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
    pub(super) fn free_address(&self, len: u64) -> Option<u64> {
        let limit = self.image.arch.address_limit();
        [0x7000_0000, 0x3000_0000, 0x0800_0000, limit - 0x8_0000]
            .into_iter()
            .find(|a| !self.image.memory.overlaps(a - 256, len + 512))
    }
}

/// Length of the region of non-NUL bytes the long-string corruption maps.
pub(super) const LONG_STRING: u64 = 600;

/// Globals holding a pointer to a string the libraries read.
pub(super) const STRING_GLOBALS: [&str; 4] = [
    "__kmp_affinity_format",
    "__kmp_tool_libraries",
    "__kmp_tool_verbose_init",
    "ompd_env_block",
];
