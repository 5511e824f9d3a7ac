//! The OMPD Technical Report 2.001 (July 2016) interface, as far as the suite calls it: its
//! callback table and the signatures of the routines that differ from 5.0 or that 5.0 dropped.
//!
//! Facts from the TR text (seed `000_…`; the TR's section in each item). Where the extracted text
//! lost a declaration, the form its prose describes is used and marked *inferred*.
//! - The callback table has 11 slots like 5.0's, but slots 7–10 do other jobs (no `read_string`;
//!   `target_to_host`, `host_to_target`, a thread-context and an address-space-context lookup),
//!   `print_string` has no category, the symbol lookup no file name, the conversions take `int`
//!   sizes, and the type sizes are six `int`s (§15.10, §16).
//! - `ompd_initialize` takes only the table (§4.1); `ompd_get_version(int *)` reports the API
//!   version; the thread-id kind is a C enum (`ompd_osthread_kind_t`, an `int`).

use crate::{
    Address, AddressSpaceContext, OmpdSize, ParallelHandle, Rc, TaskHandle, ThreadContext,
};
use crate::{AddressSpaceHandle, ThreadHandle};
use std::ffi::{c_char, c_int, c_void};

/// `ompd_tword_t`: the TR's signed 64-bit word.
pub type TrWord = i64;

/// `ompd_target_type_sizes_t` (§15.8): six `int`s.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeSizes {
    /// `sizeof_char`.
    pub sizeof_char: c_int,
    /// `sizeof_short`.
    pub sizeof_short: c_int,
    /// `sizeof_int`.
    pub sizeof_int: c_int,
    /// `sizeof_long`.
    pub sizeof_long: c_int,
    /// `sizeof_long_long`.
    pub sizeof_long_long: c_int,
    /// `sizeof_pointer`.
    pub sizeof_pointer: c_int,
}

/// `ompd_dmemory_alloc_fn_t` (inferred: the declaration is lost; same as 5.0's).
pub type AllocFn = unsafe extern "C" fn(bytes: OmpdSize, ptr: *mut *mut c_void) -> Rc;
/// `ompd_dmemory_free_fn_t`.
pub type FreeFn = unsafe extern "C" fn(ptr: *mut c_void) -> Rc;
/// `ompd_print_string_fn_t`: no category.
pub type PrintFn = unsafe extern "C" fn(string: *const c_char) -> Rc;
/// `ompd_tsizeof_prim_fn_t` (inferred from the prose: the context and the sizes).
pub type SizeofFn =
    unsafe extern "C" fn(ctx: *mut AddressSpaceContext, sizes: *mut TypeSizes) -> Rc;
/// `ompd_tsymbol_addr_fn_t`: no file name.
pub type SymbolFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    name: *const c_char,
    addr: *mut Address,
) -> Rc;
/// `ompd_tmemory_read_fn_t`: a signed byte count.
pub type ReadFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const Address,
    nbytes: TrWord,
    buffer: *mut c_void,
) -> Rc;
/// `ompd_tmemory_write_fn_t`.
pub type WriteFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const Address,
    nbytes: TrWord,
    buffer: *const c_void,
) -> Rc;
/// `ompd_target_host_fn_t`: `int` unit size and count.
pub type TargetHostFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit_size: c_int,
    count: c_int,
    output: *mut c_void,
) -> Rc;
/// `ompd_get_thread_context_for_osthread_fn_t`: the kind is a C enum.
pub type ThreadContextFn = unsafe extern "C" fn(
    ctx: *mut AddressSpaceContext,
    kind: c_int,
    sizeof_osthread: OmpdSize,
    osthread: *const c_void,
    tctx: *mut *mut ThreadContext,
) -> Rc;
/// `ompd_get_address_space_context_for_thread_fn_t`.
pub type SpaceContextFn =
    unsafe extern "C" fn(tctx: *mut ThreadContext, ctx: *mut *mut AddressSpaceContext) -> Rc;

/// The TR's `ompd_callbacks_t` (§16), in slot order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Callbacks {
    /// `d_alloc_memory`.
    pub d_alloc_memory: Option<AllocFn>,
    /// `d_free_memory`.
    pub d_free_memory: Option<FreeFn>,
    /// `print_string`.
    pub print_string: Option<PrintFn>,
    /// `t_sizeof_prim_type`.
    pub t_sizeof_prim_type: Option<SizeofFn>,
    /// `t_symbol_addr_lookup`.
    pub t_symbol_addr_lookup: Option<SymbolFn>,
    /// `t_read_memory` (name inferred: the member line is lost).
    pub t_read_memory: Option<ReadFn>,
    /// `t_write_memory`.
    pub t_write_memory: Option<WriteFn>,
    /// `target_to_host`.
    pub target_to_host: Option<TargetHostFn>,
    /// `host_to_target`.
    pub host_to_target: Option<TargetHostFn>,
    /// `get_thread_context_for_osthread`.
    pub get_thread_context_for_osthread: Option<ThreadContextFn>,
    /// `get_address_space_context_for_thread`.
    pub get_address_space_context_for_thread: Option<SpaceContextFn>,
}

/// Signatures of the TR routines the suite calls whose 5.0 form differs or does not exist.
pub mod entry {
    use super::*;

    /// `ompd_initialize` (§4.1): the table only.
    pub type Initialize = unsafe extern "C" fn(callbacks: *const Callbacks) -> Rc;
    /// `ompd_get_version` (§4.1).
    pub type GetVersion = unsafe extern "C" fn(version: *mut c_int) -> Rc;
    /// `ompd_get_thread_handle` (§10.1): the kind is a C enum.
    pub type GetThreadHandle = unsafe extern "C" fn(
        ah: *mut AddressSpaceHandle,
        kind: c_int,
        sizeof_osthread: OmpdSize,
        osthread: *const c_void,
        th: *mut *mut ThreadHandle,
    ) -> Rc;
    /// `ompd_get_osthread` (§10.1).
    pub type GetOsthread = unsafe extern "C" fn(
        th: *mut ThreadHandle,
        kind: c_int,
        sizeof_osthread: OmpdSize,
        osthread: *mut c_void,
    ) -> Rc;
    /// `ompd_get_threads` (§7.2, inferred from the prose): a tool-owned vector of handles.
    pub type GetThreads = unsafe extern "C" fn(
        ah: *mut AddressSpaceHandle,
        vector: *mut *mut *mut ThreadHandle,
        count: *mut c_int,
    ) -> Rc;
    /// `ompd_get_thread_handle_string_id` (§7.2).
    pub type ThreadStringId =
        unsafe extern "C" fn(th: *mut ThreadHandle, string_id: *mut *mut c_char) -> Rc;
    /// `ompd_get_parallel_handle_string_id` (§7.3).
    pub type ParallelStringId =
        unsafe extern "C" fn(ph: *mut ParallelHandle, string_id: *mut *mut c_char) -> Rc;
    /// `ompd_get_task_handle_string_id` (§7.4, inferred from the prose).
    pub type TaskStringId =
        unsafe extern "C" fn(task: *mut TaskHandle, string_id: *mut *mut c_char) -> Rc;
    /// `ompd_get_top_parallel_region` (§7.3).
    pub type GetTopParallelRegion =
        unsafe extern "C" fn(th: *mut ThreadHandle, ph: *mut *mut ParallelHandle) -> Rc;
    /// `ompd_get_top_task_region` (§7.4).
    pub type GetTopTaskRegion =
        unsafe extern "C" fn(th: *mut ThreadHandle, task: *mut *mut TaskHandle) -> Rc;
    /// `ompd_release_address_space_handle` (§7.1).
    pub type ReleaseAddressSpaceHandle = unsafe extern "C" fn(ah: *mut AddressSpaceHandle) -> Rc;
    /// `ompd_release_thread_handle` (§7.2).
    pub type ReleaseThreadHandle = unsafe extern "C" fn(th: *mut ThreadHandle) -> Rc;
    /// `ompd_release_parallel_handle` (§7.3).
    pub type ReleaseParallelHandle = unsafe extern "C" fn(ph: *mut ParallelHandle) -> Rc;
    /// `ompd_release_task_handle` (§7.4).
    pub type ReleaseTaskHandle = unsafe extern "C" fn(task: *mut TaskHandle) -> Rc;
    /// The per-ICV getters of an address space (§8: `ompd_get_num_procs`, `ompd_get_thread_limit`).
    pub type SpaceWord = unsafe extern "C" fn(ah: *mut AddressSpaceHandle, val: *mut TrWord) -> Rc;
    /// The per-ICV getters of a region (§9.1: `ompd_get_num_threads`).
    pub type ParallelWord = unsafe extern "C" fn(ph: *mut ParallelHandle, val: *mut TrWord) -> Rc;
    /// The per-ICV getters of a thread (§11.2: `ompd_get_thread_num`,
    /// `ompd_get_max_active_levels`).
    pub type ThreadWord = unsafe extern "C" fn(th: *mut ThreadHandle, val: *mut TrWord) -> Rc;
    /// `ompd_get_thread_in_parallel` (§7.2): a tool-owned vector of the region's threads.
    pub type GetThreadInParallel = unsafe extern "C" fn(
        ph: *mut ParallelHandle,
        vector: *mut *mut *mut ThreadHandle,
        count: *mut c_int,
    ) -> Rc;
    /// `ompd_get_implicit_task_in_parallel` (§7.4): a tool-owned vector of its implicit tasks.
    pub type GetImplicitTaskInParallel = unsafe extern "C" fn(
        ph: *mut ParallelHandle,
        vector: *mut *mut *mut TaskHandle,
        count: *mut c_int,
    ) -> Rc;
    /// `ompd_get_master_thread_in_parallel` (§7.2).
    pub type GetMasterThreadInParallel =
        unsafe extern "C" fn(ph: *mut ParallelHandle, th: *mut *mut ThreadHandle) -> Rc;
    /// `ompd_get_generating_ancestor_task_region`, `ompd_get_scheduling_ancestor_task_region`
    /// (§7.4).
    pub type AncestorTask =
        unsafe extern "C" fn(task: *mut TaskHandle, parent: *mut *mut TaskHandle) -> Rc;
    /// `ompd_get_schedule` (§11.2): an `omp_sched_t` and its modifier (the chunk).
    pub type GetSchedule =
        unsafe extern "C" fn(task: *mut TaskHandle, kind: *mut c_int, modifier: *mut TrWord) -> Rc;
    /// `ompd_get_proc_bind` (§11.2): an `omp_proc_bind_t`.
    pub type GetProcBind = unsafe extern "C" fn(task: *mut TaskHandle, bind: *mut c_int) -> Rc;
    /// `ompd_get_parallel_function` (§9.2).
    pub type GetParallelFunction =
        unsafe extern "C" fn(ph: *mut ParallelHandle, entry_point: *mut Address) -> Rc;
    /// `ompd_get_task_frame` (§11.3): two addresses, no flags.
    pub type GetTaskFrame = unsafe extern "C" fn(
        task: *mut TaskHandle,
        exit_runtime_addr: *mut Address,
        reenter_runtime_addr: *mut Address,
    ) -> Rc;
    /// `ompd_release_display_control_vars` (§13): the vector itself.
    pub type ReleaseDisplayControlVars =
        unsafe extern "C" fn(control_var_values: *const *const c_char) -> Rc;
    /// The per-ICV getters of a task (§9.1 `ompd_get_active_level`; §11.2 `ompd_get_max_threads`,
    /// `ompd_in_parallel`, `ompd_in_final`, `ompd_get_dynamic`, `ompd_get_nested`,
    /// `ompd_is_implicit`).
    pub type TaskWord = unsafe extern "C" fn(task: *mut TaskHandle, val: *mut TrWord) -> Rc;
    /// `ompd_get_state` (§10.2, inferred: the declaration is lost; "a third-party version of
    /// `ompt_get_state`" with a thread handle): an `ompd_state_t` (a C enum, [`super::state`])
    /// and the optional wait id.
    pub type GetState =
        unsafe extern "C" fn(th: *mut ThreadHandle, state: *mut c_int, wait_id: *mut u64) -> Rc;
}

/// TR 2.001's `ompd_state_t` (§15.9): the OMPT states' names, with values of its own (§10.2:
/// "no guarantee that the numeric values ... are identical").
pub mod state {
    use std::ffi::c_int;

    /// `ompd_state_undefined`.
    pub const UNDEFINED: c_int = 0x70;

    /// Each TR state with the OMPT 5.x states (`ompt_state_t` values) it mirrors, the specific
    /// ones before the generic ones that cover them (the generic barrier and mutex waits).
    /// `ompd_state_first` (0x71) names the start of an enumeration, no thread's state.
    pub const MIRRORS: &[(c_int, &[u64])] = &[
        (0x00, &[0x000]),                                           // work_serial
        (0x01, &[0x001]),                                           // work_parallel
        (0x02, &[0x002]),                                           // work_reduction
        (0x10, &[0x100]),                                           // idle
        (0x20, &[0x101]),                                           // overhead
        (0x41, &[0x011, 0x012, 0x013]),                             // wait_barrier_implicit
        (0x42, &[0x014]),                                           // wait_barrier_explicit
        (0x40, &[0x010, 0x011, 0x012, 0x013, 0x014, 0x015, 0x016]), // wait_barrier
        (0x50, &[0x020]),                                           // wait_taskwait
        (0x51, &[0x021]),                                           // wait_taskgroup
        (0x61, &[0x041]),                                           // wait_lock
        (0x62, &[0x042]),                                           // wait_critical
        (0x63, &[0x043]),                                           // wait_atomic
        (0x64, &[0x044]),                                           // wait_ordered
        (0x60, &[0x040, 0x041, 0x042, 0x043, 0x044]),               // wait_mutex
        (UNDEFINED, &[0x102]),                                      // undefined
    ];

    /// The most specific TR state that mirrors the OMPT state `ompt`, or
    /// `ompd_state_undefined` for a state the TR has no name for (a target wait, a 6.0 state).
    pub fn for_ompt(ompt: u64) -> c_int {
        MIRRORS
            .iter()
            .find(|(_, o)| o.contains(&ompt))
            .map_or(UNDEFINED, |(t, _)| *t)
    }

    /// True when the TR state `tr` stands for the OMPT state `ompt`: it mirrors it, or it is
    /// `ompd_state_undefined` and no TR state mirrors `ompt`.
    pub fn stands_for(tr: c_int, ompt: u64) -> bool {
        let mirrors = |t: Option<c_int>| {
            MIRRORS
                .iter()
                .any(|(m, o)| t.is_none_or(|t| t == *m) && o.contains(&ompt))
        };
        if mirrors(None) {
            mirrors(Some(tr))
        } else {
            tr == UNDEFINED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tr_state_stands_for_the_ompt_states_it_mirrors() {
        use state::{for_ompt, stands_for, UNDEFINED};
        assert_eq!(for_ompt(0x013), 0x41);
        assert!(stands_for(0x41, 0x013) && stands_for(0x40, 0x013));
        assert!(!stands_for(0x42, 0x013) && !stands_for(UNDEFINED, 0x013));
        assert_eq!(for_ompt(0x015), 0x40);
        assert_eq!(for_ompt(0x041), 0x61);
        assert!(stands_for(0x60, 0x041));
        // A target wait has no TR name.
        assert_eq!(for_ompt(0x080), UNDEFINED);
        assert!(stands_for(UNDEFINED, 0x080) && !stands_for(0x00, 0x080));
        for (t, o) in state::MIRRORS {
            for ompt in *o {
                assert!(stands_for(*t, *ompt), "{t:#x} {ompt:#x}");
                assert!(stands_for(for_ompt(*ompt), *ompt), "{ompt:#x}");
            }
        }
    }

    #[test]
    fn the_tables_have_the_tr_sizes() {
        assert_eq!(std::mem::size_of::<TypeSizes>(), 24);
        assert_eq!(
            std::mem::size_of::<Callbacks>(),
            11 * std::mem::size_of::<usize>()
        );
    }
}
