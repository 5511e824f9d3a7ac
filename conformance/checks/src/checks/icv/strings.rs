//! ICV strings, and the id and scope contract both ICV getters share: the string form of every
//! string and list ICV against the model, the string form of integer ICVs against the integer
//! getter, unknown ids, scopes other than the enumerated one, and that every enumerated
//! (ICV, scope) pair answers through a handle of its scope.
//!
//! Where the specification leaves a string's format open (lists, schedules) the text is parsed
//! in the syntax of the ICV's environment variable and compared by meaning; the LLVM-family
//! spelling is only shown as the expected text.

use crate::checks::icv::{self, Subject};
use crate::known::Fact;
use crate::IcvEntry;
use crate::{expect_rc, Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{Rc, Scope};
use ompd_loader::library::{AnyHandle, AspaceH, Call, Fail};
use sim_target::model::{Model, SchedKind, SchedModifier, Schedule};

macro_rules! string_check {
    ($id:literal, $name:literal, [$($req:literal),*], $real:expr) => {
        Check {
            at: crate::here!(),
            id: $id,
            requirements: &["OMPD-ICV-020", "OMPD-ICV-015", $($req),*],
            summary: concat!($name, " as a string denotes the model's value at every handle of its enumerated scope"),
            severity: Severity::Must,
            entry_points: &[EntryPoint::EnumerateIcvs, EntryPoint::GetIcvStringFromScope],
            real: $real,
            arg: crate::Arg::Icv($name),
            run: Run::Worker(string_value),
            ..Check::TARGET
        }
    };
}

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    // A fixture records neither the affinity format nor the tool ICVs: simulated targets only.
    string_check!("icv.string.affinity-format-var", "affinity-format-var", [], None),
    string_check!("icv.string.tool-libraries-var", "tool-libraries-var", [], None),
    string_check!("icv.string.tool-verbose-init-var", "tool-verbose-init-var", [], None),
    string_check!("icv.string.run-sched-var", "run-sched-var", [], Some(super::RECORDED)),
    string_check!("icv.string.nthreads-var", "nthreads-var", ["OMPD-ICV-014"], Some(super::WITH_LISTS)),
    string_check!("icv.string.bind-var", "bind-var", ["OMPD-ICV-014"], Some(super::WITH_LISTS)),
    Check {
        at: crate::here!(),
        id: "icv.string.integer_agrees",
        requirements: &["OMPD-ICV-022"],
        summary: "an integer ICV's string, when the library gives one, denotes the value of ompd_get_icv_from_scope",
        severity: Severity::Should,
        entry_points: &[EntryPoint::EnumerateIcvs, EntryPoint::GetIcvFromScope, EntryPoint::GetIcvStringFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(integer_agrees),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.string.unknown_id",
        requirements: &["OMPD-ICV-021"],
        summary: "ids 0, one past the last enumerated id and 2^63 give ompd_rc_bad_input from the string getter",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs, EntryPoint::GetIcvStringFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(string_unknown_id),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.value.unknown_id",
        requirements: &["OMPD-ICV-011"],
        summary: "ids 0, one past the last enumerated id and 2^63 give ompd_rc_bad_input from the integer getter",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(value_unknown_id),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.string.scope_mismatch",
        requirements: &["OMPD-ICV-021", "OMPD-RC-002", "OMPD-ICV-012"],
        summary: "a scope other than the enumerated one, with a handle of that scope, gives ompd_rc_incompatible from the string getter (ok fails; another non-ok code fails from 5.1 and warns for a 5.0 library, whose text names no code)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs, EntryPoint::GetIcvStringFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(string_scope_mismatch),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.value.scope_mismatch",
        requirements: &["OMPD-ICV-012"],
        summary: "a scope other than the enumerated one, with a handle of that scope, gives ompd_rc_incompatible from the integer getter (from 6.0, whose text states it; the 5.x texts leave the code open, so another answer warns there)",
        severity: Severity::MustFrom(Profile::V6_0),
        entry_points: &[EntryPoint::EnumerateIcvs, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(value_scope_mismatch),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "icv.scope.every_pair_answerable",
        requirements: &["OMPD-ICV-010", "OMPD-ICV-006", "OMPD-ICV-020"],
        summary: "every enumerated ICV answers at its enumerated scope through every handle of that scope, from the integer getter or (for non-integer ICVs) the string getter",
        severity: Severity::Must,
        entry_points: &[EntryPoint::EnumerateIcvs, EntryPoint::GetIcvFromScope, EntryPoint::GetIcvStringFromScope],
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(every_pair_answerable),
        ..Check::TARGET
    },
];

/// What the model says an ICV's string denotes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Denotes {
    /// Exactly this text: the ICV's value is a string.
    Text(String),
    /// A list, current element first (`OMP_NUM_THREADS`/`OMP_PROC_BIND` syntax).
    List(Vec<i64>),
    /// A schedule (`OMP_SCHEDULE` syntax).
    Schedule(Schedule),
}

impl Denotes {
    /// The LLVM-family spelling, shown as the expected text.
    fn show(&self) -> String {
        match self {
            Denotes::Text(t) => format!("{t:?}"),
            Denotes::List(l) => {
                let v: Vec<String> = l.iter().map(|x| x.to_string()).collect();
                format!("{:?}", v.join(","))
            }
            Denotes::Schedule(s) => {
                let m = match s.modifier {
                    None => "",
                    Some(SchedModifier::Monotonic) => "monotonic:",
                    Some(SchedModifier::Nonmonotonic) => "nonmonotonic:",
                };
                format!("{:?}", format!("{m}{},{}", kind_name(s.kind), s.chunk))
            }
        }
    }
}

fn kind_name(k: SchedKind) -> &'static str {
    match k {
        SchedKind::Static => "static",
        SchedKind::Dynamic => "dynamic",
        SchedKind::Guided => "guided",
        SchedKind::Auto => "auto",
    }
}

/// The model's string value of a string or list ICV for `subject`.
fn denotes(m: &Model, name: &str, subject: Subject) -> Option<Denotes> {
    let g = &m.globals;
    let task = icv::subject_task(m, subject);
    match name {
        "affinity-format-var" => g.affinity_format.clone().map(Denotes::Text),
        // Unset (a NULL pointer in the runtime) is the empty list of tool libraries.
        "tool-libraries-var" => Some(Denotes::Text(g.tool_libraries.clone().unwrap_or_default())),
        "tool-verbose-init-var" => g.tool_verbose_init.clone().map(Denotes::Text),
        "run-sched-var" => Some(Denotes::Schedule(m.tasks[task?.0].icvs.schedule)),
        "nthreads-var" => Some(Denotes::List(m.nthreads_var(task?))),
        "bind-var" => Some(Denotes::List(m.bind_var(task?))),
        _ => None,
    }
}

/// The names [`denotes`] knows: the ICVs whose value is a string or a list.
const STRING_ICVS: &[&str] = &[
    "affinity-format-var",
    "tool-libraries-var",
    "tool-verbose-init-var",
    "run-sched-var",
    "nthreads-var",
    "bind-var",
];

/// One list element: a number, or a `proc_bind` policy name.
fn list_element(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(v) = s.parse() {
        return Some(v);
    }
    Some(match s.to_ascii_lowercase().as_str() {
        "false" => 0,
        "true" => 1,
        "primary" | "master" => 2,
        "close" => 3,
        "spread" => 4,
        _ => return None,
    })
}

/// A schedule in `OMP_SCHEDULE` syntax: `[modifier:]kind[,chunk]`; a missing chunk is 0.
fn parse_schedule(s: &str) -> Option<Schedule> {
    let (modifier, rest) = match s.split_once(':') {
        Some((m, r)) => (
            Some(match m.trim().to_ascii_lowercase().as_str() {
                "monotonic" => SchedModifier::Monotonic,
                "nonmonotonic" => SchedModifier::Nonmonotonic,
                _ => return None,
            }),
            r,
        ),
        None => (None, s),
    };
    let (kind, chunk) = match rest.split_once(',') {
        Some((k, c)) => (k, c.trim().parse().ok()?),
        None => (rest, 0),
    };
    let kind = match kind.trim().to_ascii_lowercase().as_str() {
        "static" => SchedKind::Static,
        "dynamic" => SchedKind::Dynamic,
        "guided" => SchedKind::Guided,
        "auto" => SchedKind::Auto,
        _ => return None,
    };
    Some(Schedule {
        kind,
        chunk,
        modifier,
    })
}

/// True when `text` denotes `want`.
fn matches(text: &str, want: &Denotes) -> bool {
    match want {
        Denotes::Text(t) => text == t,
        Denotes::List(l) => {
            let got: Option<Vec<i64>> = text.split(',').map(list_element).collect();
            got.as_ref() == Some(l)
        }
        Denotes::Schedule(s) => parse_schedule(text) == Some(*s),
    }
}

/// An integer in a string: a decimal number, or `true`/`false` for a boolean ICV.
fn parse_integer(text: &str) -> Option<i64> {
    let t = text.trim();
    t.parse().ok().or(match t.to_ascii_lowercase().as_str() {
        "true" => Some(1),
        "false" => Some(0),
        _ => None,
    })
}

fn string_value(ctx: &mut Ctx, arg: crate::Arg) -> Verdict {
    let crate::Arg::Icv(name) = arg else {
        return Verdict::harness_error(format!("an ICV row gives {arg:?}"));
    };
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetIcvStringFromScope);
    let entry = match icv::entry_of(ctx, ah, name) {
        Ok(e) => e,
        Err(v) => return v,
    };
    let mut j = Judge::new(
        ctx,
        format!(
            "the model's value of {name} as a string at scope {:?}",
            entry.scope
        ),
    );
    let Some(subjects) = icv::scope_subjects(ctx, ah, entry.scope, &mut j) else {
        return Verdict::skip(format!(
            "{name} is enumerated at scope {:?}, which has no handle here",
            entry.scope
        ));
    };
    let mut unknown = Vec::new();
    let hidden = icv::undescribed(ctx, name);
    for (label, held, subject) in &subjects {
        // A subject the model has no value for is left out; what was judged stands.
        let Some(want) = denotes(ctx.model, name, *subject) else {
            unknown.push(label.as_str());
            continue;
        };
        match ctx.lib.get_icv_string(held.any(ah), entry.scope, entry.id) {
            Ok(text) => j.expect(matches(&text, &want), || {
                format!("{label}: {text:?}, model {}", want.show())
            }),
            // The runtime does not say where the value lives: nothing to judge.
            Err(Fail::Rc(Rc::UNAVAILABLE)) if hidden.is_some() => unknown.push(label.as_str()),
            Err(e) => j.fail(format!("{label}: {e}, model {}", want.show())),
        }
    }
    j.verdict_or_skip(|| icv::unjudged(name, hidden, &unknown))
}

/// The integer getter's answer as a call: `ok` with the value, or the code.
fn int_call(got: Call<(Rc, Option<i64>)>) -> Call<i64> {
    match got? {
        (Rc::OK, Some(v)) => Ok(v),
        (Rc::OK, None) => Err(Fail::Invalid("icv_value was not written".into())),
        (rc, _) => Err(Fail::Rc(rc)),
    }
}

fn integer_agrees(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(
        ctx,
        EntryPoint::GetIcvStringFromScope,
        EntryPoint::GetIcvFromScope
    );
    let list = match ctx.icvs_before_break(ah) {
        Ok(l) => l,
        Err(e) => return Verdict::skip(e),
    };
    let mut j = Judge::new(
        ctx,
        "a string denoting the integer getter's value, or unsupported",
    );
    let mut gathered = icv::Subjects::default();
    for e in list
        .iter()
        .filter(|e| !STRING_ICVS.contains(&e.name.as_str()))
    {
        let Some(subjects) = gathered.of(ctx, ah, e.scope, &mut j) else {
            continue;
        };
        for (label, held, _) in subjects {
            let Ok(v) = int_call(ctx.lib.get_icv(held.any(ah), e.scope, e.id)) else {
                // Not an integer here: the value checks judge the integer getter.
                continue;
            };
            let what = format!("{} at {label}", e.name);
            match ctx.lib.get_icv_string(held.any(ah), e.scope, e.id) {
                Ok(text) => j.expect(parse_integer(&text) == Some(v), || {
                    format!("{what}: {text:?}, integer getter {v}")
                }),
                Err(Fail::Rc(Rc::UNSUPPORTED)) => j.unsupported(format!("{what}: unsupported")),
                Err(err) => j.fail(format!("{what}: {err}, integer getter {v}")),
            }
        }
    }
    j.verdict()
}

/// Ids no ICV has: 0, one past the largest enumerated id, and 2^63.
fn unknown_ids(list: &[IcvEntry]) -> Vec<u64> {
    let max = list.iter().map(|e| e.id).max().unwrap_or(0);
    [0, max.saturating_add(1), 1 << 63]
        .into_iter()
        .filter(|id| !list.iter().any(|e| e.id == *id))
        .collect()
}

/// Runs `call` for every unknown id at the address-space scope and, through gtid 0's thread
/// handle, at the thread scope, judging each as bad_input.
fn unknown_id(ctx: &mut Ctx, call: fn(&Ctx, AnyHandle, Scope, u64) -> Call<()>) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let list = match ctx.icvs(ah) {
        Ok(l) => l,
        Err(e) => return Verdict::skip(e),
    };
    let mut j = Judge::new(ctx, "bad_input");
    let th = ctx.thread_handle(ah, sim_target::model::ThreadId(0));
    for id in unknown_ids(&list) {
        let got = call(ctx, AnyHandle::Aspace(ah), Scope::ADDRESS_SPACE, id);
        expect_rc(
            &mut j,
            &format!("id {id:#x} (address space)"),
            got,
            Rc::BAD_INPUT,
            &[],
        );
        match &th {
            Ok(th) => {
                let got = call(ctx, AnyHandle::Thread(th), Scope::THREAD, id);
                expect_rc(
                    &mut j,
                    &format!("id {id:#x} (gtid 0)"),
                    got,
                    Rc::BAD_INPUT,
                    &[],
                );
            }
            Err(e) => j.fail(format!("gtid 0: no thread handle: {e}")),
        }
    }
    j.verdict()
}

/// The string getter's call, its answer dropped (for the contract both getters share).
fn string_call(ctx: &Ctx, h: AnyHandle, scope: Scope, id: u64) -> Call<()> {
    ctx.lib.get_icv_string(h, scope, id).map(|_| ())
}

fn string_unknown_id(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::entry_or_skip!(ctx, EntryPoint::GetIcvStringFromScope);
    unknown_id(ctx, string_call)
}

fn value_unknown_id(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::entry_or_skip!(ctx, EntryPoint::GetIcvFromScope);
    unknown_id(ctx, |ctx, h, scope, id| {
        int_call(ctx.lib.get_icv(h, scope, id)).map(|_| ())
    })
}

/// One handle for each scope that has one, reached from gtid 0: the address space (global and
/// address-space scopes), its thread, its current region, its current task (task scope, and the
/// implicit-task scope when that task is implicit).
fn one_handle_per_scope<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    j: &mut Judge,
) -> Vec<(Scope, icv::Held<'l>)> {
    use icv::Held;
    let t0 = sim_target::model::ThreadId(0);
    let mut out = vec![
        (Scope::GLOBAL, Held::Aspace),
        (Scope::ADDRESS_SPACE, Held::Aspace),
    ];
    match ctx.thread_handle(ah, t0) {
        Ok(h) => out.push((Scope::THREAD, Held::Thread(h))),
        Err(e) => j.fail(format!("gtid 0: no thread handle: {e}")),
    }
    match ctx.curr_parallel(ah, t0) {
        Ok(h) => out.push((Scope::PARALLEL, Held::Parallel(h))),
        Err(e) => j.fail(format!("gtid 0: no current parallel handle: {e}")),
    }
    for scope in [Scope::TASK, Scope::IMPLICIT_TASK] {
        if scope == Scope::IMPLICIT_TASK
            && !crate::is_implicit(ctx.model, ctx.model.threads[0].current_task)
        {
            continue;
        }
        match ctx.curr_task(ah, t0) {
            Ok(h) => out.push((scope, Held::Task(h))),
            Err(e) => j.fail(format!("gtid 0: no current task handle: {e}")),
        }
    }
    out
}

/// Asks every enumerated ICV through a handle of every other scope with `call`: incompatible
/// holds, another non-ok code is an allowed deviation, ok fails.
fn scope_mismatch(ctx: &mut Ctx, call: fn(&Ctx, AnyHandle, Scope, u64) -> Call<()>) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let list = match ctx.icvs_before_break(ah) {
        Ok(l) => l,
        Err(e) => return Verdict::skip(e),
    };
    let mut j = Judge::new(
        ctx,
        "incompatible for every scope other than the enumerated one",
    );
    let handles = one_handle_per_scope(ctx, ah, &mut j);
    for e in &list {
        for (scope, held) in handles.iter().filter(|(s, _)| *s != e.scope) {
            let what = format!("{} (enumerated {:?}) at {scope:?}", e.name, e.scope);
            match call(ctx, held.any(ah), *scope, e.id) {
                Err(Fail::Rc(Rc::INCOMPATIBLE)) => j.holds(),
                // The 5.0 text names no code for a scope mismatch (OMPD-ICV-012).
                Err(Fail::Rc(rc)) if ctx.profile < Profile::V5_1 => j.allowed(
                    "OMPD-ICV-012",
                    format!("{what}: {rc} (5.1 on: incompatible)"),
                ),
                Err(Fail::Rc(rc)) => j.fail(format!("{what}: {rc} (spec: incompatible)")),
                Ok(()) => j.fail(format!("{what}: ok")),
                Err(err) => j.fail(format!("{what}: {err}")),
            }
        }
    }
    j.verdict()
}

fn string_scope_mismatch(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::entry_or_skip!(ctx, EntryPoint::GetIcvStringFromScope);
    scope_mismatch(ctx, string_call)
}

fn value_scope_mismatch(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::entry_or_skip!(ctx, EntryPoint::GetIcvFromScope);
    scope_mismatch(ctx, |ctx, h, scope, id| {
        match ctx.lib.get_icv(h, scope, id)? {
            // A list ICV answers its first element with incomplete: an answer all the same.
            (Rc::OK | Rc::INCOMPLETE, _) => Ok(()),
            (rc, _) => Err(Fail::Rc(rc)),
        }
    })
}

fn every_pair_answerable(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetIcvFromScope);
    let list = match ctx.icvs_before_break(ah) {
        Ok(l) => l,
        Err(e) => return Verdict::skip(e),
    };
    let mut j = Judge::new(
        ctx,
        "ok (or incomplete) from the integer getter, or for an incompatible ICV ok from the string getter",
    );
    let mut gathered = icv::Subjects::default();
    for e in &list {
        // Scopes without a handle kind here (teams, target) are outside this check.
        let Some(subjects) = gathered.of(ctx, ah, e.scope, &mut j) else {
            continue;
        };
        for (label, held, _) in subjects {
            let what = format!("{} at {:?} ({label})", e.name, e.scope);
            match ctx.lib.get_icv(held.any(ah), e.scope, e.id) {
                Ok((Rc::OK | Rc::INCOMPLETE, Some(_))) => j.holds(),
                // Nothing the target holds to answer with: not judged.
                Ok((Rc::UNAVAILABLE, _))
                    if icv::unmodelled(&e.name) || icv::undescribed(ctx, &e.name).is_some() => {}
                Ok((Rc::INCOMPATIBLE, _)) => {
                    match ctx.lib.get_icv_string(held.any(ah), e.scope, e.id) {
                        Ok(_) => j.holds(),
                        Err(err) => j.fail(format!(
                            "{what}: incompatible as an integer, and the string getter: {err}"
                        )),
                    }
                }
                Ok((rc, v)) => j.fail(format!("{what}: {rc} {v:?}")),
                Err(err) => j.fail(format!("{what}: {err}")),
            }
        }
    }
    j.verdict()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_numbers_and_policy_names() {
        assert!(matches("4,2", &Denotes::List(vec![4, 2])));
        assert!(matches(" 4 , 2 ", &Denotes::List(vec![4, 2])));
        assert!(matches("spread,close", &Denotes::List(vec![4, 3])));
        assert!(!matches("4", &Denotes::List(vec![4, 2])));
        assert!(!matches("4,2,", &Denotes::List(vec![4, 2])));
    }

    #[test]
    fn schedules_parse_in_omp_schedule_syntax() {
        let dynamic4 = Schedule {
            kind: SchedKind::Dynamic,
            chunk: 4,
            modifier: Some(SchedModifier::Nonmonotonic),
        };
        assert!(matches(
            "nonmonotonic:dynamic,4",
            &Denotes::Schedule(dynamic4)
        ));
        assert!(matches(
            "NONMONOTONIC: dynamic, 4",
            &Denotes::Schedule(dynamic4)
        ));
        assert!(!matches("dynamic,4", &Denotes::Schedule(dynamic4)));
        let st = Schedule {
            kind: SchedKind::Static,
            chunk: 0,
            modifier: None,
        };
        assert!(matches("static,0", &Denotes::Schedule(st)));
        assert!(matches("static", &Denotes::Schedule(st)));
        assert!(!matches("", &Denotes::Schedule(st)));
        assert_eq!(
            Denotes::Schedule(dynamic4).show(),
            "\"nonmonotonic:dynamic,4\""
        );
    }

    #[test]
    fn integers_parse_with_boolean_spellings() {
        assert_eq!(parse_integer(" 42 "), Some(42));
        assert_eq!(parse_integer("true"), Some(1));
        assert_eq!(parse_integer("-1"), Some(-1));
        assert_eq!(parse_integer("4,2"), None);
    }

    #[test]
    fn unknown_ids_avoid_enumerated_ones() {
        let e = |id| IcvEntry {
            id,
            name: format!("x{id}"),
            scope: Scope::THREAD,
        };
        assert_eq!(unknown_ids(&[e(1), e(2)]), vec![0, 3, 1 << 63]);
    }
}
