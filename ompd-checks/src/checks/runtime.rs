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

use crate::known::{BpStop, Fact};
use crate::{Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_serve::source::{Source, SymbolError};
use std::collections::BTreeMap;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        id: "runtime.dll_locations.valid_vector",
        requirements: &["OMPD-RT-001", "OMPD-RT-002", "OMPD-RT-003", "OMPD-RT-006"],
        summary: "ompd_dll_locations is an unmangled variable pointing to a NULL-terminated vector of non-empty NUL-terminated paths",
        severity: Severity::Must,
        entry_points: &[],
        real: Some(&[Fact::RuntimeInterface]),
        run: Run::Worker(dll_locations),
        ..Check::TARGET
    },
    Check {
        id: "runtime.dll_locations_valid.defined",
        requirements: &["OMPD-RT-005"],
        summary: "the runtime defines the C-linkage symbol ompd_dll_locations_valid",
        severity: Severity::Must,
        entry_points: &[],
        real: Some(&[Fact::RuntimeInterface]),
        arg: "ompd_dll_locations_valid",
        run: Run::Worker(defined),
        ..Check::TARGET
    },
    Check {
        id: "runtime.breakpoints.defined",
        requirements: &["OMPD-BP-001"],
        summary: "the runtime defines the eight C-linkage ompd_bp_* breakpoint symbols of OMPD 5.x",
        severity: Severity::Must,
        entry_points: &[],
        real: Some(&[Fact::RuntimeInterface]),
        arg: "ompd_bp_parallel_begin ompd_bp_parallel_end ompd_bp_task_begin ompd_bp_task_end \
              ompd_bp_thread_begin ompd_bp_thread_end ompd_bp_device_begin ompd_bp_device_end",
        run: Run::Worker(defined),
        ..Check::TARGET
    },
    Check {
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
        id: "runtime.bp_sequence.parallel_once_per_region",
        requirements: &["OMPD-BP-003"],
        summary: "the runtime passes ompd_bp_parallel_begin once per region (not per thread, not twice) and ompd_bp_parallel_end once after it, both on the encountering thread: as many pairs as the program has regions",
        severity: Severity::Must,
        entry_points: &[],
        real: Some(&[Fact::Stop]),
        property: crate::Property::ScenariosOnly,
        run: Run::Worker(parallel_pairs),
        ..Check::TARGET
    },
    Check {
        id: "runtime.bp_sequence.task_begin_end_pairs",
        requirements: &["OMPD-BP-004"],
        summary: "the runtime passes ompd_bp_task_begin before every explicit task runs and ompd_bp_task_end once after it, each end after its begin",
        severity: Severity::Must,
        entry_points: &[],
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

fn defined(ctx: &mut Ctx, names: &str) -> Verdict {
    let src = match source(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, "every symbol defined under its unmangled name");
    for name in names.split_whitespace() {
        match src.symbol(name, None) {
            Ok(_) => j.holds(),
            Err(SymbolError::NotFound) => j.fail(format!("{name} is not defined")),
            Err(e) => j.fail(format!("{name}: {e}")),
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

fn dll_locations(ctx: &mut Ctx, _: &str) -> Verdict {
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

/// The stop, or the skip of a target that is not stopped at a breakpoint.
fn stop_or_skip(ctx: &Ctx) -> Result<BpStop, Verdict> {
    match (&ctx.known.stop, ctx.known.has(Fact::Stop)) {
        (Some(stop), true) => Ok(stop.clone()),
        _ => Err(Verdict::skip(
            "judged where a breakpoint tour (--live) stops a fixture at an OMPD breakpoint; \
             this target is not stopped at one",
        )),
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

fn thread_begin_first(ctx: &mut Ctx, _: &str) -> Verdict {
    let stop = match stop_or_skip(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, "thread_begin first, thread_end last, once each");
    for (tid, stops) in by_thread(&stop) {
        let begins = stops
            .iter()
            .filter(|b| **b == "ompd_bp_thread_begin")
            .count();
        let ends = stops.iter().filter(|b| **b == "ompd_bp_thread_end").count();
        j.expect(stops[0] == "ompd_bp_thread_begin" && begins == 1, || {
            format!(
                "thread {tid}: its stops begin {:?}, with {begins} thread_begin",
                stops[0]
            )
        });
        let last = stops[stops.len() - 1];
        j.expect(
            ends == 0 || ends == 1 && last == "ompd_bp_thread_end",
            || format!("thread {tid}: {ends} thread_end, and {last} is its last stop so far"),
        );
    }
    j.verdict()
}

/// `ompd_bp_parallel_begin`/`_end` pair up on each thread (never an end with none of its regions
/// open), never more begins than the program has regions, and once the program is over exactly
/// one pair per region.
fn parallel_pairs(ctx: &mut Ctx, _: &str) -> Verdict {
    let stop = match stop_or_skip(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let (begin, end) = ("ompd_bp_parallel_begin", "ompd_bp_parallel_end");
    let mut j = Judge::new(ctx, format!("one {begin} and one {end} per region"));
    let (mut begins, mut ends) = (0, 0);
    for (tid, stops) in by_thread(&stop) {
        let mut open = 0i64;
        for s in stops {
            begins += usize::from(s == begin);
            ends += usize::from(s == end);
            open += i64::from(s == begin) - i64::from(s == end);
            j.expect(open >= 0, || {
                format!("thread {tid}: {end} with none of its regions open")
            });
        }
    }
    let want = stop.parallel_regions;
    j.expect(begins <= want, || {
        format!("{begins} {begin} for the program's {want} regions")
    });
    if program_over(&stop) {
        j.expect(begins == want && ends == want, || {
            format!("the program is over: {begins} {begin} and {ends} {end} for its {want} regions")
        });
    }
    j.verdict()
}

/// `ompd_bp_task_begin`/`_end` pair up: never more ends than begins so far, and once the program
/// is over as many ends as begins, and at least as many begins as it has explicit tasks (a
/// runtime may pass them for implicit tasks too: 5.x says every task, TR 16 explicit tasks).
fn task_pairs(ctx: &mut Ctx, _: &str) -> Verdict {
    let stop = match stop_or_skip(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, "ompd_bp_task_begin and ompd_bp_task_end in pairs");
    let count = |name: &str| stop.log.iter().filter(|(bp, _)| bp == name).count();
    let (begins, ends) = (count("ompd_bp_task_begin"), count("ompd_bp_task_end"));
    j.expect(ends <= begins, || {
        format!("{ends} ompd_bp_task_end after {begins} ompd_bp_task_begin")
    });
    if program_over(&stop) {
        let want = stop.explicit_tasks;
        j.expect(begins >= want && begins == ends, || {
            format!(
                "the program is over: {begins} ompd_bp_task_begin and {ends} ompd_bp_task_end \
                 for its {want} explicit tasks"
            )
        });
    }
    j.verdict()
}
