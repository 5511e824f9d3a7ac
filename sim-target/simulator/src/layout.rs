//! Struct layouts of the LLVM-family runtime and the layout policies that place them.
//!
//! The LLVM-family OMPD libraries learn every offset and size from `ompd_sizeof__*`,
//! `ompd_access__*` and `ompd_bitfield__*` symbols in the target. The layout is therefore ours to
//! choose: [`Policy`] picks natural alignment, packing, a seeded random order with padding, or the
//! real Intel 2026.2 x86-64 layout. [`Layout::symbols`] lists the layout words the image exports.

use ompd_serve::arch::Arch;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// How struct layouts and structure addresses are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Policy {
    /// Declaration order with natural alignment, structures packed into one heap area.
    Natural,
    /// Declaration order with no padding at all.
    Packed,
    /// Field order, padding, bitfield masks and structure addresses drawn from a seed; addresses
    /// spread over the whole address space.
    Random(u64),
    /// The real layout of Intel `libiomp5.so` 2026.2.0 on x86-64 (lp64-le only).
    Intel2026_2,
    /// Natural field layout, structures placed at the address extremes on purpose: a lattice of
    /// step 2^31 above 2^63, the top of the space, pairs exactly 2^31 apart across 2 GiB
    /// (`image::lower::place`).
    Far,
}

/// The built-in scenario × architecture cells a default run places at the address extremes
/// ([`Policy::Far`]): both widths and both byte orders, the scenarios with the most threads,
/// regions and tasks to compare and follow. `--full` runs every cell.
pub const FAR_SAMPLE: [(&str, Arch); 4] = [
    ("nested-tasks", Arch::LP64_LE),
    ("nested-tasks", Arch::ILP32_BE),
    ("serialized", Arch::LP64_BE),
    ("serialized", Arch::ILP32_LE),
];

/// Built-in scenarios a default run lowers under one layout only: runtime variants whose path
/// does not turn on the struct layout (the other layouts would repeat the same verdicts).
/// `--full` runs every layout.
pub const ONE_LAYOUT: [(&str, Policy); 5] = [
    ("no-ompt", Policy::Natural),
    ("thread-scan", Policy::Natural),
    ("thread-id-width", Policy::Natural),
    ("string-edges", Policy::Natural),
    ("empty-env", Policy::Natural),
];

impl Policy {
    /// True when the policy can describe a target of this architecture.
    pub fn supports(self, arch: Arch) -> bool {
        !matches!(self, Policy::Intel2026_2) || arch == Arch::LP64_LE
    }

    /// True when a run that does not ask for the full product judges this policy on the
    /// built-in scenario `scenario` and `arch`: every policy everywhere, but [`Policy::Far`]
    /// only on [`FAR_SAMPLE`] and a [`ONE_LAYOUT`] scenario only under its layout (a scenario
    /// outside the built-in set runs every policy).
    pub fn sampled(self, scenario: &str, arch: Arch) -> bool {
        if !crate::model::known_names().any(|n| n == scenario) {
            return true;
        }
        if let Some((_, only)) = ONE_LAYOUT.iter().find(|(s, _)| *s == scenario) {
            return self == *only;
        }
        self != Policy::Far || FAR_SAMPLE.contains(&(scenario, arch))
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Natural => f.write_str("natural"),
            Policy::Packed => f.write_str("packed"),
            Policy::Random(seed) => write!(f, "random:{seed}"),
            Policy::Intel2026_2 => f.write_str("intel-2026.2"),
            Policy::Far => f.write_str("far"),
        }
    }
}

impl FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "natural" => Ok(Policy::Natural),
            "packed" => Ok(Policy::Packed),
            "intel-2026.2" => Ok(Policy::Intel2026_2),
            "far" => Ok(Policy::Far),
            _ => match s.strip_prefix("random:") {
                Some(seed) => seed
                    .parse()
                    .map(Policy::Random)
                    .map_err(|_| format!("bad seed in layout `{s}` (expected random:<u64>)")),
                None => Err(format!(
                    "unknown layout `{s}` (expected natural, packed, random:SEED, intel-2026.2 or far)"
                )),
            },
        }
    }
}

/// The members that hold a tool's OMPT data (`ompt_data_t`) for a thread, a region and a task.
/// A runtime built without OMPT support keeps none: its layout words describe none of them
/// (`Model::ompt_support`), though `ompt_data_t` itself stays, as the frames' type.
pub const TOOL_DATA: [&str; 3] = ["thread_data", "parallel_data", "task_data"];

/// The layout word whose presence tells a runtime with OMPT support (the thread's tool data).
pub const TOOL_DATA_PROBE: &str = "ompd_access__ompt_thread_info_t__thread_data";

/// True for a layout word that describes a [`TOOL_DATA`] member (its offset or its size).
pub fn describes_tool_data(word: &str) -> bool {
    TOOL_DATA
        .iter()
        .any(|m| word.strip_suffix(m).is_some_and(|w| w.ends_with("__")))
}

/// Layout words only the newer self-description has (Intel's runtimes up to 2023.2 define none
/// of them): sizes of primitive types and of the runtime's scalar globals, whose C types fix
/// them, the `thread_limit` ICV field, and the types of the nested `OMP_NUM_THREADS` and
/// `OMP_PROC_BIND` lists.
const NEWER_ONLY: &[&str] = &[
    "ompd_sizeof__int",
    "ompd_sizeof__char",
    "ompd_sizeof__ompd_state",
    "ompd_sizeof__kmp_task_t",
    "ompd_sizeof____kmp_gtid",
    "ompd_sizeof____kmp_stksize",
    "ompd_sizeof____kmp_display_affinity",
    "ompd_sizeof____kmp_affinity_format",
    "ompd_sizeof____kmp_tool",
    "ompd_sizeof____kmp_tool_libraries",
    "ompd_sizeof____kmp_tool_verbose_init",
    "ompd_sizeof____kmp_nested_nth",
    "ompd_sizeof____kmp_nested_proc_bind",
    "ompd_access__kmp_internal_control_t__thread_limit",
    "ompd_sizeof__kmp_internal_control_t__thread_limit",
];

/// The types whose every layout word only the newer self-description has.
const NEWER_ONLY_TYPES: &[&str] = &["kmp_nested_nthreads_t", "kmp_nested_proc_bind_t"];

/// True when the layout word `word` is one only the newer self-description has.
pub fn newer_only(word: &str) -> bool {
    NEWER_ONLY.contains(&word)
        || NEWER_ONLY_TYPES.iter().any(|t| {
            ["ompd_sizeof__", "ompd_access__"].iter().any(|p| {
                word.strip_prefix(p)
                    .and_then(|w| w.strip_prefix(t))
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with("__"))
            })
        })
}

/// A primitive field type; its width depends on the architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prim {
    /// 1 byte.
    I8,
    /// 4 bytes (`int`, enums).
    I32,
    /// 8 bytes on every target (`uint64_t`, `ompt_data_t` members).
    U64,
    /// Pointer-sized (pointers, `long`, `size_t`).
    Ptr,
    /// A native thread id (`kmp_thread_t`): pointer-sized unless the layout says otherwise
    /// ([`Layout::with_thread_ids`]).
    ThreadId,
}

impl Prim {
    /// Width in bytes on `arch`.
    pub fn width(self, arch: Arch) -> u64 {
        match self {
            Prim::I8 => 1,
            Prim::I32 => 4,
            Prim::U64 => 8,
            Prim::Ptr | Prim::ThreadId => arch.pointer as u64,
        }
    }
}

/// The type of a field.
#[derive(Clone, Copy, Debug)]
enum FieldTy {
    Prim(Prim),
    Struct(&'static str),
}

struct TypeDef {
    name: &'static str,
    union: bool,
    fields: &'static [(&'static str, FieldTy)],
}

use FieldTy::{Prim as P, Struct as S};

/// Every runtime type the libraries read, with the fields they access plus a few they do not
/// (kept so layouts look like a real runtime's). Nested types come before their users.
static SCHEMA: &[TypeDef] = &[
    TypeDef {
        name: "ompt_data_t",
        union: true,
        fields: &[("value", P(Prim::U64)), ("ptr", P(Prim::Ptr))],
    },
    TypeDef {
        name: "ompt_frame_t",
        union: false,
        fields: &[
            ("exit_frame", S("ompt_data_t")),
            ("enter_frame", S("ompt_data_t")),
            ("exit_frame_flags", P(Prim::I32)),
            ("enter_frame_flags", P(Prim::I32)),
        ],
    },
    TypeDef {
        name: "ompt_task_info_t",
        union: false,
        fields: &[
            ("frame", S("ompt_frame_t")),
            ("task_data", S("ompt_data_t")),
            ("scheduling_parent", P(Prim::Ptr)),
            ("thread_num", P(Prim::I32)),
        ],
    },
    TypeDef {
        name: "ompt_team_info_t",
        union: false,
        fields: &[
            ("parallel_data", S("ompt_data_t")),
            ("master_return_address", P(Prim::Ptr)),
        ],
    },
    TypeDef {
        name: "ompt_thread_info_t",
        union: false,
        fields: &[
            ("thread_data", S("ompt_data_t")),
            ("parallel_data", S("ompt_data_t")),
            ("idle_frame", P(Prim::Ptr)),
            ("state", P(Prim::I32)),
            ("wait_id", P(Prim::U64)),
        ],
    },
    TypeDef {
        name: "ompt_lw_taskteam_t",
        union: false,
        fields: &[
            ("ompt_team_info", S("ompt_team_info_t")),
            ("ompt_task_info", S("ompt_task_info_t")),
            ("heap", P(Prim::I32)),
            ("parent", P(Prim::Ptr)),
        ],
    },
    TypeDef {
        name: "kmp_desc_base_t",
        union: false,
        fields: &[
            ("ds_stackbase", P(Prim::Ptr)),
            ("ds_stacksize", P(Prim::Ptr)),
            ("ds_thread", P(Prim::ThreadId)),
            ("ds_tid", P(Prim::I32)),
            ("ds_gtid", P(Prim::I32)),
        ],
    },
    TypeDef {
        name: "kmp_desc_t",
        union: true,
        fields: &[("ds", S("kmp_desc_base_t"))],
    },
    TypeDef {
        name: "kmp_base_info_t",
        union: false,
        fields: &[
            ("th_info", S("kmp_desc_t")),
            ("th_team", P(Prim::Ptr)),
            ("th_root", P(Prim::Ptr)),
            ("ompt_thread_info", S("ompt_thread_info_t")),
            ("th_current_task", P(Prim::Ptr)),
        ],
    },
    TypeDef {
        name: "kmp_info_t",
        union: true,
        fields: &[("th", S("kmp_base_info_t"))],
    },
    TypeDef {
        name: "kmp_r_sched_t",
        union: false,
        fields: &[("r_sched_type", P(Prim::I32)), ("chunk", P(Prim::I32))],
    },
    TypeDef {
        name: "kmp_internal_control_t",
        union: false,
        fields: &[
            ("serial_nesting_level", P(Prim::I32)),
            ("dynamic", P(Prim::I8)),
            ("bt_set", P(Prim::I8)),
            ("nproc", P(Prim::I32)),
            ("thread_limit", P(Prim::I32)),
            ("max_active_levels", P(Prim::I32)),
            ("sched", S("kmp_r_sched_t")),
            ("proc_bind", P(Prim::I32)),
            ("default_device", P(Prim::I32)),
            ("next", P(Prim::Ptr)),
        ],
    },
    TypeDef {
        name: "kmp_taskdata_t",
        union: false,
        fields: &[
            ("td_task_id", P(Prim::I32)),
            ("td_flags", P(Prim::I32)),
            ("td_team", P(Prim::Ptr)),
            ("td_alloc_thread", P(Prim::Ptr)),
            ("td_parent", P(Prim::Ptr)),
            ("td_level", P(Prim::I32)),
            ("td_icvs", S("kmp_internal_control_t")),
            ("ompt_task_info", S("ompt_task_info_t")),
        ],
    },
    TypeDef {
        name: "kmp_task_t",
        union: false,
        fields: &[
            ("shareds", P(Prim::Ptr)),
            ("routine", P(Prim::Ptr)),
            ("part_id", P(Prim::I32)),
        ],
    },
    TypeDef {
        name: "kmp_base_team_t",
        union: false,
        fields: &[
            ("t_master_tid", P(Prim::I32)),
            ("t_parent", P(Prim::Ptr)),
            ("t_nproc", P(Prim::I32)),
            ("t_pkfn", P(Prim::Ptr)),
            ("ompt_team_info", S("ompt_team_info_t")),
            ("ompt_serialized_team_info", P(Prim::Ptr)),
            ("t_threads", P(Prim::Ptr)),
            ("t_implicit_task_taskdata", P(Prim::Ptr)),
            ("t_level", P(Prim::I32)),
            ("t_active_level", P(Prim::I32)),
        ],
    },
    TypeDef {
        name: "kmp_team_p",
        union: true,
        fields: &[("t", S("kmp_base_team_t"))],
    },
    TypeDef {
        name: "kmp_nested_nthreads_t",
        union: false,
        fields: &[
            ("nth", P(Prim::Ptr)),
            ("size", P(Prim::I32)),
            ("used", P(Prim::I32)),
        ],
    },
    TypeDef {
        name: "kmp_nested_proc_bind_t",
        union: false,
        fields: &[
            ("bind_types", P(Prim::Ptr)),
            ("size", P(Prim::I32)),
            ("used", P(Prim::I32)),
        ],
    },
];

/// Names of the `kmp_tasking_flags_t` bitfields the runtime describes, in mask order.
pub const TASK_FLAGS: [&str; 11] = [
    "tiedness",
    "final",
    "tasktype",
    "task_serial",
    "tasking_ser",
    "team_serial",
    "started",
    "executing",
    "complete",
    "freed",
    "native",
];

/// The real `kmp_tasking_flags_t` masks (Appendix A of the layout research).
const REAL_MASKS: [u64; 11] = [
    0x1, 0x2, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x200000, 0x400000, 0x800000, 0x1000000,
];

/// Offset and size of one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldLayout {
    /// `offsetof`.
    pub offset: u64,
    /// `sizeof` of the member.
    pub size: u64,
}

/// The layout of one type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeLayout {
    /// `sizeof`.
    pub size: u64,
    /// Alignment used when placing objects of this type.
    pub align: u64,
    /// Fields by name.
    pub fields: BTreeMap<String, FieldLayout>,
}

/// Every type layout and bitfield mask for one (architecture, policy) pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Target architecture.
    pub arch: Arch,
    /// Policy that produced this layout.
    pub policy: Policy,
    types: BTreeMap<&'static str, TypeLayout>,
    masks: BTreeMap<&'static str, u64>,
    /// The width of a native thread id (`kmp_thread_t`).
    thread_id: u64,
}

/// Asking for a layout the policy cannot give.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("layout {policy} is not defined for {arch}")]
pub struct UnsupportedLayout {
    /// The policy.
    pub policy: Policy,
    /// The architecture.
    pub arch: Arch,
}

/// A deterministic generator whose output never changes across crate versions, so that a
/// `random:SEED` layout named in a report or answer snapshot reproduces forever (SplitMix64).
#[derive(Clone, Debug)]
pub struct SeedRng(u64);

impl SeedRng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        SeedRng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

impl Layout {
    /// Computes every type layout for `arch` under `policy`, with pointer-sized thread ids.
    pub fn new(arch: Arch, policy: Policy) -> Result<Layout, UnsupportedLayout> {
        Layout::with_thread_ids(arch, policy, arch.pointer)
    }

    /// Computes every type layout for `arch` under `policy`, with native thread ids
    /// (`kmp_thread_t`) of `thread_id` bytes.
    pub fn with_thread_ids(
        arch: Arch,
        policy: Policy,
        thread_id: u8,
    ) -> Result<Layout, UnsupportedLayout> {
        if !policy.supports(arch) {
            return Err(UnsupportedLayout { policy, arch });
        }
        let mut rng = SeedRng::new(match policy {
            Policy::Random(seed) => seed,
            _ => 0,
        });
        let mut types: BTreeMap<&'static str, TypeLayout> = BTreeMap::new();
        for def in SCHEMA {
            let members: Vec<(&str, u64, u64)> = def
                .fields
                .iter()
                .map(|(name, ty)| match ty {
                    FieldTy::Prim(Prim::ThreadId) => {
                        (*name, u64::from(thread_id), u64::from(thread_id))
                    }
                    FieldTy::Prim(p) => (*name, p.width(arch), p.width(arch)),
                    FieldTy::Struct(s) => (*name, types[s].size, types[s].align),
                })
                .collect();
            let tl = match policy {
                Policy::Natural | Policy::Far => place(&members, def.union, true, None),
                Policy::Packed => place(&members, def.union, false, None),
                Policy::Random(_) => place(&members, def.union, true, Some(&mut rng)),
                Policy::Intel2026_2 => intel_type(def.name, &members),
            };
            types.insert(def.name, tl);
        }
        let masks = match policy {
            Policy::Random(_) => {
                let mut bits: Vec<u64> = (0..32).collect();
                for i in (1..bits.len()).rev() {
                    bits.swap(i, rng.below(i as u64 + 1) as usize);
                }
                TASK_FLAGS
                    .iter()
                    .zip(bits)
                    .map(|(n, b)| (*n, 1u64 << b))
                    .collect()
            }
            _ => TASK_FLAGS.iter().copied().zip(REAL_MASKS).collect(),
        };
        Ok(Layout {
            arch,
            policy,
            types,
            masks,
            thread_id: u64::from(thread_id),
        })
    }

    /// The width of a native thread id (`kmp_thread_t`) in bytes.
    pub fn thread_id_size(&self) -> u64 {
        self.thread_id
    }

    /// The layout of type `name`. Panics on a type outside the schema (a programming error).
    pub fn ty(&self, name: &str) -> &TypeLayout {
        self.types
            .get(name)
            .unwrap_or_else(|| panic!("type {name} is not in the schema"))
    }

    /// The layout of `ty.field`. Panics on a field outside the schema (a programming error).
    pub fn field(&self, ty: &str, field: &str) -> FieldLayout {
        *self
            .ty(ty)
            .fields
            .get(field)
            .unwrap_or_else(|| panic!("field {ty}.{field} is not in the layout"))
    }

    /// The layout of `ty.field` if the layout has that field.
    pub fn try_field(&self, ty: &str, field: &str) -> Option<FieldLayout> {
        self.types
            .get(ty)
            .and_then(|t| t.fields.get(field).copied())
    }

    /// Offset (from the start of a `ty` object) and size of the member reached through `path`,
    /// e.g. `resolve("kmp_base_info_t", &["ompt_thread_info", "state"])`. `None` when a step is
    /// missing from this layout (presets describe only what the libraries read).
    pub fn resolve(&self, ty: &str, path: &[&str]) -> Option<FieldLayout> {
        let mut ty_name = ty;
        let mut offset = 0;
        let mut size = self.types.get(ty)?.size;
        for (i, step) in path.iter().enumerate() {
            let f = self.try_field(ty_name, step)?;
            offset += f.offset;
            size = f.size;
            if i + 1 < path.len() {
                ty_name = nested_type(ty_name, step)?;
            }
        }
        Some(FieldLayout { offset, size })
    }

    /// The `kmp_tasking_flags_t` mask of bitfield `flag`.
    pub fn mask(&self, flag: &str) -> u64 {
        self.masks[flag]
    }

    /// Every type name in the schema.
    pub fn type_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.types.keys().copied()
    }

    /// Every layout word the runtime exports: type sizes, field offsets and sizes, bitfield masks
    /// and the sizes of the globals the libraries read.
    pub fn symbols(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for (name, tl) in &self.types {
            out.push((format!("ompd_sizeof__{name}"), tl.size));
            for (f, fl) in &tl.fields {
                out.push((format!("ompd_access__{name}__{f}"), fl.offset));
                out.push((format!("ompd_sizeof__{name}__{f}"), fl.size));
            }
        }
        for (flag, mask) in &self.masks {
            out.push((format!("ompd_bitfield__kmp_tasking_flags_t__{flag}"), *mask));
        }
        let p = self.arch.pointer as u64;
        out.extend(
            [
                ("ompd_sizeof__int", 4),
                ("ompd_sizeof__char", 1),
                ("ompd_sizeof__kmp_thread_t", self.thread_id),
                ("ompd_sizeof__kmp_tasking_flags_t", 4),
                ("ompd_sizeof__ompd_state", 8),
                ("ompd_sizeof____kmp_gtid", 4),
                ("ompd_sizeof____kmp_avail_proc", 4),
                ("ompd_sizeof____kmp_stksize", p),
                ("ompd_sizeof____kmp_omp_cancellation", 4),
                ("ompd_sizeof____kmp_max_task_priority", 4),
                ("ompd_sizeof____kmp_display_affinity", 4),
                ("ompd_sizeof____kmp_tool", 4),
                ("ompd_sizeof____kmp_affinity_format", p),
                ("ompd_sizeof____kmp_tool_libraries", p),
                ("ompd_sizeof____kmp_tool_verbose_init", p),
                (
                    "ompd_sizeof____kmp_nested_nth",
                    self.ty("kmp_nested_nthreads_t").size,
                ),
                (
                    "ompd_sizeof____kmp_nested_proc_bind",
                    self.ty("kmp_nested_proc_bind_t").size,
                ),
            ]
            .into_iter()
            .map(|(n, v)| (n.to_string(), v)),
        );
        out
    }
}

/// The struct type of a nested member, if the member is a struct.
fn nested_type(ty: &str, field: &str) -> Option<&'static str> {
    let def = SCHEMA.iter().find(|d| d.name == ty)?;
    match def.fields.iter().find(|(n, _)| *n == field)?.1 {
        FieldTy::Struct(s) => Some(s),
        FieldTy::Prim(_) => None,
    }
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a.max(1)) * a.max(1)
}

/// Places members in order (or shuffled, with padding, when `rng` is given).
fn place(
    members: &[(&str, u64, u64)],
    union: bool,
    aligned: bool,
    mut rng: Option<&mut SeedRng>,
) -> TypeLayout {
    let mut order: Vec<usize> = (0..members.len()).collect();
    if let (Some(rng), false) = (rng.as_deref_mut(), union) {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }
    let align = if aligned {
        members.iter().map(|m| m.2).max().unwrap_or(1).min(8)
    } else {
        1
    };
    let mut fields = BTreeMap::new();
    let mut end = 0u64;
    for i in order {
        let (name, size, a) = members[i];
        let a = if aligned { a.min(8) } else { 1 };
        let mut offset = if union { 0 } else { align_up(end, a) };
        if let (Some(rng), false) = (rng.as_deref_mut(), union) {
            offset += a * rng.below(4);
        }
        fields.insert(name.to_string(), FieldLayout { offset, size });
        end = end.max(offset + size);
    }
    if let Some(rng) = rng {
        end += align * rng.below(3);
    }
    TypeLayout {
        size: align_up(end.max(1), align),
        align,
        fields,
    }
}

/// The Intel 2026.2 x86-64 layout: every field the libraries read at its real offset and size,
/// and the real type sizes. Fields the libraries never read are left out of the preset.
fn intel_type(name: &str, members: &[(&str, u64, u64)]) -> TypeLayout {
    let (size, table): (u64, &[(&str, u64, u64)]) = match name {
        "ompt_data_t" => (8, &[("value", 0, 8), ("ptr", 0, 8)]),
        "ompt_frame_t" => (24, &[("exit_frame", 0, 8), ("enter_frame", 8, 8)]),
        "ompt_task_info_t" => (
            64,
            &[
                ("frame", 0, 24),
                ("task_data", 24, 8),
                ("scheduling_parent", 32, 8),
            ],
        ),
        "ompt_team_info_t" => (16, &[("parallel_data", 0, 8)]),
        "ompt_thread_info_t" => (
            64,
            &[("thread_data", 0, 8), ("state", 32, 4), ("wait_id", 40, 8)],
        ),
        "ompt_lw_taskteam_t" => (
            96,
            &[
                ("ompt_team_info", 0, 16),
                ("ompt_task_info", 16, 64),
                ("parent", 88, 8),
            ],
        ),
        "kmp_desc_base_t" => (40, &[("ds_thread", 24, 8), ("ds_tid", 32, 4)]),
        "kmp_desc_t" => (64, &[("ds", 0, 40)]),
        "kmp_base_info_t" => (
            1728,
            &[
                ("th_info", 0, 64),
                ("th_team", 64, 8),
                ("ompt_thread_info", 456, 64),
                ("th_current_task", 584, 8),
            ],
        ),
        "kmp_info_t" => (4096, &[("th", 0, 1728)]),
        "kmp_r_sched_t" => (8, &[("r_sched_type", 0, 4), ("chunk", 4, 4)]),
        "kmp_internal_control_t" => (
            56,
            &[
                ("dynamic", 4, 1),
                ("nproc", 12, 4),
                ("thread_limit", 16, 4),
                ("max_active_levels", 24, 4),
                ("sched", 32, 8),
                ("proc_bind", 40, 4),
                ("default_device", 44, 4),
            ],
        ),
        "kmp_taskdata_t" => (
            320,
            &[
                ("td_flags", 4, 4),
                ("td_team", 8, 8),
                ("td_parent", 24, 8),
                ("td_icvs", 64, 56),
                ("ompt_task_info", 232, 64),
            ],
        ),
        "kmp_task_t" => (48, &[("routine", 8, 8)]),
        "kmp_base_team_t" => (
            2048,
            &[
                ("t_master_tid", 384, 4),
                ("t_parent", 400, 8),
                ("t_nproc", 524, 4),
                ("t_pkfn", 528, 8),
                ("ompt_team_info", 544, 16),
                ("ompt_serialized_team_info", 560, 8),
                ("t_threads", 832, 8),
                ("t_implicit_task_taskdata", 840, 8),
                ("t_level", 848, 4),
                ("t_active_level", 924, 4),
            ],
        ),
        "kmp_team_p" => (2048, &[("t", 0, 2048)]),
        "kmp_nested_nthreads_t" => (16, &[("nth", 0, 8), ("size", 8, 4), ("used", 12, 4)]),
        "kmp_nested_proc_bind_t" => (16, &[("bind_types", 0, 8), ("size", 8, 4), ("used", 12, 4)]),
        other => unreachable!("type {other} has no Intel preset"),
    };
    // A member narrower than its preset's slot (a 4-byte thread id) fills the slot's start.
    let width = |f: &str| members.iter().find(|m| m.0 == f).map(|m| m.1);
    debug_assert!(table
        .iter()
        .all(|(f, _, s)| width(f).is_some_and(|w| w <= *s)));
    let fields = table
        .iter()
        .map(|(f, o, s)| {
            (
                f.to_string(),
                FieldLayout {
                    offset: *o,
                    size: width(f).map_or(*s, |w| w.min(*s)),
                },
            )
        })
        .collect();
    TypeLayout {
        size,
        align: 8,
        fields,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_layouts() -> Vec<Layout> {
        let mut v = Vec::new();
        for arch in Arch::ALL {
            for policy in [
                Policy::Natural,
                Policy::Packed,
                Policy::Random(7),
                Policy::Random(99),
                Policy::Intel2026_2,
            ] {
                if let Ok(l) = Layout::new(arch, policy) {
                    v.push(l);
                }
            }
        }
        v
    }

    #[test]
    fn fields_never_overlap_and_fit_in_the_type() {
        for l in all_layouts() {
            for name in l.type_names() {
                let t = l.ty(name);
                let union = SCHEMA.iter().find(|d| d.name == name).unwrap().union;
                let mut spans: Vec<(u64, u64)> = t
                    .fields
                    .values()
                    .map(|f| (f.offset, f.offset + f.size))
                    .collect();
                spans.sort();
                for w in spans.windows(2) {
                    assert!(
                        union || w[0].1 <= w[1].0,
                        "{} {}: {name} overlaps",
                        l.arch,
                        l.policy
                    );
                }
                assert!(
                    spans.iter().all(|s| s.1 <= t.size),
                    "{} {}: {name} too small",
                    l.arch,
                    l.policy
                );
            }
        }
    }

    #[test]
    fn wrapper_unions_keep_their_member_at_offset_zero() {
        for l in all_layouts() {
            assert_eq!(l.field("kmp_info_t", "th").offset, 0);
            assert_eq!(l.field("kmp_team_p", "t").offset, 0);
            assert_eq!(l.field("kmp_desc_t", "ds").offset, 0);
        }
    }

    #[test]
    fn intel_preset_has_the_real_offsets() {
        let l = Layout::new(Arch::LP64_LE, Policy::Intel2026_2).unwrap();
        assert_eq!(l.field("kmp_base_team_t", "t_active_level").offset, 924);
        assert_eq!(l.field("kmp_base_info_t", "th_current_task").offset, 584);
        assert_eq!(l.ty("kmp_taskdata_t").size, 320);
        assert_eq!(l.mask("tasktype"), 0x10000);
        assert!(Layout::new(Arch::ILP32_BE, Policy::Intel2026_2).is_err());
    }

    #[test]
    fn random_layouts_differ_by_seed_and_reproduce() {
        let a = Layout::new(Arch::LP64_LE, Policy::Random(1)).unwrap();
        let b = Layout::new(Arch::LP64_LE, Policy::Random(1)).unwrap();
        let c = Layout::new(Arch::LP64_LE, Policy::Random(2)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.symbols(), c.symbols());
    }

    #[test]
    fn every_field_has_access_and_sizeof_symbols() {
        let l = Layout::new(Arch::ILP32_BE, Policy::Packed).unwrap();
        let syms: BTreeMap<_, _> = l.symbols().into_iter().collect();
        assert_eq!(syms["ompd_sizeof__kmp_base_team_t__t_threads"], 4);
        assert!(syms.contains_key("ompd_access__kmp_taskdata_t__td_icvs"));
        assert_eq!(syms["ompd_sizeof__kmp_internal_control_t__dynamic"], 1);
    }

    #[test]
    fn policies_parse_back() {
        for p in [
            Policy::Natural,
            Policy::Packed,
            Policy::Random(42),
            Policy::Intel2026_2,
            Policy::Far,
        ] {
            assert_eq!(p.to_string().parse::<Policy>().unwrap(), p);
        }
        assert!("random:x".parse::<Policy>().is_err());
    }
}
