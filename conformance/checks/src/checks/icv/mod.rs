//! ICVs: the enumeration, the standard names of the profile, and the value of every standard ICV
//! at every scope the library enumerates it for, judged against the model.
//!
//! [`strings`] holds the string getter and the id and scope contract both getters share.

pub(crate) mod names;
pub(crate) mod strings;

use crate::known::Fact;
use crate::{Check, Ctx, IcvEntry, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{Rc, Scope, ICV_UNDEFINED};
use ompd_loader::library::{AnyHandle, AspaceH, Fail, ParallelH, TaskH, ThreadH};
use ompd_serve::source::SymbolError;
use sim_target::model::{Model, RegionId, TaskId, ThreadId};
use std::collections::BTreeSet;

/// Standard ICVs the kmp runtime keeps where its OMPD layout describes no memory (every
/// `ompd_sizeof__`/`ompd_access__` symbol it exports is listed in `llvm-kmp-model.md` §2.2, and
/// none reaches them), so the model holds no value for them: `ompd_rc_unavailable` is the
/// honest answer of a library that enumerates them, and no answer of theirs is judged.
pub const UNMODELLED: &[&str] = &[
    "def-sched-var",
    "wait-policy-var",
    "place-partition-var",
    "target-offload-var",
    "def-allocator-var",
    "nteams-var",
    "teams-thread-limit-var",
];

/// True when the model holds no value of ICV `name`: an [`UNMODELLED`] one, or one of OpenMP
/// 6.0's additions ([`names::ADDED_6_0`]), which no kmp runtime's layout describes either (nor
/// which construct generated a team).
pub fn unmodelled(name: &str) -> bool {
    UNMODELLED.contains(&name) || names::ADDED_6_0.contains(&name)
}

/// ICVs whose storage a kmp runtime describes only in a newer self-description, each with the
/// layout symbol that describes it (`llvm-kmp-model.md` §2.2). Intel's runtimes up to 2023.2
/// define none of these: their memory, as the runtime describes it, cannot show the value, so
/// `ompd_rc_unavailable` is an answer the specification allows (OMPD-ICV-010) there.
const DESCRIBED_BY: &[(&str, &str)] = &[
    ("nthreads-var", "ompd_access__kmp_nested_nthreads_t__nth"),
    (
        "bind-var",
        "ompd_access__kmp_nested_proc_bind_t__bind_types",
    ),
    (
        "thread-limit-var",
        "ompd_access__kmp_internal_control_t__thread_limit",
    ),
    ("debug-var", "ompd_state"),
];

/// Why the target's runtime cannot show the value of ICV `name` (it does not define the layout
/// symbol that describes where the value lives), or `None` when it can.
pub(super) fn undescribed(ctx: &Ctx, name: &str) -> Option<String> {
    let canonical = crate::canonical(name);
    let (_, symbol) = DESCRIBED_BY.iter().find(|(n, _)| *n == canonical)?;
    let src = ctx.target?.source();
    matches!(src.symbol(symbol, None), Err(SymbolError::NotFound)).then(|| {
        format!("the runtime does not define {symbol}, so its memory cannot show {canonical}")
    })
}

macro_rules! value_check {
    ($id:literal, $name:literal, [$($req:literal),*], $real:expr) => {
        Check {
            at: crate::here!(),
            id: $id,
            requirements: &["OMPD-ICV-010", "OMPD-ICV-015", $($req),*],
            summary: concat!($name, " answers the model's value at every handle of its enumerated scope"),
            severity: Severity::Must,
            entry_points: &[EntryPoint::EnumerateIcvs, EntryPoint::GetIcvFromScope],
            real: Some($real),
            arg: crate::Arg::Icv($name),
            run: Run::Worker(value),
            ..Check::TARGET
        }
    };
}

/// What a per-ICV value check judges on a real target: the ICVs a fixture records (its current
/// task's data environment, its region, the address-space-wide ICVs it sets)...
pub(super) const RECORDED: &[Fact] = &[Fact::Threads, Fact::Regions, Fact::Tasks];
/// ...those that also need the start environment's lists (`OMP_NUM_THREADS`, `OMP_PROC_BIND`)...
pub(super) const WITH_LISTS: &[Fact] = &[Fact::Threads, Fact::Regions, Fact::Tasks, Fact::IcvLists];
/// ...and the address-space-wide ICVs a fixture neither sets nor records.
const UNRECORDED: &[Fact] = &[Fact::UnrecordedGlobals];

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "icv.enumerate.well_formed",
        requirements: &["OMPD-ICV-001", "OMPD-ICV-002", "OMPD-ICV-004", "OMPD-GEN-004", "OMPD-MEM-003"],
        summary: "enumerating from ompd_icv_undefined gives distinct non-zero ids and names, valid scopes, and ends with more 0",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs],
        real: Some(&[]),
        run: Run::Worker(enumerate),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.enumerate.standard_names",
        requirements: &["OMPD-ICV-005"],
        summary: "every ICV of the ICV table of the library's OpenMP version is enumerated, with the OMPD-specific names 5.0 and 5.1 require",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs],
        real: Some(&[]),
        run: Run::Worker(standard_names),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.enumerate.stable",
        requirements: &["OMPD-ICV-007"],
        summary: "enumerating the ICVs again on the same address-space handle gives the same ids, names and scopes in the same order",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs],
        real: Some(&[]),
        run: Run::Worker(stable),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.enumerate.unknown_current",
        requirements: &["OMPD-ICV-003"],
        summary: "enumerating from an id the library never returned gives ompd_rc_bad_input",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs],
        real: Some(&[]),
        run: Run::Worker(unknown_current),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.enumerate.after_last",
        requirements: &["OMPD-ICV-002", "OMPD-ICV-004"],
        summary: "ompd_enumerate_icvs from the last ICV (the one answered with more 0) claims no further ICV: any non-ok code, or ok with more 0",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs],
        real: Some(&[]),
        run: Run::Worker(after_last),
        ..Check::TARGET
    },
    value_check!("icv.value.dyn-var", "dyn-var", [], RECORDED),
    value_check!("icv.value.nthreads-var", "nthreads-var", ["OMPD-ICV-014"], WITH_LISTS),
    value_check!("icv.value.run-sched-var", "run-sched-var", ["OMPD-ICV-013"], RECORDED),
    value_check!("icv.value.bind-var", "bind-var", ["OMPD-ICV-014"], WITH_LISTS),
    value_check!("icv.value.stacksize-var", "stacksize-var", [], UNRECORDED),
    value_check!("icv.value.thread-limit-var", "thread-limit-var", [], RECORDED),
    value_check!("icv.value.max-active-levels-var", "max-active-levels-var", [], RECORDED),
    value_check!("icv.value.active-levels-var", "active-levels-var", [], RECORDED),
    value_check!("icv.value.levels-var", "levels-var", [], RECORDED),
    value_check!("icv.value.cancel-var", "cancel-var", [], RECORDED),
    value_check!("icv.value.display-affinity-var", "display-affinity-var", [], UNRECORDED),
    value_check!("icv.value.affinity-format-var", "affinity-format-var", ["OMPD-ICV-013"], UNRECORDED),
    value_check!("icv.value.default-device-var", "default-device-var", [], RECORDED),
    value_check!("icv.value.max-task-priority-var", "max-task-priority-var", [], RECORDED),
    value_check!("icv.value.tool-var", "tool-var", [], UNRECORDED),
    value_check!("icv.value.tool-libraries-var", "tool-libraries-var", ["OMPD-ICV-013"], UNRECORDED),
    value_check!("icv.value.tool-verbose-init-var", "tool-verbose-init-var", ["OMPD-ICV-013"], UNRECORDED),
    value_check!("icv.value.debug-var", "debug-var", [], RECORDED),
    value_check!("icv.value.num-procs-var", "num-procs-var", [], RECORDED),
    value_check!("icv.value.ompd-num-procs-var", "ompd-num-procs-var", [], RECORDED),
    value_check!("icv.value.thread-num-var", "thread-num-var", [], RECORDED),
    value_check!("icv.value.ompd-thread-num-var", "ompd-thread-num-var", [], RECORDED),
    value_check!("icv.value.final-task-var", "final-task-var", [], RECORDED),
    value_check!("icv.value.ompd-final-var", "ompd-final-var", [], RECORDED),
    value_check!("icv.value.ompd-final-task-var", "ompd-final-task-var", [], RECORDED),
    value_check!("icv.value.implicit-task-var", "implicit-task-var", [], RECORDED),
    value_check!("icv.value.ompd-implicit-var", "ompd-implicit-var", [], RECORDED),
    value_check!("icv.value.ompd-implicit-task-var", "ompd-implicit-task-var", [], RECORDED),
    value_check!("icv.value.team-size-var", "team-size-var", [], RECORDED),
    value_check!("icv.value.ompd-team-size-var", "ompd-team-size-var", [], RECORDED),
];

fn enumerate(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let t = ctx.icvs(ah);
    // OpenMP 6.0 adds the teams (7) and target (8) scopes (§39.11).
    let last = if ctx.profile >= Profile::V6_0 { 8 } else { 6 };
    let mut j = Judge::new(
        ctx,
        format!("distinct non-zero ids and non-empty names, scopes 1..={last}, more 0 at the end"),
    );
    match t {
        Ok(list) => {
            let ids: BTreeSet<u64> = list.iter().map(|e| e.id).collect();
            let names: BTreeSet<&str> = list.iter().map(|e| e.name.as_str()).collect();
            j.expect(ids.len() == list.len(), || "an id repeats".into());
            j.expect(names.len() == list.len(), || "a name repeats".into());
            j.expect(list.len() <= 1024, || {
                "did not terminate within 1024 ICVs".into()
            });
            for e in &list {
                j.expect(e.id != ICV_UNDEFINED, || format!("{} has id 0", e.name));
                j.expect(!e.name.is_empty(), || {
                    format!("ICV {} has an empty name", e.id)
                });
                j.expect((1..=last).contains(&e.scope.0), || {
                    format!("{} has scope {:?}", e.name, e.scope)
                });
            }
        }
        Err(e) => j.fail(e),
    }
    j.verdict()
}

/// A second enumeration gives the first one's entries, and breaks where and how the first did
/// (a broken enumeration is icv.enumerate.well_formed's finding, not this check's).
fn stable(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let ((a, a_broke), (b, b_broke)) = (ctx.icv_list(ah), ctx.enumerate_icv_list(ah));
    if let (true, Some(why)) = (a.is_empty(), &a_broke) {
        return Verdict::skip(format!(
            "the first enumeration gave no ICV ({why}): icv.enumerate.well_formed judges it"
        ));
    }
    let mut j = Judge::new(ctx, "the first enumeration of the unit, entry for entry");
    j.expect(a.len() == b.len(), || {
        format!("{} ICVs, then {}", a.len(), b.len())
    });
    for (x, y) in a.iter().zip(b.iter()) {
        j.expect(x == y, || format!("{x:?}, then {y:?}"));
    }
    j.expect(a_broke == b_broke, || {
        let end = |w: &Option<String>| w.clone().unwrap_or_else(|| "its end".into());
        format!("ended at {}, then at {}", end(&a_broke), end(&b_broke))
    });
    j.verdict()
}

fn standard_names(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let t = ctx.icvs(ah);
    let required = names::required(ctx.profile);
    let mut j = Judge::new(
        ctx,
        format!(
            "all {} names of the {} ICV table (with its OMPD-specific names)",
            required.len(),
            ctx.profile
        ),
    );
    match t {
        Ok(list) => {
            let missing: Vec<&str> = required
                .into_iter()
                .filter(|n| !list.iter().any(|e| e.name == *n))
                .collect();
            j.expect(missing.is_empty(), || {
                format!("missing {}", missing.join(", "))
            });
        }
        Err(e) => j.fail(e),
    }
    j.verdict()
}

fn unknown_current(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let known: BTreeSet<u64> = ctx
        .icvs(ah)
        .map(|l| l.iter().map(|e| e.id).collect())
        .unwrap_or_default();
    let mut j = Judge::new(ctx, "bad_input");
    for bogus in [0x7fff_ffffu64, u64::MAX, 1 << 40] {
        if known.contains(&bogus) {
            continue;
        }
        let got = ctx.lib.enumerate_icvs(ah, bogus).map(|_| ());
        crate::expect_rc(
            &mut j,
            &format!("current {bogus:#x}"),
            got,
            Rc::BAD_INPUT,
            &[],
        );
    }
    j.verdict()
}

/// The call after the last item: no ICVs remain after the one answered with more 0, so an ok
/// answer may not say that more do (a library that indexes its table with the next id reads
/// past its end).
fn after_last(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let listed = ctx.icvs(ah);
    let mut j = Judge::new(ctx, "a non-ok code, or ok with more 0");
    let last = match listed {
        Ok(list) if list.len() <= 1024 => list.last().map(|e| e.id),
        Ok(list) => {
            j.fail(format!(
                "the enumeration has no last ICV: more stayed 1 for {} steps",
                list.len()
            ));
            return j.verdict();
        }
        Err(e) => {
            j.fail(format!("the enumeration has no last ICV: {e}"));
            return j.verdict();
        }
    };
    let Some(last) = last else {
        return j.verdict();
    };
    match ctx.lib.enumerate_icvs(ah, last) {
        Ok((next, name, _, more)) => j.expect(more == 0, || {
            format!("from the last ICV {last}: ok with {next} ({name}) and more {more}")
        }),
        Err(_) => j.holds(),
    }
    j.verdict()
}

/// What the model says an ICV is, for one subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Truth {
    /// An integer.
    Int(i64),
    /// A list (nthreads-var, bind-var), current element first.
    List(Vec<i64>),
    /// Not representable as an integer.
    NotInteger,
}

/// What a handle stands for in the model.
#[derive(Clone, Copy, Debug)]
pub(super) enum Subject {
    /// The address space (global and address-space scopes).
    Aspace,
    /// A thread.
    Thread(ThreadId),
    /// A parallel region.
    Parallel(RegionId),
    /// A task.
    Task(TaskId),
}

/// The task whose data environment answers for `subject` (a thread's current task).
pub(super) fn subject_task(m: &Model, subject: Subject) -> Option<TaskId> {
    match subject {
        Subject::Thread(t) => Some(m.threads[t.0].current_task),
        Subject::Task(t) => Some(t),
        _ => None,
    }
}

/// The model's value of ICV `name` for `subject`, if the model knows it.
pub(super) fn truth(m: &Model, name: &str, subject: Subject) -> Option<Truth> {
    let task = subject_task(m, subject);
    let region = match subject {
        Subject::Thread(t) => Some(m.threads[t.0].region),
        Subject::Parallel(r) => Some(r),
        Subject::Task(t) => Some(m.tasks[t.0].region),
        Subject::Aspace => None,
    };
    let b = |v: bool| Some(Truth::Int(v as i64));
    let int = |v: i64| Some(Truth::Int(v));
    let g = &m.globals;
    match crate::canonical(name) {
        "stacksize-var" => int(g.stacksize as i64),
        "cancel-var" => b(g.cancellation),
        "max-task-priority-var" => int(g.max_task_priority as i64),
        "debug-var" => b(m.debug_enabled()),
        "display-affinity-var" => b(g.display_affinity),
        "tool-var" => int(g.tool as i64),
        "num-procs-var" => int(g.avail_proc as i64),
        "run-sched-var"
        | "affinity-format-var"
        | "tool-libraries-var"
        | "tool-verbose-init-var" => Some(Truth::NotInteger),
        "dyn-var" => b(m.tasks[task?.0].icvs.dynamic),
        "nthreads-var" => Some(Truth::List(m.nthreads_var(task?))),
        "bind-var" => Some(Truth::List(m.bind_var(task?))),
        "thread-limit-var" => int(m.tasks[task?.0].icvs.thread_limit as i64),
        "max-active-levels-var" => int(m.tasks[task?.0].icvs.max_active_levels as i64),
        "default-device-var" => int(m.tasks[task?.0].icvs.default_device as i64),
        "final-task-var" => b(m.tasks[task?.0].is_final),
        "implicit-task-var" => b(crate::is_implicit(m, task?)),
        "levels-var" => int(m.level(region?) as i64),
        "active-levels-var" => int(m.active_level(region?) as i64),
        "team-size-var" => int(m.regions[region?.0].members.len() as i64),
        "thread-num-var" => match subject {
            Subject::Thread(t) => int(m.thread_num(m.threads[t.0].region, t)? as i64),
            Subject::Task(t) => match m.tasks[t.0].kind {
                sim_target::model::TaskKind::Implicit { index, .. } => int(index as i64),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// A handle held for the duration of a check.
pub(super) enum Held<'l> {
    /// The unit's address-space handle.
    Aspace,
    /// A thread handle.
    Thread(ThreadH<'l>),
    /// A parallel handle.
    Parallel(ParallelH<'l>),
    /// A task handle.
    Task(TaskH<'l>),
}

impl<'l> Held<'l> {
    /// The handle to pass with a scope.
    pub(super) fn any<'a>(&'a self, ah: &'a AspaceH<'l>) -> AnyHandle<'a, 'l> {
        match self {
            Held::Aspace => AnyHandle::Aspace(ah),
            Held::Thread(h) => AnyHandle::Thread(h),
            Held::Parallel(h) => AnyHandle::Parallel(h),
            Held::Task(h) => AnyHandle::Task(h),
        }
    }
}

/// A handle of some scope with a label and what it stands for.
pub(super) type ScopeSubject<'l> = (String, Held<'l>, Subject);

/// Handles of `scope`, each with the subject it stands for: the address space (global and
/// address-space scopes), every thread, every innermost region, or every thread's current task
/// (only the implicit ones for the implicit-task scope). Failures to get a handle are recorded in
/// `j`. `None` for a scope that has no handle here (teams, target, unknown values).
pub(super) fn scope_subjects<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    scope: Scope,
    j: &mut Judge,
) -> Option<Vec<ScopeSubject<'l>>> {
    let mut subjects: Vec<ScopeSubject<'l>> = Vec::new();
    match scope {
        Scope::ADDRESS_SPACE | Scope::GLOBAL => {
            subjects.push(("address space".into(), Held::Aspace, Subject::Aspace))
        }
        Scope::THREAD => {
            for t in ctx.threads() {
                match ctx.thread_handle(ah, t) {
                    Ok(h) => subjects.push((
                        format!("gtid {}", t.0),
                        Held::Thread(h),
                        Subject::Thread(t),
                    )),
                    Err(e) => j.fail(format!("gtid {}: no thread handle: {e}", t.0)),
                }
            }
        }
        Scope::PARALLEL => {
            for (r, t, h) in ctx.regions_with_handles(ah, j) {
                let label = format!("region {} (via gtid {})", r.0, t.0);
                subjects.push((label, Held::Parallel(h), Subject::Parallel(r)));
            }
        }
        Scope::TASK | Scope::IMPLICIT_TASK => {
            for t in ctx.threads() {
                let task = ctx.model.threads[t.0].current_task;
                if scope == Scope::IMPLICIT_TASK && !crate::is_implicit(ctx.model, task) {
                    continue;
                }
                match ctx.curr_task(ah, t) {
                    Ok(h) => subjects.push((
                        format!("current task of gtid {}", t.0),
                        Held::Task(h),
                        Subject::Task(task),
                    )),
                    Err(e) => j.fail(format!("gtid {}: no task handle: {e}", t.0)),
                }
            }
        }
        _ => return None,
    }
    Some(subjects)
}

/// The handles of each scope one check has gathered ([`scope_subjects`]), with the failures
/// met gathering them: a check that walks every ICV gathers a scope's handles once, and
/// judges those failures again for each ICV of the scope, as if it gathered them each time.
#[derive(Default)]
pub(super) struct Subjects<'l>(Vec<(Scope, Option<Vec<ScopeSubject<'l>>>, Vec<String>)>);

impl<'l> Subjects<'l> {
    /// The handles of `scope` (gathered on first use), their failures recorded in `j`; `None`
    /// for a scope that has no handle here.
    pub(super) fn of(
        &mut self,
        ctx: &Ctx<'l>,
        ah: &AspaceH<'l>,
        scope: Scope,
        j: &mut Judge,
    ) -> Option<&[ScopeSubject<'l>]> {
        let k = match self.0.iter().position(|(s, _, _)| *s == scope) {
            Some(k) => k,
            None => {
                let mut scratch = Judge::new(ctx, "");
                let subjects = scope_subjects(ctx, ah, scope, &mut scratch);
                self.0.push((scope, subjects, scratch.into_failures()));
                self.0.len() - 1
            }
        };
        let (_, subjects, failures) = &self.0[k];
        for f in failures {
            j.fail(f.clone());
        }
        subjects.as_deref()
    }
}

/// The enumerated entry of ICV `name` (among the ICVs enumerated before the enumeration broke,
/// if it did: see icv.enumerate.well_formed), or the skip verdict saying why there is none.
pub(super) fn entry_of(ctx: &Ctx, ah: &AspaceH, name: &str) -> Result<IcvEntry, Verdict> {
    ctx.find_icv(ah, name, |n| n == name).map_err(|broke| {
        Verdict::skip(broke.unwrap_or_else(|| {
            format!("the library does not enumerate {name} (see icv.enumerate.standard_names)")
        }))
    })
}

fn value(ctx: &mut Ctx, arg: crate::Arg) -> Verdict {
    let crate::Arg::Icv(name) = arg else {
        return Verdict::harness_error(format!("an ICV row gives {arg:?}"));
    };
    let ah = crate::aspace_or_skip!(ctx);
    let entry = match entry_of(ctx, ah, name) {
        Ok(e) => e,
        Err(v) => return v,
    };
    let p50 = matches!(&ctx.setup.api_version, Some(Ok(v)) if *v < ompd_abi::api_version::V5_1);
    let mut j = Judge::new(
        ctx,
        format!("the model's value of {name} at scope {:?}", entry.scope),
    );
    // Handles of the enumerated scope, each with the subject it stands for.
    let Some(subjects) = scope_subjects(ctx, ah, entry.scope, &mut j) else {
        return Verdict::skip(format!(
            "{name} is enumerated at scope {:?}, which has no handle here",
            entry.scope
        ));
    };
    let mut unknown = Vec::new();
    let hidden = undescribed(ctx, name);
    for (label, held, subject) in &subjects {
        // A subject the model has no value for is left out; what was judged stands.
        let Some(want) = truth(ctx.model, name, *subject) else {
            unknown.push(label.as_str());
            continue;
        };
        let got = ctx.lib.get_icv(held.any(ah), entry.scope, entry.id);
        let got = match got {
            Ok(x) => x,
            Err(Fail::Missing(n)) => return Verdict::skip(format!("{n} is not exported")),
            Err(e) => {
                j.fail(format!("{label}: {e}"));
                continue;
            }
        };
        match (&want, got) {
            // The runtime does not say where the value lives: nothing to judge.
            (_, (Rc::UNAVAILABLE, _)) if hidden.is_some() => unknown.push(label.as_str()),
            (Truth::Int(v), (Rc::OK, Some(g))) => {
                j.expect(g == *v, || format!("{label}: {g}, model {v}"))
            }
            (Truth::List(l), (rc, g)) => {
                let want_rc = if l.len() > 1 { Rc::INCOMPLETE } else { Rc::OK };
                let first_ok = g == Some(l[0]);
                if rc == want_rc && first_ok {
                    j.holds();
                } else if p50 && l.len() > 1 && rc == Rc::OK && first_ok {
                    j.allowed(
                        "OMPD-ICV-014",
                        format!(
                            "{label}: ok for a {}-element list (5.0 has no ompd_rc_incomplete)",
                            l.len()
                        ),
                    );
                } else {
                    j.fail(format!(
                        "{label}: {rc} {g:?}, model list {l:?} (want {want_rc} with {})",
                        l[0]
                    ));
                }
            }
            (Truth::NotInteger, (Rc::INCOMPATIBLE, _)) => j.holds(),
            (Truth::NotInteger, (rc, g)) => j.fail(format!(
                "{label}: {rc} {g:?}, want incompatible (not an integer ICV)"
            )),
            (Truth::Int(v), (rc, g)) => j.fail(format!("{label}: {rc} {g:?}, model {v}")),
        }
    }
    j.verdict_or_skip(|| unjudged(name, hidden, &unknown))
}

/// Why a value check judged nothing: the runtime does not describe the ICV's storage (`hidden`,
/// from [`undescribed`]) and the library said unavailable, or the model has no value for the
/// subjects `unknown`.
pub(super) fn unjudged(name: &str, hidden: Option<String>, unknown: &[&str]) -> String {
    match hidden {
        Some(why) => format!("{why}; the library answers unavailable"),
        None => format!(
            "the model has no value of {name} for {}",
            unknown.join(", ")
        ),
    }
}
