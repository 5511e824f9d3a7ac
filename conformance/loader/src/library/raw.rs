//! One raw call per entry point: the only place each FFI call is written. A raw call resolves
//! the routine (a missing one is [`Fail::Missing`]), marks it as the entry point in flight for
//! the callback ledger (until the returned guard is dropped) and as the call in flight for the
//! watchdog and crash handler ([`super::watch`]; a quarantined routine is refused there, not
//! called), reads the heap watch around the call ([`super::heap`]), and passes the arguments
//! through unchanged. The typed wrappers and the NULL-argument matrix build on it.

use super::heap;
use super::watch::{self, AsWord};
use super::{Api, Fail};
use ompd_abi::{
    Address, AddressSpaceContext, AddressSpaceHandle, Callbacks, EntryPoint, FrameInfo, Generation,
    OmpdDevice, OmpdIcvId, OmpdSize, OmpdThreadIdKind, OmpdWord, ParallelHandle, Rc, Scope,
    TaskHandle, ThreadHandle,
};
use ompd_serve::callbacks::{self, SiteGuard};
use std::ffi::{c_char, c_int, c_void};

/// The raw calls of a library's resolved entry points.
#[derive(Clone, Copy)]
pub(super) struct Raw<'a>(pub(super) &'a Api);

/// What a raw call gives: the library's code and the guard that keeps the entry point marked.
pub(super) type Answer = Result<(Rc, SiteGuard), Fail>;

impl Raw<'_> {
    /// Refuses a 5.x-form call of `ep` on a TR-era library that declares it with the TR's
    /// form (`ompd_initialize` aside: the worker calls its TR form through `tr.rs`, and no
    /// check that calls the 5.x form runs on such a library).
    fn same_form(self, ep: EntryPoint) -> Result<(), Fail> {
        if self.0.tr_era && ep != EntryPoint::Initialize && ep.other_form_in(Generation::Tr2) {
            return Err(Fail::OtherForm(ep));
        }
        Ok(())
    }
}

/// Runs one call into the library. A C++ exception (or another runtime's panic) the library
/// lets escape from a C entry point cannot be caught in Rust: it ends the process here, at
/// once, with the call still marked in flight (the crash handler names it and sees the
/// exception, [`super::watch::uncaught_exceptions`]) and before any harness frame unwinds.
pub(super) fn contained(go: impl FnOnce() -> Rc) -> Rc {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(go)) {
        Ok(rc) => rc,
        // A panic of this process's own Rust runtime: the callbacks catch theirs, so none
        // reaches here; ending the process keeps the same rule.
        Err(_) => std::process::abort(),
    }
}

/// A C function pointer to a library routine, called as `C-unwind`: the same function, so that
/// a C++ exception it lets escape reaches [`contained`] rather than Rust's abort at a `C` call.
pub(super) trait Unwinding: Copy {
    /// The same signature with the `C-unwind` ABI.
    type Unwind: Copy;
    /// The same function pointer, typed for a `C-unwind` call.
    fn unwinding(self) -> Self::Unwind;
}

macro_rules! unwinding {
    ($($a:ident),*) => {
        impl<$($a),*> Unwinding for unsafe extern "C" fn($($a),*) -> Rc {
            type Unwind = unsafe extern "C-unwind" fn($($a),*) -> Rc;
            fn unwinding(self) -> Self::Unwind {
                // SAFETY: the same function pointer; only the unwind ABI of the call differs.
                unsafe { std::mem::transmute::<Self, Self::Unwind>(self) }
            }
        }
    };
}

unwinding!();
unwinding!(A);
unwinding!(A, B);
unwinding!(A, B, C);
unwinding!(A, B, C, D);
unwinding!(A, B, C, D, E);
unwinding!(A, B, C, D, E, F);

macro_rules! raw {
    ($($field:ident = $ep:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        impl Raw<'_> {$(
            #[doc = concat!("Raw call of [`EntryPoint::", stringify!($ep), "`].")]
            ///
            /// # Safety
            /// Every pointer argument is valid for the routine, or NULL where the caller tests
            /// that the library refuses it.
            pub(super) unsafe fn $field(self, $($arg: $ty),*) -> Answer {
                let f = self.0.$field.ok_or(Fail::Missing(EntryPoint::$ep))?;
                // The routine's C type, checked against the arguments listed here; called as
                // `C-unwind`, so that a C++ exception it lets escape reaches [`contained`].
                let f: unsafe extern "C" fn($($ty),*) -> Rc = f;
                let f = f.unwinding();
                self.same_form(EntryPoint::$ep)?;
                watch::gate(EntryPoint::$ep)?;
                let guard = callbacks::enter(EntryPoint::$ep.name());
                let mark = watch::begin(EntryPoint::$ep, &[$(AsWord::word(&$arg)),*]);
                let heap = heap::begin();
                // SAFETY: the caller guarantees the arguments; the library stays loaded while
                // its `Api` is in use.
                let rc = contained(|| unsafe { f($($arg),*) });
                heap::end(heap, EntryPoint::$ep.name());
                drop(mark);
                callbacks::ledger().returned(EntryPoint::$ep.name(), rc);
                Ok((rc, guard))
            }
        )*}
    };
}

raw! {
    initialize = Initialize(api_version: OmpdWord, cb: *const Callbacks);
    get_api_version = GetApiVersion(version: *mut OmpdWord);
    get_version_string = GetVersionString(string: *mut *const c_char);
    finalize = Finalize();
    process_initialize = ProcessInitialize(ctx: *mut AddressSpaceContext, handle: *mut *mut AddressSpaceHandle);
    device_initialize = DeviceInitialize(process_handle: *mut AddressSpaceHandle, device_context: *mut AddressSpaceContext, kind: OmpdDevice, sizeof_id: OmpdSize, id: *mut c_void, device_handle: *mut *mut AddressSpaceHandle);
    rel_address_space_handle = RelAddressSpaceHandle(handle: *mut AddressSpaceHandle);
    get_omp_version = GetOmpVersion(ah: *mut AddressSpaceHandle, omp_version: *mut OmpdWord);
    get_omp_version_string = GetOmpVersionString(ah: *mut AddressSpaceHandle, string: *mut *const c_char);
    get_thread_in_parallel = GetThreadInParallel(ph: *mut ParallelHandle, thread_num: c_int, th: *mut *mut ThreadHandle);
    get_thread_handle = GetThreadHandle(ah: *mut AddressSpaceHandle, kind: OmpdThreadIdKind, sizeof_thread_id: OmpdSize, thread_id: *const c_void, th: *mut *mut ThreadHandle);
    rel_thread_handle = RelThreadHandle(th: *mut ThreadHandle);
    thread_handle_compare = ThreadHandleCompare(a: *mut ThreadHandle, b: *mut ThreadHandle, cmp: *mut c_int);
    get_thread_id = GetThreadId(th: *mut ThreadHandle, kind: OmpdThreadIdKind, sizeof_thread_id: OmpdSize, thread_id: *mut c_void);
    get_curr_parallel_handle = GetCurrParallelHandle(th: *mut ThreadHandle, ph: *mut *mut ParallelHandle);
    get_enclosing_parallel_handle = GetEnclosingParallelHandle(ph: *mut ParallelHandle, out: *mut *mut ParallelHandle);
    get_task_parallel_handle = GetTaskParallelHandle(task: *mut TaskHandle, out: *mut *mut ParallelHandle);
    rel_parallel_handle = RelParallelHandle(ph: *mut ParallelHandle);
    parallel_handle_compare = ParallelHandleCompare(a: *mut ParallelHandle, b: *mut ParallelHandle, cmp: *mut c_int);
    get_curr_task_handle = GetCurrTaskHandle(th: *mut ThreadHandle, task: *mut *mut TaskHandle);
    get_generating_task_handle = GetGeneratingTaskHandle(task: *mut TaskHandle, out: *mut *mut TaskHandle);
    get_scheduling_task_handle = GetSchedulingTaskHandle(task: *mut TaskHandle, out: *mut *mut TaskHandle);
    get_task_in_parallel = GetTaskInParallel(ph: *mut ParallelHandle, thread_num: c_int, task: *mut *mut TaskHandle);
    rel_task_handle = RelTaskHandle(task: *mut TaskHandle);
    task_handle_compare = TaskHandleCompare(a: *mut TaskHandle, b: *mut TaskHandle, cmp: *mut c_int);
    get_task_function = GetTaskFunction(task: *mut TaskHandle, entry_point: *mut Address);
    get_task_frame = GetTaskFrame(task: *mut TaskHandle, exit_frame: *mut FrameInfo, enter_frame: *mut FrameInfo);
    enumerate_states = EnumerateStates(ah: *mut AddressSpaceHandle, current_state: OmpdWord, next_state: *mut OmpdWord, next_state_name: *mut *const c_char, more_enums: *mut OmpdWord);
    get_state = GetState(th: *mut ThreadHandle, state: *mut OmpdWord, wait_id: *mut u64);
    get_display_control_vars = GetDisplayControlVars(ah: *mut AddressSpaceHandle, control_vars: *mut *const *const c_char);
    rel_display_control_vars = RelDisplayControlVars(control_vars: *mut *const *const c_char);
    enumerate_icvs = EnumerateIcvs(ah: *mut AddressSpaceHandle, current: OmpdIcvId, next_id: *mut OmpdIcvId, next_icv_name: *mut *const c_char, next_scope: *mut Scope, more: *mut c_int);
    get_icv_from_scope = GetIcvFromScope(handle: *mut c_void, scope: Scope, icv_id: OmpdIcvId, icv_value: *mut OmpdWord);
    get_icv_string_from_scope = GetIcvStringFromScope(handle: *mut c_void, scope: Scope, icv_id: OmpdIcvId, icv_string: *mut *const c_char);
    get_tool_data = GetToolData(handle: *mut c_void, scope: Scope, value: *mut OmpdWord, ptr: *mut Address);
    get_device_thread_id_kinds = GetDeviceThreadIdKinds(device_handle: *mut AddressSpaceHandle, kinds: *mut *mut OmpdThreadIdKind, thread_id_sizes: *mut *mut OmpdSize, count: *mut c_int);
    get_device_from_thread = GetDeviceFromThread(th: *mut ThreadHandle, device: *mut *mut AddressSpaceHandle);
}
