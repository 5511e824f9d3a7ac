//! The runtime's self-describing layout: every `ompd_access__T__F` / `ompd_sizeof__T__F` pair,
//! type or global size (`ompd_sizeof__X`) and bitfield mask (`ompd_bitfield__T__F`) the library
//! reads, and the per-address-space cache of their values.
//!
//! The names are the runtime's (`../shared/research/llvm-kmp-model.md` §2.2); each value is an
//! 8-byte target word the runtime fills at startup. One table per kind; [`Field`], [`Size`] and
//! [`Mask`] index them.

use ompd_abi::DeviceTypeSizes;

/// Declares the fields: an enum indexing a table of (offset symbol, size symbol) names.
macro_rules! fields {
    ($($v:ident = $t:literal . $f:literal,)*) => {
        /// A field of a runtime type: its offset and its size come from two layout symbols.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[allow(non_camel_case_types)]
        pub enum Field { $(#[doc = concat!("`", $t, ".", $f, "`")] $v,)* }
        /// (offset symbol, size symbol) of every field, in [`Field`] order.
        const FIELD_NAMES: &[(&[u8], &[u8])] = &[$((
            concat!("ompd_access__", $t, "__", $f, "\0").as_bytes(),
            concat!("ompd_sizeof__", $t, "__", $f, "\0").as_bytes(),
        ),)*];
    };
}

/// Declares the sizes or masks: an enum indexing a table of symbol names.
macro_rules! words {
    ($name:ident, $table:ident, $prefix:literal, $doc:literal, $($v:ident = $s:literal,)*) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[allow(non_camel_case_types)]
        pub enum $name { $(#[doc = concat!("`", $prefix, $s, "`")] $v,)* }
        const $table: &[&[u8]] = &[$(concat!($prefix, $s, "\0").as_bytes(),)*];
    };
}

/// Declares the sizes: an enum indexing a table of symbol names, and for each the C type the
/// runtime declares it with, when that type's width is a primitive size the tool reports.
macro_rules! sizes {
    ($($v:ident = $s:literal $(as $c:ident)?,)*) => {
        words!(Size, SIZE_NAMES, "ompd_sizeof__", "A type's size, or a global variable's.", $($v = $s,)*);
        /// The C type of every size, in [`Size`] order.
        const SIZE_TYPES: &[Option<CType>] = &[$(sizes!(@ty $($c)?),)*];
    };
    (@ty) => { None };
    (@ty $c:ident) => { Some(CType::$c) };
}

/// The C type of a sized global or type whose width follows from the tool's primitive sizes.
///
/// Runtimes whose self-description predates a size word (Intel's up to 2023.2 publish no
/// `ompd_sizeof__int`, no `ompd_sizeof____kmp_gtid`, ...) still declare the variable with this
/// type (`llvm-kmp-model.md` §2.2), so its width is the tool's `sizeof_type` answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CType {
    /// `int`.
    Int,
    /// `size_t`: as wide as a pointer on every ABI the suite's targets use (ILP32, LP64).
    SizeT,
}

impl CType {
    /// The width of this type on a target of primitive sizes `s`.
    pub fn width(self, s: &DeviceTypeSizes) -> u64 {
        match self {
            CType::Int => u64::from(s.sizeof_int),
            CType::SizeT => u64::from(s.sizeof_pointer),
        }
    }
}

/// The C type of size `s`, when its width follows from the primitive sizes.
pub fn c_type(s: Size) -> Option<CType> {
    SIZE_TYPES.get(s as usize).copied().flatten()
}

fields! {
    InfoTh = "kmp_info_t"."th",
    ThTeam = "kmp_base_info_t"."th_team",
    ThCurrentTask = "kmp_base_info_t"."th_current_task",
    ThInfo = "kmp_base_info_t"."th_info",
    ThOmpt = "kmp_base_info_t"."ompt_thread_info",
    DescDs = "kmp_desc_t"."ds",
    DsThread = "kmp_desc_base_t"."ds_thread",
    DsTid = "kmp_desc_base_t"."ds_tid",
    OmptState = "ompt_thread_info_t"."state",
    OmptWaitId = "ompt_thread_info_t"."wait_id",
    OmptThreadData = "ompt_thread_info_t"."thread_data",
    TeamT = "kmp_team_p"."t",
    TThreads = "kmp_base_team_t"."t_threads",
    TNproc = "kmp_base_team_t"."t_nproc",
    TLevel = "kmp_base_team_t"."t_level",
    TActiveLevel = "kmp_base_team_t"."t_active_level",
    TParent = "kmp_base_team_t"."t_parent",
    TPkfn = "kmp_base_team_t"."t_pkfn",
    TImplicitTasks = "kmp_base_team_t"."t_implicit_task_taskdata",
    TOmptTeamInfo = "kmp_base_team_t"."ompt_team_info",
    TSerializedInfo = "kmp_base_team_t"."ompt_serialized_team_info",
    TeamInfoData = "ompt_team_info_t"."parallel_data",
    TdFlags = "kmp_taskdata_t"."td_flags",
    TdTeam = "kmp_taskdata_t"."td_team",
    TdParent = "kmp_taskdata_t"."td_parent",
    TdIcvs = "kmp_taskdata_t"."td_icvs",
    TdOmpt = "kmp_taskdata_t"."ompt_task_info",
    IcvDynamic = "kmp_internal_control_t"."dynamic",
    IcvNproc = "kmp_internal_control_t"."nproc",
    IcvMaxActiveLevels = "kmp_internal_control_t"."max_active_levels",
    IcvProcBind = "kmp_internal_control_t"."proc_bind",
    IcvSched = "kmp_internal_control_t"."sched",
    IcvDefaultDevice = "kmp_internal_control_t"."default_device",
    IcvThreadLimit = "kmp_internal_control_t"."thread_limit",
    SchedType = "kmp_r_sched_t"."r_sched_type",
    SchedChunk = "kmp_r_sched_t"."chunk",
    TaskRoutine = "kmp_task_t"."routine",
    TaskInfoFrame = "ompt_task_info_t"."frame",
    TaskInfoScheduling = "ompt_task_info_t"."scheduling_parent",
    TaskInfoData = "ompt_task_info_t"."task_data",
    FrameExit = "ompt_frame_t"."exit_frame",
    FrameEnter = "ompt_frame_t"."enter_frame",
    DataValue = "ompt_data_t"."value",
    DataPtr = "ompt_data_t"."ptr",
    LwtParent = "ompt_lw_taskteam_t"."parent",
    LwtTeamInfo = "ompt_lw_taskteam_t"."ompt_team_info",
    LwtTaskInfo = "ompt_lw_taskteam_t"."ompt_task_info",
    NthUsed = "kmp_nested_nthreads_t"."used",
    NthList = "kmp_nested_nthreads_t"."nth",
    BindUsed = "kmp_nested_proc_bind_t"."used",
    BindList = "kmp_nested_proc_bind_t"."bind_types",
}

sizes! {
    Taskdata = "kmp_taskdata_t",
    ThreadId = "kmp_thread_t",
    Int = "int" as Int,
    OmpdState = "ompd_state",
    Gtid = "__kmp_gtid" as Int,
    AvailProc = "__kmp_avail_proc" as Int,
    Stksize = "__kmp_stksize" as SizeT,
    Cancellation = "__kmp_omp_cancellation" as Int,
    MaxTaskPriority = "__kmp_max_task_priority" as Int,
    DisplayAffinity = "__kmp_display_affinity" as Int,
    Tool = "__kmp_tool" as Int,
}

words! {
    Mask, MASK_NAMES, "ompd_bitfield__", "A bitfield's mask within `td_flags`.",
    TaskType = "kmp_tasking_flags_t__tasktype",
    Final = "kmp_tasking_flags_t__final",
}

/// How many layout words an address space caches.
pub const WORDS: usize = 2 * FIELD_NAMES.len() + SIZE_NAMES.len() + MASK_NAMES.len();

/// The cache slot and symbol name of a field's offset (`size == false`) or size.
pub fn field_slot(f: Field, size: bool) -> (usize, &'static [u8]) {
    let i = f as usize;
    let names = FIELD_NAMES.get(i).copied().unwrap_or((b"\0", b"\0"));
    if size {
        (2 * i + 1, names.1)
    } else {
        (2 * i, names.0)
    }
}

/// The cache slot and symbol name of a size.
pub fn size_slot(s: Size) -> (usize, &'static [u8]) {
    let i = s as usize;
    let name = SIZE_NAMES.get(i).copied().unwrap_or(b"\0");
    (2 * FIELD_NAMES.len() + i, name)
}

/// The cache slot and symbol name of a mask.
pub fn mask_slot(m: Mask) -> (usize, &'static [u8]) {
    let i = m as usize;
    let name = MASK_NAMES.get(i).copied().unwrap_or(b"\0");
    (2 * FIELD_NAMES.len() + SIZE_NAMES.len() + i, name)
}

/// The layout words one address space has read so far (a slot is valid once its bit is set).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Cache {
    /// The values, by slot.
    pub value: [u64; WORDS],
    /// Which slots hold a value.
    pub known: [bool; WORDS],
    /// Which ICVs the runtime describes (bit `k`: the ICV with id `k + 1`), once probed.
    pub icvs: Option<u64>,
}

impl Cache {
    /// An empty cache.
    pub const EMPTY: Cache = Cache {
        value: [0; WORDS],
        known: [false; WORDS],
        icvs: None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_a_terminated_layout_symbol() {
        assert_eq!(FIELD_NAMES.len(), 51);
        let (slot, name) = field_slot(Field::ThTeam, true);
        assert_eq!(slot, 3);
        assert_eq!(name, b"ompd_sizeof__kmp_base_info_t__th_team\0");
        assert_eq!(size_slot(Size::Gtid).1, b"ompd_sizeof____kmp_gtid\0");
        assert_eq!(
            mask_slot(Mask::Final),
            (
                WORDS - 1,
                &b"ompd_bitfield__kmp_tasking_flags_t__final\0"[..]
            )
        );
    }

    #[test]
    fn sizes_left_out_follow_their_c_type_and_type_sizes_never_do() {
        let ilp32 = DeviceTypeSizes {
            sizeof_char: 1,
            sizeof_short: 2,
            sizeof_int: 4,
            sizeof_long: 4,
            sizeof_long_long: 8,
            sizeof_pointer: 4,
        };
        assert_eq!(c_type(Size::Gtid).map(|c| c.width(&ilp32)), Some(4));
        assert_eq!(c_type(Size::Stksize).map(|c| c.width(&ilp32)), Some(4));
        assert_eq!(c_type(Size::Taskdata), None);
        assert_eq!(c_type(Size::ThreadId), None);
        assert_eq!(c_type(Size::OmpdState), None);
    }
}
