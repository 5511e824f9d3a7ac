//! Thread handles kept across a continue: a debugger takes a thread handle at one breakpoint
//! stop and uses it at the next, and the handle must still name its thread until the thread
//! passes `ompd_bp_thread_end` (OMPD-HANDLE-THREAD-008).
//!
//! Each stop of a tour is a fresh worker, so the library cannot carry a handle from one stop to
//! the next in its own memory. It carries what the handle rested on instead: at every stop the
//! unit records the reads the library makes while it takes a handle for every thread, and
//! leaves them in the tour's directory ([`BpStop::keep`]). At the next stop the unit serves
//! those reads again ([`Memory::from_reads`] through [`Target::substitute`]), so the library
//! builds each handle exactly as it did before the process continued; then it serves the live
//! process again and judges the handle there, beside one taken now. To the library this is the
//! same as keeping the handle: it sees only its callbacks.

use crate::checks::bp::stop_or_skip;
use crate::known::{BpStop, Fact};
use crate::{Check, Ctx, Judge, Run, Severity, Verdict};
use ompd_abi::{thread_id_kind, EntryPoint};
use ompd_loader::library::{AspaceH, ThreadH};
use ompd_serve::memory::{Memory, Reads};
use std::path::PathBuf;

/// Checks of this family.
pub static CHECKS: &[Check] = &[Check {
    at: crate::here!(),
    id: "bp.thread.handle_kept_until_thread_end",
    requirements: &["OMPD-HANDLE-THREAD-008"],
    summary: "a thread handle taken at one breakpoint stop still names its thread at the next (unless that thread is at its ompd_bp_thread_end): the pthread id a handle taken there answers, comparing equal to it, and the same current region",
    severity: Severity::Must,
    entry_points: &[
        EntryPoint::GetThreadHandle,
        EntryPoint::GetThreadId,
        EntryPoint::ThreadHandleCompare,
        EntryPoint::GetCurrParallelHandle,
        EntryPoint::ParallelHandleCompare,
    ],
    real: Some(&[Fact::Stop]),
    property: crate::Property::ScenariosOnly,
    run: Run::Worker(kept_until_thread_end),
    ..Check::TARGET
}];

/// One thread of the stopped process: its pthread id and its lwp (the tour names threads by
/// lwp).
struct Native {
    pthread: Vec<u8>,
    lwp: u32,
}

/// The stopped process's threads that have a pthread id and an lwp.
fn natives(ctx: &Ctx) -> Vec<Native> {
    let Some(t) = ctx.target else {
        return Vec::new();
    };
    let src = t.source();
    (0..src.thread_count())
        .filter_map(|index| {
            let pthread = src.thread_id_bytes(index, thread_id_kind::PTHREAD)?;
            let lwp = src.thread_id_bytes(index, thread_id_kind::LWP)?;
            let lwp = u32::from_le_bytes(lwp.get(..4)?.try_into().ok()?);
            Some(Native { pthread, lwp })
        })
        .collect()
}

/// The threads that passed `ompd_bp_thread_end` so far, this stop included: their handles
/// need not name them any more.
fn ended(stop: &BpStop) -> Vec<u32> {
    stop.log
        .iter()
        .filter(|(bp, _)| bp == "ompd_bp_thread_end")
        .map(|(_, tid)| *tid)
        .collect()
}

/// Where this library's unit leaves the reads of this stop for the next one.
fn kept_reads(ctx: &Ctx, stop: &BpStop) -> Option<PathBuf> {
    let name: String = ctx
        .library
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    stop.keep
        .as_ref()
        .map(|d| d.join(format!("{name}.reads.json")))
}

/// A handle for every thread the library knows, by pthread id (`None` where it refuses).
fn thread_handles<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    threads: &[Native],
) -> Vec<Option<ThreadH<'l>>> {
    threads
        .iter()
        .map(|n| {
            ctx.lib
                .get_thread_handle(ah, thread_id_kind::PTHREAD, &n.pthread)
                .ok()
        })
        .collect()
}

/// [`thread_handles`] now, with the reads they rested on.
fn handles_now<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    threads: &[Native],
) -> (Vec<Option<ThreadH<'l>>>, Reads) {
    let Some(t) = ctx.target else {
        return (Vec::new(), Vec::new());
    };
    let rec = t.record_reads();
    let handles = thread_handles(ctx, ah, threads);
    (handles, rec.finish())
}

/// [`thread_handles`] built from the previous stop's reads, served again.
fn handles_then<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    threads: &[Native],
    reads: &[(u64, Vec<u8>)],
) -> Vec<Option<ThreadH<'l>>> {
    let Some(t) = ctx.target else {
        return Vec::new();
    };
    let _then = t.substitute(Memory::from_reads(reads));
    thread_handles(ctx, ah, threads)
}

/// Judges a kept handle against one taken now, for the thread `n`.
///
/// The pthread id is judged against the one a handle taken now answers, not against the
/// thread's own: a thread may pass `ompd_bp_thread_begin` before the thread that created it has
/// stored its pthread id in its descriptor (a kmp runtime stores it once `pthread_create`
/// returns), and until then the runtime's memory shows no id for it, at this stop as at the
/// previous one. A kept handle must answer what a fresh one answers from the same memory.
fn judge_kept(j: &mut Judge, ctx: &Ctx, n: &Native, kept: &ThreadH, now: &ThreadH) {
    let lib = ctx.lib;
    let who = format!("thread {} (a handle from the previous stop)", n.lwp);
    let id = |h| {
        lib.get_thread_id(h, thread_id_kind::PTHREAD, n.pthread.len())
            .map_err(|e| e.to_string())
    };
    alike(
        j,
        &who,
        "ompd_get_thread_id",
        id(kept),
        id(now),
        |j, a, b| {
            j.expect(a == b, || {
                format!("{who}: pthread id {a:x?}, for a handle taken now {b:x?}")
            })
        },
    );
    match lib.thread_compare(kept, now) {
        Ok(c) => j.expect(c == 0, || {
            format!("{who}: compares {c} with a handle taken now")
        }),
        Err(e) => j.fail(format!("{who}: ompd_thread_handle_compare: {e}")),
    }
    let region = |h| lib.get_curr_parallel_handle(h).map_err(|e| e.to_string());
    let call = "ompd_get_curr_parallel_handle";
    alike(
        j,
        &who,
        call,
        region(kept),
        region(now),
        |j, a, b| match lib.parallel_compare(&a, &b) {
            Ok(c) => j.expect(c == 0, || {
                format!("{who}: its current region compares {c} with the thread's current region")
            }),
            Err(e) => j.fail(format!("{who}: ompd_parallel_handle_compare: {e}")),
        },
    );
}

/// Judges one call's answers for the kept handle and for one taken now: two answers are
/// judged by `both`, two errors must be the same, and an answer beside an error fails.
fn alike<T>(
    j: &mut Judge,
    who: &str,
    call: &str,
    kept: Result<T, String>,
    now: Result<T, String>,
    both: impl FnOnce(&mut Judge, T, T),
) {
    match (kept, now) {
        (Ok(a), Ok(b)) => both(j, a, b),
        (Err(a), Err(b)) => j.expect(a == b, || {
            format!("{who}: {call} answers {a}, for a handle taken now {b}")
        }),
        (a, b) => j.fail(format!(
            "{who}: {call} answers {}, for a handle taken now {}",
            answer(a),
            answer(b)
        )),
    }
}

/// An answer named for a message: `ok`, or the error.
fn answer<T>(r: Result<T, String>) -> String {
    r.map_or_else(|e| e, |_| "ok".into())
}

fn kept_until_thread_end(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let stop = match stop_or_skip(ctx) {
        Ok(s) => s,
        Err(v) => return v,
    };
    let Some(file) = kept_reads(ctx, &stop) else {
        return Verdict::skip("the tour keeps nothing from one stop to the next");
    };
    let ah = crate::aspace_or_skip!(ctx, EntryPoint::GetThreadHandle);
    let threads = natives(ctx);
    // First the handles of now (recorded for the next stop, with cold caches), then the
    // previous stop's.
    let (now, reads) = handles_now(ctx, ah, &threads);
    let before = std::fs::read(&file).ok();
    if let Ok(text) = serde_json::to_vec(&reads) {
        let _ = std::fs::write(&file, text);
    }
    let Some(before) = before.and_then(|b| serde_json::from_slice::<Reads>(&b).ok()) else {
        return Verdict::skip("the first stop of the tour: no handle from an earlier stop");
    };
    let then = handles_then(ctx, ah, &threads, &before);
    let mut j = Judge::new(
        ctx,
        "every handle from the previous stop names its thread still",
    );
    let ended = ended(&stop);
    for ((n, kept), now) in threads.iter().zip(&then).zip(&now) {
        match (kept, now, ended.contains(&n.lwp)) {
            (Some(kept), Some(now), false) => judge_kept(&mut j, ctx, n, kept, now),
            (Some(_), None, false) => j.fail(format!(
                "thread {}: a handle from the previous stop, but none now",
                n.lwp
            )),
            _ => {}
        }
    }
    j.verdict_or_skip(|| {
        format!(
            "stopped at {} of thread {}: no thread had a handle at the previous stop",
            stop.breakpoint, stop.tid
        )
    })
}
