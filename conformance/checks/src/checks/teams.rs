//! Teams: the regions of a host `teams` construct (the `teams` scenario). OpenMP 6.0 §1.3 gives
//! each initial team an implicit parallel region of one thread; a kmp runtime keeps a league
//! team and, under it, one team per initial team holding the threads a nested parallel region
//! will use ([`TeamsPart`]). Where the text and that memory answer differently, every answer
//! either allows passes.

use super::parallel::par_icv;
use crate::known::Fact;
use crate::{Check, Ctx, Judge, Profile, Property, Run, Severity, Verdict};
use ompd_abi::{EntryPoint, Rc, Scope};
use ompd_loader::library::{AnyHandle, AspaceH, Fail, ParallelH};
use sim_target::model::{RegionId, TeamsPart, ThreadId};

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "teams.curr.one_region_per_team",
        requirements: &["OMPD-HANDLE-PAR-001", "OMPD-HANDLE-PAR-003", "OMPD-CMP-004", "OMPD-CMP-005"],
        summary: "in a teams region each initial team's threads share a current parallel handle that compares non-zero to another team's (6.0 §1.3: an implicit parallel region per team); a thread parked in a team has none (unavailable) or that team's",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::ParallelHandleCompare],
        run: Run::Worker(one_region_per_team),
        property: Property::ScenariosOnly,
        real: Some(&[Fact::Threads, Fact::Teams]),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "teams.curr.icvs_allowed",
        requirements: &["OMPD-ICV-010", "OMPD-ICV-015", "OMPD-HANDLE-PAR-001"],
        summary: "the current region of a thread in a teams region has levels-var and active-levels-var 0 (1 in a parallel region nested in it) and team-size-var 1 or the number of threads the runtime keeps in the team (the nested region's size inside one)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetIcvFromScope],
        run: Run::Worker(icvs_allowed),
        property: Property::ScenariosOnly,
        real: Some(&[Fact::Threads, Fact::Teams]),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "teams.enclosing.chain_ends",
        requirements: &["OMPD-HANDLE-PAR-005"],
        summary: "walking ompd_get_enclosing_parallel_handle from a region of a teams region ends within the regions the runtime keeps above it, visiting no region twice and never raising levels-var (the text leaves the chain's length open)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::GetEnclosingParallelHandle, EntryPoint::ParallelHandleCompare, EntryPoint::GetIcvFromScope],
        run: Run::Worker(chain_ends),
        property: Property::ScenariosOnly,
        real: Some(&[Fact::Threads, Fact::Teams]),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "teams.icv.league_and_team_num",
        requirements: &["OMPD-ICV-010", "OMPD-ICV-015"],
        summary: "6.0: league-size-var and team-num-var, asked at their enumerated scope with the current parallel handle of an initial thread in the teams body, are the league's size and the thread's team number (skips when the library enumerates neither)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetCurrParallelHandle, EntryPoint::EnumerateIcvs, EntryPoint::GetIcvFromScope],
        since: Profile::V6_0,
        run: Run::Worker(league_and_team_num),
        property: Property::ScenariosOnly,
        real: Some(&[Fact::Threads, Fact::Teams]),
        ..Check::TARGET
    },
];

/// How a thread stands in the teams region.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// It executes the teams body or a parallel region nested in it.
    Working,
    /// It waits at the fork barrier of its initial team for a nested parallel region.
    Parked,
}

/// The threads of the teams construct: each with its innermost region and role; none when
/// the scenario has no league.
fn members(ctx: &Ctx) -> Vec<(ThreadId, RegionId, Role)> {
    let m = ctx.model;
    if !m.regions.iter().any(|r| r.teams == Some(TeamsPart::League)) {
        return Vec::new();
    }
    let in_teams = |r: RegionId| m.region_chain(r).iter().any(|x| m.teams_part(*x).is_some());
    ctx.threads()
        .map(|t| (t, crate::innermost_region(m, t)))
        .filter(|(_, r)| in_teams(*r))
        .map(|(t, r)| {
            let parked = matches!(m.teams_part(r), Some(TeamsPart::InitialTeam { .. }))
                && m.thread_num(r, t) != Some(0);
            (t, r, if parked { Role::Parked } else { Role::Working })
        })
        .collect()
}

/// The current parallel handle of thread `t`, or none with the failure recorded in `j`.
fn curr_or_fail<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    t: ThreadId,
    j: &mut Judge,
) -> Option<ParallelH<'l>> {
    let got = ctx.curr_parallel(ah, t);
    got.map_err(|e| j.fail(format!("gtid {}: ompd_get_curr_parallel_handle: {e}", t.0)))
        .ok()
}

/// The skip of a scenario without a teams construct.
fn no_teams() -> Verdict {
    Verdict::skip("the scenario has no teams construct")
}

fn one_region_per_team(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let threads = members(ctx);
    if threads.is_empty() {
        return no_teams();
    }
    let mut j = Judge::new(ctx, "one handle per team, distinct across teams");
    let mut working: Vec<(RegionId, ThreadId, ParallelH)> = Vec::new();
    for (t, r, _) in threads.iter().filter(|x| x.2 == Role::Working) {
        if let Some(ph) = curr_or_fail(ctx, ah, *t, &mut j) {
            working.push((*r, *t, ph));
        }
    }
    for (i, (ra, ta, a)) in working.iter().enumerate() {
        for (rb, tb, b) in &working[i + 1..] {
            let c = ctx.lib.parallel_compare(a, b);
            let same = ra == rb;
            j.expect(matches!(c, Ok(v) if (v == 0) == same), || {
                let how = if same { "one team" } else { "different teams" };
                format!(
                    "gtid {} and {} ({how}): {}",
                    ta.0,
                    tb.0,
                    crate::describe(&c)
                )
            });
        }
    }
    for (t, r, _) in threads.iter().filter(|x| x.2 == Role::Parked) {
        let initial = working.iter().find(|(w, ..)| w == r).map(|x| &x.2);
        match (ctx.curr_parallel(ah, *t), initial) {
            (Err(Fail::Rc(Rc::UNAVAILABLE)), _) => j.holds(),
            (Ok(ph), Some(team)) => {
                let c = ctx.lib.parallel_compare(&ph, team);
                j.expect(c == Ok(0), || {
                    format!(
                        "gtid {}, parked in its team: a region that is not the team's: {}",
                        t.0,
                        crate::describe(&c)
                    )
                });
            }
            (Ok(_), None) => {}
            (Err(e), _) => j.fail(format!(
                "gtid {}, parked in its team: {e} (unavailable or the team's region)",
                t.0
            )),
        }
    }
    j.verdict()
}

fn icvs_allowed(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let threads = members(ctx);
    if threads.is_empty() {
        return no_teams();
    }
    let mut j = Judge::new(
        ctx,
        "the levels of the model, a team size either text allows",
    );
    for (t, r, _) in threads.iter().filter(|x| x.2 == Role::Working) {
        let Some(ph) = curr_or_fail(ctx, ah, *t, &mut j) else {
            continue;
        };
        let m = ctx.model;
        let sizes = match m.teams_part(*r) {
            Some(TeamsPart::InitialTeam { threads }) => vec![1, threads as i64],
            _ => vec![m.regions[r.0].members.len() as i64],
        };
        let wants = [
            ("levels-var", vec![m.level(*r) as i64]),
            ("active-levels-var", vec![m.active_level(*r) as i64]),
            ("team-size-var", sizes),
        ];
        for (name, allowed) in wants {
            match par_icv(ctx, &ph, name) {
                Ok(v) => j.expect(allowed.contains(&v), || {
                    format!("gtid {}: {name} {v}, allowed {allowed:?}", t.0)
                }),
                Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
            }
        }
    }
    j.verdict()
}

fn chain_ends(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let threads = members(ctx);
    if threads.is_empty() {
        return no_teams();
    }
    let mut j = Judge::new(ctx, "an end within the kept regions, no repeat, no rise");
    for (t, r, _) in threads.iter().filter(|x| x.2 == Role::Working) {
        let Some(mut cur) = curr_or_fail(ctx, ah, *t, &mut j) else {
            continue;
        };
        // The runtime keeps the region and every team above it: no answer walks further.
        let kept = ctx.model.region_chain(*r).len();
        match walk(ctx, &mut cur, kept) {
            Ok(()) => j.holds(),
            Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
        }
    }
    j.verdict()
}

fn league_and_team_num(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let threads = members(ctx);
    if threads.is_empty() {
        return no_teams();
    }
    let mut j = Judge::new(ctx, "the league's size and the thread's team number");
    let m = ctx.model;
    for (t, r, _) in threads.iter().filter(|x| x.2 == Role::Working) {
        if !matches!(m.teams_part(*r), Some(TeamsPart::InitialTeam { .. })) {
            continue; // a region nested in the teams region: no teams-scope handle
        }
        let Some((league, team)) = league_place(ctx, *t) else {
            continue;
        };
        let Some(ph) = curr_or_fail(ctx, ah, *t, &mut j) else {
            continue;
        };
        for (name, want) in [("league-size-var", league), ("team-num-var", team)] {
            let icv = match ctx.find_icv(ah, name, |n| n == name) {
                Ok(icv) => icv,
                Err(None) => continue,
                Err(Some(broke)) => {
                    j.fail(format!("gtid {}: {broke}", t.0));
                    continue;
                }
            };
            let scope = if icv.scope == Scope::PARALLEL {
                Scope::PARALLEL
            } else {
                Scope::TEAMS
            };
            match ctx.lib.get_icv(AnyHandle::Parallel(&ph), scope, icv.id) {
                Ok((Rc::OK, Some(v))) => j.expect(v == want, || {
                    format!("gtid {}: {name} {v}, model {want}", t.0)
                }),
                other => j.fail(format!("gtid {}: {name}: {}", t.0, crate::describe(&other))),
            }
        }
    }
    j.verdict_or_skip(|| "the library enumerates neither league-size-var nor team-num-var".into())
}

/// The size of the league thread `t` is an initial thread of, and its team number there.
fn league_place(ctx: &Ctx, t: ThreadId) -> Option<(i64, i64)> {
    let m = ctx.model;
    let league = m
        .region_chain(crate::innermost_region(m, t))
        .into_iter()
        .find(|r| m.teams_part(*r) == Some(TeamsPart::League))?;
    let k = m.thread_num(league, t)?;
    Some((m.regions[league.0].members.len() as i64, k as i64))
}

/// Walks the enclosing chain from `cur` (which it moves along), for at most `kept` regions.
fn walk<'l>(ctx: &Ctx<'l>, cur: &mut ParallelH<'l>, kept: usize) -> Result<(), String> {
    let mut seen: Vec<ParallelH<'l>> = Vec::new();
    let mut levels = vec![par_icv(ctx, cur, "levels-var")?];
    for step in 1..=kept {
        match ctx.lib.get_enclosing_parallel_handle(cur) {
            // The code that ends a chain is parallel.enclosing.outermost_unavailable's to judge.
            Err(Fail::Rc(_)) => return Ok(()),
            Err(e) => return Err(format!("enclosing region {step}: {e}")),
            Ok(next) => {
                let again = |s: &ParallelH<'l>| ctx.lib.parallel_compare(s, &next) == Ok(0);
                if again(cur) || seen.iter().any(again) {
                    return Err(format!("enclosing region {step} was visited before"));
                }
                let up = par_icv(ctx, &next, "levels-var")?;
                levels.push(up);
                if up > levels[levels.len() - 2] {
                    return Err(format!("levels-var along the walk rises: {levels:?}"));
                }
                seen.push(std::mem::replace(cur, next));
            }
        }
    }
    Err(format!(
        "still a region after the {kept} the runtime keeps (levels-var along the walk \
         {levels:?}; an end expected)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_teams_scenario_has_working_and_parked_threads() {
        let m = sim_target::model::scenario("teams").unwrap().model;
        let roles: Vec<_> = (0..m.threads.len())
            .map(|g| {
                let r = m.threads[g].region;
                (m.teams_part(r), m.thread_num(r, ThreadId(g)))
            })
            .collect();
        let parked = roles
            .iter()
            .filter(|(p, n)| matches!(p, Some(TeamsPart::InitialTeam { .. })) && *n != Some(0))
            .count();
        assert_eq!(parked, 2, "teams 0 and 2 park their second thread");
        assert!(
            roles.iter().any(|(p, _)| p.is_none()),
            "team 1's nested region"
        );
    }
}
