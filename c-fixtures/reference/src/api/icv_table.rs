//! The one table of the ICVs the library enumerates: id (its position + 1), name, scope, where
//! the runtime keeps the value, and the first generation that names it.

use crate::layout::{self, Field, Size};
use ompd_abi::{Generation, Scope};

/// Where an ICV's value lives in the runtime.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    /// The task's data environment (`td_icvs`): a scalar field, signed.
    TaskField(Field),
    /// nthreads-var: `td_icvs.nproc`, then `__kmp_nested_nth` past the task's level.
    NthreadsList,
    /// bind-var: `td_icvs.proc_bind`, then `__kmp_nested_proc_bind` past the task's level.
    BindList,
    /// run-sched-var: `td_icvs.sched`.
    Schedule,
    /// A global scalar of the width of a layout size.
    Global(&'static [u8], Size),
    /// A global `char *`; the text an unset (NULL) one stands for, when the specification
    /// gives an initial value.
    Text(&'static [u8], Option<&'static [u8]>),
    /// debug-var: whether `ompd_state` is non-zero.
    Debug,
    /// The thread's number in its team (`ds_tid`).
    ThreadNum,
    /// The region's nesting level.
    Level,
    /// The region's active nesting level.
    ActiveLevel,
    /// The region's number of threads.
    TeamSize,
    /// league-size-var: the threads of the league above the region ([`crate::kmp::league_of`]),
    /// 1 outside a teams region.
    LeagueSize,
    /// team-num-var: the number of the team the region lies in within its league, 0 outside a
    /// teams region.
    TeamNum,
    /// The task's `final` flag.
    Final,
    /// Whether the task is implicit (`tasktype` clear); `true`: explicit-task-var, the negation.
    Implicit(bool),
    /// Kept by the runtime where its OMPD layout does not describe it (`llvm-kmp-model.md`
    /// lists every symbol the runtime exports for OMPD): the value is unavailable.
    NotDescribed,
}

/// One ICV the library enumerates.
#[derive(Clone, Copy, Debug)]
pub struct Icv {
    /// Its name, NUL-terminated.
    pub name: &'static [u8],
    /// The scope the library serves it at.
    pub scope: Scope,
    /// Where its value lives.
    pub source: Source,
    /// The first generation that names it.
    pub since: Generation,
}

const fn icv(name: &'static [u8], scope: Scope, source: Source, since: Generation) -> Icv {
    Icv {
        name,
        scope,
        source,
        since,
    }
}

use Generation::{V5_0, V5_1, V5_2, V6_0};
use Source::*;

/// Every ICV, in enumeration order.
pub const ICVS: &[Icv] = &[
    icv(
        b"dyn-var\0",
        Scope::TASK,
        TaskField(Field::IcvDynamic),
        V5_0,
    ),
    icv(b"nthreads-var\0", Scope::TASK, NthreadsList, V5_0),
    icv(b"run-sched-var\0", Scope::TASK, Schedule, V5_0),
    icv(b"def-sched-var\0", Scope::ADDRESS_SPACE, NotDescribed, V5_0),
    icv(b"bind-var\0", Scope::TASK, BindList, V5_0),
    icv(
        b"stacksize-var\0",
        Scope::ADDRESS_SPACE,
        Global(b"__kmp_stksize\0", Size::Stksize),
        V5_0,
    ),
    icv(
        b"wait-policy-var\0",
        Scope::ADDRESS_SPACE,
        NotDescribed,
        V5_0,
    ),
    icv(
        b"thread-limit-var\0",
        Scope::TASK,
        TaskField(Field::IcvThreadLimit),
        V5_0,
    ),
    icv(
        b"max-active-levels-var\0",
        Scope::TASK,
        TaskField(Field::IcvMaxActiveLevels),
        V5_0,
    ),
    icv(b"active-levels-var\0", Scope::PARALLEL, ActiveLevel, V5_0),
    icv(b"levels-var\0", Scope::PARALLEL, Level, V5_0),
    icv(b"place-partition-var\0", Scope::TASK, NotDescribed, V5_0),
    icv(
        b"cancel-var\0",
        Scope::ADDRESS_SPACE,
        Global(b"__kmp_omp_cancellation\0", Size::Cancellation),
        V5_0,
    ),
    icv(
        b"display-affinity-var\0",
        Scope::ADDRESS_SPACE,
        Global(b"__kmp_display_affinity\0", Size::DisplayAffinity),
        V5_0,
    ),
    icv(
        b"affinity-format-var\0",
        Scope::ADDRESS_SPACE,
        Text(b"__kmp_affinity_format\0", None),
        V5_0,
    ),
    icv(
        b"default-device-var\0",
        Scope::TASK,
        TaskField(Field::IcvDefaultDevice),
        V5_0,
    ),
    icv(
        b"target-offload-var\0",
        Scope::ADDRESS_SPACE,
        NotDescribed,
        V5_0,
    ),
    icv(
        b"max-task-priority-var\0",
        Scope::ADDRESS_SPACE,
        Global(b"__kmp_max_task_priority\0", Size::MaxTaskPriority),
        V5_0,
    ),
    icv(
        b"tool-var\0",
        Scope::ADDRESS_SPACE,
        Global(b"__kmp_tool\0", Size::Tool),
        V5_0,
    ),
    icv(
        b"tool-libraries-var\0",
        Scope::ADDRESS_SPACE,
        Text(b"__kmp_tool_libraries\0", Some(b"")),
        V5_0,
    ),
    icv(
        b"tool-verbose-init-var\0",
        Scope::ADDRESS_SPACE,
        Text(b"__kmp_tool_verbose_init\0", Some(b"disabled")),
        V5_1,
    ),
    icv(b"debug-var\0", Scope::ADDRESS_SPACE, Debug, V5_0),
    icv(b"def-allocator-var\0", Scope::TASK, NotDescribed, V5_0),
    icv(
        b"num-procs-var\0",
        Scope::ADDRESS_SPACE,
        Global(b"__kmp_avail_proc\0", Size::AvailProc),
        V5_1,
    ),
    icv(b"thread-num-var\0", Scope::THREAD, ThreadNum, V5_1),
    icv(b"final-task-var\0", Scope::TASK, Final, V5_1),
    icv(b"implicit-task-var\0", Scope::TASK, Implicit(false), V5_1),
    icv(b"explicit-task-var\0", Scope::TASK, Implicit(true), V5_2),
    icv(b"team-size-var\0", Scope::PARALLEL, TeamSize, V5_1),
    icv(b"nteams-var\0", Scope::ADDRESS_SPACE, NotDescribed, V5_1),
    icv(
        b"teams-thread-limit-var\0",
        Scope::ADDRESS_SPACE,
        NotDescribed,
        V5_1,
    ),
    icv(
        b"ompd-num-procs-var\0",
        Scope::ADDRESS_SPACE,
        Global(b"__kmp_avail_proc\0", Size::AvailProc),
        V5_0,
    ),
    icv(b"ompd-thread-num-var\0", Scope::THREAD, ThreadNum, V5_0),
    icv(b"ompd-final-var\0", Scope::TASK, Final, V5_0),
    icv(b"ompd-final-task-var\0", Scope::TASK, Final, V5_1),
    icv(b"ompd-implicit-var\0", Scope::TASK, Implicit(false), V5_0),
    icv(
        b"ompd-implicit-task-var\0",
        Scope::TASK,
        Implicit(false),
        V5_1,
    ),
    icv(b"ompd-team-size-var\0", Scope::PARALLEL, TeamSize, V5_0),
    // OpenMP 6.0's additions. No kmp runtime's layout describes most of them (nor which
    // construct generated a team): their values are unavailable. The league's two are read
    // from the team graph (a league is a team at its parent's nesting level) and served at the
    // teams scope (§39.11: a parallel handle of the region a teams construct generated).
    icv(
        b"available-devices-var\0",
        Scope::ADDRESS_SPACE,
        NotDescribed,
        V6_0,
    ),
    icv(
        b"device-num-var\0",
        Scope::ADDRESS_SPACE,
        NotDescribed,
        V6_0,
    ),
    icv(
        b"free-agent-thread-limit-var\0",
        Scope::ADDRESS_SPACE,
        NotDescribed,
        V6_0,
    ),
    icv(b"free-agent-var\0", Scope::TASK, NotDescribed, V6_0),
    icv(b"league-size-var\0", Scope::TEAMS, LeagueSize, V6_0),
    icv(
        b"num-devices-var\0",
        Scope::ADDRESS_SPACE,
        NotDescribed,
        V6_0,
    ),
    icv(
        b"place-assignment-var\0",
        Scope::ADDRESS_SPACE,
        NotDescribed,
        V6_0,
    ),
    icv(
        b"structured-thread-limit-var\0",
        Scope::TASK,
        NotDescribed,
        V6_0,
    ),
    icv(b"team-generator-var\0", Scope::PARALLEL, NotDescribed, V6_0),
    icv(b"team-num-var\0", Scope::TEAMS, TeamNum, V6_0),
];

/// The most symbols one ICV's source needs.
pub const MAX_NEEDS: usize = 7;

impl Source {
    /// The symbols (layout words and globals) the runtime must define for this source to be
    /// read; unused slots are empty. An ICV whose source the runtime does not describe is
    /// `unavailable` (Intel's runtimes up to 2023.2 describe no `thread_limit` field and no
    /// nested lists). A size the runtime may leave to its C type ([`layout::c_type`]) is not
    /// needed.
    pub fn needs(self) -> [&'static [u8]; MAX_NEEDS] {
        let off = |f| layout::field_slot(f, false).1;
        let size = |f| layout::field_slot(f, true).1;
        let icvs = off(Field::TdIcvs);
        match self {
            TaskField(f) => [icvs, off(f), size(f), b"", b"", b"", b""],
            NthreadsList => list(icvs, NTHREADS),
            BindList => list(icvs, BIND),
            Schedule => [
                icvs,
                off(Field::IcvSched),
                off(Field::SchedType),
                size(Field::SchedType),
                off(Field::SchedChunk),
                size(Field::SchedChunk),
                b"",
            ],
            Global(name, s) => {
                let word = match layout::c_type(s) {
                    Some(_) => b"",
                    None => layout::size_slot(s).1,
                };
                [name, word, b"", b"", b"", b"", b""]
            }
            Text(name, _) => [name, b"", b"", b"", b"", b"", b""],
            Debug => [
                b"ompd_state\0",
                layout::size_slot(Size::OmpdState).1,
                b"",
                b"",
                b"",
                b"",
                b"",
            ],
            _ => [b""; MAX_NEEDS],
        }
    }
}

/// Where a list ICV lives: the task's own value, the start list (a global), and the list's
/// `used` count and items.
#[derive(Clone, Copy, Debug)]
pub struct ListSource {
    /// The field of the task's ICV block holding its own value.
    pub own: Field,
    /// The start list, NUL-terminated.
    pub global: &'static [u8],
    /// The list's count of entries.
    pub used: Field,
    /// The list's array of entries.
    pub items: Field,
}

/// nthreads-var's list.
pub const NTHREADS: ListSource = ListSource {
    own: Field::IcvNproc,
    global: b"__kmp_nested_nth\0",
    used: Field::NthUsed,
    items: Field::NthList,
};

/// bind-var's list.
pub const BIND: ListSource = ListSource {
    own: Field::IcvProcBind,
    global: b"__kmp_nested_proc_bind\0",
    used: Field::BindUsed,
    items: Field::BindList,
};

/// The symbols of a list ICV: the task's ICV block, and every part of its [`ListSource`].
fn list(icvs: &'static [u8], l: ListSource) -> [&'static [u8]; MAX_NEEDS] {
    let (off, size) = (
        |f| layout::field_slot(f, false).1,
        |f| layout::field_slot(f, true).1,
    );
    [
        icvs,
        off(l.own),
        size(l.own),
        l.global,
        off(l.used),
        size(l.used),
        off(l.items),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_needed_symbol_is_terminated_and_lists_need_their_whole_layout() {
        for icv in ICVS {
            for name in icv.source.needs() {
                assert!(name.is_empty() || name.ends_with(b"\0"), "{:?}", icv.name);
            }
        }
        let nth = NthreadsList.needs();
        assert!(nth.contains(&&b"__kmp_nested_nth\0"[..]));
        assert!(nth.contains(&layout::field_slot(Field::NthList, false).1));
        let limit = TaskField(Field::IcvThreadLimit).needs();
        assert!(limit.contains(&&b"ompd_access__kmp_internal_control_t__thread_limit\0"[..]));
        // A size the runtime may leave to its C type is not needed; one it may not, is.
        let stack = Global(b"__kmp_stksize\0", Size::Stksize).needs();
        assert_eq!(stack.iter().filter(|n| !n.is_empty()).count(), 1);
        assert!(Debug
            .needs()
            .contains(&layout::size_slot(Size::OmpdState).1));
    }
}
