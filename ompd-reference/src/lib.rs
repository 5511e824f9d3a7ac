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
//!   table ([`cb`]).
//! - No entry point panics: every index is checked and every address sum is checked arithmetic.
//!
//! The crate is the library's code; a build is a `cdylib` crate that calls [`export!`] with its
//! [`Build`] (`v5.2/`: API version 202111, `v6.0/`: 202411).

pub mod api;
mod cb;
mod handles;
mod kmp;
mod layout;
mod target;
mod text;

pub use ompd_abi as abi;
use ompd_abi::{Generation, Rc};

/// What distinguishes one build of the library: the generation it implements.
#[derive(Clone, Copy, Debug)]
pub struct Build {
    /// The OMPD generation (its API version is what `ompd_get_api_version` reports).
    pub generation: Generation,
    /// The string `ompd_get_version_string` returns (NUL-terminated, static).
    pub version_string: &'static [u8],
}

impl Build {
    /// The build's `ompd_get_api_version` value.
    pub fn api_version(&self) -> i64 {
        self.generation.api_version().unwrap_or(0)
    }

    /// True from OpenMP 6.0 on.
    pub fn is_6_0(&self) -> bool {
        self.generation >= Generation::V6_0
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

/// Exports every OMPD routine of a build as an unmangled C symbol, each forwarding to [`api`]
/// and type-checked against `ompd_abi::entry`.
#[macro_export]
macro_rules! export {
    ($build:expr) => {
        const BUILD: &$crate::Build = &$build;
        $crate::export_routines!(
            ompd_initialize = library::initialize: Initialize (v: i64, cb: *const $crate::abi::Callbacks),
            ompd_get_api_version = library::get_api_version: GetApiVersion (v: *mut i64),
            ompd_get_version_string = library::get_version_string: GetVersionString (s: *mut *const std::ffi::c_char),
            ompd_finalize = library::finalize: Finalize (),
            ompd_process_initialize = aspace::process_initialize: ProcessInitialize (c: *mut $crate::abi::AddressSpaceContext, h: *mut *mut $crate::abi::AddressSpaceHandle),
            ompd_device_initialize = aspace::device_initialize: DeviceInitialize (h: *mut $crate::abi::AddressSpaceHandle, c: *mut $crate::abi::AddressSpaceContext, k: u64, n: u64, id: *mut std::ffi::c_void, out: *mut *mut $crate::abi::AddressSpaceHandle),
            ompd_rel_address_space_handle = aspace::rel_address_space_handle: RelAddressSpaceHandle (h: *mut $crate::abi::AddressSpaceHandle),
            ompd_get_omp_version = aspace::get_omp_version: GetOmpVersion (h: *mut $crate::abi::AddressSpaceHandle, v: *mut i64),
            ompd_get_omp_version_string = aspace::get_omp_version_string: GetOmpVersionString (h: *mut $crate::abi::AddressSpaceHandle, s: *mut *const std::ffi::c_char),
            ompd_get_device_thread_id_kinds = aspace::get_device_thread_id_kinds: GetDeviceThreadIdKinds (h: *mut $crate::abi::AddressSpaceHandle, k: *mut *mut u64, s: *mut *mut u64, n: *mut std::ffi::c_int),
            ompd_get_device_from_thread = aspace::get_device_from_thread: GetDeviceFromThread (t: *mut $crate::abi::ThreadHandle, h: *mut *mut $crate::abi::AddressSpaceHandle),
            ompd_get_thread_handle = thread::get_thread_handle: GetThreadHandle (h: *mut $crate::abi::AddressSpaceHandle, k: u64, n: u64, id: *const std::ffi::c_void, t: *mut *mut $crate::abi::ThreadHandle),
            ompd_get_thread_id = thread::get_thread_id: GetThreadId (t: *mut $crate::abi::ThreadHandle, k: u64, n: u64, id: *mut std::ffi::c_void),
            ompd_rel_thread_handle = thread::rel_thread_handle: RelThreadHandle (t: *mut $crate::abi::ThreadHandle),
            ompd_thread_handle_compare = thread::thread_handle_compare: ThreadHandleCompare (a: *mut $crate::abi::ThreadHandle, b: *mut $crate::abi::ThreadHandle, c: *mut std::ffi::c_int),
            ompd_get_thread_in_parallel = thread::get_thread_in_parallel: GetThreadInParallel (p: *mut $crate::abi::ParallelHandle, i: std::ffi::c_int, t: *mut *mut $crate::abi::ThreadHandle),
            ompd_get_state = thread::get_state: GetState (t: *mut $crate::abi::ThreadHandle, s: *mut i64, w: *mut u64),
            ompd_get_curr_parallel_handle = parallel::get_curr_parallel_handle: GetCurrParallelHandle (t: *mut $crate::abi::ThreadHandle, p: *mut *mut $crate::abi::ParallelHandle),
            ompd_get_enclosing_parallel_handle = parallel::get_enclosing_parallel_handle: GetEnclosingParallelHandle (p: *mut $crate::abi::ParallelHandle, o: *mut *mut $crate::abi::ParallelHandle),
            ompd_get_task_parallel_handle = parallel::get_task_parallel_handle: GetTaskParallelHandle (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::ParallelHandle),
            ompd_rel_parallel_handle = parallel::rel_parallel_handle: RelParallelHandle (p: *mut $crate::abi::ParallelHandle),
            ompd_parallel_handle_compare = parallel::parallel_handle_compare: ParallelHandleCompare (a: *mut $crate::abi::ParallelHandle, b: *mut $crate::abi::ParallelHandle, c: *mut std::ffi::c_int),
            ompd_get_curr_task_handle = task::get_curr_task_handle: GetCurrTaskHandle (t: *mut $crate::abi::ThreadHandle, k: *mut *mut $crate::abi::TaskHandle),
            ompd_get_generating_task_handle = task::get_generating_task_handle: GetGeneratingTaskHandle (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::TaskHandle),
            ompd_get_scheduling_task_handle = task::get_scheduling_task_handle: GetSchedulingTaskHandle (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::TaskHandle),
            ompd_get_task_in_parallel = task::get_task_in_parallel: GetTaskInParallel (p: *mut $crate::abi::ParallelHandle, i: std::ffi::c_int, k: *mut *mut $crate::abi::TaskHandle),
            ompd_rel_task_handle = task::rel_task_handle: RelTaskHandle (k: *mut $crate::abi::TaskHandle),
            ompd_task_handle_compare = task::task_handle_compare: TaskHandleCompare (a: *mut $crate::abi::TaskHandle, b: *mut $crate::abi::TaskHandle, c: *mut std::ffi::c_int),
            ompd_get_task_function = task::get_task_function: GetTaskFunction (k: *mut $crate::abi::TaskHandle, a: *mut $crate::abi::Address),
            ompd_get_task_frame = task::get_task_frame: GetTaskFrame (k: *mut $crate::abi::TaskHandle, x: *mut $crate::abi::FrameInfo, e: *mut $crate::abi::FrameInfo),
            ompd_enumerate_states = states::enumerate_states: EnumerateStates (h: *mut $crate::abi::AddressSpaceHandle, c: i64, n: *mut i64, s: *mut *const std::ffi::c_char, m: *mut i64),
            ompd_get_display_control_vars = dcv::get_display_control_vars: GetDisplayControlVars (h: *mut $crate::abi::AddressSpaceHandle, v: *mut *const *const std::ffi::c_char),
            ompd_rel_display_control_vars = dcv::rel_display_control_vars: RelDisplayControlVars (v: *mut *const *const std::ffi::c_char),
            ompd_enumerate_icvs = icv::enumerate_icvs: EnumerateIcvs (h: *mut $crate::abi::AddressSpaceHandle, c: u64, n: *mut u64, s: *mut *const std::ffi::c_char, p: *mut $crate::abi::Scope, m: *mut std::ffi::c_int),
            ompd_get_icv_from_scope = icv::get_icv_from_scope: GetIcvFromScope (h: *mut std::ffi::c_void, p: $crate::abi::Scope, i: u64, v: *mut i64),
            ompd_get_icv_string_from_scope = icv::get_icv_string_from_scope: GetIcvStringFromScope (h: *mut std::ffi::c_void, p: $crate::abi::Scope, i: u64, s: *mut *const std::ffi::c_char),
            ompd_get_tool_data = tool_data::get_tool_data: GetToolData (h: *mut std::ffi::c_void, p: $crate::abi::Scope, v: *mut i64, a: *mut $crate::abi::Address),
        );
    };
}

/// One exported routine per row (see [`export!`]).
#[doc(hidden)]
#[macro_export]
macro_rules! export_routines {
    ($($sym:ident = $module:ident :: $f:ident : $ty:ident ($($a:ident : $t:ty),*),)*) => {$(
        #[doc = concat!("`", stringify!($sym), "`.")]
        #[no_mangle]
        pub extern "C" fn $sym($($a: $t),*) -> $crate::abi::Rc {
            $crate::api::$module::$f(BUILD, $($a),*)
        }
        const _: $crate::abi::entry::$ty = $sym;
    )*};
}
