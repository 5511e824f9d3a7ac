//! The TR 2.001 routines that 5.0 dropped, on TR-era libraries: string ids (TR §7.2–7.4), the
//! thread vector (§7.2) and the per-ICV getters (§8–11), judged against the model. The 5.x
//! families judge the routines that keep their form under the 5.x name or another
//! ([`ompd_abi::TR_NAMES`]), in the checks whose requirement TR 2.001 states (their `since`).

use crate::known::Fact;
use crate::{Check, Ctx, Judge, Run, Severity, Stage, Verdict};
use ompd_abi::tr::state::stands_for;
use ompd_abi::{EntryPoint, Generation, Rc};
use ompd_loader::library::{AspaceH, Call, Fail, ToolString, TrWordOf};
use ompd_serve::source::TargetKind;
use sim_target::model::{TaskKind, ThreadId};
use std::ffi::c_int;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "tr.string_id.thread",
        requirements: &["OMPD-LEG-001", "OMPD-LEG-003", "OMPD-LEG-004", "OMPD-CMP-009"],
        summary: "every OpenMP thread's string id is a tool-owned string, the same for two handles of the thread, and another thread's differs",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetThreadHandleStringId],
        since: Generation::Tr2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(thread_ids),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tr.string_id.parallel",
        requirements: &["OMPD-LEG-001", "OMPD-LEG-003", "OMPD-LEG-004", "OMPD-CMP-009"],
        summary: "the string ids of the threads' top regions are equal exactly when the region handles compare equal",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetParallelHandleStringId, EntryPoint::ParallelHandleCompare],
        since: Generation::Tr2,
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(parallel_ids),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tr.string_id.task",
        requirements: &["OMPD-LEG-001", "OMPD-LEG-003", "OMPD-LEG-004", "OMPD-CMP-009"],
        summary: "the string ids of the threads' top tasks are equal exactly when the task handles compare equal",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrTaskHandle, EntryPoint::GetTaskHandleStringId, EntryPoint::TaskHandleCompare],
        since: Generation::Tr2,
        real: Some(&[Fact::Threads, Fact::Tasks]),
        run: Run::Worker(task_ids),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tr.string_id.charset",
        requirements: &["OMPD-LEG-002"],
        summary: "a thread's string id is one run of letters, digits and underscores",
        severity: Severity::Should,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetThreadHandleStringId],
        since: Generation::Tr2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(charset),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tr.threads.matches_model",
        requirements: &["OMPD-LEG-005"],
        summary: "ompd_get_threads gives one handle per OpenMP thread (on a real target at least the recorded ones), each model thread's comparing equal to its handle by id",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreads, EntryPoint::GetThreadHandle, EntryPoint::ThreadHandleCompare],
        since: Generation::Tr2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(threads),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tr.icv.matches_model",
        requirements: &["OMPD-ICV-015"],
        summary: "the TR's per-ICV getters (num_procs, thread_num, num_threads, max_threads, dynamic, in_final, is_implicit) answer the model's values",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetNumProcs, EntryPoint::GetThreadNum, EntryPoint::GetNumThreads, EntryPoint::GetMaxThreads, EntryPoint::GetDynamic, EntryPoint::InFinal, EntryPoint::IsImplicit, EntryPoint::GetCurrParallelHandle, EntryPoint::GetCurrTaskHandle],
        since: Generation::Tr2,
        real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
        run: Run::Worker(icvs),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tr.state.matches_model",
        requirements: &["OMPD-RT-007"],
        summary: "TR: every thread's ompd_get_state is the TR state (ompd_state_t, §15.9) that mirrors the model's OMPT state, with the model's wait id in a wait state; without OMP_DEBUG the answer is needs_state_tracking",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetState],
        since: Generation::Tr2,
        real: Some(&[Fact::Threads, Fact::States]),
        run: Run::Worker(states),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "tr.thread_handle.non_openmp_thread",
        requirements: &["OMPD-LEG-006"],
        summary: "TR: ompd_get_thread_handle for a native thread that never entered OpenMP returns ompd_rc_bad_input and sets *thread_handle to NULL",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle],
        since: Generation::Tr2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(tr_foreign),
        ..Check::TARGET
    },
];

/// The TR's version query, with the other queries before `ompd_initialize`.
pub static QUERIES: &[Check] = &[Check {
    at: crate::here!(),
    id: "tr.get_version.null_version",
    requirements: &["OMPD-INIT-004"],
    summary: "TR: ompd_get_version with a NULL version gives ompd_rc_bad_input",
    severity: Severity::Must,
    entry_points: &[EntryPoint::GetVersion],
    stage: Stage::Library,
    since: Generation::Tr2,
    real: None,
    run: Run::Worker(null_version),
    ..Check::TARGET
}];

/// TR §4.1: `ompd_get_version(NULL)` is bad input.
fn null_version(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(ctx, "bad_input");
    match ctx.lib.tr_get_version_null() {
        Ok(Rc::BAD_INPUT) => j.holds(),
        Ok(rc) => j.fail(format!("NULL version: {rc}")),
        Err(e) => j.fail(format!("NULL version: {e}")),
    }
    j.verdict()
}

/// TR §10.2, §15.9: the TR's state for each thread, as the model's OMPT state mirrored; with
/// data collection off, `needs_state_tracking` (TR §2: the runtime collects it with `OMP_DEBUG`).
fn states(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    if ctx.profile != Generation::Tr2 {
        return Verdict::skip("TR 2.001's state values; 5.x ones are judged by state.get.*");
    }
    let ah = crate::aspace_or_skip!(ctx);
    let tracking = ctx.model.debug_enabled();
    let mut j = Judge::new(ctx, "the TR state mirroring the model's, and its wait id");
    for t in ctx.threads() {
        let what = format!("gtid {}", t.0);
        let got = ctx
            .thread_handle(ah, t)
            .and_then(|h| ctx.lib.tr_get_state(&h));
        let m = &ctx.model.threads[t.0];
        match got {
            Err(Fail::Rc(Rc::NEEDS_STATE_TRACKING)) if !tracking => j.holds(),
            Ok((s, _)) if !tracking => j.fail(format!("{what}: state {s:#x} without tracking")),
            Err(e) if !tracking => j.fail(format!("{what}: {e}, not needs_state_tracking")),
            Ok((s, w)) => {
                let ok = c_int::try_from(s).is_ok_and(|s| stands_for(s, m.state as u64));
                j.expect(ok, || {
                    format!("{what}: state {s:#x} does not stand for {:#x}", m.state)
                });
                if ompd_abi::state::is_wait(m.state) {
                    j.expect(w == m.wait_id, || format!("{what}: wait id {w:#x}"));
                }
            }
            Err(e) => j.fail(format!("{what}: {e}")),
        }
    }
    j.verdict()
}

/// TR §10.1: a thread that is not an OpenMP thread gives `bad_input` and a NULL handle.
fn tr_foreign(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    if ctx.profile != Generation::Tr2 {
        return Verdict::skip(
            "TR 2.001's answer; 5.x answers unavailable (judged by thread.handle.non_openmp_thread)",
        );
    }
    let ah = crate::aspace_or_skip!(ctx);
    if ctx.model.foreign_threads.is_empty() {
        return Verdict::skip("the scenario has no non-OpenMP thread");
    }
    let mut j = Judge::new(ctx, "bad_input, *thread_handle NULL");
    let kind = ompd_abi::thread_id_kind::PTHREAD;
    for native in &ctx.model.foreign_threads {
        let id = crate::native_id_bytes(ctx.model, ctx.arch, native, kind);
        match ctx.lib.get_thread_handle_out(ah, kind, &id) {
            Ok((ompd_abi::Rc::BAD_INPUT, 0)) => j.holds(),
            Ok((rc, out)) => j.fail(format!(
                "non-OpenMP thread: {rc:?} with *thread_handle {out:#x}"
            )),
            Err(e) => j.fail(format!("non-OpenMP thread: {e}")),
        }
    }
    j.verdict()
}

/// A string id's text, or the failure as a finding.
fn text(j: &mut Judge, what: &str, got: Call<ToolString>) -> Option<String> {
    match got {
        Ok(s) => Some(s.text.clone()),
        Err(e) => {
            j.fail(format!("{what}: {e}"));
            None
        }
    }
}

/// The string id of each OpenMP thread's handle by id, twice (two handles each).
fn thread_strings(ctx: &Ctx, ah: &AspaceH, j: &mut Judge) -> Vec<(ThreadId, String)> {
    let mut out = Vec::new();
    for t in ctx.threads() {
        let what = format!("gtid {}", t.0);
        let (a, b) = match (ctx.thread_handle(ah, t), ctx.thread_handle(ah, t)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                j.fail(format!("{what}: no handle: {e}"));
                continue;
            }
        };
        let sa = text(j, &what, ctx.lib.tr_thread_string_id(&a));
        let sb = text(j, &what, ctx.lib.tr_thread_string_id(&b));
        if let (Some(sa), Some(sb)) = (sa, sb) {
            j.expect(sa == sb, || {
                format!("{what}: two handles give {sa:?} and {sb:?}")
            });
            out.push((t, sa));
        }
    }
    out
}

fn thread_ids(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "equal strings for one thread, distinct for two");
    let ids = thread_strings(ctx, ah, &mut j);
    for (i, (t, a)) in ids.iter().enumerate() {
        for (u, b) in &ids[i + 1..] {
            j.expect(a != b, || {
                format!("gtid {} and gtid {} share {a:?}", t.0, u.0)
            });
        }
    }
    j.verdict()
}

fn charset(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "[A-Za-z0-9_]+");
    for (t, s) in thread_strings(ctx, ah, &mut j) {
        let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        j.expect(ok, || format!("gtid {}: {s:?}", t.0));
    }
    j.verdict()
}

/// Judges string ids against the library's compare: equal exactly when the handles compare 0.
fn judge_pairs<H>(
    j: &mut Judge,
    items: &[(String, H, String)],
    compare: impl Fn(&H, &H) -> Call<i32>,
) {
    for (i, (wa, ha, sa)) in items.iter().enumerate() {
        for (wb, hb, sb) in &items[i + 1..] {
            match compare(ha, hb) {
                Ok(c) => j.expect((c == 0) == (sa == sb), || {
                    format!("{wa} and {wb} compare {c}, string ids {sa:?} and {sb:?}")
                }),
                Err(e) => j.fail(format!("{wa} vs {wb}: compare: {e}")),
            }
        }
    }
}

fn parallel_ids(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "string ids equal exactly when the region handles compare equal",
    );
    let mut items = Vec::new();
    for t in ctx.threads() {
        let what = format!("top region of gtid {}", t.0);
        let ph = match ctx
            .thread_handle(ah, t)
            .and_then(|th| ctx.lib.get_curr_parallel_handle(&th))
        {
            Ok(p) => p,
            Err(e) => {
                j.fail(format!("{what}: {e}"));
                continue;
            }
        };
        let again = ctx
            .thread_handle(ah, t)
            .and_then(|th| ctx.lib.get_curr_parallel_handle(&th));
        let s = text(&mut j, &what, ctx.lib.tr_parallel_string_id(&ph));
        if let (Some(s), Ok(again)) = (&s, again) {
            if let Some(s2) = text(&mut j, &what, ctx.lib.tr_parallel_string_id(&again)) {
                j.expect(*s == s2, || {
                    format!("{what}: two handles give {s:?} and {s2:?}")
                });
            }
        }
        if let Some(s) = s {
            items.push((what, ph, s));
        }
    }
    judge_pairs(&mut j, &items, |a, b| ctx.lib.parallel_compare(a, b));
    j.verdict()
}

fn task_ids(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "string ids equal exactly when the task handles compare equal",
    );
    let mut items = Vec::new();
    for t in ctx.threads() {
        let what = format!("top task of gtid {}", t.0);
        let k = match ctx
            .thread_handle(ah, t)
            .and_then(|th| ctx.lib.get_curr_task_handle(&th))
        {
            Ok(k) => k,
            Err(e) => {
                j.fail(format!("{what}: {e}"));
                continue;
            }
        };
        let again = ctx
            .thread_handle(ah, t)
            .and_then(|th| ctx.lib.get_curr_task_handle(&th));
        let s = text(&mut j, &what, ctx.lib.tr_task_string_id(&k));
        if let (Some(s), Ok(again)) = (&s, again) {
            if let Some(s2) = text(&mut j, &what, ctx.lib.tr_task_string_id(&again)) {
                j.expect(*s == s2, || {
                    format!("{what}: two handles give {s:?} and {s2:?}")
                });
            }
        }
        if let Some(s) = s {
            items.push((what, k, s));
        }
    }
    judge_pairs(&mut j, &items, |a, b| ctx.lib.task_compare(a, b));
    j.verdict()
}

fn threads(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "one handle per model thread, each equal to that thread's",
    );
    let got = match ctx.lib.tr_get_threads(ah) {
        Ok(v) => v,
        Err(e) => {
            j.fail(e.to_string());
            return j.verdict();
        }
    };
    // A simulated model holds every thread of the runtime, idle pool threads included; a fixture
    // records the threads of the program's regions, and the runtime may keep idle pool threads
    // besides them.
    let kind = ompd_abi::thread_id_kind::PTHREAD;
    let ids: Vec<Vec<u8>> = ctx
        .threads()
        .map(|t| ctx.thread_id(t, kind))
        .chain(
            ctx.model
                .idle_threads
                .iter()
                .map(|n| crate::native_id_bytes(ctx.model, ctx.arch, n, kind)),
        )
        .collect();
    let n = ids.len();
    let complete = ctx.target().kind() == TargetKind::Sim;
    j.expect(got.len() == n || (!complete && got.len() > n), || {
        format!("{} handles for {n} OpenMP threads", got.len())
    });
    for (gtid, id) in ids.iter().enumerate() {
        let Ok(by_id) = ctx.lib.get_thread_handle(ah, kind, id) else {
            j.fail(format!("gtid {gtid}: no handle by id"));
            continue;
        };
        let hits = got
            .iter()
            .filter(|h| ctx.lib.thread_compare(h, &by_id) == Ok(0))
            .count();
        j.expect(hits == 1, || {
            format!("gtid {gtid}: {hits} handles of the vector compare equal to it")
        });
    }
    j.verdict()
}

fn icvs(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let m = ctx.model;
    let mut j = Judge::new(ctx, "the model's value from each getter");
    let word = |j: &mut Judge, what: String, got: Call<i64>, want: i64| match got {
        Ok(v) => j.expect(v == want, || format!("{what}: {v}, model {want}")),
        Err(e) => j.fail(format!("{what}: {e}")),
    };
    let procs = ctx.lib.tr_word(TrWordOf::NumProcs(ah));
    word(
        &mut j,
        "num_procs".into(),
        procs,
        i64::from(m.globals.avail_proc),
    );
    for t in ctx.threads() {
        let th = match ctx.thread_handle(ah, t) {
            Ok(h) => h,
            Err(e) => {
                j.fail(format!("gtid {}: no handle: {e}", t.0));
                continue;
            }
        };
        let thread = &m.threads[t.0];
        let num = m.thread_num(thread.region, t).unwrap_or(0) as i64;
        word(
            &mut j,
            format!("gtid {} thread_num", t.0),
            ctx.lib.tr_word(TrWordOf::ThreadNum(&th)),
            num,
        );
        if let Ok(ph) = ctx.lib.get_curr_parallel_handle(&th) {
            let size = m.regions[thread.region.0].members.len() as i64;
            word(
                &mut j,
                format!("gtid {} num_threads", t.0),
                ctx.lib.tr_word(TrWordOf::NumThreads(&ph)),
                size,
            );
        }
        let Ok(k) = ctx.lib.get_curr_task_handle(&th) else {
            j.fail(format!("gtid {}: no top task", t.0));
            continue;
        };
        let task = &m.tasks[thread.current_task.0];
        let first = m
            .nthreads_var(thread.current_task)
            .first()
            .copied()
            .unwrap_or(0);
        let implicit = i64::from(matches!(task.kind, TaskKind::Implicit { .. }));
        for (name, of, want) in [
            ("max_threads", TrWordOf::MaxThreads(&k), first),
            (
                "dynamic",
                TrWordOf::Dynamic(&k),
                i64::from(task.icvs.dynamic),
            ),
            ("in_final", TrWordOf::InFinal(&k), i64::from(task.is_final)),
            ("is_implicit", TrWordOf::IsImplicit(&k), implicit),
        ] {
            let got = ctx.lib.tr_word(of).map(|v| {
                if name == "max_threads" {
                    v
                } else {
                    i64::from(v != 0)
                }
            });
            word(&mut j, format!("gtid {} {name}", t.0), got, want);
        }
    }
    j.verdict()
}
