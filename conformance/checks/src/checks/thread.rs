//! Thread handles: by every thread-id kind, for unknown and foreign threads, wrong sizes and
//! kinds, the thread-id round trip (of every kind the suite can name, from a handle by every
//! kind), and identity of handles to the same thread. How the id bytes are laid out is decided
//! once, at [`crate::native_id_bytes`].

use crate::known::Fact;
use crate::{expect_rc, Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{thread_id_kind, Rc};
use ompd_loader::library::Fail;

/// The kinds the suite can name an id of, with their names.
const KINDS: [(u64, &str); 2] = [
    (thread_id_kind::PTHREAD, "pthread"),
    (thread_id_kind::LWP, "lwp"),
];

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "thread.handle.by_pthread_id",
        requirements: &["OMPD-HANDLE-THREAD-001", "OMPD-HANDLE-THREAD-009"],
        summary: "ompd_get_thread_handle returns a handle for every OpenMP thread identified by its pthread id",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle],
        real: Some(&[Fact::Threads]),
        run: Run::Worker(by_pthread),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "thread.handle.by_lwp_id",
        requirements: &["OMPD-HANDLE-THREAD-001", "OMPD-HANDLE-THREAD-004"],
        summary: "ompd_get_thread_handle by lwp id either works for every OpenMP thread or is unsupported",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle],
        real: Some(&[Fact::Threads]),
        run: Run::Worker(by_lwp),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "thread.handle.non_openmp_thread",
        requirements: &["OMPD-HANDLE-THREAD-002"],
        summary: "a native thread that never entered OpenMP gives ompd_rc_unavailable (bad_input warns)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle],
        real: Some(&[Fact::Threads]),
        run: Run::Worker(foreign),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "thread.handle.wrong_id_size",
        requirements: &["OMPD-HANDLE-THREAD-003"],
        summary: "a thread id of the wrong size for its kind (4 bytes too long, 1 byte short) gives ompd_rc_bad_input",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle],
        real: Some(&[Fact::Threads]),
        run: Run::Worker(wrong_size),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "thread.handle.unknown_kind",
        requirements: &["OMPD-HANDLE-THREAD-004"],
        summary: "a thread-id kind the host does not have (winthread on Linux, 999) gives ompd_rc_unsupported",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle],
        real: Some(&[Fact::Threads]),
        run: Run::Worker(unknown_kind),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "thread.id.round_trip",
        requirements: &["OMPD-HANDLE-THREAD-020", "OMPD-HANDLE-THREAD-022", "OMPD-OWN-005", "OMPD-OWN-006", "OMPD-HANDLE-THREAD-005"],
        summary: "ompd_get_thread_id gives back exactly the pthread id the handle was obtained with, writing no more than asked",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetThreadId],
        since: Profile::Tr2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(id_round_trip),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "thread.id.every_kind",
        requirements: &["OMPD-HANDLE-THREAD-020", "OMPD-HANDLE-THREAD-021"],
        summary: "a handle obtained by a pthread or lwp id gives back the thread's own id of each of those kinds (target byte order), or unsupported for a kind the library does not serve",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetThreadId],
        real: Some(&[Fact::Threads]),
        run: Run::Worker(every_kind),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "thread.id.wrong_size_or_kind",
        requirements: &["OMPD-HANDLE-THREAD-021", "OMPD-HANDLE-THREAD-022"],
        summary: "ompd_get_thread_id refuses a buffer too small for the id (bad_input) and a kind the host does not have (winthread, 999: unsupported), writing nothing; TR 2.001 asks only that such a call should fail, with no code named, so there a deviation warns",
        severity: Severity::MustFrom(Profile::V5_0),
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::GetThreadId],
        since: Profile::Tr2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(wrong_size_or_kind),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "thread.compare.same_thread_equal",
        requirements: &["OMPD-HANDLE-THREAD-007", "OMPD-CMP-003", "OMPD-CMP-004", "OMPD-CMP-005"],
        summary: "two handles to one thread compare 0; handles to distinct threads do not",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetThreadHandle, EntryPoint::ThreadHandleCompare],
        since: Profile::Tr2,
        real: Some(&[Fact::Threads]),
        run: Run::Worker(compare),
        ..Check::TARGET
    },
];

fn by_pthread(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "ok for every OpenMP thread");
    for t in ctx.threads() {
        let r = ctx.thread_handle(ah, t);
        j.expect(r.is_ok(), || {
            format!(
                "gtid {}: {}",
                t.0,
                r.as_ref().err().map(|e| e.to_string()).unwrap_or_default()
            )
        });
    }
    j.verdict()
}

fn by_lwp(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "ok for every OpenMP thread, or unsupported for the kind",
    );
    for t in ctx.threads() {
        match ctx.lib.get_thread_handle(
            ah,
            thread_id_kind::LWP,
            &ctx.thread_id(t, thread_id_kind::LWP),
        ) {
            Ok(_) => j.holds(),
            Err(Fail::Rc(Rc::UNSUPPORTED)) => j.unsupported("lwp ids are unsupported"),
            Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
        }
    }
    j.verdict()
}

fn foreign(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    if ctx.model.foreign_threads.is_empty() {
        return Verdict::skip("the scenario has no non-OpenMP thread");
    }
    let mut j = Judge::new(ctx, "unavailable");
    for native in &ctx.model.foreign_threads {
        let id = crate::native_id_bytes(ctx.model, ctx.arch, native, thread_id_kind::PTHREAD);
        let got = ctx.lib.get_thread_handle(ah, thread_id_kind::PTHREAD, &id);
        expect_rc(
            &mut j,
            "non-OpenMP thread",
            got,
            Rc::UNAVAILABLE,
            &[(Rc::BAD_INPUT, "OMPD-HANDLE-THREAD-002")],
        );
    }
    j.verdict()
}

fn wrong_size(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "bad_input");
    let id = ctx.thread_id(sim_target::model::ThreadId(0), thread_id_kind::PTHREAD);
    let long: Vec<u8> = id.iter().copied().chain([0; 4]).collect();
    let short = &id[..id.len() - 1];
    for (what, bytes) in [("4 bytes too long", &long[..]), ("1 byte short", short)] {
        let got = ctx
            .lib
            .get_thread_handle(ah, thread_id_kind::PTHREAD, bytes);
        expect_rc(
            &mut j,
            &format!("pthread id {what}"),
            got,
            Rc::BAD_INPUT,
            &[],
        );
    }
    j.verdict()
}

fn unknown_kind(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "unsupported");
    let id = ctx.thread_id(sim_target::model::ThreadId(0), thread_id_kind::PTHREAD);
    for (kind, name) in [(999, "kind 999"), (thread_id_kind::WINTHREAD, "winthread")] {
        let got = ctx.lib.get_thread_handle(ah, kind, &id);
        expect_rc(&mut j, name, got, Rc::UNSUPPORTED, &[]);
    }
    j.verdict()
}

fn id_round_trip(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "the same bytes back, nothing written outside the buffer",
    );
    for t in ctx.threads() {
        let id = ctx.thread_id(t, thread_id_kind::PTHREAD);
        let th = match ctx.thread_handle(ah, t) {
            Ok(h) => h,
            Err(e) => {
                j.fail(format!("gtid {}: no handle: {e}", t.0));
                continue;
            }
        };
        match ctx
            .lib
            .get_thread_id(&th, thread_id_kind::PTHREAD, id.len())
        {
            Ok(back) => j.expect(back == id, || {
                format!("gtid {}: got {back:02x?}, want {id:02x?}", t.0)
            }),
            Err(e) => j.fail(format!("gtid {}: {e}", t.0)),
        }
    }
    j.verdict()
}

fn compare(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, "0 for the same thread, non-zero for different threads");
    let mut handles = Vec::new();
    for t in ctx.threads() {
        match (ctx.thread_handle(ah, t), ctx.thread_handle(ah, t)) {
            (Ok(a), Ok(b)) => {
                let c = ctx.lib.thread_compare(&a, &b);
                j.expect(c == Ok(0), || {
                    format!("gtid {}: two handles compare {}", t.0, crate::describe(&c))
                });
                let c = ctx.lib.thread_compare(&a, &a);
                j.expect(c == Ok(0), || {
                    format!(
                        "gtid {}: a handle with itself compares {}",
                        t.0,
                        crate::describe(&c)
                    )
                });
                handles.push((t, a));
            }
            (Err(e), _) | (_, Err(e)) => j.fail(format!("gtid {}: no handle: {e}", t.0)),
        }
    }
    for (i, (ta, a)) in handles.iter().enumerate() {
        for (tb, b) in &handles[i + 1..] {
            let c = ctx.lib.thread_compare(a, b);
            j.expect(matches!(c, Ok(v) if v != 0), || {
                format!("gtid {} vs {}: {}", ta.0, tb.0, crate::describe(&c))
            });
        }
    }
    j.verdict()
}

fn every_kind(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "the thread's own id of the kind asked for, or unsupported for a kind not served",
    );
    for t in ctx.threads() {
        for (from, from_name) in KINDS {
            let th = match ctx.lib.get_thread_handle(ah, from, &ctx.thread_id(t, from)) {
                Ok(h) => h,
                Err(Fail::Rc(Rc::UNSUPPORTED)) => continue,
                Err(e) => {
                    j.fail(format!(
                        "gtid {}: no handle by its {from_name} id: {e}",
                        t.0
                    ));
                    continue;
                }
            };
            for (to, to_name) in KINDS {
                let want = ctx.thread_id(t, to);
                let what = format!("gtid {}: {to_name} id of the handle by {from_name} id", t.0);
                match ctx.lib.get_thread_id(&th, to, want.len()) {
                    Ok(got) => j.expect(got == want, || {
                        format!("{what}: {got:02x?}, the thread's is {want:02x?}")
                    }),
                    Err(Fail::Rc(Rc::UNSUPPORTED)) => {
                        j.unsupported(format!("{to_name} ids are unsupported"))
                    }
                    Err(e) => j.fail(format!("{what}: {e}, expected the id or unsupported")),
                }
            }
        }
    }
    j.verdict()
}

fn wrong_size_or_kind(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(
        ctx,
        "bad_input for a short buffer, unsupported for a kind not served",
    );
    let t = sim_target::model::ThreadId(0);
    let th = match ctx.thread_handle(ah, t) {
        Ok(h) => h,
        Err(e) => {
            j.fail(format!("gtid 0: no handle by its pthread id: {e}"));
            return j.verdict();
        }
    };
    let size = ctx.thread_id(t, thread_id_kind::PTHREAD).len();
    for short in [size - 1, 0] {
        let got = ctx.lib.get_thread_id(&th, thread_id_kind::PTHREAD, short);
        expect_rc(
            &mut j,
            &format!("pthread id into {short} bytes"),
            got,
            Rc::BAD_INPUT,
            &[],
        );
    }
    for (kind, name) in [(thread_id_kind::WINTHREAD, "winthread"), (999, "kind 999")] {
        let got = ctx.lib.get_thread_id(&th, kind, 8);
        expect_rc(&mut j, name, got, Rc::UNSUPPORTED, &[]);
    }
    j.verdict()
}
