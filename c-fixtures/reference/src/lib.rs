//! The reference OMPD library: a complete OMPD library for LLVM- and Intel-family (kmp) OpenMP
//! runtimes, written from the OpenMP specification and the runtime layout facts of
//! `../shared/research/llvm-kmp-model.md`, never from a vendor's source.
//!
//! It is the suite's positive control: a library that does what the specification says, so a
//! check that fails it blames wrongly.
//! - It reads the target only through the tool's callbacks, and finds every structure through
//!   the runtime's self-describing `ompd_sizeof__*` / `ompd_access__*` / `ompd_bitfield__*`
//!   symbols ([`layout`]), so it serves any pointer width, byte order and layout they describe.
//! - It allocates only through `alloc_memory` (text is built in fixed buffers, [`text`]), prints
//!   nothing, starts no thread, installs no handler, and keeps no state but the copied callback
//!   table and the API version the tool asked for ([`cb`]).
//! - No entry point panics: every index is checked and every address sum is checked arithmetic.
//!
//! The crate is the library's code; a build is a `cdylib` crate that calls [`export!`] with its
//! [`Build`] (`v5.2/`: API version 202111, `v6.0/`: 202411), or [`export_5_0!`] (`v5.0/`:
//! 201811, `v5.1/`: 202011), or [`export_tr!`] for the TR 2.001
//! build (`v2.001/`: the TR's routines, types and callback table, string ids included).

pub mod api;
mod cb;
mod handles;
mod kmp;
mod layout;
mod target;
mod text;
pub mod tr;

pub use handles::{KeyOffsets, KEY_OFFSETS};
pub use ompd_abi as abi;
use ompd_abi::{Generation, Rc};

/// What distinguishes one build of the library: the generation it implements.
#[derive(Clone, Copy, Debug)]
pub struct Build {
    /// The newest OMPD generation it implements (its API version is what
    /// `ompd_get_api_version` reports); a tool may ask `ompd_initialize` for any from 5.0 on.
    pub generation: Generation,
    /// The string `ompd_get_version_string` returns (NUL-terminated, static).
    pub version_string: &'static [u8],
}

impl Build {
    /// The build's `ompd_get_api_version` value.
    pub fn api_version(&self) -> i64 {
        self.generation.api_version().unwrap_or(0)
    }

    /// The generation whose meaning the calls have: the one the tool asked for at
    /// `ompd_initialize` (an older API version gets that version's codes and ICVs), else the
    /// build's own.
    pub fn semantics(&self) -> Generation {
        cb::asked().unwrap_or(self.generation)
    }

    /// True when the calls have OpenMP 6.0's meaning.
    pub fn is_6_0(&self) -> bool {
        self.semantics() >= Generation::V6_0
    }

    /// The code for a live handle of the wrong kind: `ompd_rc_incompatible_handle` from 6.0,
    /// `ompd_rc_bad_input` before (5.x has no code of its own for it).
    pub fn wrong_handle(&self) -> Rc {
        if self.is_6_0() {
            Rc::INCOMPATIBLE_HANDLE
        } else {
            Rc::BAD_INPUT
        }
    }
}

/// Exports every OMPD routine of a 5.2 or later build as an unmangled C symbol, each forwarding
/// to [`api`] and type-checked against `ompd_abi::entry`: those of [`export_5_0!`] and the two
/// device routines 5.2 added.
#[macro_export]
macro_rules! export {
    ($build:expr) => {
        $crate::export_5_0!($build);
        $crate::export_routines!(
            ompd_get_device_thread_id_kinds = api::aspace::get_device_thread_id_kinds: entry::GetDeviceThreadIdKinds (h: *mut $crate::abi::AddressSpaceHandle, k: *mut *mut u64, s: *mut *mut u64, n: *mut std::ffi::c_int),
            ompd_get_device_from_thread = api::aspace::get_device_from_thread: entry::GetDeviceFromThread (t: *mut $crate::abi::ThreadHandle, h: *mut *mut $crate::abi::AddressSpaceHandle),
        );
    };
}

/// Exports the 35 routines OpenMP 5.0 and 5.1 declare, for a build of either (and, through
/// [`export!`], of every later one).
#[macro_export]
macro_rules! export_5_0 {
    ($build:expr) => {
        const BUILD: &$crate::Build = &$build;
        $crate::export_routines!(
            ompd_initialize = api::library::initialize: entry::Initialize (v: i64, cb: *const $crate::abi::Callbacks),
            ompd_get_api_version = api::library::get_api_version: entry::GetApiVersion (v: *mut i64),
            ompd_get_version_string = api::library::get_version_string: entry::GetVersionString (s: *mut *const std::ffi::c_char),
            ompd_finalize = api::library::finalize: entry::Finalize (),
            ompd_process_initialize = api::aspace::process_initialize: entry::ProcessInitialize (c: *mut $crate::abi::AddressSpaceContext, h: *mut *mut $crate::abi::AddressSpaceHandle),
            ompd_device_initialize = api::aspace::device_initialize: entry::DeviceInitialize (h: *mut $crate::abi::AddressSpaceHandle, c: *mut $crate::abi::AddressSpaceContext, k: u64, n: u64, id: *mut std::ffi::c_void, out: *mut *mut $crate::abi::AddressSpaceHandle),
            ompd_rel_address_space_handle = api::aspace::rel_address_space_handle: entry::RelAddressSpaceHandle (h: *mut $crate::abi::AddressSpaceHandle),
            ompd_get_omp_version = api::aspace::get_omp_version: entry::GetOmpVersion (h: *mut $crate::abi::AddressSpaceHandle, v: *mut i64),
            ompd_get_omp_version_string = api::aspace::get_omp_version_string: entry::GetOmpVersionString (h: *mut $crate::abi::AddressSpaceHandle, s: *mut *const std::ffi::c_char),
            ompd_get_thread_handle = api::thread::get_thread_handle: entry::GetThreadHandle (h: *mut $crate::abi::AddressSpaceHandle, k: u64, n: u64, id: *const std::ffi::c_void, t: *mut *mut $crate::abi::ThreadHandle),
            ompd_get_thread_id = api::thread::get_thread_id: entry::GetThreadId (t: *mut $crate::abi::ThreadHandle, k: u64, n: u64, id: *mut std::ffi::c_void),
            ompd_rel_thread_handle = api::thread::rel_thread_handle: entry::RelThreadHandle (t: *mut $crate::abi::ThreadHandle),
            ompd_thread_handle_compare = api::thread::thread_handle_compare: entry::ThreadHandleCompare (a: *mut $crate::abi::ThreadHandle, b: *mut $crate::abi::ThreadHandle, c: *mut std::ffi::c_int),
            ompd_get_thread_in_parallel = api::thread::get_thread_in_parallel: entry::GetThreadInParallel (p: *mut $crate::abi::ParallelHandle, i: std::ffi::c_int, t: *mut *mut $crate::abi::ThreadHandle),
            ompd_get_state = api::thread::get_state: entry::GetState (t: *mut $crate::abi::ThreadHandle, s: *mut i64, w: *mut u64),
            ompd_get_curr_parallel_handle = api::parallel::get_curr_parallel_handle: entry::GetCurrParallelHandle (t: *mut $crate::abi::ThreadHandle, p: *mut *mut $crate::abi::ParallelHandle),
            ompd_get_enclosing_parallel_handle = api::parallel::get_enclosing_parallel_handle: entry::GetEnclosingParallelHandle (p: *mut $crate::abi::ParallelHandle, o: *mut *mut $crate::abi::ParallelHandle),
            ompd_get_task_parallel_handle = api::parallel::get_task_parallel_handle: entry::GetTaskParallelHandle (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::ParallelHandle),
            ompd_rel_parallel_handle = api::parallel::rel_parallel_handle: entry::RelParallelHandle (p: *mut $crate::abi::ParallelHandle),
            ompd_parallel_handle_compare = api::parallel::parallel_handle_compare: entry::ParallelHandleCompare (a: *mut $crate::abi::ParallelHandle, b: *mut $crate::abi::ParallelHandle, c: *mut std::ffi::c_int),
            ompd_get_curr_task_handle = api::task::get_curr_task_handle: entry::GetCurrTaskHandle (t: *mut $crate::abi::ThreadHandle, k: *mut *mut $crate::abi::TaskHandle),
            ompd_get_generating_task_handle = api::task::get_generating_task_handle: entry::GetGeneratingTaskHandle (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::TaskHandle),
            ompd_get_scheduling_task_handle = api::task::get_scheduling_task_handle: entry::GetSchedulingTaskHandle (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::TaskHandle),
            ompd_get_task_in_parallel = api::task::get_task_in_parallel: entry::GetTaskInParallel (p: *mut $crate::abi::ParallelHandle, i: std::ffi::c_int, k: *mut *mut $crate::abi::TaskHandle),
            ompd_rel_task_handle = api::task::rel_task_handle: entry::RelTaskHandle (k: *mut $crate::abi::TaskHandle),
            ompd_task_handle_compare = api::task::task_handle_compare: entry::TaskHandleCompare (a: *mut $crate::abi::TaskHandle, b: *mut $crate::abi::TaskHandle, c: *mut std::ffi::c_int),
            ompd_get_task_function = api::task::get_task_function: entry::GetTaskFunction (k: *mut $crate::abi::TaskHandle, a: *mut $crate::abi::Address),
            ompd_get_task_frame = api::task::get_task_frame: entry::GetTaskFrame (k: *mut $crate::abi::TaskHandle, x: *mut $crate::abi::FrameInfo, e: *mut $crate::abi::FrameInfo),
            ompd_enumerate_states = api::states::enumerate_states: entry::EnumerateStates (h: *mut $crate::abi::AddressSpaceHandle, c: i64, n: *mut i64, s: *mut *const std::ffi::c_char, m: *mut i64),
            ompd_get_display_control_vars = api::dcv::get_display_control_vars: entry::GetDisplayControlVars (h: *mut $crate::abi::AddressSpaceHandle, v: *mut *const *const std::ffi::c_char),
            ompd_rel_display_control_vars = api::dcv::rel_display_control_vars: entry::RelDisplayControlVars (v: *mut *const *const std::ffi::c_char),
            ompd_enumerate_icvs = api::icv::enumerate_icvs: entry::EnumerateIcvs (h: *mut $crate::abi::AddressSpaceHandle, c: u64, n: *mut u64, s: *mut *const std::ffi::c_char, p: *mut $crate::abi::Scope, m: *mut std::ffi::c_int),
            ompd_get_icv_from_scope = api::icv::get_icv_from_scope: entry::GetIcvFromScope (h: *mut std::ffi::c_void, p: $crate::abi::Scope, i: u64, v: *mut i64),
            ompd_get_icv_string_from_scope = api::icv::get_icv_string_from_scope: entry::GetIcvStringFromScope (h: *mut std::ffi::c_void, p: $crate::abi::Scope, i: u64, s: *mut *const std::ffi::c_char),
            ompd_get_tool_data = api::tool_data::get_tool_data: entry::GetToolData (h: *mut std::ffi::c_void, p: $crate::abi::Scope, v: *mut i64, a: *mut $crate::abi::Address),
        );
    };
}

/// One exported routine per row: the symbol, the function of this crate it forwards to (with
/// the build first), and its type in `ompd_abi` (see [`export!`], [`export_tr!`]).
#[doc(hidden)]
#[macro_export]
macro_rules! export_routines {
    ($($sym:ident = $($f:ident)::+ : $($ty:ident)::+ ($($a:ident : $t:ty),*),)*) => {$(
        #[doc = concat!("`", stringify!($sym), "`.")]
        #[no_mangle]
        pub extern "C" fn $sym($($a: $t),*) -> $crate::abi::Rc {
            $crate::$($f)::+(BUILD, $($a),*)
        }
        const _: $crate::abi::$($ty)::+ = $sym;
    )*};
}
