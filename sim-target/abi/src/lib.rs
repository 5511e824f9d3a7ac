//! `#[repr(C)]` mirror of the OMPD 5.0 interface (API version 201811) as declared in the system
//! `omp-tools.h`, plus the 5.1/5.2/6.0 additions, and the one table of entry points
//! ([`EntryPoint`]) with the generations ([`Generation`]) that declare them.
//!
//! Types and constants only: no logic and no `unsafe`. Values that come back from a vendor
//! library (return codes, scopes) are transparent integer newtypes rather than Rust enums, because
//! an out-of-range discriminant from foreign code would be undefined behaviour in an enum.
//! `c-fixtures` cross-checks every size and offset here against the C header.

use std::ffi::{c_char, c_int, c_void};
use std::fmt;

mod entry_point;
mod generation;
pub mod tr;

pub use entry_point::{str_eq, Arg, EntryPoint, HandleKind, Role, FORM_CHANGED_IN_5_0, TR_NAMES};
pub use generation::Generation;

/// `ompd_word_t`: a signed 64-bit word.
pub type OmpdWord = i64;
/// `ompd_addr_t`: a target address.
pub type OmpdAddr = u64;
/// `ompd_seg_t`: a target segment.
pub type OmpdSeg = u64;
/// `ompd_size_t`: a size in bytes.
pub type OmpdSize = u64;
/// `ompd_wait_id_t`: the object a thread waits on.
pub type OmpdWaitId = u64;
/// `ompd_device_t`: a device kind.
pub type OmpdDevice = u64;
/// `ompd_thread_id_t`: a native thread id kind.
pub type OmpdThreadIdKind = u64;
/// `ompd_icv_id_t`: an ICV id from `ompd_enumerate_icvs`.
pub type OmpdIcvId = u64;

/// API versions (`_OPENMP`-style yyyymm) of the known OMPD generations.
pub mod api_version {
    /// OpenMP 5.0.
    pub const V5_0: i64 = 201811;
    /// OpenMP 5.1.
    pub const V5_1: i64 = 202011;
    /// OpenMP 5.2.
    pub const V5_2: i64 = 202111;
    /// OpenMP 6.0.
    pub const V6_0: i64 = 202411;
    /// Every value a conforming library may report.
    pub const KNOWN: [i64; 4] = [V5_0, V5_1, V5_2, V6_0];
}

/// `ompd_rc_t`, kept as the raw `int` the library returned.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rc(pub c_int);

impl Rc {
    /// `ompd_rc_ok`.
    pub const OK: Rc = Rc(0);
    /// `ompd_rc_unavailable`.
    pub const UNAVAILABLE: Rc = Rc(1);
    /// `ompd_rc_stale_handle`.
    pub const STALE_HANDLE: Rc = Rc(2);
    /// `ompd_rc_bad_input`.
    pub const BAD_INPUT: Rc = Rc(3);
    /// `ompd_rc_error`.
    pub const ERROR: Rc = Rc(4);
    /// `ompd_rc_unsupported`.
    pub const UNSUPPORTED: Rc = Rc(5);
    /// `ompd_rc_needs_state_tracking`.
    pub const NEEDS_STATE_TRACKING: Rc = Rc(6);
    /// `ompd_rc_incompatible`.
    pub const INCOMPATIBLE: Rc = Rc(7);
    /// `ompd_rc_device_read_error`.
    pub const DEVICE_READ_ERROR: Rc = Rc(8);
    /// `ompd_rc_device_write_error`.
    pub const DEVICE_WRITE_ERROR: Rc = Rc(9);
    /// `ompd_rc_nomem`.
    pub const NOMEM: Rc = Rc(10);
    /// `ompd_rc_incomplete` (5.1; used by 5.0 libraries built against LLVM's header).
    pub const INCOMPLETE: Rc = Rc(11);
    /// `ompd_rc_callback_error` (5.1; used by 5.0 libraries built against LLVM's header).
    pub const CALLBACK_ERROR: Rc = Rc(12);
    /// `ompd_rc_incompatible_handle` (6.0).
    pub const INCOMPATIBLE_HANDLE: Rc = Rc(13);

    /// The enumerator name without the `ompd_rc_` prefix, or `None` for an unknown code.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "ok",
            1 => "unavailable",
            2 => "stale_handle",
            3 => "bad_input",
            4 => "error",
            5 => "unsupported",
            6 => "needs_state_tracking",
            7 => "incompatible",
            8 => "device_read_error",
            9 => "device_write_error",
            10 => "nomem",
            11 => "incomplete",
            12 => "callback_error",
            13 => "incompatible_handle",
            _ => return None,
        })
    }

    /// True for `ompd_rc_ok`.
    pub fn is_ok(self) -> bool {
        self == Rc::OK
    }
}

impl fmt::Debug for Rc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Rc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}"),
            None => write!(f, "rc({})", self.0),
        }
    }
}

/// `ompd_scope_t`, kept as a raw `int`.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope(pub c_int);

impl Scope {
    /// `ompd_scope_global`.
    pub const GLOBAL: Scope = Scope(1);
    /// `ompd_scope_address_space`.
    pub const ADDRESS_SPACE: Scope = Scope(2);
    /// `ompd_scope_thread`.
    pub const THREAD: Scope = Scope(3);
    /// `ompd_scope_parallel`.
    pub const PARALLEL: Scope = Scope(4);
    /// `ompd_scope_implicit_task`.
    pub const IMPLICIT_TASK: Scope = Scope(5);
    /// `ompd_scope_task`.
    pub const TASK: Scope = Scope(6);
    /// `ompd_scope_teams` (6.0).
    pub const TEAMS: Scope = Scope(7);
    /// `ompd_scope_target` (6.0).
    pub const TARGET: Scope = Scope(8);

    /// The enumerator name without the `ompd_scope_` prefix, or `None` for an unknown value.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1 => "global",
            2 => "address_space",
            3 => "thread",
            4 => "parallel",
            5 => "implicit_task",
            6 => "task",
            7 => "teams",
            8 => "target",
            _ => return None,
        })
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}"),
            None => write!(f, "scope({})", self.0),
        }
    }
}

/// Native thread id kinds from `ompd-types.h`.
pub mod thread_id_kind {
    /// `OMPD_THREAD_ID_PTHREAD`.
    pub const PTHREAD: u64 = 0;
    /// `OMPD_THREAD_ID_LWP`.
    pub const LWP: u64 = 1;
    /// `OMPD_THREAD_ID_WINTHREAD`.
    pub const WINTHREAD: u64 = 2;
    /// `OMPD_THREAD_ID_CUDALOGICAL`.
    pub const CUDALOGICAL: u64 = 3;
}

/// The OMPD breakpoint functions a runtime defines, by the generation that asks for them:
/// TR 2.001 §12, OMPD 5.0 (the header's eight), OpenMP 6.0 §42.7/42.8 (its header declares no
/// target pair, which §42.11/42.12 name).
pub mod breakpoint {
    /// TR 2.001's: the parallel and task pairs.
    pub const TR2: &[&str] = &[
        "ompd_bp_parallel_begin",
        "ompd_bp_parallel_end",
        "ompd_bp_task_begin",
        "ompd_bp_task_end",
    ];
    /// What OMPD 5.0 adds: the thread and device pairs.
    pub const V5_0: &[&str] = &[
        "ompd_bp_thread_begin",
        "ompd_bp_thread_end",
        "ompd_bp_device_begin",
        "ompd_bp_device_end",
    ];
    /// What OpenMP 6.0 adds: the teams pair.
    pub const V6_0: &[&str] = &["ompd_bp_teams_begin", "ompd_bp_teams_end"];

    /// Every one of them, oldest generation first.
    pub fn all() -> impl Iterator<Item = &'static str> {
        [TR2, V5_0, V6_0].into_iter().flatten().copied()
    }
}

/// Device kinds from `ompd-types.h`.
pub mod device_kind {
    /// `OMPD_DEVICE_KIND_HOST`.
    pub const HOST: u64 = 1;
    /// `OMPD_DEVICE_KIND_CUDA`.
    pub const CUDA: u64 = 2;
}

/// `ompd_segment_none`.
pub const SEGMENT_NONE: OmpdSeg = 0;
/// `ompd_icv_undefined`: the start value of `ompd_enumerate_icvs` (declared in no header).
pub const ICV_UNDEFINED: OmpdIcvId = 0;

/// `ompt_frame_flag_t` values.
pub mod frame_flag {
    /// `ompt_frame_runtime`.
    pub const RUNTIME: i64 = 0x00;
    /// `ompt_frame_application`.
    pub const APPLICATION: i64 = 0x01;
    /// `ompt_frame_cfa`.
    pub const CFA: i64 = 0x10;
    /// `ompt_frame_framepointer`.
    pub const FRAMEPOINTER: i64 = 0x20;
    /// `ompt_frame_stackaddress`.
    pub const STACKADDRESS: i64 = 0x30;
}

/// `ompt_state_t` values and their enumerator spellings, including the 6.0 additions.
pub mod state {
    /// `ompt_state_work_serial`.
    pub const WORK_SERIAL: i64 = 0x000;
    /// `ompt_state_work_parallel`.
    pub const WORK_PARALLEL: i64 = 0x001;
    /// `ompt_state_idle`.
    pub const IDLE: i64 = 0x100;
    /// `ompt_state_overhead`.
    pub const OVERHEAD: i64 = 0x101;
    /// `ompt_state_undefined`: the start value of `ompd_enumerate_states`.
    pub const UNDEFINED: i64 = 0x102;

    /// Every defined state (except `undefined`) with its name.
    pub const ALL: &[(i64, &str)] = &[
        (0x000, "ompt_state_work_serial"),
        (0x001, "ompt_state_work_parallel"),
        (0x002, "ompt_state_work_reduction"),
        (0x003, "ompt_state_work_free_agent"),
        (0x004, "ompt_state_work_induction"),
        (0x010, "ompt_state_wait_barrier"),
        (0x011, "ompt_state_wait_barrier_implicit_parallel"),
        (0x012, "ompt_state_wait_barrier_implicit_workshare"),
        (0x013, "ompt_state_wait_barrier_implicit"),
        (0x014, "ompt_state_wait_barrier_explicit"),
        (0x015, "ompt_state_wait_barrier_implementation"),
        (0x016, "ompt_state_wait_barrier_teams"),
        (0x020, "ompt_state_wait_taskwait"),
        (0x021, "ompt_state_wait_taskgroup"),
        (0x040, "ompt_state_wait_mutex"),
        (0x041, "ompt_state_wait_lock"),
        (0x042, "ompt_state_wait_critical"),
        (0x043, "ompt_state_wait_atomic"),
        (0x044, "ompt_state_wait_ordered"),
        (0x080, "ompt_state_wait_target"),
        (0x081, "ompt_state_wait_target_map"),
        (0x082, "ompt_state_wait_target_update"),
        (0x100, "ompt_state_idle"),
        (0x101, "ompt_state_overhead"),
    ];

    /// The enumerator spelling of a state value.
    pub fn name(value: i64) -> Option<&'static str> {
        ALL.iter().find(|(v, _)| *v == value).map(|(_, n)| *n)
    }

    /// True for the states whose `wait_id` identifies an awaited object.
    pub fn is_wait(value: i64) -> bool {
        (0x010..0x100).contains(&value)
    }
}

/// `ompd_address_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Address {
    /// `segment`.
    pub segment: OmpdSeg,
    /// `address`.
    pub address: OmpdAddr,
}

/// `ompd_frame_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameInfo {
    /// `frame_address`.
    pub frame_address: Address,
    /// `frame_flag`.
    pub frame_flag: OmpdWord,
}

/// `ompd_device_type_sizes_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceTypeSizes {
    /// `sizeof_char`.
    pub sizeof_char: u8,
    /// `sizeof_short`.
    pub sizeof_short: u8,
    /// `sizeof_int`.
    pub sizeof_int: u8,
    /// `sizeof_long`.
    pub sizeof_long: u8,
    /// `sizeof_long_long`.
    pub sizeof_long_long: u8,
    /// `sizeof_pointer`.
    pub sizeof_pointer: u8,
}

macro_rules! opaque {
    ($($(#[$m:meta])* $name:ident;)*) => {$(
        $(#[$m])*
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}

opaque! {
    /// `ompd_address_space_handle_t` (library-owned, opaque).
    AddressSpaceHandle;
    /// `ompd_thread_handle_t` (library-owned, opaque).
    ThreadHandle;
    /// `ompd_parallel_handle_t` (library-owned, opaque).
    ParallelHandle;
    /// `ompd_task_handle_t` (library-owned, opaque).
    TaskHandle;
    /// `ompd_address_space_context_t` (tool-owned, opaque to the library).
    AddressSpaceContext;
    /// `ompd_thread_context_t` (tool-owned, opaque to the library).
    ThreadContext;
}

/// `ompd_callback_memory_alloc_fn_t`.
pub type AllocMemoryFn = unsafe extern "C" fn(nbytes: OmpdSize, ptr: *mut *mut c_void) -> Rc;
/// `ompd_callback_memory_free_fn_t`.
pub type FreeMemoryFn = unsafe extern "C" fn(ptr: *mut c_void) -> Rc;
/// `ompd_callback_print_string_fn_t`.
pub type PrintStringFn = unsafe extern "C" fn(string: *const c_char, category: c_int) -> Rc;
/// `ompd_callback_sizeof_fn_t`.
pub type SizeofTypeFn =
    unsafe extern "C" fn(ctx: *mut AddressSpaceContext, sizes: *mut DeviceTypeSizes) -> Rc;
/// `ompd_callback_symbol_addr_fn_t`.
pub type SymbolAddrLookupFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    symbol_name: *const c_char,
    symbol_addr: *mut Address,
    file_name: *const c_char,
) -> Rc;
/// `ompd_callback_memory_read_fn_t` (also the type of `read_string`).
pub type ReadMemoryFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const Address,
    nbytes: OmpdSize,
    buffer: *mut c_void,
) -> Rc;
/// `ompd_callback_memory_write_fn_t`.
pub type WriteMemoryFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const Address,
    nbytes: OmpdSize,
    buffer: *const c_void,
) -> Rc;
/// `ompd_callback_device_host_fn_t`.
pub type DeviceHostFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit_size: OmpdSize,
    count: OmpdSize,
    output: *mut c_void,
) -> Rc;
/// `ompd_callback_get_thread_context_for_thread_id_fn_t`.
pub type GetThreadContextFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    kind: OmpdThreadIdKind,
    sizeof_thread_id: OmpdSize,
    thread_id: *const c_void,
    thread_context: *mut *mut ThreadContext,
) -> Rc;

/// `ompd_callbacks_t`: the 11-slot callback table (identical from 5.0 to 6.0).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Callbacks {
    /// `alloc_memory`.
    pub alloc_memory: Option<AllocMemoryFn>,
    /// `free_memory`.
    pub free_memory: Option<FreeMemoryFn>,
    /// `print_string`.
    pub print_string: Option<PrintStringFn>,
    /// `sizeof_type`.
    pub sizeof_type: Option<SizeofTypeFn>,
    /// `symbol_addr_lookup`.
    pub symbol_addr_lookup: Option<SymbolAddrLookupFn>,
    /// `read_memory`.
    pub read_memory: Option<ReadMemoryFn>,
    /// `write_memory`.
    pub write_memory: Option<WriteMemoryFn>,
    /// `read_string`.
    pub read_string: Option<ReadMemoryFn>,
    /// `device_to_host`.
    pub device_to_host: Option<DeviceHostFn>,
    /// `host_to_device`.
    pub host_to_device: Option<DeviceHostFn>,
    /// `get_thread_context_for_thread_id`.
    pub get_thread_context_for_thread_id: Option<GetThreadContextFn>,
}

/// Signatures of every OMPD entry point, as function-pointer types.
pub mod entry {
    use super::*;

    /// `ompd_initialize`.
    pub type Initialize = unsafe extern "C" fn(api_version: OmpdWord, cb: *const Callbacks) -> Rc;
    /// `ompd_get_api_version`.
    pub type GetApiVersion = unsafe extern "C" fn(version: *mut OmpdWord) -> Rc;
    /// `ompd_get_version_string`.
    pub type GetVersionString = unsafe extern "C" fn(string: *mut *const c_char) -> Rc;
    /// `ompd_finalize`.
    pub type Finalize = unsafe extern "C" fn() -> Rc;
    /// `ompd_process_initialize`.
    pub type ProcessInitialize = unsafe extern "C" fn(
        ctx: *mut AddressSpaceContext,
        handle: *mut *mut AddressSpaceHandle,
    ) -> Rc;
    /// `ompd_device_initialize`.
    pub type DeviceInitialize = unsafe extern "C" fn(
        process_handle: *mut AddressSpaceHandle,
        device_context: *mut AddressSpaceContext,
        kind: OmpdDevice,
        sizeof_id: OmpdSize,
        id: *mut c_void,
        device_handle: *mut *mut AddressSpaceHandle,
    ) -> Rc;
    /// `ompd_rel_address_space_handle`.
    pub type RelAddressSpaceHandle = unsafe extern "C" fn(handle: *mut AddressSpaceHandle) -> Rc;
    /// `ompd_get_omp_version`.
    pub type GetOmpVersion =
        unsafe extern "C" fn(ah: *mut AddressSpaceHandle, omp_version: *mut OmpdWord) -> Rc;
    /// `ompd_get_omp_version_string`.
    pub type GetOmpVersionString =
        unsafe extern "C" fn(ah: *mut AddressSpaceHandle, string: *mut *const c_char) -> Rc;
    /// `ompd_get_thread_in_parallel`.
    pub type GetThreadInParallel = unsafe extern "C" fn(
        ph: *mut ParallelHandle,
        thread_num: c_int,
        th: *mut *mut ThreadHandle,
    ) -> Rc;
    /// `ompd_get_thread_handle`.
    pub type GetThreadHandle = unsafe extern "C" fn(
        ah: *mut AddressSpaceHandle,
        kind: OmpdThreadIdKind,
        sizeof_thread_id: OmpdSize,
        thread_id: *const c_void,
        th: *mut *mut ThreadHandle,
    ) -> Rc;
    /// `ompd_rel_thread_handle`.
    pub type RelThreadHandle = unsafe extern "C" fn(th: *mut ThreadHandle) -> Rc;
    /// `ompd_thread_handle_compare`.
    pub type ThreadHandleCompare =
        unsafe extern "C" fn(a: *mut ThreadHandle, b: *mut ThreadHandle, cmp: *mut c_int) -> Rc;
    /// `ompd_get_thread_id`.
    pub type GetThreadId = unsafe extern "C" fn(
        th: *mut ThreadHandle,
        kind: OmpdThreadIdKind,
        sizeof_thread_id: OmpdSize,
        thread_id: *mut c_void,
    ) -> Rc;
    /// `ompd_get_curr_parallel_handle`.
    pub type GetCurrParallelHandle =
        unsafe extern "C" fn(th: *mut ThreadHandle, ph: *mut *mut ParallelHandle) -> Rc;
    /// `ompd_get_enclosing_parallel_handle`.
    pub type GetEnclosingParallelHandle =
        unsafe extern "C" fn(ph: *mut ParallelHandle, out: *mut *mut ParallelHandle) -> Rc;
    /// `ompd_get_task_parallel_handle`.
    pub type GetTaskParallelHandle =
        unsafe extern "C" fn(task: *mut TaskHandle, out: *mut *mut ParallelHandle) -> Rc;
    /// `ompd_rel_parallel_handle`.
    pub type RelParallelHandle = unsafe extern "C" fn(ph: *mut ParallelHandle) -> Rc;
    /// `ompd_parallel_handle_compare`.
    pub type ParallelHandleCompare =
        unsafe extern "C" fn(a: *mut ParallelHandle, b: *mut ParallelHandle, cmp: *mut c_int) -> Rc;
    /// `ompd_get_curr_task_handle`.
    pub type GetCurrTaskHandle =
        unsafe extern "C" fn(th: *mut ThreadHandle, task: *mut *mut TaskHandle) -> Rc;
    /// `ompd_get_generating_task_handle`.
    pub type GetGeneratingTaskHandle =
        unsafe extern "C" fn(task: *mut TaskHandle, out: *mut *mut TaskHandle) -> Rc;
    /// `ompd_get_scheduling_task_handle`.
    pub type GetSchedulingTaskHandle =
        unsafe extern "C" fn(task: *mut TaskHandle, out: *mut *mut TaskHandle) -> Rc;
    /// `ompd_get_task_in_parallel`.
    pub type GetTaskInParallel = unsafe extern "C" fn(
        ph: *mut ParallelHandle,
        thread_num: c_int,
        task: *mut *mut TaskHandle,
    ) -> Rc;
    /// `ompd_rel_task_handle`.
    pub type RelTaskHandle = unsafe extern "C" fn(task: *mut TaskHandle) -> Rc;
    /// `ompd_task_handle_compare`.
    pub type TaskHandleCompare =
        unsafe extern "C" fn(a: *mut TaskHandle, b: *mut TaskHandle, cmp: *mut c_int) -> Rc;
    /// `ompd_get_task_function`.
    pub type GetTaskFunction =
        unsafe extern "C" fn(task: *mut TaskHandle, entry_point: *mut Address) -> Rc;
    /// `ompd_get_task_frame`.
    pub type GetTaskFrame = unsafe extern "C" fn(
        task: *mut TaskHandle,
        exit_frame: *mut FrameInfo,
        enter_frame: *mut FrameInfo,
    ) -> Rc;
    /// `ompd_enumerate_states`.
    pub type EnumerateStates = unsafe extern "C" fn(
        ah: *mut AddressSpaceHandle,
        current_state: OmpdWord,
        next_state: *mut OmpdWord,
        next_state_name: *mut *const c_char,
        more_enums: *mut OmpdWord,
    ) -> Rc;
    /// `ompd_get_state`.
    pub type GetState =
        unsafe extern "C" fn(th: *mut ThreadHandle, state: *mut OmpdWord, wait_id: *mut u64) -> Rc;
    /// `ompd_get_display_control_vars`.
    pub type GetDisplayControlVars = unsafe extern "C" fn(
        ah: *mut AddressSpaceHandle,
        control_vars: *mut *const *const c_char,
    ) -> Rc;
    /// `ompd_rel_display_control_vars`.
    pub type RelDisplayControlVars =
        unsafe extern "C" fn(control_vars: *mut *const *const c_char) -> Rc;
    /// `ompd_enumerate_icvs`.
    pub type EnumerateIcvs = unsafe extern "C" fn(
        ah: *mut AddressSpaceHandle,
        current: OmpdIcvId,
        next_id: *mut OmpdIcvId,
        next_icv_name: *mut *const c_char,
        next_scope: *mut Scope,
        more: *mut c_int,
    ) -> Rc;
    /// `ompd_get_icv_from_scope`.
    pub type GetIcvFromScope = unsafe extern "C" fn(
        handle: *mut c_void,
        scope: Scope,
        icv_id: OmpdIcvId,
        icv_value: *mut OmpdWord,
    ) -> Rc;
    /// `ompd_get_icv_string_from_scope`.
    pub type GetIcvStringFromScope = unsafe extern "C" fn(
        handle: *mut c_void,
        scope: Scope,
        icv_id: OmpdIcvId,
        icv_string: *mut *const c_char,
    ) -> Rc;
    /// `ompd_get_tool_data`.
    pub type GetToolData = unsafe extern "C" fn(
        handle: *mut c_void,
        scope: Scope,
        value: *mut OmpdWord,
        ptr: *mut Address,
    ) -> Rc;
    /// `ompd_get_device_thread_id_kinds` (5.2).
    pub type GetDeviceThreadIdKinds = unsafe extern "C" fn(
        device_handle: *mut AddressSpaceHandle,
        kinds: *mut *mut OmpdThreadIdKind,
        thread_id_sizes: *mut *mut OmpdSize,
        count: *mut c_int,
    ) -> Rc;
    /// `ompd_get_device_from_thread` (5.2).
    pub type GetDeviceFromThread =
        unsafe extern "C" fn(th: *mut ThreadHandle, device: *mut *mut AddressSpaceHandle) -> Rc;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lp64_sizes_match_the_header_arithmetic() {
        assert_eq!(std::mem::size_of::<Address>(), 16);
        assert_eq!(std::mem::size_of::<FrameInfo>(), 24);
        assert_eq!(std::mem::size_of::<DeviceTypeSizes>(), 6);
        assert_eq!(
            std::mem::size_of::<Callbacks>(),
            11 * std::mem::size_of::<usize>()
        );
        assert_eq!(std::mem::size_of::<Rc>(), 4);
    }

    #[test]
    fn return_code_names_cover_every_code() {
        for code in 0..=13 {
            assert!(Rc(code).name().is_some(), "code {code}");
        }
        assert_eq!(Rc(14).name(), None);
        assert_eq!(Rc(99).to_string(), "rc(99)");
    }
}
