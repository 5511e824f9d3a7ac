//! The mutation kit's forwarder for OpenMP 5.2: the 37 routines of the generation, each
//! forwarding to the inner library through the mutant's hooks (`ompd_mutants::forward!`).

use ompd_mutants::abi::{
    Address, AddressSpaceContext as Ctx, AddressSpaceHandle as Ah, Callbacks, FrameInfo,
    ParallelHandle as Ph, Scope, TaskHandle as Kh, ThreadHandle as Th,
};
use std::ffi::{c_char, c_int, c_void};

ompd_mutants::forward! {
    ompd_initialize = Initialize: entry::Initialize (v: i64, cb: *const Callbacks);
    ompd_get_api_version = GetApiVersion: entry::GetApiVersion (v: *mut i64);
    ompd_get_version_string = GetVersionString: entry::GetVersionString (s: *mut *const c_char);
    ompd_finalize = Finalize: entry::Finalize ();
    ompd_process_initialize = ProcessInitialize: entry::ProcessInitialize (c: *mut Ctx, h: *mut *mut Ah);
    ompd_device_initialize = DeviceInitialize: entry::DeviceInitialize (h: *mut Ah, c: *mut Ctx, k: u64, n: u64, id: *mut c_void, out: *mut *mut Ah);
    ompd_rel_address_space_handle = RelAddressSpaceHandle: entry::RelAddressSpaceHandle (h: *mut Ah);
    ompd_get_omp_version = GetOmpVersion: entry::GetOmpVersion (h: *mut Ah, v: *mut i64);
    ompd_get_omp_version_string = GetOmpVersionString: entry::GetOmpVersionString (h: *mut Ah, s: *mut *const c_char);
    ompd_get_device_thread_id_kinds = GetDeviceThreadIdKinds: entry::GetDeviceThreadIdKinds (h: *mut Ah, k: *mut *mut u64, s: *mut *mut u64, n: *mut c_int);
    ompd_get_device_from_thread = GetDeviceFromThread: entry::GetDeviceFromThread (t: *mut Th, h: *mut *mut Ah);
    ompd_get_thread_handle = GetThreadHandle: entry::GetThreadHandle (h: *mut Ah, k: u64, n: u64, id: *const c_void, t: *mut *mut Th);
    ompd_get_thread_id = GetThreadId: entry::GetThreadId (t: *mut Th, k: u64, n: u64, id: *mut c_void);
    ompd_rel_thread_handle = RelThreadHandle: entry::RelThreadHandle (t: *mut Th);
    ompd_thread_handle_compare = ThreadHandleCompare: entry::ThreadHandleCompare (a: *mut Th, b: *mut Th, c: *mut c_int);
    ompd_get_thread_in_parallel = GetThreadInParallel: entry::GetThreadInParallel (p: *mut Ph, i: c_int, t: *mut *mut Th);
    ompd_get_state = GetState: entry::GetState (t: *mut Th, s: *mut i64, w: *mut u64);
    ompd_get_curr_parallel_handle = GetCurrParallelHandle: entry::GetCurrParallelHandle (t: *mut Th, p: *mut *mut Ph);
    ompd_get_enclosing_parallel_handle = GetEnclosingParallelHandle: entry::GetEnclosingParallelHandle (p: *mut Ph, o: *mut *mut Ph);
    ompd_get_task_parallel_handle = GetTaskParallelHandle: entry::GetTaskParallelHandle (k: *mut Kh, o: *mut *mut Ph);
    ompd_rel_parallel_handle = RelParallelHandle: entry::RelParallelHandle (p: *mut Ph);
    ompd_parallel_handle_compare = ParallelHandleCompare: entry::ParallelHandleCompare (a: *mut Ph, b: *mut Ph, c: *mut c_int);
    ompd_get_curr_task_handle = GetCurrTaskHandle: entry::GetCurrTaskHandle (t: *mut Th, k: *mut *mut Kh);
    ompd_get_generating_task_handle = GetGeneratingTaskHandle: entry::GetGeneratingTaskHandle (k: *mut Kh, o: *mut *mut Kh);
    ompd_get_scheduling_task_handle = GetSchedulingTaskHandle: entry::GetSchedulingTaskHandle (k: *mut Kh, o: *mut *mut Kh);
    ompd_get_task_in_parallel = GetTaskInParallel: entry::GetTaskInParallel (p: *mut Ph, i: c_int, k: *mut *mut Kh);
    ompd_rel_task_handle = RelTaskHandle: entry::RelTaskHandle (k: *mut Kh);
    ompd_task_handle_compare = TaskHandleCompare: entry::TaskHandleCompare (a: *mut Kh, b: *mut Kh, c: *mut c_int);
    ompd_get_task_function = GetTaskFunction: entry::GetTaskFunction (k: *mut Kh, a: *mut Address);
    ompd_get_task_frame = GetTaskFrame: entry::GetTaskFrame (k: *mut Kh, x: *mut FrameInfo, e: *mut FrameInfo);
    ompd_enumerate_states = EnumerateStates: entry::EnumerateStates (h: *mut Ah, c: i64, n: *mut i64, s: *mut *const c_char, m: *mut i64);
    ompd_get_display_control_vars = GetDisplayControlVars: entry::GetDisplayControlVars (h: *mut Ah, v: *mut *const *const c_char);
    ompd_rel_display_control_vars = RelDisplayControlVars: entry::RelDisplayControlVars (v: *mut *const *const c_char);
    ompd_enumerate_icvs = EnumerateIcvs: entry::EnumerateIcvs (h: *mut Ah, c: u64, n: *mut u64, s: *mut *const c_char, p: *mut Scope, m: *mut c_int);
    ompd_get_icv_from_scope = GetIcvFromScope: entry::GetIcvFromScope (h: *mut c_void, p: Scope, i: u64, v: *mut i64);
    ompd_get_icv_string_from_scope = GetIcvStringFromScope: entry::GetIcvStringFromScope (h: *mut c_void, p: Scope, i: u64, s: *mut *const c_char);
    ompd_get_tool_data = GetToolData: entry::GetToolData (h: *mut c_void, p: Scope, v: *mut i64, a: *mut Address);
}
