//! The 37 exported routines of OpenMP 5.2. Each hands its arguments, as words, to the mutant's
//! hook first (which may answer in its place or change them), calls the inner library's routine
//! of the same name, and lets the hook change what came back.

use crate::hooks;
use crate::word::Word;
use ompd_abi::{
    entry, Address, AddressSpaceContext as Ctx, AddressSpaceHandle as Ah, Callbacks, EntryPoint,
    FrameInfo, ParallelHandle as Ph, Rc, Scope, TaskHandle as Kh, ThreadHandle as Th,
};
use std::ffi::{c_char, c_int, c_void};

macro_rules! forward {
    ($($sym:ident = $ep:ident ($($a:ident : $t:ty),*);)*) => {$(
        #[doc = concat!("`", stringify!($sym), "`, forwarded.")]
        #[no_mangle]
        pub extern "C" fn $sym($($a: $t),*) -> Rc {
            let ep = EntryPoint::$ep;
            let mut w: Vec<u64> = vec![$(Word::word($a)),*];
            if let Some(rc) = hooks::before(ep, &mut w) {
                return rc;
            }
            let Some(f) = crate::inner::routine::<entry::$ep>(ep) else {
                return Rc::UNSUPPORTED;
            };
            #[allow(unused_mut, unused_variables)] // `ompd_finalize` has no argument.
            let mut it = w.iter().copied();
            $(let $a: $t = Word::from_word(it.next().unwrap_or(0));)*
            // SAFETY: the inner routine has this type (`entry::$ep`); the arguments are the
            // tool's, as the hook left them (a hook only substitutes values of the same type).
            let rc = unsafe { f($($a),*) };
            hooks::after(ep, &w, rc)
        }
        const _: entry::$ep = $sym;
    )*};
}

forward! {
    ompd_initialize = Initialize (v: i64, cb: *const Callbacks);
    ompd_get_api_version = GetApiVersion (v: *mut i64);
    ompd_get_version_string = GetVersionString (s: *mut *const c_char);
    ompd_finalize = Finalize ();
    ompd_process_initialize = ProcessInitialize (c: *mut Ctx, h: *mut *mut Ah);
    ompd_device_initialize = DeviceInitialize (h: *mut Ah, c: *mut Ctx, k: u64, n: u64, id: *mut c_void, out: *mut *mut Ah);
    ompd_rel_address_space_handle = RelAddressSpaceHandle (h: *mut Ah);
    ompd_get_omp_version = GetOmpVersion (h: *mut Ah, v: *mut i64);
    ompd_get_omp_version_string = GetOmpVersionString (h: *mut Ah, s: *mut *const c_char);
    ompd_get_device_thread_id_kinds = GetDeviceThreadIdKinds (h: *mut Ah, k: *mut *mut u64, s: *mut *mut u64, n: *mut c_int);
    ompd_get_device_from_thread = GetDeviceFromThread (t: *mut Th, h: *mut *mut Ah);
    ompd_get_thread_handle = GetThreadHandle (h: *mut Ah, k: u64, n: u64, id: *const c_void, t: *mut *mut Th);
    ompd_get_thread_id = GetThreadId (t: *mut Th, k: u64, n: u64, id: *mut c_void);
    ompd_rel_thread_handle = RelThreadHandle (t: *mut Th);
    ompd_thread_handle_compare = ThreadHandleCompare (a: *mut Th, b: *mut Th, c: *mut c_int);
    ompd_get_thread_in_parallel = GetThreadInParallel (p: *mut Ph, i: c_int, t: *mut *mut Th);
    ompd_get_state = GetState (t: *mut Th, s: *mut i64, w: *mut u64);
    ompd_get_curr_parallel_handle = GetCurrParallelHandle (t: *mut Th, p: *mut *mut Ph);
    ompd_get_enclosing_parallel_handle = GetEnclosingParallelHandle (p: *mut Ph, o: *mut *mut Ph);
    ompd_get_task_parallel_handle = GetTaskParallelHandle (k: *mut Kh, o: *mut *mut Ph);
    ompd_rel_parallel_handle = RelParallelHandle (p: *mut Ph);
    ompd_parallel_handle_compare = ParallelHandleCompare (a: *mut Ph, b: *mut Ph, c: *mut c_int);
    ompd_get_curr_task_handle = GetCurrTaskHandle (t: *mut Th, k: *mut *mut Kh);
    ompd_get_generating_task_handle = GetGeneratingTaskHandle (k: *mut Kh, o: *mut *mut Kh);
    ompd_get_scheduling_task_handle = GetSchedulingTaskHandle (k: *mut Kh, o: *mut *mut Kh);
    ompd_get_task_in_parallel = GetTaskInParallel (p: *mut Ph, i: c_int, k: *mut *mut Kh);
    ompd_rel_task_handle = RelTaskHandle (k: *mut Kh);
    ompd_task_handle_compare = TaskHandleCompare (a: *mut Kh, b: *mut Kh, c: *mut c_int);
    ompd_get_task_function = GetTaskFunction (k: *mut Kh, a: *mut Address);
    ompd_get_task_frame = GetTaskFrame (k: *mut Kh, x: *mut FrameInfo, e: *mut FrameInfo);
    ompd_enumerate_states = EnumerateStates (h: *mut Ah, c: i64, n: *mut i64, s: *mut *const c_char, m: *mut i64);
    ompd_get_display_control_vars = GetDisplayControlVars (h: *mut Ah, v: *mut *const *const c_char);
    ompd_rel_display_control_vars = RelDisplayControlVars (v: *mut *const *const c_char);
    ompd_enumerate_icvs = EnumerateIcvs (h: *mut Ah, c: u64, n: *mut u64, s: *mut *const c_char, p: *mut Scope, m: *mut c_int);
    ompd_get_icv_from_scope = GetIcvFromScope (h: *mut c_void, p: Scope, i: u64, v: *mut i64);
    ompd_get_icv_string_from_scope = GetIcvStringFromScope (h: *mut c_void, p: Scope, i: u64, s: *mut *const c_char);
    ompd_get_tool_data = GetToolData (h: *mut c_void, p: Scope, v: *mut i64, a: *mut Address);
}
