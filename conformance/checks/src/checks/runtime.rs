//! The runtime side of the interface (runtime-interface seed): what an OpenMP runtime must
//! define for a debugger to find and drive its OMPD library — `ompd_dll_locations`, the
//! `ompd_dll_locations_valid` label and the `ompd_bp_*` breakpoint symbols. Judged from the
//! target's own symbols and memory, so they apply to real runtimes (live processes and core
//! files), not to a simulation of the structures a library reads.
//!
//! `runtime.bp_sequence.*` judges the runtime's breakpoints themselves, where a breakpoint tour
//! of `--live` stops a fixture at each one it passes ([`BpStop`]): every stop judges the
//! sequence of stops it ends, and the main thread's `ompd_bp_thread_end`, after every region and
//! task, judges the totals. Elsewhere they skip: no other target is stopped at one.

use crate::checks::bp::stop_or_skip;
use crate::known::{BpStop, Fact};
use crate::{Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::breakpoint;
use ompd_serve::source::{Source, SymbolError};
use std::collections::BTreeMap;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "runtime.dll_locations.valid_vector",
        requirements: &["OMPD-RT-001", "OMPD-RT-002", "OMPD-RT-003", "OMPD-RT-006"],
        summary: "ompd_dll_locations is an unmangled variable pointing to a NULL-terminated vector of non-empty NUL-terminated paths",
        severity: Severity::Must,
        entry_points: &[],
        since: Profile::Tr2,
        real: Some(&[Fact::RuntimeInterface]),
        run: Run::Worker(dll_locations),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "runtime.dll_locations_valid.defined",
        requirements: &["OMPD-RT-005"],
        summary: "the runtime defines the C-linkage symbol ompd_dll_locations_valid",
        severity: Severity::Must,
        entry_points: &[],
        since: Profile::Tr2,
        real: Some(&[Fact::RuntimeInterface]),
        arg: crate::Arg::Symbol("ompd_dll_locations_valid"),
        run: Run::Worker(defined),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "runtime.breakpoints.defined",
        requirements: &["OMPD-BP-001"],
        summary: "the runtime defines the C-linkage ompd_bp_* breakpoint symbols of every generation it implements: the parallel and task ones (TR 2.001), the thread and device ones (5.0), the teams ones (6.0); a runtime implements a generation when its OpenMP version (__kmp_openmp_version) is that generation's or newer, or when it defines one of that generation's breakpoints",
        severity: Severity::Must,
        entry_points: &[],
        since: Profile::Tr2,
        real: Some(&[Fact::RuntimeInterface]),
        run: Run::Worker(breakpoints),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "runtime.bp_sequence.thread_begin_first",
        requirements: &["OMPD-BP-002"],
        summary: "the runtime passes ompd_bp_thread_begin once per thread before any other breakpoint of that thread, and ompd_bp_thread_end once, after all of them",
        severity: Severity::Must,
        entry_points: &[],
        real: Some(&[Fact::Stop]),
        property: crate::Property::ScenariosOnly,
        run: Run::Worker(thread_begin_first),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "runtime.bp_sequence.parallel_once_per_region",
        requirements: &["OMPD-BP-003"],
        summary: "the runtime passes ompd_bp_parallel_begin once per region (not per thread, not twice) and ompd_bp_parallel_end once after it, both on the encountering thread: as many pairs as the program has regions; a teams construct's league and its initial teams' implicit parallel regions may each count as regions or not, which the texts leave open",
        severity: Severity::Must,
        entry_points: &[],
        since: Profile::Tr2,
        real: Some(&[Fact::Stop]),
        property: crate::Property::ScenariosOnly,
        run: Run::Worker(parallel_pairs),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "runtime.bp_sequence.teams_once_per_construct",
        requirements: &["OMPD-BP-008"],
        summary: "a runtime that owes OpenMP 6.0's breakpoints passes ompd_bp_teams_begin once per teams construct and ompd_bp_teams_end once after it, both on the encountering thread: as many pairs as the program has teams constructs",
        severity: Severity::Must,
        entry_points: &[],
        real: Some(&[Fact::Stop]),
        property: crate::Property::ScenariosOnly,
        run: Run::Worker(teams_pairs),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "runtime.bp_sequence.task_begin_end_pairs",
        requirements: &["OMPD-BP-004"],
        summary: "the runtime passes ompd_bp_task_begin before every explicit task runs and ompd_bp_task_end once after it, each end after its begin",
        severity: Severity::Must,
        entry_points: &[],
        since: Profile::Tr2,
        real: Some(&[Fact::Stop]),
        property: crate::Property::ScenariosOnly,
        run: Run::Worker(task_pairs),
        ..Check::TARGET
    },
];

/// The most entries and the longest path read from `ompd_dll_locations`.
const MAX_ENTRIES: u64 = 64;
const MAX_PATH: u64 = 4096;

/// The target's source, or a skip for a target that is not a real runtime.
fn source<'a>(ctx: &'a Ctx) -> Result<&'a dyn Source, Verdict> {
    match ctx.target {
        Some(t) if ctx.known.has(crate::known::Fact::RuntimeInterface) => Ok(t.source()),
        _ => Err(Verdict::skip(
            "the runtime interface is judged on real runtimes (live processes, core files)",
        )),
    }
}

fn defined(ctx: &mut Ctx, arg: crate::Arg) -> Verdict {
    let crate::Arg::Symbol(name) = arg else {
        return Verdict::harness_error(format!("a symbol row gives {arg:?}"));
    };
    let src = match source(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, format!("{name} defined under its unmangled name"));
    match lookup(src, name) {
        Ok(()) => j.holds(),
        Err(e) => j.fail(e),
    }
    j.verdict()
}

/// Whether `src` defines the symbol `name`, or what is wrong with it.
fn lookup(src: &dyn Source, name: &str) -> Result<(), String> {
    match src.symbol(name, None) {
        Ok(_) => Ok(()),
        Err(SymbolError::NotFound) => Err(format!("{name} is not defined")),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

/// The breakpoints each generation asks of the runtime (OMPD-BP-001), with the OpenMP version
/// from which a runtime owes them: TR 2.001 §12 (every runtime with the interface: no version),
/// OMPD 5.0 (HL:1238-1252), OpenMP 6.0 §42.7/42.8 (its header declares no target pair, which
/// §42.11/42.12 name).
const BREAKPOINTS: [(Profile, Option<i64>, &[&str]); 3] = [
    (Profile::Tr2, None, breakpoint::TR2),
    (Profile::V5_0, Some(201811), breakpoint::V5_0),
    (Profile::V6_0, Some(202411), breakpoint::V6_0),
];

/// The generations whose breakpoints a runtime owes: TR 2.001's always, a newer one's when the
/// runtime's OpenMP `version` is that generation's or newer, or when it defines one of them.
fn owed(version: Option<i64>, defined: impl Fn(&str) -> bool) -> Vec<Profile> {
    BREAKPOINTS
        .iter()
        .filter(|(_, from, names)| match from {
            None => true,
            Some(from) => version.is_some_and(|v| v >= *from) || names.iter().any(|n| defined(n)),
        })
        .map(|(generation, _, _)| *generation)
        .collect()
}

/// The generations whose breakpoints the runtime of `src` owes ([`owed`]), and its OpenMP
/// version as shown in a message.
fn owed_by(src: &dyn Source) -> (Vec<Profile>, String) {
    let version = super::lib::runtime_openmp_version(src).ok();
    let owed = owed(version, |n| lookup(src, n).is_ok());
    (owed, version.map_or("unreadable".into(), |v| v.to_string()))
}

/// Judges the breakpoints of every generation the runtime implements, whatever the library's
/// profile: what a runtime owes follows from the runtime (the runtime row judges it once).
fn breakpoints(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let src = match source(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let (owed, shown) = owed_by(src);
    let names: Vec<&str> = owed.iter().map(|g| g.name()).collect();
    let mut j = Judge::new(
        ctx,
        format!(
            "the breakpoints of {} (OpenMP version {shown}), each defined under its unmangled name",
            names.join(", ")
        ),
    );
    let asked = BREAKPOINTS.iter().filter(|(g, _, _)| owed.contains(g));
    for name in asked.flat_map(|(_, _, names)| names.iter()) {
        match lookup(src, name) {
            Ok(()) => j.holds(),
            Err(e) => j.fail(e),
        }
    }
    j.verdict()
}

/// The paths `ompd_dll_locations` lists in `src`, or why they cannot be read.
pub fn dll_locations_of(src: &dyn Source) -> Result<Vec<String>, String> {
    let arch = src.arch();
    let ptr = arch.pointer as u64;
    let var = src
        .symbol("ompd_dll_locations", None)
        .map_err(|e| format!("ompd_dll_locations: {e}"))?;
    let vector = arch.decode(
        &src.read(var, ptr)
            .map_err(|e| format!("reading ompd_dll_locations: {e}"))?,
    );
    if vector == 0 {
        return Err("ompd_dll_locations is NULL at a stop after the runtime initialized".into());
    }
    let mut out = Vec::new();
    for i in 0..=MAX_ENTRIES {
        let at = vector + i * ptr;
        let p = arch.decode(
            &src.read(at, ptr)
                .map_err(|e| format!("entry {i} at {at:#x}: {e}"))?,
        );
        if p == 0 {
            return Ok(out);
        }
        let bytes = src
            .read_cstr(p, MAX_PATH)
            .map_err(|e| format!("path {i} at {p:#x}: {e}"))?;
        let Some((&0, text)) = bytes.split_last() else {
            return Err(format!(
                "path {i} at {p:#x} has no NUL within {MAX_PATH} bytes"
            ));
        };
        if text.is_empty() {
            return Err(format!("path {i} is empty"));
        }
        out.push(String::from_utf8_lossy(text).into_owned());
    }
    Err(format!("no NULL terminator within {MAX_ENTRIES} entries"))
}

fn dll_locations(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let src = match source(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let mut j = Judge::new(
        ctx,
        "a NULL-terminated vector of non-empty paths, at least one of them an OMPD library",
    );
    match dll_locations_of(src) {
        Ok(paths) if paths.is_empty() => j.fail("the vector lists no library"),
        Ok(paths) => {
            j.holds();
            let named = paths.iter().any(|p| {
                std::path::Path::new(p)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().contains(".so"))
            });
            j.expect(named, || {
                format!("no entry names a shared object: {paths:?}")
            });
        }
        Err(e) => j.fail(e),
    }
    j.verdict()
}

/// Judges the tour's stops so far with `facts` (each `Err` names a violation), or skips where the
/// target is not stopped at a breakpoint.
fn sequence(
    ctx: &mut Ctx,
    expected: &str,
    facts: fn(&BpStop) -> Vec<Result<(), String>>,
) -> Verdict {
    let stop = match stop_or_skip(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, expected);
    for f in facts(&stop) {
        match f {
            Ok(()) => j.holds(),
            Err(e) => j.fail(e),
        }
    }
    j.verdict()
}

/// A fact: `Ok` when `ok`, else the violation `what` describes.
fn fact(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what())
    }
}

/// The tour's stops by thread, in order.
fn by_thread(stop: &BpStop) -> BTreeMap<u32, Vec<&str>> {
    let mut out: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    for (bp, tid) in &stop.log {
        out.entry(*tid).or_default().push(bp.as_str());
    }
    out
}

/// Whether the main thread ended: every region and task of the program is over.
fn program_over(stop: &BpStop) -> bool {
    stop.log
        .iter()
        .any(|(bp, tid)| bp == "ompd_bp_thread_end" && *tid == stop.pid)
}

fn thread_begin_first(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    sequence(
        ctx,
        "thread_begin first, thread_end last, once each",
        thread_facts,
    )
}

/// Each thread's stops begin with its one thread_begin and end with its one thread_end, if any.
fn thread_facts(stop: &BpStop) -> Vec<Result<(), String>> {
    let mut out = Vec::new();
    for (tid, stops) in by_thread(stop) {
        let count = |name: &str| stops.iter().filter(|b| **b == name).count();
        let (begins, ends) = (count("ompd_bp_thread_begin"), count("ompd_bp_thread_end"));
        out.push(fact(
            stops[0] == "ompd_bp_thread_begin" && begins == 1,
            || {
                format!(
                    "thread {tid}: its stops begin {:?}, with {begins} thread_begin",
                    stops[0]
                )
            },
        ));
        let last = stops[stops.len() - 1];
        out.push(fact(
            ends == 0 || ends == 1 && last == "ompd_bp_thread_end",
            || format!("thread {tid}: {ends} thread_end, and {last} is its last stop so far"),
        ));
    }
    out
}

fn parallel_pairs(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    sequence(
        ctx,
        "one ompd_bp_parallel_begin and one ompd_bp_parallel_end per region",
        parallel_facts,
    )
}

/// `ompd_bp_parallel_begin`/`_end` pair up on each thread, never more begins than the program
/// may have regions, and once the program is over one pair per region. Whether a teams
/// construct adds regions the texts leave open, twice: its league may count as one (OMPT's
/// parallel-begin with `ompt_parallel_league`), and so may the implicit parallel region each
/// initial team runs (the region 6.0's teams scope names). Either, both or neither passes.
fn parallel_facts(stop: &BpStop) -> Vec<Result<(), String>> {
    let (constructs, teams) = stop.teams;
    let (want, league, initial) = (stop.parallel_regions, constructs, constructs * teams);
    let allowed = [want, want + league, want + initial, want + league + initial];
    pair_facts(
        stop,
        "ompd_bp_parallel_begin",
        "ompd_bp_parallel_end",
        &allowed,
    )
}

/// `begin`/`end` pair up on each thread (never an end with none of its own open), never more
/// begins than the most `allowed`, and once the program is over as many ends as begins, their
/// number one of `allowed` (the first is what the program runs).
fn pair_facts(stop: &BpStop, begin: &str, end: &str, allowed: &[usize]) -> Vec<Result<(), String>> {
    let mut out = Vec::new();
    let (mut begins, mut ends) = (0, 0);
    for (tid, stops) in by_thread(stop) {
        let mut open = 0i64;
        for s in stops {
            begins += usize::from(s == begin);
            ends += usize::from(s == end);
            open += i64::from(s == begin) - i64::from(s == end);
            out.push(fact(s != end || open >= 0, || {
                format!("thread {tid}: {end} with none of its own open")
            }));
        }
    }
    let want = allowed[0];
    let most = allowed.iter().copied().max().unwrap_or(want);
    out.push(fact(begins <= most, || {
        format!("{begins} {begin} for the program's {want}")
    }));
    if program_over(stop) {
        out.push(fact(begins == ends && allowed.contains(&begins), || {
            format!("the program is over: {begins} {begin} and {ends} {end} for its {want}")
        }));
    }
    out
}

fn teams_pairs(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let src = match source(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let (owed, shown) = owed_by(src);
    if !owed.contains(&Profile::V6_0) {
        return Verdict::skip(format!(
            "the runtime owes no OpenMP 6.0 breakpoints: its OpenMP version is {shown} and it \
             defines neither ompd_bp_teams_begin nor ompd_bp_teams_end"
        ));
    }
    sequence(
        ctx,
        "one ompd_bp_teams_begin and one ompd_bp_teams_end per teams construct",
        teams_facts,
    )
}

/// `ompd_bp_teams_begin`/`_end` pair up on the encountering thread, once per teams construct.
fn teams_facts(stop: &BpStop) -> Vec<Result<(), String>> {
    let (constructs, _) = stop.teams;
    pair_facts(
        stop,
        "ompd_bp_teams_begin",
        "ompd_bp_teams_end",
        &[constructs],
    )
}

fn task_pairs(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    sequence(
        ctx,
        "ompd_bp_task_begin and ompd_bp_task_end in pairs",
        task_facts,
    )
}

/// `ompd_bp_task_begin`/`_end` pair up: never more ends than begins so far, and once the program
/// is over as many ends as begins, and at least as many begins as it has explicit tasks (a
/// runtime may pass them for implicit tasks too: 5.x says every task, TR 16 explicit tasks).
fn task_facts(stop: &BpStop) -> Vec<Result<(), String>> {
    let count = |name: &str| stop.log.iter().filter(|(bp, _)| bp == name).count();
    let (begins, ends) = (count("ompd_bp_task_begin"), count("ompd_bp_task_end"));
    let mut out = vec![fact(ends <= begins, || {
        format!("{ends} ompd_bp_task_end after {begins} ompd_bp_task_begin")
    })];
    if program_over(stop) {
        let want = stop.explicit_tasks;
        out.push(fact(begins >= want && begins == ends, || {
            format!(
                "the program is over: {begins} ompd_bp_task_begin and {ends} ompd_bp_task_end \
                 for its {want} explicit tasks"
            )
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_owes_the_breakpoints_of_the_generations_it_shows() {
        let none = |_: &str| false;
        let thread = |n: &str| n == "ompd_bp_thread_begin";
        let teams = |n: &str| n == "ompd_bp_teams_begin";
        let (tr, v50, v60) = (Profile::Tr2, Profile::V5_0, Profile::V6_0);
        // Stripped: no version, no breakpoint: TR 2.001's are owed all the same.
        assert_eq!(owed(None, none), [tr]);
        // LLVM 21 says 201611 but defines the thread pair.
        assert_eq!(owed(Some(201611), thread), [tr, v50]);
        // Intel 2025.0 says 202111 and defines no 6.0 breakpoint.
        assert_eq!(owed(Some(202111), none), [tr, v50]);
        // Intel 2026.2 says 202111 and defines the teams pair.
        assert_eq!(owed(Some(202111), teams), [tr, v50, v60]);
        assert_eq!(owed(Some(202411), none), [tr, v50, v60]);
    }

    /// A tour of process 1 whose stops are `log` ("thread_begin@1" = ompd_bp_thread_begin on
    /// thread 1), for a program of one region and one explicit task.
    fn tour(log: &[&str]) -> BpStop {
        BpStop {
            pid: 1,
            parallel_regions: 1,
            explicit_tasks: 1,
            log: log
                .iter()
                .map(|s| {
                    let (bp, tid) = s.split_once('@').unwrap();
                    (format!("ompd_bp_{bp}"), tid.parse().unwrap())
                })
                .collect(),
            ..BpStop::default()
        }
    }

    fn violations(facts: Vec<Result<(), String>>) -> usize {
        facts.iter().filter(|f| f.is_err()).count()
    }

    /// What a correct runtime passes: one region of two threads running one explicit task.
    const GOOD: &[&str] = &[
        "thread_begin@1",
        "parallel_begin@1",
        "thread_begin@2",
        "task_begin@2",
        "task_end@2",
        "parallel_end@1",
        "thread_end@1",
        "thread_end@2",
    ];

    #[test]
    fn a_correct_sequence_passes_every_sequence_check() {
        let stop = tour(GOOD);
        assert_eq!(violations(thread_facts(&stop)), 0);
        assert_eq!(violations(parallel_facts(&stop)), 0);
        assert_eq!(violations(task_facts(&stop)), 0);
        // Every prefix passes too: each stop judges the stops before it.
        for n in 1..GOOD.len() {
            let prefix = tour(&GOOD[..n]);
            assert_eq!(violations(thread_facts(&prefix)), 0, "prefix {n}");
            assert_eq!(violations(parallel_facts(&prefix)), 0, "prefix {n}");
            assert_eq!(violations(task_facts(&prefix)), 0, "prefix {n}");
        }
    }

    #[test]
    fn a_thread_stopping_before_its_thread_begin_or_after_its_thread_end_fails() {
        assert_eq!(
            violations(thread_facts(&tour(&["parallel_begin@1", "thread_begin@1"]))),
            1
        );
        assert_eq!(
            violations(thread_facts(&tour(&["thread_begin@1", "thread_begin@1"]))),
            1
        );
        assert_eq!(
            violations(thread_facts(&tour(&[
                "thread_begin@1",
                "thread_end@1",
                "task_begin@1"
            ]))),
            1
        );
    }

    #[test]
    fn a_region_passed_twice_or_ended_on_another_thread_fails() {
        let twice = ["thread_begin@1", "parallel_begin@1", "parallel_begin@1"];
        assert_eq!(violations(parallel_facts(&tour(&twice))), 1);
        let elsewhere = [
            "thread_begin@1",
            "parallel_begin@1",
            "thread_begin@2",
            "parallel_end@2",
        ];
        assert_eq!(violations(parallel_facts(&tour(&elsewhere))), 1);
        let unended = ["thread_begin@1", "parallel_begin@1", "thread_end@1"];
        assert_eq!(violations(parallel_facts(&tour(&unended))), 1);
    }

    /// Intel 2026.2's tour of the `teams` fixture (one construct of 2 initial teams, one parallel
    /// region in team 1): the league's teams pair on the main thread, a parallel pair per initial
    /// team's implicit region, and the program's own region.
    const TEAMS: [&str; 12] = [
        "thread_begin@1",
        "teams_begin@1",
        "thread_begin@2",
        "parallel_begin@1",
        "parallel_begin@2",
        "parallel_begin@2",
        "parallel_end@1",
        "parallel_end@2",
        "parallel_end@2",
        "teams_end@1",
        "thread_end@2",
        "thread_end@1",
    ];

    fn teams_tour(log: &[&str]) -> BpStop {
        BpStop {
            teams: (1, 2),
            explicit_tasks: 0,
            ..tour(log)
        }
    }

    #[test]
    fn a_teams_construct_passes_its_pair_once_and_may_add_parallel_pairs() {
        let stop = teams_tour(&TEAMS);
        assert_eq!(violations(teams_facts(&stop)), 0);
        assert_eq!(violations(parallel_facts(&stop)), 0);
        // None or one added parallel pair (the league's) is allowed too, and a fourth (the league
        // and each initial team's); a fifth is not.
        let drop = |skip: &[usize]| -> Vec<&str> {
            (0..TEAMS.len())
                .filter(|i| !skip.contains(i))
                .map(|i| TEAMS[i])
                .collect()
        };
        assert_eq!(violations(parallel_facts(&teams_tour(&drop(&[4, 7])))), 0);
        assert_eq!(
            violations(parallel_facts(&teams_tour(&drop(&[4, 5, 7, 8])))),
            0
        );
        let mut four = TEAMS.to_vec();
        four.splice(9..9, ["parallel_begin@1", "parallel_end@1"]);
        assert_eq!(violations(parallel_facts(&teams_tour(&four))), 0);
        let mut five = four.clone();
        five.splice(9..9, ["parallel_begin@1", "parallel_end@1"]);
        assert_eq!(violations(parallel_facts(&teams_tour(&five))), 2);
        // Without a teams construct, the same pairs are too many.
        assert_eq!(violations(parallel_facts(&tour(&TEAMS))), 2);
    }

    #[test]
    fn a_teams_pair_per_initial_team_or_ended_elsewhere_fails() {
        let mut twice = TEAMS.to_vec();
        twice.insert(4, "teams_begin@2");
        twice.insert(10, "teams_end@2");
        // One more begin than constructs while running, and at the end.
        assert_eq!(violations(teams_facts(&teams_tour(&twice))), 2);
        let mut elsewhere = TEAMS.to_vec();
        elsewhere[9] = "teams_end@2";
        assert_eq!(violations(teams_facts(&teams_tour(&elsewhere))), 1);
        let none: Vec<&str> = TEAMS
            .iter()
            .copied()
            .filter(|s| !s.starts_with("teams"))
            .collect();
        assert_eq!(violations(teams_facts(&teams_tour(&none))), 1);
    }

    #[test]
    fn a_task_ended_before_it_began_or_never_passed_fails() {
        assert_eq!(
            violations(task_facts(&tour(&["thread_begin@1", "task_end@1"]))),
            1
        );
        assert_eq!(
            violations(task_facts(&tour(&["thread_begin@1", "thread_end@1"]))),
            1
        );
    }
}
