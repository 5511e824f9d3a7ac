//! The NULL-argument matrix: one call of a 5.0 entry point with one pointer argument passed as
//! NULL (which arguments exist is read from `ompd_abi`'s table) and valid values for the rest.

use super::{
    kept_string, rc_of, AnyHandle, AspaceH, Call, Kind, Library, ParallelH, TaskH, ThreadH,
    POISON_PTR, POISON_WORD,
};
use ompd_abi::{
    Address, AddressSpaceHandle, EntryPoint, FrameInfo, Generation, ParallelHandle, Rc, Scope,
    TaskHandle, ThreadHandle,
};
use ompd_serve::callbacks;
use std::ffi::{c_char, c_int, c_void};

/// Valid arguments for [`Library::call_with_null`]: every argument the call does not pass as
/// NULL comes from here. An entry point that needs an absent one is not called.
#[derive(Clone, Copy, Default)]
pub struct NullArgs<'a, 'l> {
    /// The simulated target (its context for process and device initialization).
    pub target: Option<&'static callbacks::Target>,
    /// A live address-space handle.
    pub aspace: Option<&'a AspaceH<'l>>,
    /// A live thread handle.
    pub thread: Option<&'a ThreadH<'l>>,
    /// The pthread id (target byte order) of the thread of `thread`.
    pub thread_id: &'a [u8],
    /// A live parallel handle.
    pub parallel: Option<&'a ParallelH<'l>>,
    /// A live task handle.
    pub task: Option<&'a TaskH<'l>>,
    /// For the ICV getters: a handle, the scope it stands for, and an ICV id of that scope.
    pub icv: Option<(AnyHandle<'a, 'l>, Scope, u64)>,
    /// For `ompd_get_tool_data`: a handle and the scope it stands for.
    pub tool_data: Option<(AnyHandle<'a, 'l>, Scope)>,
}

/// `p`, or NULL when `name` is the argument to pass as NULL.
fn null_or<T>(null: Option<&str>, name: &str, p: *mut T) -> *mut T {
    if null == Some(name) {
        std::ptr::null_mut()
    } else {
        p
    }
}

/// A valid argument of `args`, or why the call cannot be made.
fn valid<T>(v: Option<T>, what: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("no valid {what} to pass"))
}

/// One family's NULL-argument calls: the library's code, the missing entry point as the call's
/// result, or why no call was made.
type Group = fn(&Library, EntryPoint, Option<&str>, &NullArgs) -> Result<Call<Rc>, String>;

/// A raw call's code and guard, or the missing entry point as the call's result.
macro_rules! answer {
    ($answer:expr) => {
        match $answer {
            Ok(a) => a,
            Err(e) => return Ok(Err(e)),
        }
    };
}

/// A family's function of NULL-argument calls: a match of its entry points (each arm a raw
/// call's code; `answer!` turns a missing entry point into the call's result), any other entry
/// point being misrouted.
macro_rules! family {
    ($(#[$doc:meta])* $name:ident($this:ident, $entry:ident, $null:ident, $args:ident) { $($arms:tt)* }) => {
        $(#[$doc])*
        fn $name(
            &$this,
            $entry: EntryPoint,
            $null: Option<&str>,
            $args: &NullArgs,
        ) -> Result<Call<Rc>, String> {
            let rc = match $entry {
                $($arms)*
                _ => return Err(misrouted($entry)),
            };
            Ok(Ok(rc))
        }
    };
}

/// Whether `name` is the argument passed as NULL.
fn is(null: Option<&str>, name: &str) -> bool {
    null == Some(name)
}

/// A release routine is only ever called with NULL here, never with a handle a caller holds.
fn release_only(null: Option<&str>, what: &str) -> Result<(), String> {
    if null.is_none() {
        Err(format!("{what} is only called with NULL here"))
    } else {
        Ok(())
    }
}

/// An entry point handed to a family that does not call it (a bug of the dispatch table).
fn misrouted(entry: EntryPoint) -> String {
    format!("{entry} reached the wrong family of NULL-argument calls")
}

impl Library {
    /// Releases a handle the library returned with an (unexpected) `ok`, if it is one.
    fn adopt<K: Kind>(&self, p: *mut K) {
        drop(self.handle(p, K::NAME));
    }

    /// Calls `entry` with the pointer argument named `null` passed as NULL and every other
    /// argument valid (from `args`; out-parameters are poisoned buffers). `null == None` makes
    /// the all-valid call, for comparison. Whatever the library hands back on `ok` (handles,
    /// tool-owned strings, the display-control vector) is released or freed here.
    ///
    /// `Err` says why no call was made: an unknown entry point or argument, a needed valid
    /// argument missing from `args`, or a call the harness never makes (`ompd_initialize`,
    /// `ompd_get_api_version` and `ompd_finalize` have their own wrappers, and a release routine
    /// is only ever called with NULL here, never with a handle the caller still holds).
    pub fn call_with_null(
        &self,
        entry: EntryPoint,
        null: Option<&str>,
        args: &NullArgs,
    ) -> Result<Call<()>, String> {
        if !entry.declared_in(Generation::V5_0) {
            return Err(format!("{entry} is not an OMPD 5.0 entry point"));
        }
        if let Some(n) = null {
            if entry.pointer_arg(n).is_none() {
                return Err(format!("{entry} has no pointer argument {n}"));
            }
        }
        use EntryPoint as E;
        let group: Group = match entry {
            E::GetVersionString | E::ProcessInitialize | E::DeviceInitialize => {
                Self::nulls_initialize
            }
            E::RelAddressSpaceHandle
            | E::RelThreadHandle
            | E::RelParallelHandle
            | E::RelTaskHandle
            | E::RelDisplayControlVars => Self::nulls_release,
            E::GetOmpVersion | E::GetOmpVersionString | E::GetThreadHandle => {
                Self::nulls_address_space
            }
            E::EnumerateStates | E::EnumerateIcvs | E::GetDisplayControlVars => {
                Self::nulls_enumerations
            }
            E::ThreadHandleCompare | E::GetThreadId | E::GetState | E::GetCurrParallelHandle => {
                Self::nulls_thread
            }
            E::GetThreadInParallel
            | E::GetTaskInParallel
            | E::GetEnclosingParallelHandle
            | E::ParallelHandleCompare => Self::nulls_parallel,
            E::GetCurrTaskHandle
            | E::GetGeneratingTaskHandle
            | E::GetSchedulingTaskHandle
            | E::TaskHandleCompare => Self::nulls_task,
            E::GetTaskParallelHandle | E::GetTaskFunction | E::GetTaskFrame => {
                Self::nulls_task_details
            }
            E::GetIcvFromScope | E::GetIcvStringFromScope | E::GetToolData => Self::nulls_scoped,
            _ => {
                return Err(format!(
                    "{entry} is called through its own wrapper, not with NULL arguments here"
                ))
            }
        };
        Ok(group(self, entry, null, args)?.and_then(|rc| rc_of(rc, || Ok(()))))
    }

    family! {
        /// NULL-argument calls of the initialization routines (version string, process and device).
        nulls_initialize(self, entry, null, args) {
            EntryPoint::GetVersionString => {
                let mut s = POISON_PTR as *const c_char;
                // SAFETY: the out-parameter is ours or NULL (a NULL the library must refuse); a
                // static string needs no release.
                let (rc, _g) = answer!(unsafe {
                    self.raw()
                        .get_version_string(null_or(null, "string", &mut s))
                });
                rc
            }
            EntryPoint::ProcessInitialize => {
                let target = valid(args.target, "target")?;
                let mut h = POISON_PTR as *mut AddressSpaceHandle;
                let ctx = null_or(null, "context", target.context());
                // SAFETY: the context is a leaked, registered Target (or NULL); the out-parameter
                // is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw()
                        .process_initialize(ctx, null_or(null, "handle", &mut h))
                });
                if rc.is_ok() && !is(null, "handle") {
                    self.adopt(h);
                }
                rc
            }
            EntryPoint::DeviceInitialize => {
                let target = valid(args.target, "target")?;
                let ah = valid(args.aspace, "address space handle")?;
                let mut h = POISON_PTR as *mut AddressSpaceHandle;
                let mut id = 0u64;
                let size = std::mem::size_of::<u64>() as u64;
                let id_ptr = null_or(null, "id", &mut id as *mut u64).cast::<c_void>();
                // SAFETY: live handle (or NULL); the context is a leaked, registered Target (or
                // NULL); `id` holds `size` bytes (or is NULL); the out-parameter is ours (or
                // NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().device_initialize(
                        null_or(null, "process_handle", ah.ptr),
                        null_or(null, "device_context", target.context()),
                        ompd_abi::device_kind::CUDA,
                        size,
                        id_ptr,
                        null_or(null, "device_handle", &mut h),
                    )
                });
                if rc.is_ok() && !is(null, "device_handle") {
                    self.adopt(h);
                }
                rc
            }
        }
    }

    family! {
        /// NULL-argument calls of the release routines (only ever with NULL).
        nulls_release(self, entry, null, _args) {
            EntryPoint::RelAddressSpaceHandle => {
                release_only(null, entry.name())?;
                // SAFETY: NULL is the only handle passed here.
                let (rc, _g) =
                    answer!(unsafe { self.raw().rel_address_space_handle(std::ptr::null_mut()) });
                rc
            }
            EntryPoint::RelThreadHandle => {
                release_only(null, entry.name())?;
                // SAFETY: NULL is the only handle passed here.
                let (rc, _g) =
                    answer!(unsafe { self.raw().rel_thread_handle(std::ptr::null_mut()) });
                rc
            }
            EntryPoint::RelParallelHandle => {
                release_only(null, entry.name())?;
                // SAFETY: NULL is the only handle passed here.
                let (rc, _g) =
                    answer!(unsafe { self.raw().rel_parallel_handle(std::ptr::null_mut()) });
                rc
            }
            EntryPoint::RelTaskHandle => {
                release_only(null, entry.name())?;
                // SAFETY: NULL is the only handle passed here.
                let (rc, _g) = answer!(unsafe { self.raw().rel_task_handle(std::ptr::null_mut()) });
                rc
            }
            EntryPoint::RelDisplayControlVars => {
                release_only(null, entry.name())?;
                // SAFETY: NULL is the only vector passed here.
                let (rc, _g) =
                    answer!(unsafe { self.raw().rel_display_control_vars(std::ptr::null_mut()) });
                rc
            }
        }
    }

    family! {
        /// NULL-argument calls of the address-space queries.
        nulls_address_space(self, entry, null, args) {
            EntryPoint::GetOmpVersion => {
                let ah = valid(args.aspace, "address space handle")?;
                let mut v = POISON_WORD;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_omp_version(
                        null_or(null, "address_space", ah.ptr),
                        null_or(null, "omp_version", &mut v),
                    )
                });
                rc
            }
            EntryPoint::GetOmpVersionString => {
                let ah = valid(args.aspace, "address space handle")?;
                let mut s = POISON_PTR as *const c_char;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_omp_version_string(
                        null_or(null, "address_space", ah.ptr),
                        null_or(null, "string", &mut s),
                    )
                });
                if rc.is_ok() && !is(null, "string") {
                    drop(kept_string(s, "string"));
                }
                rc
            }
            EntryPoint::GetThreadHandle => {
                let ah = valid(args.aspace, "address space handle")?;
                if args.thread_id.is_empty() {
                    return Err("no valid thread id to pass".into());
                }
                let mut h = POISON_PTR as *mut ThreadHandle;
                let mut buf = args.thread_id.to_vec();
                let id = null_or(null, "thread_id", buf.as_mut_ptr()).cast::<c_void>();
                // SAFETY: live handle (or NULL); `buf` holds `buf.len()` bytes (or the id is
                // NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_thread_handle(
                        null_or(null, "handle", ah.ptr),
                        ompd_abi::thread_id_kind::PTHREAD,
                        buf.len() as u64,
                        id,
                        null_or(null, "thread_handle", &mut h),
                    )
                });
                if rc.is_ok() && !is(null, "thread_handle") {
                    self.adopt(h);
                }
                rc
            }
        }
    }

    family! {
        /// NULL-argument calls of the enumerations and the display-control vector.
        nulls_enumerations(self, entry, null, args) {
            EntryPoint::EnumerateStates => {
                let ah = valid(args.aspace, "address space handle")?;
                let (mut next, mut more) = (POISON_WORD, POISON_WORD);
                let mut name = POISON_PTR as *const c_char;
                // SAFETY: live handle (or NULL); the out-parameters are ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().enumerate_states(
                        null_or(null, "address_space_handle", ah.ptr),
                        ompd_abi::state::UNDEFINED,
                        null_or(null, "next_state", &mut next),
                        null_or(null, "next_state_name", &mut name),
                        null_or(null, "more_enums", &mut more),
                    )
                });
                if rc.is_ok() && !is(null, "next_state_name") {
                    drop(kept_string(name, "next_state_name"));
                }
                rc
            }
            EntryPoint::EnumerateIcvs => {
                let ah = valid(args.aspace, "address space handle")?;
                let mut next = POISON_WORD as u64;
                let mut name = POISON_PTR as *const c_char;
                let mut scope = Scope(0x5A5A_5A5A);
                let mut more: c_int = 0x5A5A_5A5A;
                // SAFETY: live handle (or NULL); the out-parameters are ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().enumerate_icvs(
                        null_or(null, "handle", ah.ptr),
                        ompd_abi::ICV_UNDEFINED,
                        null_or(null, "next_id", &mut next),
                        null_or(null, "next_icv_name", &mut name),
                        null_or(null, "next_scope", &mut scope),
                        null_or(null, "more", &mut more),
                    )
                });
                if rc.is_ok() && !is(null, "next_icv_name") {
                    drop(kept_string(name, "next_icv_name"));
                }
                rc
            }
            EntryPoint::GetDisplayControlVars => {
                let ah = valid(args.aspace, "address space handle")?;
                let mut v = POISON_PTR as *const *const c_char;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_display_control_vars(
                        null_or(null, "address_space_handle", ah.ptr),
                        null_or(null, "control_vars", &mut v),
                    )
                });
                let written = v as usize != POISON_PTR && !v.is_null();
                if rc.is_ok() && !is(null, "control_vars") && written {
                    // SAFETY: `v` is the vector the library just returned, released once.
                    let _ = unsafe { self.raw().rel_display_control_vars(&mut v) };
                }
                rc
            }
        }
    }

    family! {
        /// NULL-argument calls of the thread routines.
        nulls_thread(self, entry, null, args) {
            EntryPoint::ThreadHandleCompare => {
                let th = valid(args.thread, "thread handle")?;
                let mut v: c_int = 0x5A5A_5A5A;
                // SAFETY: live handles (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().thread_handle_compare(
                        null_or(null, "thread_handle_1", th.ptr),
                        null_or(null, "thread_handle_2", th.ptr),
                        null_or(null, "cmp_value", &mut v),
                    )
                });
                rc
            }
            EntryPoint::GetThreadId => {
                let th = valid(args.thread, "thread handle")?;
                if args.thread_id.is_empty() {
                    return Err("no valid thread id size to pass".into());
                }
                let mut buf = vec![0xEEu8; args.thread_id.len()];
                let out = null_or(null, "thread_id", buf.as_mut_ptr()).cast::<c_void>();
                // SAFETY: live handle (or NULL); `buf` has room for `buf.len()` bytes (or the
                // buffer is NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_thread_id(
                        null_or(null, "thread_handle", th.ptr),
                        ompd_abi::thread_id_kind::PTHREAD,
                        buf.len() as u64,
                        out,
                    )
                });
                rc
            }
            EntryPoint::GetState => {
                let th = valid(args.thread, "thread handle")?;
                let mut s = POISON_WORD;
                let mut w = POISON_WORD as u64;
                // SAFETY: live handle (or NULL); the out-parameters are ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_state(
                        null_or(null, "thread_handle", th.ptr),
                        null_or(null, "state", &mut s),
                        null_or(null, "wait_id", &mut w),
                    )
                });
                rc
            }
            EntryPoint::GetCurrParallelHandle => {
                let th = valid(args.thread, "thread handle")?;
                let mut h = POISON_PTR as *mut ParallelHandle;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_curr_parallel_handle(
                        null_or(null, "thread_handle", th.ptr),
                        null_or(null, "parallel_handle", &mut h),
                    )
                });
                if rc.is_ok() && !is(null, "parallel_handle") {
                    self.adopt(h);
                }
                rc
            }
        }
    }

    family! {
        /// NULL-argument calls of the parallel-region routines.
        nulls_parallel(self, entry, null, args) {
            EntryPoint::GetThreadInParallel => {
                let ph = valid(args.parallel, "parallel handle")?;
                let mut h = POISON_PTR as *mut ThreadHandle;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_thread_in_parallel(
                        null_or(null, "parallel_handle", ph.ptr),
                        0,
                        null_or(null, "thread_handle", &mut h),
                    )
                });
                if rc.is_ok() && !is(null, "thread_handle") {
                    self.adopt(h);
                }
                rc
            }
            EntryPoint::GetTaskInParallel => {
                let ph = valid(args.parallel, "parallel handle")?;
                let mut h = POISON_PTR as *mut TaskHandle;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_task_in_parallel(
                        null_or(null, "parallel_handle", ph.ptr),
                        0,
                        null_or(null, "task_handle", &mut h),
                    )
                });
                if rc.is_ok() && !is(null, "task_handle") {
                    self.adopt(h);
                }
                rc
            }
            EntryPoint::GetEnclosingParallelHandle => {
                let ph = valid(args.parallel, "parallel handle")?;
                let mut h = POISON_PTR as *mut ParallelHandle;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_enclosing_parallel_handle(
                        null_or(null, "parallel_handle", ph.ptr),
                        null_or(null, "enclosing_parallel_handle", &mut h),
                    )
                });
                if rc.is_ok() && !is(null, "enclosing_parallel_handle") {
                    self.adopt(h);
                }
                rc
            }
            EntryPoint::ParallelHandleCompare => {
                let ph = valid(args.parallel, "parallel handle")?;
                let mut v: c_int = 0x5A5A_5A5A;
                // SAFETY: live handles (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().parallel_handle_compare(
                        null_or(null, "parallel_handle_1", ph.ptr),
                        null_or(null, "parallel_handle_2", ph.ptr),
                        null_or(null, "cmp_value", &mut v),
                    )
                });
                rc
            }
        }
    }

    family! {
        /// NULL-argument calls of the task navigation routines.
        nulls_task(self, entry, null, args) {
            EntryPoint::GetCurrTaskHandle => {
                let th = valid(args.thread, "thread handle")?;
                let mut h = POISON_PTR as *mut TaskHandle;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_curr_task_handle(
                        null_or(null, "thread_handle", th.ptr),
                        null_or(null, "task_handle", &mut h),
                    )
                });
                if rc.is_ok() && !is(null, "task_handle") {
                    self.adopt(h);
                }
                rc
            }
            EntryPoint::GetGeneratingTaskHandle | EntryPoint::GetSchedulingTaskHandle => {
                let task = valid(args.task, "task handle")?;
                let generating = entry == EntryPoint::GetGeneratingTaskHandle;
                let out_name = if generating {
                    "generating_task_handle"
                } else {
                    "scheduling_task_handle"
                };
                let mut h = POISON_PTR as *mut TaskHandle;
                let th = null_or(null, "task_handle", task.ptr);
                let out = null_or(null, out_name, &mut h);
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    if generating {
                        self.raw().get_generating_task_handle(th, out)
                    } else {
                        self.raw().get_scheduling_task_handle(th, out)
                    }
                });
                if rc.is_ok() && !is(null, out_name) {
                    self.adopt(h);
                }
                rc
            }
            EntryPoint::TaskHandleCompare => {
                let task = valid(args.task, "task handle")?;
                let mut v: c_int = 0x5A5A_5A5A;
                // SAFETY: live handles (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().task_handle_compare(
                        null_or(null, "task_handle_1", task.ptr),
                        null_or(null, "task_handle_2", task.ptr),
                        null_or(null, "cmp_value", &mut v),
                    )
                });
                rc
            }
        }
    }

    family! {
        /// NULL-argument calls of the task detail routines.
        nulls_task_details(self, entry, null, args) {
            EntryPoint::GetTaskParallelHandle => {
                let task = valid(args.task, "task handle")?;
                let mut h = POISON_PTR as *mut ParallelHandle;
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_task_parallel_handle(
                        null_or(null, "task_handle", task.ptr),
                        null_or(null, "task_parallel_handle", &mut h),
                    )
                });
                if rc.is_ok() && !is(null, "task_parallel_handle") {
                    self.adopt(h);
                }
                rc
            }
            EntryPoint::GetTaskFunction => {
                let task = valid(args.task, "task handle")?;
                let mut a = Address {
                    segment: POISON_WORD as u64,
                    address: POISON_WORD as u64,
                };
                // SAFETY: live handle (or NULL); the out-parameter is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_task_function(
                        null_or(null, "task_handle", task.ptr),
                        null_or(null, "entry_point", &mut a),
                    )
                });
                rc
            }
            EntryPoint::GetTaskFrame => {
                let task = valid(args.task, "task handle")?;
                let poison = FrameInfo {
                    frame_address: Address {
                        segment: POISON_WORD as u64,
                        address: POISON_WORD as u64,
                    },
                    frame_flag: POISON_WORD,
                };
                let (mut exit, mut enter) = (poison, poison);
                // SAFETY: live handle (or NULL); the out-parameters are ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_task_frame(
                        null_or(null, "task_handle", task.ptr),
                        null_or(null, "exit_frame", &mut exit),
                        null_or(null, "enter_frame", &mut enter),
                    )
                });
                rc
            }
        }
    }

    family! {
        /// NULL-argument calls of the routines of any handle with a scope (ICVs, tool data).
        nulls_scoped(self, entry, null, args) {
            EntryPoint::GetIcvFromScope => {
                let (h, scope, id) = valid(args.icv, "ICV handle, scope and id")?;
                let mut v = POISON_WORD;
                // SAFETY: a live handle of the kind `scope` names (or NULL); the out-parameter
                // is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_icv_from_scope(
                        null_or(null, "handle", h.raw()),
                        scope,
                        id,
                        null_or(null, "icv_value", &mut v),
                    )
                });
                rc
            }
            EntryPoint::GetIcvStringFromScope => {
                let (h, scope, id) = valid(args.icv, "ICV handle, scope and id")?;
                let mut s = POISON_PTR as *const c_char;
                // SAFETY: a live handle of the kind `scope` names (or NULL); the out-parameter
                // is ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_icv_string_from_scope(
                        null_or(null, "handle", h.raw()),
                        scope,
                        id,
                        null_or(null, "icv_string", &mut s),
                    )
                });
                if rc.is_ok() && !is(null, "icv_string") {
                    drop(kept_string(s, "icv_string"));
                }
                rc
            }
            EntryPoint::GetToolData => {
                let (h, scope) = valid(args.tool_data, "tool-data handle and scope")?;
                let mut v = POISON_WORD;
                let mut a = Address {
                    segment: POISON_WORD as u64,
                    address: POISON_WORD as u64,
                };
                // SAFETY: a live handle of the kind `scope` names (or NULL); the out-parameters
                // are ours (or NULL).
                let (rc, _g) = answer!(unsafe {
                    self.raw().get_tool_data(
                        null_or(null, "handle", h.raw()),
                        scope,
                        null_or(null, "value", &mut v),
                        null_or(null, "ptr", &mut a),
                    )
                });
                rc
            }
        }
    }
}
