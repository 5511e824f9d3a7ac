//! The TR 2.001 build: [`export_tr!`] exports the TR's 47 routines under the TR's names and
//! signatures. The TR-only forms are [`api`]; a TR routine whose meaning and form a 5.x routine
//! kept is that routine (`ompd_get_top_parallel_region` is `ompd_get_curr_parallel_handle`).
//! [`cb`] serves the library's work from the tool's TR callback table.

pub mod api;
mod cb;

/// Exports the TR 2.001 routines of a build (see [`crate::export!`]).
#[macro_export]
macro_rules! export_tr {
    ($build:expr) => {
        const BUILD: &$crate::Build = &$build;
        $crate::export_routines!(
            ompd_get_version = tr::api::get_version: tr::entry::GetVersion (v: *mut std::ffi::c_int),
            ompd_get_version_string = api::library::get_version_string: entry::GetVersionString (s: *mut *const std::ffi::c_char),
            ompd_initialize = tr::api::initialize: tr::entry::Initialize (cb: *const $crate::abi::tr::Callbacks),
            ompd_finalize = api::library::finalize: entry::Finalize (),
            ompd_process_initialize = api::aspace::process_initialize: entry::ProcessInitialize (c: *mut $crate::abi::AddressSpaceContext, h: *mut *mut $crate::abi::AddressSpaceHandle),
            ompd_release_address_space_handle = api::aspace::rel_address_space_handle: tr::entry::ReleaseAddressSpaceHandle (h: *mut $crate::abi::AddressSpaceHandle),
            ompd_get_threads = tr::api::get_threads: tr::entry::GetThreads (h: *mut $crate::abi::AddressSpaceHandle, v: *mut *mut *mut $crate::abi::ThreadHandle, n: *mut std::ffi::c_int),
            ompd_get_thread_in_parallel = tr::api::get_thread_in_parallel: tr::entry::GetThreadInParallel (p: *mut $crate::abi::ParallelHandle, v: *mut *mut *mut $crate::abi::ThreadHandle, n: *mut std::ffi::c_int),
            ompd_get_master_thread_in_parallel = tr::api::get_master_thread_in_parallel: tr::entry::GetMasterThreadInParallel (p: *mut $crate::abi::ParallelHandle, t: *mut *mut $crate::abi::ThreadHandle),
            ompd_release_thread_handle = api::thread::rel_thread_handle: tr::entry::ReleaseThreadHandle (t: *mut $crate::abi::ThreadHandle),
            ompd_thread_handle_compare = api::thread::thread_handle_compare: entry::ThreadHandleCompare (a: *mut $crate::abi::ThreadHandle, b: *mut $crate::abi::ThreadHandle, c: *mut std::ffi::c_int),
            ompd_get_thread_handle_string_id = tr::api::thread_string_id: tr::entry::ThreadStringId (t: *mut $crate::abi::ThreadHandle, s: *mut *mut std::ffi::c_char),
            ompd_get_top_parallel_region = api::parallel::get_curr_parallel_handle: tr::entry::GetTopParallelRegion (t: *mut $crate::abi::ThreadHandle, p: *mut *mut $crate::abi::ParallelHandle),
            ompd_get_enclosing_parallel_handle = api::parallel::get_enclosing_parallel_handle: entry::GetEnclosingParallelHandle (p: *mut $crate::abi::ParallelHandle, o: *mut *mut $crate::abi::ParallelHandle),
            ompd_get_task_parallel_handle = api::parallel::get_task_parallel_handle: entry::GetTaskParallelHandle (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::ParallelHandle),
            ompd_release_parallel_handle = api::parallel::rel_parallel_handle: tr::entry::ReleaseParallelHandle (p: *mut $crate::abi::ParallelHandle),
            ompd_parallel_handle_compare = api::parallel::parallel_handle_compare: entry::ParallelHandleCompare (a: *mut $crate::abi::ParallelHandle, b: *mut $crate::abi::ParallelHandle, c: *mut std::ffi::c_int),
            ompd_get_parallel_handle_string_id = tr::api::parallel_string_id: tr::entry::ParallelStringId (p: *mut $crate::abi::ParallelHandle, s: *mut *mut std::ffi::c_char),
            ompd_get_top_task_region = api::task::get_curr_task_handle: tr::entry::GetTopTaskRegion (t: *mut $crate::abi::ThreadHandle, k: *mut *mut $crate::abi::TaskHandle),
            ompd_get_generating_ancestor_task_region = api::task::get_generating_task_handle: tr::entry::AncestorTask (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::TaskHandle),
            ompd_get_scheduling_ancestor_task_region = api::task::get_scheduling_task_handle: tr::entry::AncestorTask (k: *mut $crate::abi::TaskHandle, o: *mut *mut $crate::abi::TaskHandle),
            ompd_get_implicit_task_in_parallel = tr::api::get_implicit_task_in_parallel: tr::entry::GetImplicitTaskInParallel (p: *mut $crate::abi::ParallelHandle, v: *mut *mut *mut $crate::abi::TaskHandle, n: *mut std::ffi::c_int),
            ompd_release_task_handle = api::task::rel_task_handle: tr::entry::ReleaseTaskHandle (k: *mut $crate::abi::TaskHandle),
            ompd_task_handle_compare = api::task::task_handle_compare: entry::TaskHandleCompare (a: *mut $crate::abi::TaskHandle, b: *mut $crate::abi::TaskHandle, c: *mut std::ffi::c_int),
            ompd_get_task_handle_string_id = tr::api::task_string_id: tr::entry::TaskStringId (k: *mut $crate::abi::TaskHandle, s: *mut *mut std::ffi::c_char),
            ompd_get_num_procs = tr::api::get_num_procs: tr::entry::SpaceWord (h: *mut $crate::abi::AddressSpaceHandle, v: *mut i64),
            ompd_get_thread_limit = tr::api::get_thread_limit: tr::entry::SpaceWord (h: *mut $crate::abi::AddressSpaceHandle, v: *mut i64),
            ompd_get_num_threads = tr::api::get_num_threads: tr::entry::ParallelWord (p: *mut $crate::abi::ParallelHandle, v: *mut i64),
            ompd_get_active_level = tr::api::get_active_level: tr::entry::TaskWord (k: *mut $crate::abi::TaskHandle, v: *mut i64),
            ompd_get_parallel_function = tr::api::get_parallel_function: tr::entry::GetParallelFunction (p: *mut $crate::abi::ParallelHandle, a: *mut $crate::abi::Address),
            ompd_get_thread_handle = tr::api::get_thread_handle: tr::entry::GetThreadHandle (h: *mut $crate::abi::AddressSpaceHandle, k: std::ffi::c_int, n: u64, id: *const std::ffi::c_void, t: *mut *mut $crate::abi::ThreadHandle),
            ompd_get_osthread = tr::api::get_osthread: tr::entry::GetOsthread (t: *mut $crate::abi::ThreadHandle, k: std::ffi::c_int, n: u64, id: *mut std::ffi::c_void),
            ompd_get_state = tr::api::get_state: tr::entry::GetState (t: *mut $crate::abi::ThreadHandle, s: *mut std::ffi::c_int, w: *mut u64),
            ompd_get_task_function = api::task::get_task_function: entry::GetTaskFunction (k: *mut $crate::abi::TaskHandle, a: *mut $crate::abi::Address),
            ompd_get_max_threads = tr::api::get_max_threads: tr::entry::TaskWord (k: *mut $crate::abi::TaskHandle, v: *mut i64),
            ompd_get_thread_num = tr::api::get_thread_num: tr::entry::ThreadWord (t: *mut $crate::abi::ThreadHandle, v: *mut i64),
            ompd_in_parallel = tr::api::in_parallel: tr::entry::TaskWord (k: *mut $crate::abi::TaskHandle, v: *mut i64),
            ompd_in_final = tr::api::in_final: tr::entry::TaskWord (k: *mut $crate::abi::TaskHandle, v: *mut i64),
            ompd_get_dynamic = tr::api::get_dynamic: tr::entry::TaskWord (k: *mut $crate::abi::TaskHandle, v: *mut i64),
            ompd_get_nested = tr::api::get_nested: tr::entry::TaskWord (k: *mut $crate::abi::TaskHandle, v: *mut i64),
            ompd_get_max_active_levels = tr::api::get_max_active_levels: tr::entry::ThreadWord (t: *mut $crate::abi::ThreadHandle, v: *mut i64),
            ompd_get_schedule = tr::api::get_schedule: tr::entry::GetSchedule (k: *mut $crate::abi::TaskHandle, s: *mut std::ffi::c_int, c: *mut i64),
            ompd_get_proc_bind = tr::api::get_proc_bind: tr::entry::GetProcBind (k: *mut $crate::abi::TaskHandle, p: *mut std::ffi::c_int),
            ompd_is_implicit = tr::api::is_implicit: tr::entry::TaskWord (k: *mut $crate::abi::TaskHandle, v: *mut i64),
            ompd_get_task_frame = tr::api::get_task_frame: tr::entry::GetTaskFrame (k: *mut $crate::abi::TaskHandle, x: *mut $crate::abi::Address, r: *mut $crate::abi::Address),
            ompd_get_display_control_vars = api::dcv::get_display_control_vars: entry::GetDisplayControlVars (h: *mut $crate::abi::AddressSpaceHandle, v: *mut *const *const std::ffi::c_char),
            ompd_release_display_control_vars = tr::api::release_display_control_vars: tr::entry::ReleaseDisplayControlVars (v: *const *const std::ffi::c_char),
        );
    };
}
