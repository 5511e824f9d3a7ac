//! The entry points a library exports, resolved once at load ([`Api`]): each 5.x routine's
//! symbol under its 5.x name, or, for a TR-era library, under the TR name 5.0 renamed it from
//! when the form is the same ([`ompd_abi::TR_NAMES`]); and the TR-only routines it exports.

use super::tr;
use libloading::os::unix::Library as RawLibrary;
use ompd_abi::{entry, EntryPoint};

macro_rules! api {
    ($($field:ident: $ty:ident = $ep:ident,)*) => {
        /// Every entry point the library exports, resolved once at load.
        #[derive(Clone, Copy, Debug, Default)]
        pub struct Api {
            $(
                #[doc = concat!("[`EntryPoint::", stringify!($ep), "`].")]
                pub $field: Option<entry::$ty>,
            )*
            /// The TR-only routines (no 5.x signature) the library exports, one bit per
            /// [`EntryPoint`] (their calls are `tr.rs`'s).
            pub tr_only: u128,
            /// True for a TR-era library (it exports `ompd_get_version`, not
            /// `ompd_get_api_version`): a routine whose 5.x form is newer than the TR's is
            /// never called in that form.
            pub tr_era: bool,
            /// The 5.x routines a TR-era library serves under their TR name
            /// ([`EntryPoint::tr_name`], same form), one bit per [`EntryPoint`]: their slot
            /// holds the TR routine, and [`Api::has`] still answers for the 5.x name.
            pub renamed: u128,
        }

        impl Api {
            pub(super) fn resolve(lib: &RawLibrary) -> Api {
                Api {
                    $(
                        // SAFETY: the symbol is declared with this exact type in omp-tools.h;
                        // the copied function pointer stays valid because the library is never
                        // unloaded while the Api is in use (it lives inside `Library`).
                        $field: unsafe {
                            lib.get::<entry::$ty>(EntryPoint::$ep.name().as_bytes())
                        }
                        .ok()
                        .map(|s| *s),
                    )*
                    tr_only: tr::present(lib),
                    tr_era: false,
                    renamed: 0,
                }
                .with_era()
                .with_tr_names(lib)
            }

            /// Marks a TR-era library.
            fn with_era(mut self) -> Api {
                self.tr_era = self.has(EntryPoint::GetVersion) && !self.has(EntryPoint::GetApiVersion);
                self
            }

            /// Fills the empty slot of each 5.x routine a TR-era library exports under its TR
            /// name with the same form.
            fn with_tr_names(mut self, lib: &RawLibrary) -> Api {
                for (v5, tr, same) in ompd_abi::TR_NAMES {
                    if !self.tr_era || !same || self.has(*v5) || !self.has(*tr) {
                        continue;
                    }
                    let name = tr.name().as_bytes();
                    match v5 {
                        $(
                            EntryPoint::$ep => {
                                // SAFETY: the TR routine has the 5.x routine's form
                                // (`TR_NAMES`); the library stays loaded while the Api is in use.
                                let f = unsafe { lib.get::<entry::$ty>(name) };
                                self.$field = f.ok().map(|s| *s);
                            }
                        )*
                        _ => continue,
                    }
                    self.renamed |= 1u128 << *v5 as usize;
                }
                self
            }

            /// True when the library exports `e` under its own name.
            pub fn has(&self, e: EntryPoint) -> bool {
                self.renamed & (1u128 << e as usize) == 0 && self.callable(e)
            }

            /// True when a call of `e` reaches the library: it exports `e`, or a TR-era library
            /// exports the TR routine 5.0 renamed to `e`.
            pub fn callable(&self, e: EntryPoint) -> bool {
                match e {
                    $(EntryPoint::$ep => self.$field.is_some(),)*
                    _ => self.tr_only & (1u128 << e as usize) != 0,
                }
            }

            /// True when the harness can call `e` on the library: [`Api::callable`], or
            /// [`Api::adapted`].
            pub fn serves(&self, e: EntryPoint) -> bool {
                self.callable(e) || self.adapted(e)
            }

            /// True when a call of `e` goes to the TR routine of another form 5.0 renamed to
            /// `e`, which the 5.x wrapper adapts (the display-control release, the API version
            /// query, the implicit tasks of a region): a TR-era library exports it, not `e`.
            pub fn adapted(&self, e: EntryPoint) -> bool {
                let other_form = match e.tr_name() {
                    Some((tr, false)) => self.has(tr),
                    _ => false,
                };
                self.tr_era && other_form && !self.callable(e)
            }

            /// The resolved entry points, in the table's order.
            pub fn exported(&self) -> Vec<EntryPoint> {
                EntryPoint::ALL.iter().copied().filter(|e| self.has(*e)).collect()
            }
        }
    };
}

api! {
    initialize: Initialize = Initialize,
    get_api_version: GetApiVersion = GetApiVersion,
    get_version_string: GetVersionString = GetVersionString,
    finalize: Finalize = Finalize,
    process_initialize: ProcessInitialize = ProcessInitialize,
    device_initialize: DeviceInitialize = DeviceInitialize,
    rel_address_space_handle: RelAddressSpaceHandle = RelAddressSpaceHandle,
    get_omp_version: GetOmpVersion = GetOmpVersion,
    get_omp_version_string: GetOmpVersionString = GetOmpVersionString,
    get_thread_in_parallel: GetThreadInParallel = GetThreadInParallel,
    get_thread_handle: GetThreadHandle = GetThreadHandle,
    rel_thread_handle: RelThreadHandle = RelThreadHandle,
    thread_handle_compare: ThreadHandleCompare = ThreadHandleCompare,
    get_thread_id: GetThreadId = GetThreadId,
    get_curr_parallel_handle: GetCurrParallelHandle = GetCurrParallelHandle,
    get_enclosing_parallel_handle: GetEnclosingParallelHandle = GetEnclosingParallelHandle,
    get_task_parallel_handle: GetTaskParallelHandle = GetTaskParallelHandle,
    rel_parallel_handle: RelParallelHandle = RelParallelHandle,
    parallel_handle_compare: ParallelHandleCompare = ParallelHandleCompare,
    get_curr_task_handle: GetCurrTaskHandle = GetCurrTaskHandle,
    get_generating_task_handle: GetGeneratingTaskHandle = GetGeneratingTaskHandle,
    get_scheduling_task_handle: GetSchedulingTaskHandle = GetSchedulingTaskHandle,
    get_task_in_parallel: GetTaskInParallel = GetTaskInParallel,
    rel_task_handle: RelTaskHandle = RelTaskHandle,
    task_handle_compare: TaskHandleCompare = TaskHandleCompare,
    get_task_function: GetTaskFunction = GetTaskFunction,
    get_task_frame: GetTaskFrame = GetTaskFrame,
    enumerate_states: EnumerateStates = EnumerateStates,
    get_state: GetState = GetState,
    get_display_control_vars: GetDisplayControlVars = GetDisplayControlVars,
    rel_display_control_vars: RelDisplayControlVars = RelDisplayControlVars,
    enumerate_icvs: EnumerateIcvs = EnumerateIcvs,
    get_icv_from_scope: GetIcvFromScope = GetIcvFromScope,
    get_icv_string_from_scope: GetIcvStringFromScope = GetIcvStringFromScope,
    get_tool_data: GetToolData = GetToolData,
    get_device_thread_id_kinds: GetDeviceThreadIdKinds = GetDeviceThreadIdKinds,
    get_device_from_thread: GetDeviceFromThread = GetDeviceFromThread,
}
