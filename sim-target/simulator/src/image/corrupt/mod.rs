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
use graph::{width_mask, Class, Graph, Site};
use ompd_serve::memory::{MemError, Memory};
use proptest::prelude::*;
use proptest::sample::select;
use std::fmt;
use std::sync::Arc;

mod graph;

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
    pub const fn id(self) -> &'static str {
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

    /// The kind named `id` (see [`Kind::id`]); usable in constants, where an unknown name stops the build.
    pub const fn by_id(id: &str) -> Kind {
        let mut i = 0;
        while i < Kind::ALL.len() {
            if ompd_abi::str_eq(Kind::ALL[i].id(), id) {
                return Kind::ALL[i];
            }
            i += 1;
        }
        panic!("not a corruption kind")
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
        Kind::MisalignedPointer => return misaligned(&g, image, kind),
        Kind::WildPointer => return wild(&g, image, kind),
        Kind::HugeCount => return huge(&g, image, kind),
    };
    (!all.is_empty()).then(|| select(all).boxed())
}

/// Pointers moved off their alignment by 1 to 7 bytes.
fn misaligned(g: &Graph, image: &Image, kind: Kind) -> Option<BoxedStrategy<Corruption>> {
    let sites: Vec<Site> = g.pointers().into_iter().filter(|s| s.value != 0).collect();
    if sites.is_empty() {
        return None;
    }
    let image = Arc::new(image.clone());
    Some(
        (select(sites), 1u64..=7)
            .prop_map(move |(s, k)| {
                let v = s.value.wrapping_add(k) & width_mask(s.width);
                s.corrupt(kind, v, format!("{v:#x} (+{k}, misaligned)"), &image)
            })
            .boxed(),
    )
}

/// Pointers into unmapped memory, or into an object of another class.
fn wild(g: &Graph, image: &Image, kind: Kind) -> Option<BoxedStrategy<Corruption>> {
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
    Some(
        (select(sites), any::<bool>(), unmapped, select(foreign))
            .prop_map(move |(s, into_object, wild, (obj, name, class))| {
                if into_object && class != s.class && obj != s.value {
                    let what = format!("{name} (a {}, not a {})", class.c_type(), s.class.c_type());
                    s.corrupt(kind, obj, what, &image)
                } else {
                    s.corrupt(kind, wild, format!("{wild:#x} (unmapped)"), &image)
                }
            })
            .boxed(),
    )
}

/// Counts set to huge values (a different one from the count's own).
fn huge(g: &Graph, image: &Image, kind: Kind) -> Option<BoxedStrategy<Corruption>> {
    let sites = g.counts();
    if sites.is_empty() {
        return None;
    }
    let image = Arc::new(image.clone());
    Some(
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
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::lower;
    use crate::layout::Policy;
    use crate::model;
    use ompd_serve::arch::Arch;
    use proptest::test_runner::{Config, TestRng, TestRunner};
    use std::collections::BTreeMap;

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
            assert_eq!(Kind::by_id(kind.id()), kind);
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
