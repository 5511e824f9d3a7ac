//! The mutants: one row per deliberately broken build, naming the deviation it injects, the
//! entry point that carries it and the checks that must catch it. The forwarder reads its row
//! by name; the kit stages one copy of the forwarder per row and judges the kill.

use ompd_abi::EntryPoint as E;

/// One deviation from the specification, injected around a correct inner library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deviation {
    /// `ompd_get_api_version` reports 201800, no OpenMP API version.
    ApiVersionUnknown,
    /// `ompd_get_api_version` reports 202011 (OpenMP 5.1): a known version, not its runtime's.
    ApiVersionOlder,
    /// `ompd_get_api_version` alternates between two values.
    ApiVersionFlips,
    /// `ompd_get_version_string` returns a string in the C heap, not in static memory.
    VersionStringHeap,
    /// `ompd_initialize` accepts any API version (it passes the inner library its own).
    InitializeAcceptsAny,
    /// `ompd_initialize` answers ok to a NULL callback table.
    InitializeNullOk,
    /// `ompd_initialize` refuses (unsupported) the API version `ompd_get_api_version` reports,
    /// as a library that serves only an older one than it names.
    InitializeRefusesOwnVersion,
    /// `ompd_finalize` answers ok before any `ompd_initialize`.
    FinalizeBeforeInitializeOk,
    /// `ompd_get_omp_version` answers one more than the runtime's version.
    OmpVersionOff,
    /// `ompd_get_omp_version` prints a line on stdout.
    OmpVersionPrints,
    /// `ompd_get_omp_version_string` returns a static string, not an `alloc_memory` block.
    OmpVersionStringStatic,
    /// `ompd_get_omp_version_string` returns the same block on every call.
    OmpVersionStringShared,
    /// `ompd_process_initialize` declines every target.
    ProcessInitializeDeclines,
    /// `ompd_rel_address_space_handle` answers an error code.
    RelAddressSpaceNotOk,
    /// `ompd_get_thread_handle` answers unavailable for every thread.
    ThreadHandleUnavailable,
    /// `ompd_get_thread_handle` ignores the id size it is given.
    ThreadHandleIgnoresSize,
    /// `ompd_get_thread_handle` takes an unknown id kind for a pthread id.
    ThreadHandleIgnoresKind,
    /// `ompd_get_thread_handle` allocates a block it never frees.
    ThreadHandleLeaks,
    /// `ompd_get_thread_handle` answers depending on the contents of fresh `alloc_memory`.
    ThreadHandleReadsFreshMemory,
    /// `ompd_get_thread_id` writes an id one off.
    ThreadIdOff,
    /// `ompd_get_thread_id` answers the pthread id whatever kind is asked for.
    ThreadIdIgnoresKind,
    /// `ompd_get_thread_id` answers ok into a buffer too small for the id, with its first bytes.
    ThreadIdIgnoresSize,
    /// `ompd_get_thread_id` takes a thread id for pointer-sized: any other size is bad_input.
    ThreadIdPointerSized,
    /// `ompd_thread_handle_compare` answers 0 for every pair.
    ThreadCompareZero,
    /// `ompd_thread_handle_compare` answers 1 for every pair of distinct handles, both ways.
    ThreadCompareAsymmetric,
    /// `ompd_thread_handle_compare` answers the difference of the two threads' addresses
    /// truncated to an `int`: right while structures lie close together, wrong for addresses
    /// 2^31 or 2^32 apart (the far placement).
    ThreadCompareTruncated,
    /// `ompd_rel_thread_handle` answers an error code (after releasing).
    RelThreadNotOk,
    /// `ompd_get_thread_in_parallel` ignores `thread_num` (takes 0).
    ThreadInParallelIgnoresIndex,
    /// `ompd_get_thread_in_parallel` takes an out-of-range index for 0.
    ThreadInParallelNoRangeCheck,
    /// `ompd_get_state` answers the next state.
    StateOff,
    /// `ompd_get_state` refuses a NULL `wait_id`.
    StateRefusesNullWaitId,
    /// `ompd_get_state` crashes (SIGSEGV).
    StateCrashes,
    /// `ompd_get_curr_parallel_handle` answers unavailable.
    CurrParallelUnavailable,
    /// `ompd_get_enclosing_parallel_handle` answers unavailable.
    EnclosingParallelUnavailable,
    /// `ompd_get_task_parallel_handle` answers unavailable.
    TaskParallelUnavailable,
    /// `ompd_parallel_handle_compare` answers 0 for every pair.
    ParallelCompareZero,
    /// `ompd_parallel_handle_compare` answers 1 for every pair of distinct handles.
    ParallelCompareAsymmetric,
    /// `ompd_parallel_handle_compare` answers the truncated difference of the teams' addresses
    /// (then of their lwt words).
    ParallelCompareTruncated,
    /// `ompd_rel_parallel_handle` frees a block the tool never allocated.
    RelParallelFreesForeign,
    /// `ompd_get_curr_task_handle` answers unavailable.
    CurrTaskUnavailable,
    /// `ompd_get_generating_task_handle` answers unavailable.
    GeneratingTaskUnavailable,
    /// `ompd_get_scheduling_task_handle` answers unavailable.
    SchedulingTaskUnavailable,
    /// `ompd_get_task_in_parallel` ignores `thread_num` (takes 0).
    TaskInParallelIgnoresIndex,
    /// `ompd_get_task_in_parallel` takes an out-of-range index for 0.
    TaskInParallelNoRangeCheck,
    /// `ompd_task_handle_compare` answers 0 for every pair.
    TaskCompareZero,
    /// `ompd_task_handle_compare` answers 1 for every pair of distinct handles.
    TaskCompareAsymmetric,
    /// `ompd_task_handle_compare` answers the truncated difference of the tasks' addresses (then
    /// of their lwt words).
    TaskCompareTruncated,
    /// `ompd_rel_task_handle` answers ok without releasing.
    RelTaskLeaks,
    /// `ompd_get_task_function` answers an address one off.
    TaskFunctionOff,
    /// `ompd_get_task_function` leaks a block when it fails.
    TaskFunctionLeaksOnFailure,
    /// `ompd_get_task_frame` swaps the exit and enter frames.
    TaskFrameSwapped,
    /// `ompd_get_task_frame` clears the frame flags.
    TaskFrameFlagsCleared,
    /// `ompd_get_task_frame` leaves both frames' flags as the caller's buffers held them.
    TaskFrameFlagsKept,
    /// `ompd_get_task_frame` never returns.
    TaskFrameHangs,
    /// `ompd_enumerate_states` skips a state.
    StatesSkipOne,
    /// `ompd_enumerate_states` answers ok for an unknown current state.
    StatesAcceptUnknown,
    /// `ompd_enumerate_states` from the last state starts over: the first state, more_enums 1.
    StatesRestartAfterLast,
    /// `ompd_get_display_control_vars` answers unavailable.
    DcvUnavailable,
    /// `ompd_rel_display_control_vars` answers ok without releasing.
    DcvRelLeaks,
    /// `ompd_enumerate_icvs` reports the next scope for every ICV.
    IcvScopeOff,
    /// `ompd_enumerate_icvs` answers ok for an unknown current ICV.
    IcvsAcceptUnknown,
    /// `ompd_enumerate_icvs` from the last ICV starts over: the first ICV, more 1.
    IcvsRestartAfterLast,
    /// `ompd_get_icv_from_scope` answers one more than the value.
    IcvValueOff,
    /// `ompd_get_icv_string_from_scope` returns a static string.
    IcvStringStatic,
    /// `ompd_get_icv_string_from_scope` answers ok with the first 511 bytes of a longer string
    /// (a fixed 512-byte buffer).
    IcvStringCapped,
    /// `ompd_get_display_control_vars` drops the last variable when the runtime's block does
    /// not end in a newline.
    DcvDropsUnterminatedLast,
    /// `ompd_rel_display_control_vars` of an empty vector frees the vector but not the copy of
    /// the runtime's (empty) block.
    DcvEmptyLeaks,
    /// `ompd_get_tool_data` answers a value one off.
    ToolDataValueOff,
    /// `ompd_get_tool_data` answers a pointer 8 bytes off.
    ToolDataPtrOff,
    /// `ompd_get_device_thread_id_kinds` answers an empty list.
    DeviceKindsEmpty,
    /// `ompd_get_device_from_thread` answers unavailable.
    DeviceFromThreadUnavailable,
    /// Every routine answers ok, writing nothing, when an out-parameter is NULL.
    NullOutputOk,
    /// Every routine dereferences a NULL handle argument.
    NullHandleCrashes,
    /// A failed `read_memory`/`read_string` is taken for a zero-filled success.
    ReadFaultIgnored,
    /// A failed `read_memory`/`read_string` is taken for a zero-filled success while
    /// `ompd_get_icv_from_scope` answers an address-space ICV (the runtime's globals), not
    /// the task's ICVs enumerated first.
    AspaceIcvReadFaultIgnored,
    /// A failed `symbol_addr_lookup` is taken for address 0.
    SymbolFaultIgnored,
    /// A failed `device_to_host` is taken for a plain copy.
    ConversionFaultIgnored,
    /// A failed `alloc_memory` is replaced by the C heap.
    AllocFaultIgnored,
    /// Every inquiry first looks up a symbol and answers bad_input when that fails.
    SymbolFailureMiscoded,
    /// Every inquiry first reads the target and answers bad_input when that fails.
    ReadFailureMiscoded,
    /// Every inquiry first converts a word and answers bad_input when that fails.
    ConversionFailureMiscoded,
    /// Every inquiry first allocates a block and answers bad_input when that fails.
    AllocFailureMiscoded,
    /// Every inquiry first looks up a thread context and answers bad_input when that fails.
    ThreadContextFailureMiscoded,
    /// Every inquiry first looks up a symbol and, when that fails, answers ok writing nothing.
    SymbolFailureForgotten,
    /// Every inquiry first reads the target and, when that fails, answers ok writing nothing.
    ReadFailureForgotten,
    /// Every inquiry first converts a word and, when that fails, answers ok writing nothing.
    ConversionFailureForgotten,
    /// Every inquiry first allocates a block and, when that fails, answers ok writing nothing.
    AllocFailureForgotten,
    /// Every inquiry first looks up a thread context and, when that fails, answers ok writing
    /// nothing.
    ThreadContextFailureForgotten,
    /// Every routine answers ok, doing nothing, when an input pointer is NULL.
    NullInputOk,
    /// `ompd_device_initialize` answers an error code for a device the target lacks.
    DeviceInitializeMiscoded,
    /// `ompd_process_initialize` looks up a symbol the runtime lacks and declines with error.
    ProcessInitializeDeclinesMiscoded,
    /// `ompd_process_initialize` serves one address space per instance (error for any other
    /// context), and answers ok without initializing when a read before it fails: the fault
    /// family must judge it on fresh copies of the library.
    OneAddressSpaceReadForgotten,
    /// `ompd_get_display_control_vars` changes a value.
    DcvValueChanged,
    /// `ompd_get_display_control_vars` changes a name.
    DcvNameChanged,
    /// `ompd_get_display_control_vars` puts a static string in the vector.
    DcvStaticEntry,
    /// `ompd_enumerate_icvs` misspells an ICV name.
    IcvNameChanged,
    /// `ompd_enumerate_states` misspells a state name.
    StateNameChanged,
    /// `ompd_get_icv_from_scope` answers 0 for a string ICV.
    IcvStringAsInteger,
    /// `ompd_enumerate_icvs` breaks off after four ICVs (`bad_input`, as Intel's libraries up to
    /// 2023.2 do), and `ompd_get_icv_from_scope` answers one more for `dyn-var`, the first: the
    /// ICV checks must judge the ICVs enumerated before the break.
    IcvsBreakDynVarOff,
    /// `ompd_get_icv_from_scope` answers one more for `team-size-var` at the parallel scope.
    ParallelTeamSizeOff,
    /// `ompd_get_curr_parallel_handle` answers the league for a thread of an initial team in a
    /// teams region (`hooks::teams`), so the teams' regions compare equal.
    TeamsInitialRegionIsLeague,
    /// levels-var of an initial team's region in a teams region is 1: the league counted as a
    /// nesting level.
    TeamsLevelCountsLeague,
    /// levels-var of a teams construct's league is 1, above the initial teams' 0.
    TeamsLeagueLevelRises,
    /// team-num-var (6.0) answers one more than the team's number.
    TeamsTeamNumOff,
    /// `ompd_get_task_parallel_handle` of a task handle from `ompd_get_curr_task_handle` answers
    /// the region enclosing the task's (where there is one); other routes answer right.
    CurrentTaskRegionEncloses,
    /// `ompd_get_task_parallel_handle` of a task handle from `ompd_get_task_in_parallel` answers
    /// the region enclosing the task's (where there is one); other routes answer right.
    ImplicitTaskRegionEncloses,
    /// `ompd_get_icv_from_scope` answers one more for `team-size-var` of a parallel handle from
    /// `ompd_get_enclosing_parallel_handle`; other routes answer right.
    TeamSizeByEnclosingRoute,
    /// `ompd_rel_task_handle` frees the last ICV string handed out.
    RelTaskFreesIcvString,
    /// `ompd_get_tool_data` answers ok for the address-space and global scopes.
    ToolDataAddressSpaceOk,
    /// `ompd_get_api_version` calls a callback once a table exists.
    VersionQueryCallsBack,
    /// The staged copy does not export `ompd_get_task_function` (its name is patched).
    MissingExport,
    /// The staged copy lists an OpenMP runtime in DT_NEEDED (a name is patched).
    NeedsOpenmpRuntime,
    /// TR: `ompd_get_thread_handle_string_id` gives one thread two ids on alternate calls.
    TrThreadStringIdUnstable,
    /// TR: `ompd_get_parallel_handle_string_id` gives every region the same id.
    TrParallelStringIdShared,
    /// TR: `ompd_get_task_handle_string_id` gives every task the same id.
    TrTaskStringIdShared,
    /// TR: `ompd_get_thread_handle_string_id` puts a '-' in the id.
    TrStringIdCharset,
    /// `ompd_get_omp_version` blocks SIGUSR2 in the calling thread's mask.
    BlocksASignal,
    /// `ompd_initialize` sets SIGUSR2 to be ignored.
    IgnoresASignal,
    /// `ompd_get_omp_version` installs a SIGSEGV handler of its own over the tool's (which
    /// chains to the default action): the set of caught signals stays the same.
    ReplacesASignalHandler,
    /// `ompd_get_omp_version` sets SIGUSR2 to be ignored through the `rt_sigaction` system call
    /// itself, which no function of the C library sees.
    IgnoresASignalBySystemCall,
    /// 6.0: `ompd_get_omp_version` closes the lowest descriptor from 3 up, once per process, as
    /// a library that closes a number it once owned does (in a worker, the tool's event stream).
    ClosesADescriptor,
    /// 6.0: as [`Deviation::ClosesADescriptor`], through the `close` system call itself, which
    /// no function of the C library sees.
    ClosesADescriptorBySystemCall,
    /// `ompd_get_omp_version` starts a thread.
    StartsAThread,
    /// `ompd_process_initialize` serves every address space from the first process's context,
    /// as a library that keeps the first target's type sizes or context process-wide does.
    ProcessInitializeFirstContext,
    /// `ompd_process_initialize` answers error once any address space was released.
    NoReinitializeAfterRelease,
    /// `ompd_process_initialize` allocates a block it never frees.
    ProcessInitializeLeaks,
    /// `ompd_get_task_function` answers one off for task handles from
    /// `ompd_get_task_in_parallel` (the same tasks reached as a thread's current task answer
    /// right).
    TaskFunctionByImplicitRoute,
    /// `ompd_get_task_function` answers ok with address 0 where it failed (as a library does
    /// that takes a missing layout word for a zero offset).
    TaskFunctionMadeUp,
    /// A second `ompd_finalize` calls `alloc_memory` and `free_memory`.
    CallsBackAfterFinalize,
    /// `ompd_get_api_version` fails until a callback table was given.
    VersionNeedsTool,
    /// `ompd_get_state` answers needs_state_tracking though the runtime tracks state.
    StateNeedsTracking,
    /// `ompd_process_initialize` frees the tool's address-space context.
    FreesContext,
    /// `device_to_host` is replaced by a plain copy (no byte swap).
    ConversionSkipped,
    /// `ompd_get_thread_handle` hands out the handle it gave before for the same id (releasing
    /// one releases both).
    ThreadHandleCached,
    /// `ompd_get_thread_handle` keeps the tool's id pointer; `ompd_get_thread_id` reads it.
    ThreadIdNotCopied,
    /// `ompd_get_thread_id` answers one off for handles from `ompd_get_thread_in_parallel`.
    ThreadIdByRoute,
    /// `ompd_enumerate_icvs` renames the first ICV from the second enumeration on.
    IcvsUnstable,
    /// `ompd_get_state` answers 42, a code no specification defines.
    UndefinedReturnCode,
    /// `ompd_get_omp_version` reports its success as ompd_rc_incomplete.
    SuccessAsIncomplete,
    /// `ompd_get_state` looks up a global symbol with a thread context.
    ThreadContextForGlobal,
    /// `ompd_get_state` asks for a thread context with an id one byte longer than its kind's.
    ThreadIdSizeWrong,
    /// `ompd_get_curr_parallel_handle` answers `unsupported` for a thread in no team.
    NoTeamUnsupported,
    /// 6.0: `ompd_initialize` calls `print_string` without checking it for NULL (the crash such
    /// a call is).
    PrintsWithoutPrinter,
    /// `ompd_get_curr_task_handle` takes scratch memory from the C heap (`malloc`/`free`)
    /// instead of `alloc_memory`.
    ScratchFromHeap,
    /// The staged copy exports a global `operator new(size_t, const std::nothrow_t&)` (a name is
    /// patched).
    ExportsOperatorNew,
    /// TR: `ompd_get_threads` leaves one thread out.
    TrThreadsMissingOne,
    /// TR: `ompd_get_max_threads` answers one more.
    TrIcvOff,
    /// TR: `ompd_get_thread_handle` answers 5.x's `unavailable` for a non-OpenMP thread.
    TrForeignThreadUnavailable,
    /// TR: `ompd_get_version` answers `ok` for a NULL `version`.
    TrVersionNullOk,
    /// TR: `ompd_get_state` answers `ompd_state_work_serial` for every thread.
    TrStateSerial,
    /// TR: `ompd_get_top_parallel_region` answers unavailable for every thread.
    TrTopRegionUnavailable,
    /// `ompd_get_tool_data` answers one more for a parallel handle from
    /// `ompd_get_task_parallel_handle` than for the same region reached another way.
    ParallelToolDataByRoute,
    /// `ompd_get_task_function` answers one more for a task handle from
    /// `ompd_get_scheduling_task_handle` than for the same task reached another way.
    TaskFunctionByRoute,
    /// A thread handle is refused as `stale_handle` by the thread's queries once the runtime's
    /// thread count changed since it was made (the process continued and a thread started).
    ThreadHandleExpires,
    /// A thread handle is refused as `stale_handle` by the thread's queries once the tool
    /// released any address space after it was made (another process's included).
    ThreadHandleDiesWithASpace,
    /// `ompd_get_tool_data` answers ok with value 0 where the runtime has no OMPT support.
    ToolDataWithoutOmpt,
    /// Every handle comparison answers by the handle blocks' addresses, not the entities':
    /// two handles to one entity compare unequal.
    CompareByHandle,
    /// Every handle comparison answers 1 for a handle compared with itself.
    CompareSelfUnequal,
    /// Every handle comparison answers the opposite sign when a pair is compared again.
    CompareAgainNegated,
    /// Every handle comparison orders entities of three classes in a cycle (a < b < c < a): a
    /// consistent answer for every pair, yet no total order.
    CompareCyclic,
    /// Every handle comparison answers ok with 0 for handles to one entity from two address
    /// spaces, where the inner library refused the pair.
    CompareAcrossSpacesEqual,
    /// `ompd_get_thread_handle` answers `ompd_rc_error` for a thread that is not an OpenMP
    /// thread, where the inner library answered unavailable.
    ForeignThreadError,
    /// `ompd_get_thread_handle` answers `ompd_rc_error` for every lwp id.
    LwpIdError,
    /// `ompd_get_enclosing_parallel_handle` answers bad_input for the outermost region.
    OutermostEnclosingBadInput,
    /// `ompd_get_generating_task_handle` answers `ompd_rc_error` for the initial task.
    InitialGeneratingError,
    /// `ompd_finalize` answers `ompd_rc_error` after finalizing.
    FinalizeNotOk,
    /// `ompd_get_icv_string_from_scope` answers unsupported for an ICV id it does not know.
    IcvStringUnknownIdUnsupported,
    /// `ompd_get_icv_string_from_scope` answers bad_input for a scope that is not the ICV's.
    IcvStringScopeBadInput,
    /// `ompd_get_icv_from_scope` answers bad_input where the inner library answered
    /// incompatible (a scope that is not the ICV's, an ICV that is no integer).
    IcvValueScopeBadInput,
    /// `ompd_process_initialize` answers ok, with a handle block of its own, where the inner
    /// library declined the process (incompatible): a library that defers every lookup to its
    /// first use and so never notices that the process has no runtime it serves.
    ProcessInitializeLazy,
    /// `ompd_get_curr_parallel_handle` and `ompd_get_curr_task_handle` walk the region's
    /// enclosing chain (the task's generating chain) to its root before answering, with no bound
    /// of their own, as a library that computes a nesting level that way: a parent cycle of a
    /// corrupted image never ends (the tool's callback budget stops it).
    ChainWalkedToRoot,
    /// `ompd_get_curr_parallel_handle`, `ompd_get_curr_task_handle` and
    /// `ompd_get_task_parallel_handle` answer ok with a NULL handle where the inner library found
    /// a NULL pointer in the target (answered unavailable).
    NullPointerAnsweredOk,
    /// `ompd_get_task_function` answers unavailable for the implicit task of an outer level of a
    /// serialized run (a task handle naming a serialized-region record).
    SerializedTaskFunctionUnavailable,
    /// `ompd_get_device_thread_id_kinds` lists every kind at the size of the library's own host
    /// (8 bytes), not the target's.
    DeviceKindSizeOfHost,
    /// The forwarder's spare export is named `ompd_unknown_symbol` (no specification defines
    /// it).
    ExportsUnknownOmpdSymbol,
    /// The runtime: its copy's symbol table no longer names `ompd_dll_locations`.
    RtNoDllLocations,
    /// The runtime: its copy's symbol table no longer names `ompd_dll_locations_valid`.
    RtNoDllLocationsValid,
    /// The runtime: its copy's symbol table no longer names `ompd_bp_device_begin`.
    RtNoDeviceBreakpoint,
    /// The runtime: its copy's symbol table no longer names `ompd_bp_teams_end`, though it
    /// still names `ompd_bp_teams_begin`: a runtime with one of 6.0's breakpoints owes both.
    RtNoTeamsBreakpoint,
    /// The runtime: its copy's `ompd_bp_thread_begin` and `ompd_bp_thread_end` symbols trade
    /// addresses, so a debugger stops at the one when the runtime passes the other.
    RtThreadBreakpointsSwapped,
    /// The runtime: `ompd_bp_parallel_begin` and `ompd_bp_parallel_end` trade addresses.
    RtParallelBreakpointsSwapped,
    /// The runtime: `ompd_bp_task_begin` and `ompd_bp_task_end` trade addresses.
    RtTaskBreakpointsSwapped,
    /// The runtime: `ompd_bp_teams_begin` and `ompd_bp_teams_end` trade addresses.
    RtTeamsBreakpointsSwapped,
    /// The runtime: its self-description says a thread keeps its state where it keeps its wait
    /// id (`ompd_access__ompt_thread_info_t__state` and `__wait_id` trade addresses).
    RtStateWordMoved,
}

/// One mutant: a staged build of the forwarder with one deviation.
#[derive(Clone, Copy, Debug)]
pub struct Mutant {
    /// Its name (the staged directory, and what the forwarder reads to know itself).
    pub name: &'static str,
    /// The entry point carrying the deviation (`None`: every one of them, or the callbacks).
    pub entry_point: Option<E>,
    /// The deviation.
    pub deviation: Deviation,
    /// The checks that must catch it: ids, or patterns with one `*` (matched with
    /// `ompd_report::glob` by the kit); at least one must kill.
    pub targets: &'static [&'static str],
}

macro_rules! mutants {
    ($($name:literal $ep:expr, $dev:ident => [$($t:literal),+ $(,)?];)*) => {
        /// Every mutant, in kill-matrix order.
        pub static MUTANTS: &[Mutant] = &[$(Mutant {
            name: $name,
            entry_point: $ep,
            deviation: Deviation::$dev,
            targets: &[$($t),+],
        },)*];
    };
}

mutants! {
    "api_version_unknown" Some(E::GetApiVersion), ApiVersionUnknown => ["lib.api_version.known_value"];
    "api_version_flips" Some(E::GetApiVersion), ApiVersionFlips => ["lib.api_version.stable"];
    "version_string_heap" Some(E::GetVersionString), VersionStringHeap => ["lib.version_string.static_library_memory"];
    "initialize_accepts_any" Some(E::Initialize), InitializeAcceptsAny => ["lib.initialize.unsupported_version"];
    "initialize_null_ok" Some(E::Initialize), InitializeNullOk => ["lib.initialize.null_callbacks"];
    "initialize_refuses_own_version" Some(E::Initialize), InitializeRefusesOwnVersion => ["lib.initialize.supported_version"];
    "finalize_before_initialize_ok" Some(E::Finalize), FinalizeBeforeInitializeOk => ["lib.finalize.before_initialize"];
    "omp_version_off" Some(E::GetOmpVersion), OmpVersionOff => ["aspace.omp_version.matches_model"];
    "omp_version_prints" Some(E::GetOmpVersion), OmpVersionPrints => ["callbacks.contract.no_direct_output"];
    "omp_version_string_static" Some(E::GetOmpVersionString), OmpVersionStringStatic => ["aspace.omp_version_string.tool_owned"];
    "omp_version_string_shared" Some(E::GetOmpVersionString), OmpVersionStringShared => ["own.strings.fresh_block_per_call"];
    "process_initialize_declines" Some(E::ProcessInitialize), ProcessInitializeDeclines => ["aspace.process_initialize.compatible_target"];
    "rel_address_space_not_ok" Some(E::RelAddressSpaceHandle), RelAddressSpaceNotOk => ["aspace.release.ok"];
    "thread_handle_unavailable" Some(E::GetThreadHandle), ThreadHandleUnavailable => ["thread.handle.by_pthread_id"];
    "thread_handle_ignores_size" Some(E::GetThreadHandle), ThreadHandleIgnoresSize => ["thread.handle.wrong_id_size"];
    "thread_handle_ignores_kind" Some(E::GetThreadHandle), ThreadHandleIgnoresKind => ["thread.handle.unknown_kind"];
    "thread_handle_leaks" Some(E::GetThreadHandle), ThreadHandleLeaks => ["own.handles.released_without_leak", "callbacks.contract.no_violations"];
    "thread_handle_reads_fresh_memory" Some(E::GetThreadHandle), ThreadHandleReadsFreshMemory => ["own.allocator.answers_independent_of_fill"];
    "thread_id_off" Some(E::GetThreadId), ThreadIdOff => ["thread.id.round_trip"];
    "thread_id_ignores_kind" Some(E::GetThreadId), ThreadIdIgnoresKind => ["thread.id.wrong_size_or_kind", "thread.id.every_kind"];
    "thread_id_ignores_size" Some(E::GetThreadId), ThreadIdIgnoresSize => ["thread.id.wrong_size_or_kind"];
    "thread_id_pointer_sized" Some(E::GetThreadId), ThreadIdPointerSized => ["thread.id.round_trip", "thread.id.every_kind"];
    "thread_compare_zero" Some(E::ThreadHandleCompare), ThreadCompareZero => ["compare.thread.entity_identity"];
    "thread_compare_asymmetric" Some(E::ThreadHandleCompare), ThreadCompareAsymmetric => ["compare.thread.antisymmetric"];
    "thread_compare_truncated" Some(E::ThreadHandleCompare), ThreadCompareTruncated => ["compare.thread.entity_identity", "compare.thread.antisymmetric"];
    "rel_thread_not_ok" Some(E::RelThreadHandle), RelThreadNotOk => ["own.handles.release_ok"];
    "thread_in_parallel_ignores_index" Some(E::GetThreadInParallel), ThreadInParallelIgnoresIndex => ["parallel.thread_in_parallel.every_index"];
    "thread_in_parallel_no_range_check" Some(E::GetThreadInParallel), ThreadInParallelNoRangeCheck => ["parallel.thread_in_parallel.out_of_range"];
    "state_off" Some(E::GetState), StateOff => ["state.get.matches_model"];
    "state_refuses_null_wait_id" Some(E::GetState), StateRefusesNullWaitId => ["state.get.null_wait_id"];
    "state_crashes" Some(E::GetState), StateCrashes => ["state.get.matches_model"];
    "curr_parallel_unavailable" Some(E::GetCurrParallelHandle), CurrParallelUnavailable => ["parallel.curr.team_size_matches_model", "bp.curr.handles_match_runtime"];
    "enclosing_parallel_unavailable" Some(E::GetEnclosingParallelHandle), EnclosingParallelUnavailable => ["parallel.enclosing.levels_match_model"];
    "task_parallel_unavailable" Some(E::GetTaskParallelHandle), TaskParallelUnavailable => ["task.parallel.of_implicit_task"];
    "parallel_compare_zero" Some(E::ParallelHandleCompare), ParallelCompareZero => ["compare.parallel.entity_identity"];
    "parallel_compare_asymmetric" Some(E::ParallelHandleCompare), ParallelCompareAsymmetric => ["compare.parallel.antisymmetric"];
    "parallel_compare_truncated" Some(E::ParallelHandleCompare), ParallelCompareTruncated => ["compare.parallel.entity_identity", "compare.parallel.antisymmetric"];
    "rel_parallel_frees_foreign" Some(E::RelParallelHandle), RelParallelFreesForeign => ["callbacks.contract.no_violations"];
    "curr_task_unavailable" Some(E::GetCurrTaskHandle), CurrTaskUnavailable => ["task.curr.kind_matches_model", "bp.curr.handles_match_runtime"];
    "generating_task_unavailable" Some(E::GetGeneratingTaskHandle), GeneratingTaskUnavailable => ["task.generating.chain_matches_model"];
    "scheduling_task_unavailable" Some(E::GetSchedulingTaskHandle), SchedulingTaskUnavailable => ["task.scheduling.chain_matches_model"];
    "task_in_parallel_ignores_index" Some(E::GetTaskInParallel), TaskInParallelIgnoresIndex => ["task.in_parallel.every_index"];
    "task_in_parallel_no_range_check" Some(E::GetTaskInParallel), TaskInParallelNoRangeCheck => ["task.in_parallel.out_of_range"];
    "task_compare_zero" Some(E::TaskHandleCompare), TaskCompareZero => ["compare.task.entity_identity"];
    "task_compare_asymmetric" Some(E::TaskHandleCompare), TaskCompareAsymmetric => ["compare.task.antisymmetric"];
    "task_compare_truncated" Some(E::TaskHandleCompare), TaskCompareTruncated => ["compare.task.entity_identity", "compare.task.antisymmetric"];
    "rel_task_leaks" Some(E::RelTaskHandle), RelTaskLeaks => ["own.handles.released_without_leak"];
    "task_function_off" Some(E::GetTaskFunction), TaskFunctionOff => ["task.function.matches_model"];
    "task_function_leaks_on_failure" Some(E::GetTaskFunction), TaskFunctionLeaksOnFailure => ["own.failed_calls.no_leak"];
    "task_frame_swapped" Some(E::GetTaskFrame), TaskFrameSwapped => ["task.frame.matches_model"];
    "task_frame_flags_cleared" Some(E::GetTaskFrame), TaskFrameFlagsCleared => ["task.frame.flags_valid"];
    "task_frame_flags_kept" Some(E::GetTaskFrame), TaskFrameFlagsKept => ["task.frame.flags_written"];
    "task_frame_hangs" Some(E::GetTaskFrame), TaskFrameHangs => ["task.frame.matches_model"];
    "states_skip_one" Some(E::EnumerateStates), StatesSkipOne => ["state.enumerate.well_formed", "state.enumerate.standard_names", "state.get.among_enumerated"];
    "states_accept_unknown" Some(E::EnumerateStates), StatesAcceptUnknown => ["state.enumerate.unknown_current"];
    "states_restart_after_last" Some(E::EnumerateStates), StatesRestartAfterLast => ["state.enumerate.after_last"];
    "dcv_unavailable" Some(E::GetDisplayControlVars), DcvUnavailable => ["dcv.get.well_formed"];
    "dcv_rel_leaks" Some(E::RelDisplayControlVars), DcvRelLeaks => ["dcv.rel.releases_everything"];
    "icv_scope_off" Some(E::EnumerateIcvs), IcvScopeOff => ["icv.enumerate.well_formed", "icv.scope.every_pair_answerable"];
    "icvs_accept_unknown" Some(E::EnumerateIcvs), IcvsAcceptUnknown => ["icv.enumerate.unknown_current"];
    "icvs_restart_after_last" Some(E::EnumerateIcvs), IcvsRestartAfterLast => ["icv.enumerate.after_last"];
    "icv_value_off" Some(E::GetIcvFromScope), IcvValueOff => ["icv.value.*", "parallel.curr.active_levels_match_model"];
    "icv_string_static" Some(E::GetIcvStringFromScope), IcvStringStatic => ["icv.string.*", "callbacks.contract.no_violations"];
    "icv_string_capped" Some(E::GetIcvStringFromScope), IcvStringCapped => ["icv.string.tool-libraries-var"];
    "dcv_drops_unterminated_last" Some(E::GetDisplayControlVars), DcvDropsUnterminatedLast => ["dcv.get.names_match_model"];
    "dcv_empty_leaks" Some(E::RelDisplayControlVars), DcvEmptyLeaks => ["dcv.rel.releases_everything"];
    "tool_data_value_off" Some(E::GetToolData), ToolDataValueOff => ["tool_data.*"];
    "tool_data_ptr_off" Some(E::GetToolData), ToolDataPtrOff => ["tool_data.*"];
    "device_kinds_empty" Some(E::GetDeviceThreadIdKinds), DeviceKindsEmpty => ["device.thread_id_kinds.well_formed"];
    "device_from_thread_unavailable" Some(E::GetDeviceFromThread), DeviceFromThreadUnavailable => ["device.from_thread.identity"];
    "device_kind_size_of_host" Some(E::GetDeviceThreadIdKinds), DeviceKindSizeOfHost => ["device.thread_id_kinds.round_trip"];
    "serialized_task_function_unavailable" Some(E::GetTaskFunction), SerializedTaskFunctionUnavailable => ["task.function.serialized_region"];
    "process_initialize_lazy" Some(E::ProcessInitialize), ProcessInitializeLazy => ["aspace.process_initialize.foreign_runtime"];
    "chain_walked_to_root" None, ChainWalkedToRoot => ["corrupt.parent_cycle.team", "corrupt.parent_cycle.task", "corrupt.parent_cycle.lwt"];
    "null_pointer_answered_ok" None, NullPointerAnsweredOk => ["corrupt.pointer.null"];
    "null_output_ok" None, NullOutputOk => ["null.*"];
    "null_handle_crashes" None, NullHandleCrashes => ["null.*"];
    "read_fault_ignored" None, ReadFaultIgnored => ["fault.*.read", "fault.*.short_read", "fault.*.stale_handle", "corrupt.pointer.wild", "corrupt.pointer.misaligned", "corrupt.count.huge", "corrupt.string.unterminated"];
    "aspace_icv_read_fault_ignored" None, AspaceIcvReadFaultIgnored => ["fault.get_icv_from_scope.read", "fault.get_icv_from_scope.short_read"];
    "symbol_fault_ignored" None, SymbolFaultIgnored => ["fault.*.symbol", "fault.code.stale_handle"];
    "conversion_fault_ignored" None, ConversionFaultIgnored => ["fault.*.conversion", "fault.*.stale_handle"];
    "alloc_fault_ignored" None, AllocFaultIgnored => ["fault.*.alloc", "callbacks.contract.no_direct_heap"];
    "symbol_failure_miscoded" None, SymbolFailureMiscoded => ["fault.code.symbol"];
    "read_failure_miscoded" None, ReadFailureMiscoded => ["fault.code.read", "fault.code.short_read", "fault.code.stale_handle"];
    "conversion_failure_miscoded" None, ConversionFailureMiscoded => ["fault.code.conversion"];
    "alloc_failure_miscoded" None, AllocFailureMiscoded => ["fault.code.alloc"];
    "thread_context_failure_miscoded" None, ThreadContextFailureMiscoded => ["fault.code.thread_context"];
    "symbol_failure_forgotten" None, SymbolFailureForgotten => ["fault.*.symbol"];
    "read_failure_forgotten" None, ReadFailureForgotten => ["fault.*.read", "fault.*.short_read", "fault.*.stale_handle"];
    "conversion_failure_forgotten" None, ConversionFailureForgotten => ["fault.*.conversion"];
    "alloc_failure_forgotten" None, AllocFailureForgotten => ["fault.*.alloc"];
    "thread_context_failure_forgotten" None, ThreadContextFailureForgotten => ["fault.*.thread_context"];
    "null_input_ok" None, NullInputOk => ["null.*"];
    "device_initialize_miscoded" Some(E::DeviceInitialize), DeviceInitializeMiscoded => ["aspace.device_initialize.unsupported_device"];
    "process_initialize_declines_miscoded" Some(E::ProcessInitialize), ProcessInitializeDeclinesMiscoded => ["aspace.process_initialize.foreign_runtime_code"];
    "one_address_space_read_forgotten" Some(E::ProcessInitialize), OneAddressSpaceReadForgotten => ["fault.process_initialize.read"];
    "dcv_value_changed" Some(E::GetDisplayControlVars), DcvValueChanged => ["dcv.get.values_match_model"];
    "dcv_name_changed" Some(E::GetDisplayControlVars), DcvNameChanged => ["dcv.get.names_match_model"];
    "dcv_static_entry" Some(E::GetDisplayControlVars), DcvStaticEntry => ["dcv.get.memory_owned"];
    "icv_name_changed" Some(E::EnumerateIcvs), IcvNameChanged => ["icv.enumerate.standard_names"];
    "state_name_changed" Some(E::EnumerateStates), StateNameChanged => ["state.enumerate.standard_names"];
    "icv_string_as_integer" Some(E::GetIcvFromScope), IcvStringAsInteger => ["icv.value.*"];
    "icvs_break_dyn_var_off" None, IcvsBreakDynVarOff => ["icv.value.dyn-var"];
    "parallel_team_size_off" None, ParallelTeamSizeOff => ["bp.curr.team_size_matches_runtime", "parallel.curr.team_size_matches_model"];
    "current_task_region_encloses" None, CurrentTaskRegionEncloses => ["task.parallel.of_current_task"];
    "implicit_task_region_encloses" None, ImplicitTaskRegionEncloses => ["route.task.answers_match_model", "task.parallel.of_implicit_task"];
    "team_size_by_enclosing_route" None, TeamSizeByEnclosingRoute => ["route.parallel.answers_match_model"];
    "teams_initial_region_is_league" None, TeamsInitialRegionIsLeague => ["teams.curr.one_region_per_team"];
    "teams_level_counts_league" None, TeamsLevelCountsLeague => ["teams.curr.icvs_allowed"];
    "teams_league_level_rises" None, TeamsLeagueLevelRises => ["teams.enclosing.chain_ends"];
    "v60_teams_team_num_off" None, TeamsTeamNumOff => ["teams.icv.league_and_team_num"];
    "rel_task_frees_icv_string" Some(E::RelTaskHandle), RelTaskFreesIcvString => ["own.strings.valid_after_handle_release"];
    "tool_data_address_space_ok" Some(E::GetToolData), ToolDataAddressSpaceOk => ["tool_data.scope.no_data_scopes"];
    "version_query_calls_back" Some(E::GetApiVersion), VersionQueryCallsBack => ["lib.version_queries.no_callbacks"];
    "missing_export" Some(E::GetTaskFunction), MissingExport => ["lib.inventory.profile_entry_points_exported"];
    "needs_openmp_runtime" None, NeedsOpenmpRuntime => ["static.needed.no_openmp_runtime"];
    "blocks_a_signal" Some(E::GetOmpVersion), BlocksASignal => ["callbacks.contract.signals_untouched"];
    "ignores_a_signal" Some(E::Initialize), IgnoresASignal => ["callbacks.contract.signals_untouched"];
    "replaces_a_signal_handler" Some(E::GetOmpVersion), ReplacesASignalHandler => ["callbacks.contract.signals_untouched"];
    "ignores_a_signal_by_system_call" Some(E::GetOmpVersion), IgnoresASignalBySystemCall => ["callbacks.contract.signals_untouched"];
    "v60_closes_a_descriptor" Some(E::GetOmpVersion), ClosesADescriptor => ["callbacks.contract.descriptors_untouched"];
    "v60_closes_a_descriptor_by_system_call" Some(E::GetOmpVersion), ClosesADescriptorBySystemCall => ["callbacks.contract.descriptors_untouched"];
    "starts_a_thread" Some(E::GetOmpVersion), StartsAThread => ["callbacks.contract.no_threads"];
    "process_initialize_first_context" Some(E::ProcessInitialize), ProcessInitializeFirstContext => ["lifecycle.second_process.own_answers"];
    "no_reinitialize_after_release" Some(E::ProcessInitialize), NoReinitializeAfterRelease => ["lifecycle.reinitialize.after_release"];
    "process_initialize_leaks" Some(E::ProcessInitialize), ProcessInitializeLeaks => ["lifecycle.release.no_leak"];
    "task_function_by_implicit_route" None, TaskFunctionByImplicitRoute => ["route.task.answers_match_model"];
    "task_function_made_up" Some(E::GetTaskFunction), TaskFunctionMadeUp => ["layout.missing_word.no_made_up_answer"];
    "calls_back_after_finalize" Some(E::Finalize), CallsBackAfterFinalize => ["lib.finalize.no_callbacks_after"];
    "version_needs_tool" Some(E::GetApiVersion), VersionNeedsTool => ["lib.api_version.known_value"];
    "state_needs_tracking" Some(E::GetState), StateNeedsTracking => ["state.get.matches_model"];
    "frees_context" Some(E::ProcessInitialize), FreesContext => ["callbacks.contract.no_violations"];
    "conversion_skipped" None, ConversionSkipped => ["aspace.omp_version.matches_model"];
    "thread_handle_cached" Some(E::GetThreadHandle), ThreadHandleCached => ["own.handles.release_independent"];
    "thread_id_not_copied" Some(E::GetThreadId), ThreadIdNotCopied => ["thread.id.round_trip"];
    "thread_id_by_route" Some(E::GetThreadId), ThreadIdByRoute => ["compare.thread.equal_handles_answer_alike", "route.thread.answers_match_model"];
    "icvs_unstable" Some(E::EnumerateIcvs), IcvsUnstable => ["icv.enumerate.stable"];
    "undefined_return_code" Some(E::GetState), UndefinedReturnCode => ["callbacks.contract.defined_return_codes"];
    "success_as_incomplete" Some(E::GetOmpVersion), SuccessAsIncomplete => ["aspace.omp_version.matches_model"];
    "thread_context_for_global" Some(E::GetState), ThreadContextForGlobal => ["callbacks.contract.no_violations"];
    "thread_id_size_wrong" Some(E::GetState), ThreadIdSizeWrong => ["callbacks.contract.no_violations"];
    "no_team_unsupported" Some(E::GetCurrParallelHandle), NoTeamUnsupported => ["parallel.curr.idle_thread_unavailable"];
    "v60_print_without_printer" Some(E::Initialize), PrintsWithoutPrinter => ["lib.print_string.null_not_called"];
    "scratch_from_heap" Some(E::GetCurrTaskHandle), ScratchFromHeap => ["callbacks.contract.no_direct_heap"];
    "exports_operator_new" None, ExportsOperatorNew => ["static.exports.no_global_new_delete"];
    "tr_thread_string_id_unstable" Some(E::GetThreadHandleStringId), TrThreadStringIdUnstable => ["tr.string_id.thread"];
    "tr_parallel_string_id_shared" Some(E::GetParallelHandleStringId), TrParallelStringIdShared => ["tr.string_id.parallel"];
    "tr_task_string_id_shared" Some(E::GetTaskHandleStringId), TrTaskStringIdShared => ["tr.string_id.task"];
    "tr_string_id_charset" Some(E::GetThreadHandleStringId), TrStringIdCharset => ["tr.string_id.charset"];
    "tr_threads_missing_one" Some(E::GetThreads), TrThreadsMissingOne => ["tr.threads.matches_model"];
    "tr_icv_off" Some(E::GetMaxThreads), TrIcvOff => ["tr.icv.matches_model"];
    "tr_foreign_thread_unavailable" Some(E::GetThreadHandle), TrForeignThreadUnavailable => ["tr.thread_handle.non_openmp_thread"];
    "tr_version_null_ok" Some(E::GetVersion), TrVersionNullOk => ["tr.get_version.null_version"];
    "tr_state_serial" Some(E::GetState), TrStateSerial => ["tr.state.matches_model"];
    "tr_top_region_unavailable" Some(E::GetTopParallelRegion), TrTopRegionUnavailable => ["bp.curr.region_team_size"];
    "parallel_tool_data_by_route" None, ParallelToolDataByRoute => ["compare.parallel.equal_handles_answer_alike", "route.parallel.answers_match_model"];
    "task_function_by_route" None, TaskFunctionByRoute => ["compare.task.equal_handles_answer_alike", "route.task.answers_match_model"];
    "thread_handle_expires" None, ThreadHandleExpires => ["bp.thread.handle_kept_until_thread_end"];
    "thread_handle_dies_with_a_space" None, ThreadHandleDiesWithASpace => ["lifecycle.release.held_handles_intact"];
    "tool_data_without_ompt" Some(E::GetToolData), ToolDataWithoutOmpt => ["tool_data.no_ompt.unsupported"];
    "compare_by_handle" None, CompareByHandle => ["thread.compare.same_thread_equal", "parallel.curr.same_region_compares_equal"];
    "compare_self_unequal" None, CompareSelfUnequal => ["compare.thread.reflexive", "compare.parallel.reflexive", "compare.task.reflexive"];
    "compare_again_negated" None, CompareAgainNegated => ["compare.thread.stable", "compare.parallel.stable", "compare.task.stable"];
    "compare_cyclic" None, CompareCyclic => ["compare.thread.transitive", "compare.parallel.transitive", "compare.task.transitive"];
    "compare_across_spaces_equal" None, CompareAcrossSpacesEqual => ["compare.thread.other_address_space", "compare.parallel.other_address_space", "compare.task.other_address_space"];
    "foreign_thread_error" Some(E::GetThreadHandle), ForeignThreadError => ["thread.handle.non_openmp_thread"];
    "lwp_id_error" Some(E::GetThreadHandle), LwpIdError => ["thread.handle.by_lwp_id"];
    "outermost_enclosing_bad_input" Some(E::GetEnclosingParallelHandle), OutermostEnclosingBadInput => ["parallel.enclosing.outermost_unavailable"];
    "initial_generating_error" Some(E::GetGeneratingTaskHandle), InitialGeneratingError => ["task.generating.initial_task_unavailable"];
    "finalize_not_ok" Some(E::Finalize), FinalizeNotOk => ["lib.finalize.after_initialize"];
    "icv_string_unknown_id_unsupported" Some(E::GetIcvStringFromScope), IcvStringUnknownIdUnsupported => ["icv.string.unknown_id"];
    "icv_string_scope_bad_input" Some(E::GetIcvStringFromScope), IcvStringScopeBadInput => ["icv.string.scope_mismatch"];
    "v60_icv_value_scope_bad_input" Some(E::GetIcvFromScope), IcvValueScopeBadInput => ["icv.value.scope_mismatch"];
    "exports_unknown_ompd_symbol" None, ExportsUnknownOmpdSymbol => ["lib.inventory.no_unknown_ompd_symbols"];
    "rt_no_dll_locations" None, RtNoDllLocations => ["runtime.dll_locations.valid_vector"];
    "rt_no_dll_locations_valid" None, RtNoDllLocationsValid => ["runtime.dll_locations_valid.defined"];
    "rt_no_device_breakpoint" None, RtNoDeviceBreakpoint => ["runtime.breakpoints.defined"];
    "rt_no_teams_breakpoint" None, RtNoTeamsBreakpoint => ["runtime.breakpoints.defined"];
    "rt_thread_breakpoints_swapped" None, RtThreadBreakpointsSwapped => ["runtime.bp_sequence.thread_begin_first"];
    "rt_parallel_breakpoints_swapped" None, RtParallelBreakpointsSwapped => ["runtime.bp_sequence.parallel_once_per_region"];
    "rt_task_breakpoints_swapped" None, RtTaskBreakpointsSwapped => ["runtime.bp_sequence.task_begin_end_pairs"];
    "rt_teams_breakpoints_swapped" None, RtTeamsBreakpointsSwapped => ["runtime.bp_sequence.teams_once_per_construct"];
    "rt_state_word_moved" None, RtStateWordMoved => ["runtime.state.matches_program"];
    "rt_api_version_older" Some(E::GetApiVersion), ApiVersionOlder => ["lib.api_version.matches_runtime"];
}

/// The fast subset CI runs (`cargo xtask mutants --quick`): one mutant of each kind of
/// deviation (a wrong value, code, order, ownership, output, hang, crash, and a generic one).
pub const QUICK: &[&str] = &[
    "api_version_unknown",
    "omp_version_off",
    "omp_version_prints",
    "omp_version_string_static",
    "thread_compare_asymmetric",
    "rel_thread_not_ok",
    "curr_task_unavailable",
    "task_frame_swapped",
    "task_frame_hangs",
    "state_crashes",
    "null_output_ok",
    "read_fault_ignored",
];

/// The mutants a plan of the far placement also judges (`--layout far`): only addresses
/// 2^31 apart show them.
pub const FAR_PLACED: &[&str] = &[
    "thread_compare_truncated",
    "parallel_compare_truncated",
    "task_compare_truncated",
];

impl Deviation {
    /// True for the deviations whose thread handles die before they are released
    /// (`hooks::epoch`).
    pub fn expires_handles(self) -> bool {
        matches!(
            self,
            Deviation::ThreadHandleExpires | Deviation::ThreadHandleDiesWithASpace
        )
    }
}

/// The bytes a deviation of the file itself replaces in the staged copy (same length): the
/// exported name of `ompd_get_task_function`, the DT_NEEDED entry `libgcc_s.so.1` turned into
/// an OpenMP runtime's name, or the forwarder's spare export `mutant_operator_new` (never
/// called) turned into the mangled name of a global `operator new` (the symbol table then
/// declares it; the hash table still knows the old name, so the dynamic linker would not bind
/// to it, which the static check does not look at). `None` for a deviation of the code.
pub fn file_patch(d: Deviation) -> Option<(&'static [u8], &'static [u8])> {
    match d {
        Deviation::MissingExport => {
            Some((b"\0ompd_get_task_function\0", b"\0xmpd_get_task_function\0"))
        }
        Deviation::NeedsOpenmpRuntime => Some((b"\0libgcc_s.so.1\0", b"\0libomp.so.555\0")),
        Deviation::ExportsOperatorNew => {
            Some((b"\0mutant_operator_new\0", b"\0_ZnwmRKSt9nothrow_t\0"))
        }
        Deviation::ExportsUnknownOmpdSymbol => {
            Some((b"\0mutant_operator_new\0", b"\0ompd_unknown_symbol\0"))
        }
        _ => None,
    }
}

/// What a runtime mutant does to its copy of the runtime's symbol table (`.symtab`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimePatch {
    /// The symbol's name loses its first letter (`xmpd_…`): the runtime no longer defines it.
    Hide(&'static str),
    /// The two symbols trade addresses (and sizes).
    Swap(&'static str, &'static str),
}

/// The patch of a runtime mutant's deviation; `None` for a deviation of the library.
pub fn runtime_patch(d: Deviation) -> Option<RuntimePatch> {
    use RuntimePatch::{Hide, Swap};
    match d {
        Deviation::RtNoDllLocations => Some(Hide("ompd_dll_locations")),
        Deviation::RtNoDllLocationsValid => Some(Hide("ompd_dll_locations_valid")),
        Deviation::RtNoDeviceBreakpoint => Some(Hide("ompd_bp_device_begin")),
        Deviation::RtNoTeamsBreakpoint => Some(Hide("ompd_bp_teams_end")),
        Deviation::RtThreadBreakpointsSwapped => {
            Some(Swap("ompd_bp_thread_begin", "ompd_bp_thread_end"))
        }
        Deviation::RtParallelBreakpointsSwapped => {
            Some(Swap("ompd_bp_parallel_begin", "ompd_bp_parallel_end"))
        }
        Deviation::RtTaskBreakpointsSwapped => Some(Swap("ompd_bp_task_begin", "ompd_bp_task_end")),
        Deviation::RtTeamsBreakpointsSwapped => {
            Some(Swap("ompd_bp_teams_begin", "ompd_bp_teams_end"))
        }
        Deviation::RtStateWordMoved => Some(Swap(
            "ompd_access__ompt_thread_info_t__state",
            "ompd_access__ompt_thread_info_t__wait_id",
        )),
        _ => None,
    }
}

/// Which forwarder a mutant is built from and which inner library it wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Flavour {
    /// The 5.2 forwarder around a 5.2 library.
    V5_2,
    /// The 5.2 forwarder around a 6.0 library: it then reports 6.0, for checks since 6.0.
    V6_0,
    /// The 5.2 forwarder around a 5.2 library, judged on breakpoint tours of a copy of a real
    /// runtime, its own: for the runtime's checks (the copy carries the mutant's
    /// [`RuntimePatch`]) and the library's against its runtime.
    Runtime,
    /// The TR 2.001 forwarder around a TR library.
    Tr2,
}

impl Flavour {
    /// The name of its clean baseline's directory.
    pub fn clean(self) -> &'static str {
        match self {
            Flavour::V5_2 => "clean",
            Flavour::V6_0 => "clean-60",
            Flavour::Tr2 => "clean-tr",
            Flavour::Runtime => "clean-rt",
        }
    }
}

/// A mutant's flavour, from its name: `tr_…` is a TR 2.001 mutant, `v60_…` a 6.0 one, `rt_…` one
/// judged on its own runtime, any other a 5.2 one.
pub fn flavour(m: &Mutant) -> Flavour {
    if m.name.starts_with("tr_") {
        Flavour::Tr2
    } else if m.name.starts_with("v60_") {
        Flavour::V6_0
    } else if m.name.starts_with("rt_") {
        Flavour::Runtime
    } else {
        Flavour::V5_2
    }
}

/// The mutant called `name`.
pub fn find(name: &str) -> Option<&'static Mutant> {
    MUTANTS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutant_of_a_routine_only_tr_declares_is_a_tr_mutant() {
        for m in MUTANTS {
            if m.entry_point
                .is_some_and(|e| e.removed() == Some(ompd_abi::Generation::V5_0))
            {
                assert_eq!(
                    flavour(m),
                    Flavour::Tr2,
                    "{} mutates a TR routine: name it tr_…",
                    m.name
                );
            }
        }
    }

    #[test]
    fn names_are_unique_and_deviations_used_once() {
        for (i, m) in MUTANTS.iter().enumerate() {
            for n in &MUTANTS[i + 1..] {
                assert_ne!(m.name, n.name);
                assert_ne!(m.deviation, n.deviation, "{}", m.name);
            }
        }
        assert!(find("thread_id_off").is_some());
        assert!(QUICK.iter().all(|n| find(n).is_some()));
    }
}
