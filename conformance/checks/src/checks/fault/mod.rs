//! Fault injection: each OMPD 5.0 entry point that reads the target or allocates is called while
//! the callback table fails in one controlled way ([`ompd_serve::faults`]), and its reaction is
//! judged (OMPD-CB-030 to CB-034, MEM-006, RC-006).
//!
//! Method, per check `fault.<routine>.<kind>`: the routine is called fault-free twice (the first
//! call fills whatever the library caches), and the second call's answer and census (how many
//! reads, allocations, conversions, thread-context lookups and target accesses it made, and which
//! symbols it looked up) are the reference; two fault-free calls that answer differently on the
//! same stopped target are a finding, not a reason to skip. Then, for each position of that kind
//! of callback (every one up to [`CAP`], spread evenly beyond it; every symbol name for missing
//! symbols), a fault-free call is made (it must answer as the reference did), the plan breaks
//! that one callback, the routine is called again, and the plan is cleared. Each call whose fault
//! fired is judged against the fault-free answer it is paired with:
//! - `ok` holds only with that answer (handles compare equal with the library's compare routine;
//!   values are equal); `ok` with another answer, or with an invalid output, fails (CB-030);
//! - a non-ok code passes when it is one the kind accepts and warns otherwise: for reads, lookups,
//!   conversions and thread contexts the callback's own code, `callback_error`, `error`, plus
//!   `device_read_error` for reads and `unavailable` for a missing symbol (CB-031, AMBIG-3); for
//!   an allocation failure `nomem` (CB-033, MEM-006); for a `stale_handle` from the tool,
//!   `stale_handle` (CB-032);
//! - a non-ok call that leaves a block allocated warns (RC-006, CB-034);
//! - a crash kills the worker, and the supervisor attributes it to the check.
//!
//! Afterwards a fault-free call must still give the reference answer (a failure must not stick
//! in the library's caches). A routine that made no callback of the kind has nothing to inject:
//! the check skips and says so, as it does when no planned fault fired. The checks come from one
//! table, [`CHECKS`]: one row per routine, each expanded into one check per fault kind. They run
//! after every other family (a library whose state an injected failure upsets affects no other
//! family); `ompd_process_initialize` runs on a fresh copy of the unit's target.

use crate::known::Fact;
use crate::{describe, Check, Ctx, Input, Judge, Property, Run, Severity, ThreadHandles, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{state, thread_id_kind, Rc, Scope, ICV_UNDEFINED};
use ompd_loader::library::{AnyHandle, AspaceH, Call, Fail, ParallelH, TaskH, ThreadH};
use ompd_serve::callbacks::{self, Target};
use ompd_serve::faults::{Census, Fault, FaultPlan};
use ompd_serve::ledger::Mark;
use sim_target::model::ThreadId;

mod copies;
mod icv;

/// The most positions of one kind injected per check; beyond it positions are spread evenly over
/// the callbacks the routine made.
pub const CAP: u64 = 64;

/// The summary's tail for a kind (after "ompd_X").
macro_rules! summary_tail {
    (read) => {
        " after an injected read_memory/read_string failure returns a non-ok code (the callback's, callback_error, device_read_error or error; another warns) or ok with the fault-free answer"
    };
    (short_read) => {
        " after a short read (read_memory: a prefix and error; read_string: a truncated unterminated string and incomplete) returns a non-ok code (as for a failed read) or ok with the fault-free answer"
    };
    (symbol) => {
        " with a symbol the tool cannot find returns a non-ok code (error, callback_error or unavailable, or incompatible from ompd_process_initialize; another warns) or ok with the fault-free answer"
    };
    (alloc) => {
        " after an injected alloc_memory failure returns ompd_rc_nomem (another non-ok code warns), never ok with another answer, and keeps no block"
    };
    (conversion) => {
        " after an injected device_to_host failure returns a non-ok code (the callback's, callback_error or error; another warns) or ok with the fault-free answer"
    };
    (thread_context) => {
        " after an injected get_thread_context_for_thread_id failure returns a non-ok code (the callback's, callback_error or error; another warns) or ok with the fault-free answer"
    };
    (stale_handle) => {
        " returns ompd_rc_stale_handle when a target-access callback says the context is stale (another non-ok code warns), or ok with the fault-free answer"
    };
}

/// The requirement ids of a kind.
macro_rules! requirements {
    (alloc) => {
        &[
            "OMPD-CB-033",
            "OMPD-MEM-006",
            "OMPD-RC-006",
            "OMPD-CB-030",
            "OMPD-CB-034",
        ]
    };
    (stale_handle) => {
        &["OMPD-CB-032", "OMPD-CB-030", "OMPD-RC-006", "OMPD-CB-034"]
    };
    (short_read) => {
        &[
            "OMPD-CB-030",
            "OMPD-CB-031",
            "OMPD-CB-007",
            "OMPD-RC-006",
            "OMPD-CB-034",
        ]
    };
    ($kind:ident) => {
        &["OMPD-CB-030", "OMPD-CB-031", "OMPD-RC-006", "OMPD-CB-034"]
    };
}

/// The entry points a check of the family calls: `$first` (the routine a fault check judges),
/// those that get and release the thread, parallel and task handles it holds, then `$extra`.
macro_rules! with_held {
    ($($first:expr)?; $($extra:expr),*) => {
        &[
            $($first,)?
            EntryPoint::GetThreadHandle,
            EntryPoint::GetCurrParallelHandle,
            EntryPoint::GetCurrTaskHandle,
            EntryPoint::RelThreadHandle,
            EntryPoint::RelParallelHandle,
            EntryPoint::RelTaskHandle,
            $($extra),*
        ]
    };
}

/// One check of the family: routine (without `ompd_`), fault kind, and the other entry points
/// the check calls besides the thread handles it holds (to compare or release an answer, to find
/// an ICV).
macro_rules! fault_check {
    ($api:literal, $kind:ident, [$($extra:ident),*]) => {
        Check {
            at: crate::here!(),
            id: concat!("fault.", $api, ".", stringify!($kind)),
            requirements: requirements!($kind),
            summary: concat!("ompd_", $api, summary_tail!($kind)),
            severity: Severity::Must,
            entry_points: with_held!(EntryPoint::by_short_name($api); $(EntryPoint::$extra),*),
            real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
            property: Property::ScenariosOnly,
            input: Input::Provoking,
            arg: crate::Arg::Fault(Kind::by_id(stringify!($kind)), EntryPoint::by_short_name($api)),
            run: Run::Worker(run),
            ..Check::TARGET
        }
    };
}

/// One row of the family's table: a routine (without the `ompd_` prefix) with the other entry
/// points its checks call, expanded into one check per fault kind. Each row is its own
/// invocation, so its checks record the row's line.
macro_rules! faults {
    ($api:literal [$($extra:ident),*]) => {
        [
            fault_check!($api, read, [$($extra),*]),
            fault_check!($api, short_read, [$($extra),*]),
            fault_check!($api, symbol, [$($extra),*]),
            fault_check!($api, alloc, [$($extra),*]),
            fault_check!($api, conversion, [$($extra),*]),
            fault_check!($api, thread_context, [$($extra),*]),
            fault_check!($api, stale_handle, [$($extra),*]),
        ]
    };
}

mod code;

pub use code::CHECKS as CODE_CHECKS;

/// The family's table: every routine that reads or allocates.
static ROWS: &[[Check; 7]] = &[
    faults!("get_omp_version" []),
    faults!("get_omp_version_string" []),
    faults!("get_thread_handle"[ThreadHandleCompare]),
    faults!("get_thread_in_parallel"[ThreadHandleCompare]),
    faults!("get_thread_id" []),
    faults!("get_curr_parallel_handle"[ParallelHandleCompare]),
    faults!("get_enclosing_parallel_handle"[ParallelHandleCompare]),
    faults!("get_task_parallel_handle"[ParallelHandleCompare]),
    faults!("get_curr_task_handle"[TaskHandleCompare]),
    faults!("get_generating_task_handle"[TaskHandleCompare]),
    faults!("get_scheduling_task_handle"[TaskHandleCompare]),
    faults!("get_task_in_parallel"[TaskHandleCompare]),
    faults!("get_task_function" []),
    faults!("get_task_frame" []),
    faults!("enumerate_states" []),
    faults!("get_state" []),
    faults!("get_display_control_vars"[RelDisplayControlVars]),
    faults!("enumerate_icvs" []),
    faults!("get_icv_from_scope"[EnumerateIcvs]),
    faults!("get_icv_string_from_scope"[EnumerateIcvs]),
    faults!("get_tool_data" []),
    faults!("process_initialize" [GetOmpVersion, RelAddressSpaceHandle]),
];

/// Checks of this family: every fault kind for every routine that reads or allocates.
pub static CHECKS: &[Check] = ROWS.as_flattened();

/// A kind of fault, as named in check ids.
pub(crate) use crate::FaultKind as Kind;

impl Kind {
    /// How many callbacks of this kind the census counted (symbol names for missing symbols).
    fn count(self, c: &Census) -> u64 {
        match self {
            Kind::Read | Kind::ShortRead => c.reads,
            Kind::Symbol => c.symbols.len() as u64,
            Kind::Alloc => c.allocs,
            Kind::Conversion => c.conversions,
            Kind::ThreadContext => c.thread_contexts,
            Kind::StaleHandle => c.target_accesses,
        }
    }

    /// The callbacks counted, for messages.
    fn callbacks(self) -> &'static str {
        match self {
            Kind::Read | Kind::ShortRead => "read_memory/read_string",
            Kind::Symbol => "symbol_addr_lookup",
            Kind::Alloc => "alloc_memory",
            Kind::Conversion => "device_to_host",
            Kind::ThreadContext => "get_thread_context_for_thread_id",
            Kind::StaleHandle => "target-access",
        }
    }

    /// The fault at 1-based position `k`, and how it reads in messages.
    fn fault(self, c: &Census, k: u64) -> (Fault, String) {
        let n = self.count(c);
        let (fault, what, how) = match self {
            Kind::Read => (Fault::ReadError(k), "read", "failed"),
            Kind::ShortRead => (Fault::ShortRead(k), "read", "came back short"),
            Kind::Symbol => {
                let name = c.symbols[(k - 1) as usize].clone();
                let what = format!("symbol {name} ({k} of {n}) was not found");
                return (Fault::MissingSymbol(name), what);
            }
            Kind::Alloc => (Fault::AllocFailure(k), "allocation", "failed"),
            Kind::Conversion => (Fault::ConversionFailure(k), "conversion", "failed"),
            Kind::ThreadContext => (
                Fault::ThreadContextFailure(k),
                "thread-context lookup",
                "failed",
            ),
            Kind::StaleHandle => (Fault::StaleHandle(k), "target access", "said stale_handle"),
        };
        (fault, format!("{what} #{k} of {n} {how}"))
    }

    /// Whether non-ok `rc` after a failure the callback reported as `own` is a code the kind
    /// accepts (a pass) rather than another one (a warning).
    fn accepts(self, own: Rc, rc: Rc) -> bool {
        match self {
            Kind::Alloc => rc == Rc::NOMEM,
            Kind::StaleHandle => rc == Rc::STALE_HANDLE,
            _ => {
                rc == own
                    || rc == Rc::CALLBACK_ERROR
                    || rc == Rc::ERROR
                    || (matches!(self, Kind::Read | Kind::ShortRead) && rc == Rc::DEVICE_READ_ERROR)
                    || (self == Kind::Symbol && rc == Rc::UNAVAILABLE)
            }
        }
    }

    /// Whether non-ok `rc` from `entry` after a failure the callback reported as `own` is a code
    /// the text names: one the kind accepts, or `incompatible` from `ompd_process_initialize`
    /// after a missing symbol (the process lacks part of the runtime, and the library declines
    /// it: OMPD-PROC-002).
    fn named(self, entry: EntryPoint, own: Rc, rc: Rc) -> bool {
        self.accepts(own, rc)
            || (entry == EntryPoint::ProcessInitialize
                && self == Kind::Symbol
                && rc == Rc::INCOMPATIBLE)
    }

    /// The requirement that lets a non-ok code other than the accepted ones warn, not fail
    /// (each kind's checks cite it).
    fn code_allowed_by(self) -> &'static str {
        match self {
            Kind::Alloc => "OMPD-MEM-006",
            Kind::StaleHandle => "OMPD-CB-032",
            _ => "OMPD-CB-031",
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Kind::Alloc => "after each injected alloc_memory failure: nomem (another non-ok code warns), or ok with the fault-free answer; no block left allocated; a later fault-free call answers as before",
            Kind::StaleHandle => "after each injected stale_handle: stale_handle (another non-ok code warns), or ok with the fault-free answer; no block left allocated; a later fault-free call answers as before",
            _ => "after each injected failure: the callback's code, callback_error, error (device_read_error for reads, unavailable for a missing symbol, incompatible when it declines the process at ompd_process_initialize; another non-ok code warns), or ok with the fault-free answer; no block left allocated; a later fault-free call answers as before",
        }
    }
}

/// The 1-based positions injected when the routine made `n` callbacks of the kind: all of them
/// up to [`CAP`], else [`CAP`] spread evenly from the first to the last.
fn positions(n: u64) -> Vec<u64> {
    if n <= CAP {
        return (1..=n).collect();
    }
    let mut v: Vec<u64> = (0..CAP).map(|i| 1 + i * (n - 1) / (CAP - 1)).collect();
    v.dedup();
    v
}

/// What a routine answered: a handle (compared with the library's compare routine) or a value
/// rendered as text.
enum Answer<'l> {
    Aspace(AspaceH<'l>),
    Thread(ThreadH<'l>),
    Parallel(ParallelH<'l>),
    Task(TaskH<'l>),
    Text(String),
}

/// Why `got` is not the answer `want` is, or `None` when it is. Handles are compared by the
/// library (0 = the same entity); an address space by the OpenMP version it reports.
fn differs(ctx: &Ctx, want: &Answer, got: &Answer) -> Option<String> {
    let cmp = |what: &str, c: Call<i32>| match c {
        Ok(0) => None,
        Ok(v) => Some(format!(
            "a {what} handle comparing {v} with the fault-free one"
        )),
        Err(e) => Some(format!("a {what} handle the compare routine refuses ({e})")),
    };
    match (want, got) {
        (Answer::Thread(a), Answer::Thread(b)) => cmp("thread", ctx.lib.thread_compare(a, b)),
        (Answer::Parallel(a), Answer::Parallel(b)) => {
            cmp("parallel", ctx.lib.parallel_compare(a, b))
        }
        (Answer::Task(a), Answer::Task(b)) => cmp("task", ctx.lib.task_compare(a, b)),
        (Answer::Aspace(a), Answer::Aspace(b)) => {
            let (x, y) = (ctx.lib.get_omp_version(a), ctx.lib.get_omp_version(b));
            (x != y).then(|| {
                format!(
                    "an address space whose OpenMP version is {} (fault-free: {})",
                    describe(&y),
                    describe(&x)
                )
            })
        }
        (Answer::Text(a), Answer::Text(b)) => (a != b).then(|| format!("{b} (fault-free: {a})")),
        _ => Some("an answer of another kind".into()),
    }
}

/// A value answer, rendered for comparison.
fn shown<'l, T: std::fmt::Debug>(c: Call<T>) -> Call<Answer<'l>> {
    c.map(|v| Answer::Text(format!("{v:?}")))
}

/// The valid arguments of one routine, obtained fault-free before any injection.
struct Subjects<'a, 'l> {
    held: &'a ThreadHandles<'l>,
    thread_id: Vec<u8>,
    /// For the ICV getters: the handle, scope and id of an ICV the getter answers.
    icv: Option<(AnyHandle<'a, 'l>, Scope, u64)>,
    /// For `ompd_process_initialize`: a fresh copy of the unit's target.
    fresh: Option<&'static Target>,
    /// Each `ompd_process_initialize` goes to a fresh copy of the library: the unit's instance
    /// opens no second address space (lifecycle.second_process.own_answers judges that).
    copies: bool,
    /// With `copies`: the sizes of the blocks a copy's fault-free `ompd_process_initialize` keeps
    /// after its address space is released (the instance's own state, made by its first
    /// address space): a failed call that keeps them too leaves no block of its own behind.
    kept: Vec<u64>,
}

impl<'a, 'l> Subjects<'a, 'l> {
    /// The arguments of `entry` for thread `t`, whose handles are `held` (no ICV yet; a fresh
    /// copy of the unit's target for `ompd_process_initialize`).
    fn new(ctx: &Ctx<'l>, held: &'a ThreadHandles<'l>, t: ThreadId, entry: EntryPoint) -> Self {
        Subjects {
            held,
            thread_id: ctx.thread_id(t, thread_id_kind::PTHREAD),
            icv: None,
            fresh: (entry == EntryPoint::ProcessInitialize)
                .then(|| ctx.fresh_target().ok())
                .flatten(),
            copies: false,
            kept: Vec::new(),
        }
        .with_copies_if_needed(ctx)
    }
}

/// Calls `entry` once with the subjects' arguments. `Err` says why it cannot be called.
fn call<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    s: &Subjects<'_, 'l>,
    entry: EntryPoint,
) -> Result<Call<Answer<'l>>, String> {
    let lib = ctx.lib;
    let thread = || s.held.thread.as_ref().ok_or("no thread handle to pass");
    let parallel = || s.held.parallel.as_ref().ok_or("no parallel handle to pass");
    let task = || s.held.task.as_ref().ok_or("no task handle to pass");
    let icv = || s.icv.ok_or("no ICV the getter answers");
    let text = |c: Call<String>| c.map(Answer::Text);
    Ok(match entry {
        EntryPoint::ProcessInitialize => {
            let fresh = s.fresh.ok_or("no fresh target")?;
            if s.copies {
                return copies::initialize_copy(ctx, fresh);
            }
            lib.process_initialize(fresh).map(Answer::Aspace)
        }
        EntryPoint::GetOmpVersion => shown(lib.get_omp_version(ah)),
        EntryPoint::GetOmpVersionString => text(lib.get_omp_version_string(ah)),
        EntryPoint::GetThreadHandle => lib
            .get_thread_handle(ah, thread_id_kind::PTHREAD, &s.thread_id)
            .map(Answer::Thread),
        EntryPoint::GetThreadInParallel => lib
            .get_thread_in_parallel(parallel()?, 0)
            .map(Answer::Thread),
        EntryPoint::GetThreadId => {
            shown(lib.get_thread_id(thread()?, thread_id_kind::PTHREAD, s.thread_id.len()))
        }
        EntryPoint::GetCurrParallelHandle => lib
            .get_curr_parallel_handle(thread()?)
            .map(Answer::Parallel),
        EntryPoint::GetEnclosingParallelHandle => lib
            .get_enclosing_parallel_handle(parallel()?)
            .map(Answer::Parallel),
        EntryPoint::GetTaskParallelHandle => {
            lib.get_task_parallel_handle(task()?).map(Answer::Parallel)
        }
        EntryPoint::GetCurrTaskHandle => lib.get_curr_task_handle(thread()?).map(Answer::Task),
        EntryPoint::GetGeneratingTaskHandle => {
            lib.get_generating_task_handle(task()?).map(Answer::Task)
        }
        EntryPoint::GetSchedulingTaskHandle => {
            lib.get_scheduling_task_handle(task()?).map(Answer::Task)
        }
        EntryPoint::GetTaskInParallel => lib.get_task_in_parallel(parallel()?, 0).map(Answer::Task),
        EntryPoint::GetTaskFunction => shown(lib.get_task_function(task()?)),
        EntryPoint::GetTaskFrame => shown(lib.get_task_frame(task()?)),
        EntryPoint::EnumerateStates => shown(lib.enumerate_states(ah, state::UNDEFINED)),
        EntryPoint::GetState => shown(lib.get_state(thread()?, true)),
        EntryPoint::GetDisplayControlVars => lib.get_display_control_vars(ah).map(|v| {
            let texts: Vec<&str> = v.entries.iter().map(|e| e.text.as_str()).collect();
            Answer::Text(format!("{texts:?}"))
        }),
        EntryPoint::EnumerateIcvs => shown(lib.enumerate_icvs(ah, ICV_UNDEFINED)),
        EntryPoint::GetIcvFromScope => {
            let (h, scope, id) = icv()?;
            match lib.get_icv(h, scope, id) {
                Ok((rc, v)) if rc.is_ok() => Ok(Answer::Text(format!("{v:?}"))),
                Ok((rc, _)) => Err(Fail::Rc(rc)),
                Err(e) => Err(e),
            }
        }
        EntryPoint::GetIcvStringFromScope => {
            let (h, scope, id) = icv()?;
            text(lib.get_icv_string(h, scope, id))
        }
        EntryPoint::GetToolData => {
            shown(lib.get_tool_data(AnyHandle::Thread(thread()?), Scope::THREAD))
        }
        _ => return Err(format!("{entry} is not in the fault table")),
    })
}

fn run(ctx: &mut Ctx, arg: crate::Arg) -> Verdict {
    let crate::Arg::Fault(kind, entry) = arg else {
        return Verdict::harness_error(format!("a fault row gives {arg:?}"));
    };
    let ah = crate::aspace_or_skip!(ctx);
    if ctx.model.threads.is_empty() {
        return Verdict::skip("the scenario has no OpenMP thread");
    }
    let t = match ctx.subject_thread(entry) {
        Ok(t) => t,
        Err(why) => return Verdict::skip(format!("no thread of the scenario {why}")),
    };
    let held = ctx.thread_handles(ah, t);
    let subjects = Subjects::new(ctx, &held, t, entry);
    if subjects.copies {
        return copies::on_copies(ctx, ah, subjects, kind);
    }
    match entry {
        EntryPoint::GetIcvFromScope | EntryPoint::GetIcvStringFromScope => {
            icv::every_icv(ctx, ah, subjects, entry, kind)
        }
        _ => judge(ctx, ah, &subjects, entry, kind),
    }
}

/// One call of `entry` under `plan`: its result and the census of the callbacks it made, or why
/// it cannot be called.
fn planned<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    s: &Subjects<'_, 'l>,
    entry: EntryPoint,
    fault: Option<Fault>,
) -> Result<(Call<Answer<'l>>, Census), String> {
    let guard = callbacks::set_fault_plan(FaultPlan {
        site: Some(entry.name()),
        fault,
    });
    let got = call(ctx, ah, s, entry).map_err(|why| format!("{entry} is not called: {why}"))?;
    Ok((got, guard.finish()))
}

fn judge(ctx: &Ctx, ah: &AspaceH, s: &Subjects, entry: EntryPoint, kind: Kind) -> Verdict {
    let mut j = Judge::new(ctx, kind.expected());
    match judge_into(ctx, ah, s, entry, kind, &mut j) {
        Judged::Injected(n) => noted(j.verdict(), &n.note(kind)),
        Judged::Nothing(why) => j.verdict_or_skip(|| why),
    }
}

/// `v` with `note` appended to its detail.
fn noted(mut v: Verdict, note: &str) -> Verdict {
    v.detail = if v.detail.is_empty() {
        note.to_string()
    } else {
        format!("{}; {note}", v.detail)
    };
    v
}

/// How many failures were planned and fired, and how many callbacks of the kind the
/// fault-free call made.
#[derive(Clone, Copy, Default)]
struct Counts {
    planned: usize,
    fired: usize,
    calls: u64,
}

impl Counts {
    /// The counts of two judgements together.
    fn plus(self, o: Counts) -> Counts {
        Counts {
            planned: self.planned + o.planned,
            fired: self.fired + o.fired,
            calls: self.calls + o.calls,
        }
    }

    fn note(self, kind: Kind) -> String {
        format!(
            "{} of {} planned failure(s) fired; {} {} call(s) fault-free",
            self.fired,
            self.planned,
            self.calls,
            kind.callbacks()
        )
    }
}

/// What [`judge_into`] did besides the facts it recorded.
enum Judged {
    /// Failures were injected and judged.
    Injected(Counts),
    /// Nothing was injected: why (the skip reason when no fact was recorded either).
    Nothing(String),
}

/// Judges `entry` under failures of `kind` with the subjects `s`, recording the facts in `j`.
fn judge_into(
    ctx: &Ctx,
    ah: &AspaceH,
    s: &Subjects,
    entry: EntryPoint,
    kind: Kind,
    j: &mut Judge,
) -> Judged {
    let r = match reference(ctx, ah, s, entry, j) {
        Ok(Some(r)) => r,
        Ok(None) => return Judged::Nothing(format!("{entry} answered only once")),
        Err(why) => return Judged::Nothing(why),
    };
    let n = kind.count(&r.census);
    if n == 0 {
        return Judged::Nothing(format!(
            "{entry} made no {} call when fault-free: nothing to inject",
            kind.callbacks()
        ));
    }
    let (planned, fired) = match inject(ctx, ah, s, entry, kind, &r, j) {
        Ok(counts) => counts,
        Err(why) => return Judged::Nothing(why),
    };
    if fired == 0 {
        return Judged::Nothing(format!(
            "none of the {planned} planned {} failures fired ({n} such calls when fault-free)",
            kind.callbacks()
        ));
    }
    recovered(ctx, ah, s, entry, &r.want, j);
    Judged::Injected(Counts {
        planned,
        fired,
        calls: n,
    })
}

/// The fault-free answer of a routine and the callbacks the call made.
struct Reference<'l> {
    want: Answer<'l>,
    census: Census,
}

/// The fault-free answer to protect (the second of two fault-free calls: the first fills any
/// cache) with the callbacks it made, or why there is none. Two
/// fault-free calls that answer differently on the same stopped target are a finding (in `j`),
/// and the second answer is the reference; `None` when only one of them answered (a finding,
/// with nothing to protect).
fn reference<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    s: &Subjects<'_, 'l>,
    entry: EntryPoint,
    j: &mut Judge,
) -> Result<Option<Reference<'l>>, String> {
    let reference = planned(ctx, ah, s, entry, None).and_then(|(first, _)| {
        let (second, census) = planned(ctx, ah, s, entry, None)?;
        Ok((first, second, census))
    });
    let (first, want, census) = reference?;
    match (first, want) {
        (Ok(a), Ok(b)) => {
            if let Some(d) = differs(ctx, &a, &b) {
                j.fail(format!(
                    "two fault-free calls of {entry} on the same stopped target disagree (the second gives {d})"
                ));
            }
            Ok(Some(Reference { want: b, census }))
        }
        (Ok(_), Err(e)) | (Err(e), Ok(_)) => {
            j.fail(format!(
                "of two fault-free calls of {entry} on the same stopped target one answers and one fails ({e})"
            ));
            Ok(None)
        }
        (Err(e), Err(_)) => Err(format!(
            "the fault-free call of {entry} fails ({e}): no answer to protect"
        )),
    }
}

/// Calls `entry` once per planned position ([`positions`] of the reference's calls of the kind)
/// with the kind's failure injected there and judges each call whose failure fired: the numbers
/// planned and fired, or why the routine could not be called.
fn inject<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    s: &Subjects<'_, 'l>,
    entry: EntryPoint,
    kind: Kind,
    r: &Reference<'l>,
    j: &mut Judge,
) -> Result<(usize, usize), String> {
    let planned_at = positions(kind.count(&r.census));
    let mut fired = 0usize;
    for &k in &planned_at {
        let want = paired(ctx, ah, s, entry, r, k, j)?;
        let (fault, what) = kind.fault(&r.census, k);
        let mark = callbacks::ledger().mark();
        let (got, c) = planned(ctx, ah, s, entry, Some(fault))?;
        let Some(injected) = c.injected.first() else {
            continue;
        };
        fired += 1;
        let at = Injected {
            what: format!("{what} ({})", injected.rc),
            own: injected.rc,
            mark,
            entry,
            kept: &s.kept,
        };
        judge_one(ctx, j, kind, want.as_ref().unwrap_or(&r.want), got, &at);
    }
    Ok((planned_at.len(), fired))
}

/// The fault-free answer paired with injection `k`: a fault-free call made just before it. It
/// must equal the reference (a library that answers differently on the same stopped target is a
/// finding, in `j`); the faulted call is judged against it. `None` when it failed (also a
/// finding): the reference is used instead.
fn paired<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    s: &Subjects<'_, 'l>,
    entry: EntryPoint,
    r: &Reference<'l>,
    k: u64,
    j: &mut Judge,
) -> Result<Option<Answer<'l>>, String> {
    let (base, _) = planned(ctx, ah, s, entry, None)?;
    match base {
        Ok(b) => {
            if let Some(d) = differs(ctx, &r.want, &b) {
                j.fail(format!(
                    "the fault-free call paired with injection {k} answers {d}, unlike the first fault-free answers"
                ));
            }
            Ok(Some(b))
        }
        Err(e) => {
            j.fail(format!(
                "the fault-free call paired with injection {k} fails ({e}), though earlier ones answered"
            ));
            Ok(None)
        }
    }
}

/// After the injected failures, a fault-free call must give the fault-free answer again.
fn recovered<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    s: &Subjects<'_, 'l>,
    entry: EntryPoint,
    want: &Answer<'l>,
    j: &mut Judge,
) {
    match planned(ctx, ah, s, entry, None) {
        Ok((after, _)) => {
            let stuck = match &after {
                Ok(a) => differs(ctx, want, a),
                Err(e) => Some(e.to_string()),
            };
            if let Some(d) = stuck {
                j.fail(format!(
                    "after the injected failures a fault-free call answers {d}"
                ));
            }
        }
        Err(why) => j.fail(format!("after the injected failures {why}")),
    }
}

/// One injected failure that fired: how it reads, the code the callback returned, and the ledger
/// position before the call.
struct Injected<'k> {
    what: String,
    own: Rc,
    mark: Mark,
    /// The routine called.
    entry: EntryPoint,
    /// The sizes of blocks a whole fault-free call keeps too ([`Subjects::kept`]): not left by
    /// the failure.
    kept: &'k [u64],
}

/// Judges the answer `got` of one call under an injected failure: `ok` only with the fault-free
/// answer `want`, a non-ok code the kind accepts (another warns), no block left allocated by a
/// failed call (warns), and nothing invalid passed on to the tool (the callbacks' violations,
/// which fail: they are this check's finding, not the unit's contract check's).
fn judge_one(
    ctx: &Ctx,
    j: &mut Judge,
    kind: Kind,
    want: &Answer,
    got: Call<Answer>,
    at: &Injected,
) {
    let what = &at.what;
    match got {
        Ok(answer) => match differs(ctx, want, &answer) {
            None => j.holds(),
            Some(d) => j.fail(format!("{what} → ok with {d}")),
        },
        Err(Fail::Rc(rc)) => {
            if kind.named(at.entry, at.own, rc) {
                j.holds();
            } else {
                j.allowed(kind.code_allowed_by(), format!("{what} → {rc}"));
            }
            let l = callbacks::ledger();
            let mut kept = at.kept.to_vec();
            let mut live = l.since(at.mark).new_live;
            live.retain(|b| match kept.iter().position(|&k| k == b.size) {
                Some(i) => {
                    kept.swap_remove(i);
                    false
                }
                None => true,
            });
            if let Some(b) = live.first() {
                j.allowed(
                    "OMPD-RC-006",
                    format!(
                        "{what} → {rc}, leaving {} block(s) allocated (first: {} bytes)",
                        live.len(),
                        b.size
                    ),
                );
            }
        }
        Err(e) => j.fail(format!("{what} → {e}")),
    }
    let provoked = callbacks::ledger().take_violations_since(at.mark);
    if let Some(v) = provoked.first() {
        j.fail(format!(
            "{what} → the library then handed the tool something invalid: {v:?} ({} violation(s))",
            provoked.len()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_cover_everything_up_to_the_cap_then_spread() {
        assert_eq!(positions(0), Vec::<u64>::new());
        assert_eq!(positions(3), [1, 2, 3]);
        assert_eq!(positions(CAP).len() as u64, CAP);
        let p = positions(1000);
        assert_eq!(p.len() as u64, CAP);
        assert_eq!((p[0], p[p.len() - 1]), (1, 1000));
        assert!(p.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn every_row_names_a_known_entry_point_and_every_kind_parses() {
        for c in CHECKS {
            let crate::Arg::Fault(kind, e) = c.arg else {
                panic!("{}: {:?}", c.id, c.arg)
            };
            assert_eq!(c.entry_points[0], e);
            for ep in c.entry_points {
                assert!(ep.declared_in(crate::Profile::V5_0), "{}: {ep}", c.id);
            }
            assert_eq!(c.id, format!("fault.{}.{}", e.short_name(), kind.id()));
            // Every kind accepts the callback's own code except the two with a preferred one.
            let own_passes = kind.accepts(Rc::ERROR, Rc::ERROR);
            assert_eq!(own_passes, !matches!(kind, Kind::Alloc | Kind::StaleHandle));
        }
        assert_eq!(CHECKS.len() % 7, 0);
    }

    #[test]
    fn accepted_codes_follow_the_kind() {
        assert!(Kind::Alloc.accepts(Rc::NOMEM, Rc::NOMEM));
        assert!(!Kind::Alloc.accepts(Rc::NOMEM, Rc::ERROR));
        assert!(Kind::StaleHandle.accepts(Rc::STALE_HANDLE, Rc::STALE_HANDLE));
        assert!(!Kind::StaleHandle.accepts(Rc::STALE_HANDLE, Rc::ERROR));
        assert!(Kind::Read.accepts(Rc::ERROR, Rc::DEVICE_READ_ERROR));
        assert!(!Kind::Conversion.accepts(Rc::ERROR, Rc::DEVICE_READ_ERROR));
        assert!(Kind::ShortRead.accepts(Rc::INCOMPLETE, Rc::INCOMPLETE));
        assert!(Kind::Symbol.accepts(Rc::ERROR, Rc::UNAVAILABLE));
        assert!(!Kind::Read.accepts(Rc::ERROR, Rc::UNAVAILABLE));
        assert!(!Kind::ThreadContext.accepts(Rc::ERROR, Rc::BAD_INPUT));
    }
}
