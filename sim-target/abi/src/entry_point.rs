//! The one table of every OMPD entry point the suite knows: its exported symbol, its argument
//! list (with the role of each pointer argument), and the generations that declare it.
//!
//! Every other list of entry points (a generation's inventory, the NULL-argument matrix, the
//! symbols a library is searched for) is derived from this table.

use crate::Generation;

/// The kind of handle an argument carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HandleKind {
    /// `ompd_address_space_handle_t *`.
    AddressSpace,
    /// `ompd_thread_handle_t *`.
    Thread,
    /// `ompd_parallel_handle_t *`.
    Parallel,
    /// `ompd_task_handle_t *`.
    Task,
    /// `void *handle` whose kind a scope argument names.
    Any,
}

/// What an argument is to the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Passed by value (not a pointer).
    Value,
    /// A library-owned handle the tool passes in.
    InHandle(HandleKind),
    /// A tool-owned context (`ompd_address_space_context_t *`) the tool passes in.
    Context,
    /// Tool-owned input data the library reads during the call (a table, an id, a vector).
    In,
    /// An out-parameter the library writes a value into.
    Out,
    /// An out-parameter the library writes a new handle of this kind into.
    OutHandle(HandleKind),
    /// A tool-owned buffer of a size given by another argument, which the library fills.
    Buffer,
}

/// One argument of an entry point, as `omp-tools.h` declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arg {
    /// The parameter name in `omp-tools.h`.
    pub name: &'static str,
    /// The C type.
    pub ty: &'static str,
    /// What it is to the call.
    pub role: Role,
}

impl Arg {
    /// True for the arguments passed as pointers (everything but [`Role::Value`]).
    pub fn is_pointer(&self) -> bool {
        self.role != Role::Value
    }
}

const fn arg(name: &'static str, ty: &'static str, role: Role) -> Arg {
    Arg { name, ty, role }
}

const fn val(name: &'static str, ty: &'static str) -> Arg {
    arg(name, ty, Role::Value)
}

const fn out(name: &'static str, ty: &'static str) -> Arg {
    arg(name, ty, Role::Out)
}

const fn input(name: &'static str, ty: &'static str) -> Arg {
    arg(name, ty, Role::In)
}

const fn handle(name: &'static str, kind: HandleKind) -> Arg {
    arg(name, handle_type(kind), Role::InHandle(kind))
}

const fn new_handle(name: &'static str, kind: HandleKind) -> Arg {
    let ty = match kind {
        HandleKind::AddressSpace => "ompd_address_space_handle_t **",
        HandleKind::Thread => "ompd_thread_handle_t **",
        HandleKind::Parallel => "ompd_parallel_handle_t **",
        HandleKind::Task => "ompd_task_handle_t **",
        HandleKind::Any => "void **",
    };
    arg(name, ty, Role::OutHandle(kind))
}

const fn handle_type(kind: HandleKind) -> &'static str {
    match kind {
        HandleKind::AddressSpace => "ompd_address_space_handle_t *",
        HandleKind::Thread => "ompd_thread_handle_t *",
        HandleKind::Parallel => "ompd_parallel_handle_t *",
        HandleKind::Task => "ompd_task_handle_t *",
        HandleKind::Any => "void *",
    }
}

use HandleKind::{AddressSpace as AS, Any, Parallel as P, Task as K, Thread as T};

/// The declared rows: (generation introducing the name, generation dropping it, arguments of
/// the 5.0+ signature or `None` for a routine of TR 2.001 or the 2014 draft only, whose 5.x
/// form the suite never calls).
struct Row {
    since: Generation,
    until: Option<Generation>,
    args: Option<&'static [Arg]>,
}

macro_rules! table {
    ($($variant:ident = $name:literal, $since:ident, $until:expr, $args:expr;)*) => {
        /// An OMPD entry point, by its exported symbol.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EntryPoint {
            $(
                #[doc = concat!("`", $name, "`.")]
                $variant,
            )*
        }

        impl EntryPoint {
            /// Every entry point of the table: the 5.0 routines in `omp-tools.h` order, the
            /// 5.2 additions, then the TR 2.001 routines that 5.0 dropped.
            pub const ALL: &'static [EntryPoint] = &[$(EntryPoint::$variant,)*];

            /// The exported symbol name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(EntryPoint::$variant => $name,)*
                }
            }

            fn row(self) -> &'static Row {
                const ROWS: &[Row] = &[$(Row {
                    since: Generation::$since,
                    until: $until,
                    args: $args,
                },)*];
                &ROWS[self as usize]
            }
        }
    };
}

const CMP: &str = "int *";
const WORD_OUT: &str = "ompd_word_t *";
const STRING_OUT: &str = "const char **";

table! {
    Initialize = "ompd_initialize", Draft2014, None, Some(&[
        val("api_version", "ompd_word_t"),
        input("callbacks", "const ompd_callbacks_t *"),
    ]);
    GetApiVersion = "ompd_get_api_version", V5_0, None, Some(&[out("version", WORD_OUT)]);
    GetVersionString = "ompd_get_version_string", Draft2014, None, Some(&[out("string", STRING_OUT)]);
    Finalize = "ompd_finalize", Tr2, None, Some(&[]);
    ProcessInitialize = "ompd_process_initialize", Tr2, None, Some(&[
        arg("context", "ompd_address_space_context_t *", Role::Context),
        new_handle("handle", AS),
    ]);
    DeviceInitialize = "ompd_device_initialize", V5_0, None, Some(&[
        handle("process_handle", AS),
        arg("device_context", "ompd_address_space_context_t *", Role::Context),
        val("kind", "ompd_device_t"),
        val("sizeof_id", "ompd_size_t"),
        input("id", "void *"),
        new_handle("device_handle", AS),
    ]);
    RelAddressSpaceHandle = "ompd_rel_address_space_handle", V5_0, None,
        Some(&[handle("handle", AS)]);
    GetOmpVersion = "ompd_get_omp_version", V5_0, None, Some(&[
        handle("address_space", AS),
        out("omp_version", WORD_OUT),
    ]);
    GetOmpVersionString = "ompd_get_omp_version_string", V5_0, None, Some(&[
        handle("address_space", AS),
        out("string", STRING_OUT),
    ]);
    GetThreadInParallel = "ompd_get_thread_in_parallel", Draft2014, None, Some(&[
        handle("parallel_handle", P),
        val("thread_num", "int"),
        new_handle("thread_handle", T),
    ]);
    GetThreadHandle = "ompd_get_thread_handle", Draft2014, None, Some(&[
        handle("handle", AS),
        val("kind", "ompd_thread_id_t"),
        val("sizeof_thread_id", "ompd_size_t"),
        input("thread_id", "const void *"),
        new_handle("thread_handle", T),
    ]);
    RelThreadHandle = "ompd_rel_thread_handle", V5_0, None, Some(&[handle("thread_handle", T)]);
    ThreadHandleCompare = "ompd_thread_handle_compare", Tr2, None, Some(&[
        handle("thread_handle_1", T),
        handle("thread_handle_2", T),
        out("cmp_value", CMP),
    ]);
    GetThreadId = "ompd_get_thread_id", V5_0, None, Some(&[
        handle("thread_handle", T),
        val("kind", "ompd_thread_id_t"),
        val("sizeof_thread_id", "ompd_size_t"),
        arg("thread_id", "void *", Role::Buffer),
    ]);
    GetCurrParallelHandle = "ompd_get_curr_parallel_handle", V5_0, None, Some(&[
        handle("thread_handle", T),
        new_handle("parallel_handle", P),
    ]);
    GetEnclosingParallelHandle = "ompd_get_enclosing_parallel_handle", Draft2014, None, Some(&[
        handle("parallel_handle", P),
        new_handle("enclosing_parallel_handle", P),
    ]);
    GetTaskParallelHandle = "ompd_get_task_parallel_handle", Tr2, None, Some(&[
        handle("task_handle", K),
        new_handle("task_parallel_handle", P),
    ]);
    RelParallelHandle = "ompd_rel_parallel_handle", V5_0, None,
        Some(&[handle("parallel_handle", P)]);
    ParallelHandleCompare = "ompd_parallel_handle_compare", Tr2, None, Some(&[
        handle("parallel_handle_1", P),
        handle("parallel_handle_2", P),
        out("cmp_value", CMP),
    ]);
    GetCurrTaskHandle = "ompd_get_curr_task_handle", V5_0, None, Some(&[
        handle("thread_handle", T),
        new_handle("task_handle", K),
    ]);
    GetGeneratingTaskHandle = "ompd_get_generating_task_handle", V5_0, None, Some(&[
        handle("task_handle", K),
        new_handle("generating_task_handle", K),
    ]);
    GetSchedulingTaskHandle = "ompd_get_scheduling_task_handle", V5_0, None, Some(&[
        handle("task_handle", K),
        new_handle("scheduling_task_handle", K),
    ]);
    GetTaskInParallel = "ompd_get_task_in_parallel", V5_0, None, Some(&[
        handle("parallel_handle", P),
        val("thread_num", "int"),
        new_handle("task_handle", K),
    ]);
    RelTaskHandle = "ompd_rel_task_handle", V5_0, None, Some(&[handle("task_handle", K)]);
    TaskHandleCompare = "ompd_task_handle_compare", Tr2, None, Some(&[
        handle("task_handle_1", K),
        handle("task_handle_2", K),
        out("cmp_value", CMP),
    ]);
    GetTaskFunction = "ompd_get_task_function", Tr2, None, Some(&[
        handle("task_handle", K),
        out("entry_point", "ompd_address_t *"),
    ]);
    GetTaskFrame = "ompd_get_task_frame", Draft2014, None, Some(&[
        handle("task_handle", K),
        out("exit_frame", "ompd_frame_info_t *"),
        out("enter_frame", "ompd_frame_info_t *"),
    ]);
    EnumerateStates = "ompd_enumerate_states", V5_0, None, Some(&[
        handle("address_space_handle", AS),
        val("current_state", "ompd_word_t"),
        out("next_state", WORD_OUT),
        out("next_state_name", STRING_OUT),
        out("more_enums", WORD_OUT),
    ]);
    GetState = "ompd_get_state", Draft2014, None, Some(&[
        handle("thread_handle", T),
        out("state", WORD_OUT),
        out("wait_id", "ompd_wait_id_t *"),
    ]);
    GetDisplayControlVars = "ompd_get_display_control_vars", Tr2, None, Some(&[
        handle("address_space_handle", AS),
        out("control_vars", "const char *const **"),
    ]);
    RelDisplayControlVars = "ompd_rel_display_control_vars", V5_0, None,
        Some(&[input("control_vars", "const char *const **")]);
    EnumerateIcvs = "ompd_enumerate_icvs", V5_0, None, Some(&[
        handle("handle", AS),
        val("current", "ompd_icv_id_t"),
        out("next_id", "ompd_icv_id_t *"),
        out("next_icv_name", STRING_OUT),
        out("next_scope", "ompd_scope_t *"),
        out("more", "int *"),
    ]);
    GetIcvFromScope = "ompd_get_icv_from_scope", V5_0, None, Some(&[
        handle("handle", Any),
        val("scope", "ompd_scope_t"),
        val("icv_id", "ompd_icv_id_t"),
        out("icv_value", WORD_OUT),
    ]);
    GetIcvStringFromScope = "ompd_get_icv_string_from_scope", V5_0, None, Some(&[
        handle("handle", Any),
        val("scope", "ompd_scope_t"),
        val("icv_id", "ompd_icv_id_t"),
        out("icv_string", STRING_OUT),
    ]);
    GetToolData = "ompd_get_tool_data", V5_0, None, Some(&[
        handle("handle", Any),
        val("scope", "ompd_scope_t"),
        out("value", WORD_OUT),
        out("ptr", "ompd_address_t *"),
    ]);
    GetDeviceThreadIdKinds = "ompd_get_device_thread_id_kinds", V5_2, None, Some(&[
        handle("device_handle", AS),
        out("kinds", "ompd_thread_id_t **"),
        out("thread_id_sizes", "ompd_size_t **"),
        out("count", "int *"),
    ]);
    GetDeviceFromThread = "ompd_get_device_from_thread", V5_2, None, Some(&[
        handle("thread_handle", T),
        new_handle("device", AS),
    ]);
    GetVersion = "ompd_get_version", Tr2, TR_ONLY, None;
    ReleaseAddressSpaceHandle = "ompd_release_address_space_handle", Tr2, TR_ONLY, None;
    GetThreads = "ompd_get_threads", Draft2014, TR_ONLY, None;
    GetMasterThreadInParallel = "ompd_get_master_thread_in_parallel", Tr2, TR_ONLY, None;
    ReleaseThreadHandle = "ompd_release_thread_handle", Tr2, TR_ONLY, None;
    GetThreadHandleStringId = "ompd_get_thread_handle_string_id", Tr2, TR_ONLY, None;
    GetTopParallelRegion = "ompd_get_top_parallel_region", Tr2, TR_ONLY, None;
    ReleaseParallelHandle = "ompd_release_parallel_handle", Tr2, TR_ONLY, None;
    GetParallelHandleStringId = "ompd_get_parallel_handle_string_id", Tr2, TR_ONLY, None;
    GetTopTaskRegion = "ompd_get_top_task_region", Draft2014, TR_ONLY, None;
    GetGeneratingAncestorTaskRegion = "ompd_get_generating_ancestor_task_region", Tr2, TR_ONLY,
        None;
    GetSchedulingAncestorTaskRegion = "ompd_get_scheduling_ancestor_task_region", Tr2, TR_ONLY,
        None;
    GetImplicitTaskInParallel = "ompd_get_implicit_task_in_parallel", Draft2014, TR_ONLY, None;
    ReleaseTaskHandle = "ompd_release_task_handle", Tr2, TR_ONLY, None;
    GetTaskHandleStringId = "ompd_get_task_handle_string_id", Tr2, TR_ONLY, None;
    GetNumProcs = "ompd_get_num_procs", Draft2014, TR_ONLY, None;
    GetThreadLimit = "ompd_get_thread_limit", Draft2014, TR_ONLY, None;
    GetNumThreads = "ompd_get_num_threads", Draft2014, TR_ONLY, None;
    GetActiveLevel = "ompd_get_active_level", Draft2014, TR_ONLY, None;
    GetParallelFunction = "ompd_get_parallel_function", Tr2, TR_ONLY, None;
    GetOsthread = "ompd_get_osthread", Draft2014, TR_ONLY, None;
    GetMaxThreads = "ompd_get_max_threads", Draft2014, TR_ONLY, None;
    GetThreadNum = "ompd_get_thread_num", Draft2014, TR_ONLY, None;
    InParallel = "ompd_in_parallel", Draft2014, TR_ONLY, None;
    InFinal = "ompd_in_final", Draft2014, TR_ONLY, None;
    GetDynamic = "ompd_get_dynamic", Draft2014, TR_ONLY, None;
    GetNested = "ompd_get_nested", Draft2014, TR_ONLY, None;
    GetMaxActiveLevels = "ompd_get_max_active_levels", Draft2014, TR_ONLY, None;
    GetSchedule = "ompd_get_schedule", Draft2014, TR_ONLY, None;
    GetProcBind = "ompd_get_proc_bind", Draft2014, TR_ONLY, None;
    IsImplicit = "ompd_is_implicit", Tr2, TR_ONLY, None;
    ReleaseDisplayControlVars = "ompd_release_display_control_vars", Tr2, TR_ONLY, None;
    // The 2014 draft's own routines, which TR 2.001 renamed or dropped.
    DisplayControlVars = "ompd_display_control_vars", Draft2014, DRAFT_ONLY, None;
    Enable = "ompd_enable", Draft2014, DRAFT_ONLY, None;
    GetAncestorTaskHandle = "ompd_get_ancestor_task_handle", Draft2014, DRAFT_ONLY, None;
    GetBreakpoints = "ompd_get_breakpoints", Draft2014, DRAFT_ONLY, None;
    GetErrorString = "ompd_get_error_string", Draft2014, DRAFT_ONLY, None;
    GetInnermostParallelRegion = "ompd_get_innermost_parallel_region", Draft2014, DRAFT_ONLY,
        None;
    GetLevel = "ompd_get_level", Draft2014, DRAFT_ONLY, None;
    GetParallelId = "ompd_get_parallel_id", Draft2014, DRAFT_ONLY, None;
    GetTaskId = "ompd_get_task_id", Draft2014, DRAFT_ONLY, None;
    GetVersionCompatibility = "ompd_get_version_compatibility", Draft2014, DRAFT_ONLY, None;
}

/// Dropped (or renamed) by 5.0.
const TR_ONLY: Option<Generation> = Some(Generation::V5_0);

/// Dropped (or renamed) by TR 2.001.
const DRAFT_ONLY: Option<Generation> = Some(Generation::Tr2);

impl EntryPoint {
    /// The entry point exported under `name`, if the table knows it.
    pub fn from_name(name: &str) -> Option<EntryPoint> {
        EntryPoint::ALL.iter().copied().find(|e| e.name() == name)
    }

    /// The entry point whose name is `ompd_` followed by `short`; usable in constants, where an
    /// unknown name stops the build.
    pub const fn by_short_name(short: &str) -> EntryPoint {
        let mut i = 0;
        while i < EntryPoint::ALL.len() {
            let e = EntryPoint::ALL[i];
            if eq_suffix(e.name().as_bytes(), 5, short.as_bytes()) {
                return e;
            }
            i += 1;
        }
        panic!("not an OMPD entry point of the table")
    }

    /// The name without its `ompd_` prefix (the form check ids use).
    pub fn short_name(self) -> &'static str {
        &self.name()["ompd_".len()..]
    }

    /// The generation that introduced the name.
    pub fn introduced(self) -> Generation {
        self.row().since
    }

    /// The generation that dropped (or renamed) it, if one did.
    pub fn removed(self) -> Option<Generation> {
        self.row().until
    }

    /// True when the header of `g` declares it.
    pub fn declared_in(self, g: Generation) -> bool {
        self.introduced() <= g && self.removed().is_none_or(|r| g < r)
    }

    /// The first generation whose header gives it its 5.0+ signature and meaning: 5.0 for a
    /// routine whose TR form 5.0 changed ([`FORM_CHANGED_IN_5_0`]), TR 2.001 for the other
    /// routines of the 2014 draft (each took a debugger context) but `ompd_get_version_string`,
    /// and otherwise the generation that introduced it.
    pub fn form_since(self) -> Generation {
        let draft_form = self == EntryPoint::GetVersionString;
        if FORM_CHANGED_IN_5_0.contains(&self) {
            Generation::V5_0
        } else if self.introduced() == Generation::Draft2014 && !draft_form {
            Generation::Tr2
        } else {
            self.introduced()
        }
    }

    /// The TR 2.001 routine that 5.0 renamed to this one, with the same meaning, and whether
    /// it also has the same form ([`TR_NAMES`]).
    pub fn tr_name(self) -> Option<(EntryPoint, bool)> {
        TR_NAMES
            .iter()
            .find(|(v5, _, _)| *v5 == self)
            .map(|(_, tr, same)| (*tr, *same))
    }

    /// True when a library of `g` has the routine: the header of `g` declares it, or the TR
    /// routine 5.0 renamed to it.
    pub fn served_in(self, g: Generation) -> bool {
        self.declared_in(g) || self.tr_name().is_some_and(|(tr, _)| tr.declared_in(g))
    }

    /// True when the header of `g` declares the name with another form than the 5.x one.
    pub fn other_form_in(self, g: Generation) -> bool {
        self.introduced() <= g && self.form_since() > g
    }

    /// The arguments of its 5.0+ signature, in declaration order; `None` for a TR-only routine
    /// (the suite never calls those and mirrors no TR signature).
    pub fn args(self) -> Option<&'static [Arg]> {
        self.row().args
    }

    /// The pointer arguments, in declaration order (none for a TR-only routine).
    pub fn pointer_args(self) -> impl Iterator<Item = &'static Arg> {
        self.args().unwrap_or(&[]).iter().filter(|a| a.is_pointer())
    }

    /// The pointer argument called `name`, if there is one.
    pub fn pointer_arg(self, name: &str) -> Option<&'static Arg> {
        self.pointer_args().find(|a| a.name == name)
    }
}

/// The routines TR 2.001 declares under the same name as 5.0 but with another signature or
/// meaning (TR 2.001 §4.1, §7.2, §10.2, §11.3): `ompd_initialize` took no API version,
/// `ompd_get_thread_in_parallel` gave a vector, `ompd_get_task_frame` two plain addresses, and
/// `ompd_get_state` values of the TR's own `ompd_state_t`, not OMPT's. The thread-id kind of
/// `ompd_get_thread_handle` is not such a change: the TR's `ompd_osthread_kind_t` enum has
/// 5.0's values in the same order, and an `int` and a 64-bit `ompd_thread_id_t` argument are
/// passed alike in a register on the ABIs the harness runs on.
pub const FORM_CHANGED_IN_5_0: &[EntryPoint] = &[
    EntryPoint::Initialize,
    EntryPoint::GetThreadInParallel,
    EntryPoint::GetTaskFrame,
    EntryPoint::GetState,
];

/// The TR 2.001 routines that 5.0 renamed, keeping their meaning: (5.x routine, TR routine,
/// same form). TR 2.001 §4.1, §4.3, §7.1–7.4, §10.1, §13; the checklist's table of
/// generations. Three changed their form too: the display-control release (the TR's takes the
/// vector, 5.0's its address), the API version query (an `int`, 5.0's an `ompd_word_t`) and the
/// implicit tasks of a region (the TR gives them all in a vector, 5.0 one by thread number).
pub const TR_NAMES: &[(EntryPoint, EntryPoint, bool)] = {
    use EntryPoint as E;
    &[
        (E::RelAddressSpaceHandle, E::ReleaseAddressSpaceHandle, true),
        (E::RelThreadHandle, E::ReleaseThreadHandle, true),
        (E::RelParallelHandle, E::ReleaseParallelHandle, true),
        (E::RelTaskHandle, E::ReleaseTaskHandle, true),
        (E::GetThreadId, E::GetOsthread, true),
        (E::GetCurrParallelHandle, E::GetTopParallelRegion, true),
        (E::GetCurrTaskHandle, E::GetTopTaskRegion, true),
        (
            E::GetGeneratingTaskHandle,
            E::GetGeneratingAncestorTaskRegion,
            true,
        ),
        (
            E::GetSchedulingTaskHandle,
            E::GetSchedulingAncestorTaskRegion,
            true,
        ),
        (
            E::RelDisplayControlVars,
            E::ReleaseDisplayControlVars,
            false,
        ),
        (E::GetApiVersion, E::GetVersion, false),
        (E::GetTaskInParallel, E::GetImplicitTaskInParallel, false),
    ]
};

/// True when `a` and `b` are the same string; usable in constants (a table lookup by name that
/// stops the build on an unknown one).
pub const fn str_eq(a: &str, b: &str) -> bool {
    eq_suffix(a.as_bytes(), 0, b.as_bytes())
}

/// True when `name[skip..]` is `short` (a `const` string comparison).
const fn eq_suffix(name: &[u8], skip: usize, short: &[u8]) -> bool {
    if name.len() != skip + short.len() {
        return false;
    }
    let mut i = 0;
    while i < short.len() {
        if name[skip + i] != short[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// An entry point serializes as its exported symbol name.
impl serde::Serialize for EntryPoint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl std::fmt::Display for EntryPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests;
