//! Parallel handles: the current region of every thread, the enclosing chain to the outermost
//! region, threads in a region by index, team sizes and levels — judged against the model.

use crate::known::Fact;
use crate::{expect_rc, Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{Rc, Scope};
use ompd_loader::library::{AnyHandle, ParallelH};
use sim_target::model::RegionId;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "parallel.curr.team_size_matches_model",
        requirements: &["OMPD-HANDLE-PAR-001", "OMPD-ICV-010", "OMPD-ICV-015"],
        summary: "the current parallel handle of every thread has the model's team size (team-size-var)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(team_size),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "parallel.curr.same_region_compares_equal",
        requirements: &["OMPD-HANDLE-PAR-003", "OMPD-CMP-004", "OMPD-CMP-005"],
        summary: "current parallel handles of threads in one team compare 0; of different regions non-zero",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::ParallelHandleCompare],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(same_region),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "parallel.enclosing.levels_match_model",
        requirements: &["OMPD-HANDLE-PAR-004", "OMPD-HANDLE-PAR-005", "OMPD-ICV-015"],
        summary: "walking ompd_get_enclosing_parallel_handle from each thread's region visits every enclosing region with levels-var L, L-1, ..., 0",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetEnclosingParallelHandle, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(enclosing_levels),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "parallel.enclosing.outermost_unavailable",
        requirements: &["OMPD-HANDLE-PAR-004"],
        summary: "asking for the region enclosing the outermost region gives ompd_rc_unavailable",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetEnclosingParallelHandle],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(outermost),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "parallel.curr.idle_thread_unavailable",
        requirements: &["OMPD-HANDLE-PAR-002"],
        summary: "an OpenMP thread of the pool that is in no team (idle between regions) has a thread handle, and its current parallel handle gives ompd_rc_unavailable",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetCurrParallelHandle],
        run: Run::Worker(idle_thread),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "parallel.thread_in_parallel.every_index",
        requirements: &["OMPD-HANDLE-THREAD-010", "OMPD-HANDLE-THREAD-007", "OMPD-CMP-004"],
        summary: "thread n of each region is the model's member n: it compares equal to the handle by native id and has that thread's thread-num-var",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadInParallel, EntryPoint::ThreadHandleCompare, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(thread_in_parallel),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "parallel.thread_in_parallel.out_of_range",
        requirements: &["OMPD-HANDLE-THREAD-011"],
        summary: "thread numbers below 0 or at least the team size give ompd_rc_bad_input",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadInParallel],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(out_of_range),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "parallel.curr.active_levels_match_model",
        requirements: &["OMPD-ICV-015", "OMPD-ICV-010"],
        summary: "active-levels-var of each thread's current region counts its enclosing active regions",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetIcvFromScope],
        real: Some(&[Fact::Threads, Fact::Regions]),
        run: Run::Worker(active_levels),
        ..Check::TARGET
    },
];

/// An integer ICV of a parallel handle, or a description of what went wrong.
pub(super) fn par_icv(ctx: &Ctx, ph: &ParallelH, name: &str) -> Result<i64, String> {
    match ctx.icv(AnyHandle::Parallel(ph), Scope::PARALLEL, name)? {
        Ok((Rc::OK, Some(v))) => Ok(v),
        Ok((rc, _)) => Err(format!("{name}: {rc}")),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

fn team_size(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "team-size-var equal to the model's team size");
    for t in ctx.threads() {
        let want = ctx.model.regions[crate::innermost_region(ctx.model, t).0]
            .members
            .len() as i64;
        match ctx.curr_parallel(ah, t) {
            Ok(ph) => match par_icv(ctx, &ph, "team-size-var") {
                Ok(v) => j.expect(v == want, || {
                    format!("gtid {}: team-size-var {v}, model {want}", t.0)
                }),
                Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
            },
            Err(e) => j.fail(format!("gtid {}: ompd_get_curr_parallel_handle: {e}", t.0)),
        }
    }
    j.verdict()
}

fn same_region(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "0 within a team, non-zero across regions");
    let mut hs: Vec<(RegionId, usize, ParallelH)> = Vec::new();
    for t in ctx.threads() {
        match ctx.curr_parallel(ah, t) {
            Ok(ph) => hs.push((crate::innermost_region(ctx.model, t), t.0, ph)),
            Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
        }
    }
    for (i, (ra, ga, a)) in hs.iter().enumerate() {
        for (rb, gb, b) in &hs[i..] {
            let c = ctx.lib.parallel_compare(a, b);
            if ra == rb {
                j.expect(c == Ok(0), || {
                    format!(
                        "gtid {ga} and {gb} share region {}: {}",
                        ra.0,
                        crate::describe(&c)
                    )
                });
            } else {
                j.expect(matches!(c, Ok(v) if v != 0), || {
                    format!(
                        "gtid {ga} vs {gb}, different regions: {}",
                        crate::describe(&c)
                    )
                });
            }
        }
    }
    j.verdict()
}

fn enclosing_levels(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "one region per level, levels-var descending to 0");
    for t in ctx.threads() {
        let chain = ctx
            .model
            .region_chain(crate::innermost_region(ctx.model, t));
        let want: Vec<i64> = chain.iter().map(|r| ctx.model.level(*r) as i64).collect();
        let mut got = Vec::new();
        let mut cur = match ctx.curr_parallel(ah, t) {
            Ok(ph) => ph,
            Err(e) => {
                j.fail(format!("gtid {}: {e}", t.0));
                continue;
            }
        };
        loop {
            got.push(par_icv(ctx, &cur, "levels-var").unwrap_or(-1));
            if got.len() > want.len() + 4 {
                break;
            }
            match ctx.lib.get_enclosing_parallel_handle(&cur) {
                Ok(next) => cur = next,
                Err(_) => break,
            }
        }
        j.expect(got == want, || {
            format!(
                "gtid {}: levels along the chain {got:?}, model {want:?}",
                t.0
            )
        });
    }
    j.verdict()
}

/// OMPD 5.x §5.5.1: a thread not currently part of a team has no current region.
fn idle_thread(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    if ctx.model.idle_threads.is_empty() {
        return Verdict::skip("the scenario has no idle pool thread");
    }
    let mut j = Judge::new(ctx, "unavailable for a thread in no team");
    let kind = ompd_abi::thread_id_kind::PTHREAD;
    for (k, native) in ctx.model.idle_threads.iter().enumerate() {
        let what = format!("idle thread {k} (gtid {})", ctx.model.threads.len() + k);
        let id = crate::native_id_bytes(ctx.model, ctx.arch, native, kind);
        // An idle pool thread is an OpenMP thread: no handle is a finding, never a skip.
        match ctx.lib.get_thread_handle(ah, kind, &id) {
            Ok(th) => expect_rc(
                &mut j,
                &what,
                ctx.lib.get_curr_parallel_handle(&th),
                Rc::UNAVAILABLE,
                &[],
            ),
            Err(e) => j.fail(format!(
                "{what}: no thread handle for an OpenMP thread of the pool (OMPD-HANDLE-THREAD-001): {e}"
            )),
        }
    }
    j.verdict()
}

fn outermost(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "unavailable after the outermost region");
    let depth = ctx.model.level(crate::innermost_region(
        ctx.model,
        sim_target::model::ThreadId(0),
    ));
    // The model always has gtid 0's region and its enclosing chain: a library that cannot
    // reach the outermost region fails here too, never skips.
    let mut cur = match ctx.curr_parallel(ah, sim_target::model::ThreadId(0)) {
        Ok(ph) => ph,
        Err(e) => {
            j.fail(format!("current parallel handle of gtid 0: {e}"));
            return j.verdict();
        }
    };
    for level in 0..depth {
        match ctx.lib.get_enclosing_parallel_handle(&cur) {
            Ok(next) => cur = next,
            Err(e) => {
                j.fail(format!(
                    "the enclosing chain from gtid 0's region ended after {level} of {depth} \
                     levels: {e}"
                ));
                return j.verdict();
            }
        }
    }
    let got = ctx.lib.get_enclosing_parallel_handle(&cur);
    expect_rc(
        &mut j,
        "enclosing of the outermost region",
        got,
        Rc::UNAVAILABLE,
        &[],
    );
    j.verdict()
}

fn thread_in_parallel(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "member n compares equal to the handle by native id and has thread-num-var n",
    );
    for (r, _, ph) in ctx.regions_with_handles(ah, &mut j) {
        for (n, member) in ctx.model.regions[r.0].members.iter().enumerate() {
            let by_index = ctx.lib.get_thread_in_parallel(&ph, n as i32);
            let by_id = ctx.thread_handle(ah, *member);
            match (by_index, by_id) {
                (Ok(a), Ok(b)) => {
                    let c = ctx.lib.thread_compare(&a, &b);
                    j.expect(c == Ok(0), || {
                        format!(
                            "region {} thread {n} vs gtid {}: {}",
                            r.0,
                            member.0,
                            crate::describe(&c)
                        )
                    });
                    // thread-num-var is the thread's number in its innermost team.
                    let inner = crate::innermost_region(ctx.model, *member);
                    let want = ctx.model.thread_num(inner, *member).unwrap_or(n) as i64;
                    match ctx.icv(AnyHandle::Thread(&a), Scope::THREAD, "thread-num-var") {
                        Ok(Ok((Rc::OK, Some(v)))) => j.expect(v == want, || {
                            format!(
                                "region {} thread {n}: thread-num-var {v}, model {want}",
                                r.0
                            )
                        }),
                        other => j.fail(format!(
                            "region {} thread {n}: thread-num-var {other:?}",
                            r.0
                        )),
                    }
                }
                (Err(e), _) => j.fail(format!(
                    "region {} thread {n}: ompd_get_thread_in_parallel: {e}",
                    r.0
                )),
                (_, Err(e)) => j.fail(format!("gtid {}: {e}", member.0)),
            }
        }
    }
    j.verdict()
}

fn out_of_range(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "bad_input");
    for t in ctx.threads() {
        let size = ctx.model.regions[crate::innermost_region(ctx.model, t).0]
            .members
            .len() as i32;
        let ph = match ctx.curr_parallel(ah, t) {
            Ok(ph) => ph,
            Err(e) => {
                j.fail(format!("gtid {}: {e}", t.0));
                continue;
            }
        };
        for n in [-1, size, i32::MAX] {
            let got = ctx.lib.get_thread_in_parallel(&ph, n);
            expect_rc(
                &mut j,
                &format!("gtid {} index {n} of {size}", t.0),
                got.map(|_| ()),
                Rc::BAD_INPUT,
                &[],
            );
        }
    }
    j.verdict()
}

fn active_levels(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "active-levels-var equal to the model's");
    for t in ctx.threads() {
        let r = crate::innermost_region(ctx.model, t);
        let want = ctx.model.active_level(r) as i64;
        match ctx
            .curr_parallel(ah, t)
            .map_err(|e| e.to_string())
            .and_then(|ph| par_icv(ctx, &ph, "active-levels-var"))
        {
            Ok(v) => j.expect(v == want, || format!("gtid {}: {v}, model {want}", t.0)),
            Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
        }
    }
    j.verdict()
}
