//! The mutation kit's forwarder for TR 2.001: the TR's 47 routines under their TR forms, each
//! forwarding to the inner (TR) library through the mutant's hooks (`ompd_mutants::forward!`).

use ompd_mutants::abi::{
    tr, Address, AddressSpaceContext, AddressSpaceHandle, ParallelHandle, TaskHandle, ThreadHandle,
};
use std::ffi::{c_char, c_int, c_void};

ompd_mutants::forward! {
    ompd_get_version = GetVersion: tr::entry::GetVersion (v: *mut c_int);
    ompd_get_version_string = GetVersionString: entry::GetVersionString (s: *mut *const c_char);
    ompd_initialize = Initialize: tr::entry::Initialize (cb: *const tr::Callbacks);
    ompd_finalize = Finalize: entry::Finalize ();
    ompd_process_initialize = ProcessInitialize: entry::ProcessInitialize (c: *mut AddressSpaceContext, h: *mut *mut AddressSpaceHandle);
    ompd_release_address_space_handle = ReleaseAddressSpaceHandle: tr::entry::ReleaseAddressSpaceHandle (h: *mut AddressSpaceHandle);
    ompd_get_threads = GetThreads: tr::entry::GetThreads (h: *mut AddressSpaceHandle, v: *mut *mut *mut ThreadHandle, n: *mut c_int);
    ompd_get_thread_in_parallel = GetThreadInParallel: tr::entry::GetThreadInParallel (p: *mut ParallelHandle, v: *mut *mut *mut ThreadHandle, n: *mut c_int);
    ompd_get_master_thread_in_parallel = GetMasterThreadInParallel: tr::entry::GetMasterThreadInParallel (p: *mut ParallelHandle, t: *mut *mut ThreadHandle);
    ompd_release_thread_handle = ReleaseThreadHandle: tr::entry::ReleaseThreadHandle (t: *mut ThreadHandle);
    ompd_thread_handle_compare = ThreadHandleCompare: entry::ThreadHandleCompare (a: *mut ThreadHandle, b: *mut ThreadHandle, c: *mut c_int);
    ompd_get_thread_handle_string_id = GetThreadHandleStringId: tr::entry::ThreadStringId (t: *mut ThreadHandle, s: *mut *mut c_char);
    ompd_get_top_parallel_region = GetTopParallelRegion: tr::entry::GetTopParallelRegion (t: *mut ThreadHandle, p: *mut *mut ParallelHandle);
    ompd_get_enclosing_parallel_handle = GetEnclosingParallelHandle: entry::GetEnclosingParallelHandle (p: *mut ParallelHandle, o: *mut *mut ParallelHandle);
    ompd_get_task_parallel_handle = GetTaskParallelHandle: entry::GetTaskParallelHandle (k: *mut TaskHandle, o: *mut *mut ParallelHandle);
    ompd_release_parallel_handle = ReleaseParallelHandle: tr::entry::ReleaseParallelHandle (p: *mut ParallelHandle);
    ompd_parallel_handle_compare = ParallelHandleCompare: entry::ParallelHandleCompare (a: *mut ParallelHandle, b: *mut ParallelHandle, c: *mut c_int);
    ompd_get_parallel_handle_string_id = GetParallelHandleStringId: tr::entry::ParallelStringId (p: *mut ParallelHandle, s: *mut *mut c_char);
    ompd_get_top_task_region = GetTopTaskRegion: tr::entry::GetTopTaskRegion (t: *mut ThreadHandle, k: *mut *mut TaskHandle);
    ompd_get_generating_ancestor_task_region = GetGeneratingAncestorTaskRegion: tr::entry::AncestorTask (k: *mut TaskHandle, o: *mut *mut TaskHandle);
    ompd_get_scheduling_ancestor_task_region = GetSchedulingAncestorTaskRegion: tr::entry::AncestorTask (k: *mut TaskHandle, o: *mut *mut TaskHandle);
    ompd_get_implicit_task_in_parallel = GetImplicitTaskInParallel: tr::entry::GetImplicitTaskInParallel (p: *mut ParallelHandle, v: *mut *mut *mut TaskHandle, n: *mut c_int);
    ompd_release_task_handle = ReleaseTaskHandle: tr::entry::ReleaseTaskHandle (k: *mut TaskHandle);
    ompd_task_handle_compare = TaskHandleCompare: entry::TaskHandleCompare (a: *mut TaskHandle, b: *mut TaskHandle, c: *mut c_int);
    ompd_get_task_handle_string_id = GetTaskHandleStringId: tr::entry::TaskStringId (k: *mut TaskHandle, s: *mut *mut c_char);
    ompd_get_num_procs = GetNumProcs: tr::entry::SpaceWord (h: *mut AddressSpaceHandle, v: *mut i64);
    ompd_get_thread_limit = GetThreadLimit: tr::entry::SpaceWord (h: *mut AddressSpaceHandle, v: *mut i64);
    ompd_get_num_threads = GetNumThreads: tr::entry::ParallelWord (p: *mut ParallelHandle, v: *mut i64);
    ompd_get_active_level = GetActiveLevel: tr::entry::TaskWord (k: *mut TaskHandle, v: *mut i64);
    ompd_get_parallel_function = GetParallelFunction: tr::entry::GetParallelFunction (p: *mut ParallelHandle, a: *mut Address);
    ompd_get_thread_handle = GetThreadHandle: tr::entry::GetThreadHandle (h: *mut AddressSpaceHandle, k: c_int, n: u64, id: *const c_void, t: *mut *mut ThreadHandle);
    ompd_get_osthread = GetOsthread: tr::entry::GetOsthread (t: *mut ThreadHandle, k: c_int, n: u64, id: *mut c_void);
    ompd_get_state = GetState: tr::entry::GetState (t: *mut ThreadHandle, s: *mut c_int, w: *mut u64);
    ompd_get_task_function = GetTaskFunction: entry::GetTaskFunction (k: *mut TaskHandle, a: *mut Address);
    ompd_get_max_threads = GetMaxThreads: tr::entry::TaskWord (k: *mut TaskHandle, v: *mut i64);
    ompd_get_thread_num = GetThreadNum: tr::entry::ThreadWord (t: *mut ThreadHandle, v: *mut i64);
    ompd_in_parallel = InParallel: tr::entry::TaskWord (k: *mut TaskHandle, v: *mut i64);
    ompd_in_final = InFinal: tr::entry::TaskWord (k: *mut TaskHandle, v: *mut i64);
    ompd_get_dynamic = GetDynamic: tr::entry::TaskWord (k: *mut TaskHandle, v: *mut i64);
    ompd_get_nested = GetNested: tr::entry::TaskWord (k: *mut TaskHandle, v: *mut i64);
    ompd_get_max_active_levels = GetMaxActiveLevels: tr::entry::ThreadWord (t: *mut ThreadHandle, v: *mut i64);
    ompd_get_schedule = GetSchedule: tr::entry::GetSchedule (k: *mut TaskHandle, s: *mut c_int, c: *mut i64);
    ompd_get_proc_bind = GetProcBind: tr::entry::GetProcBind (k: *mut TaskHandle, p: *mut c_int);
    ompd_is_implicit = IsImplicit: tr::entry::TaskWord (k: *mut TaskHandle, v: *mut i64);
    ompd_get_task_frame = GetTaskFrame: tr::entry::GetTaskFrame (k: *mut TaskHandle, x: *mut Address, r: *mut Address);
    ompd_get_display_control_vars = GetDisplayControlVars: entry::GetDisplayControlVars (h: *mut AddressSpaceHandle, v: *mut *const *const c_char);
    ompd_release_display_control_vars = ReleaseDisplayControlVars: tr::entry::ReleaseDisplayControlVars (v: *const *const c_char);
}
