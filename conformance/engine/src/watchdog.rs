//! The worker's guards on calls into the library, both reporting on the result stream before the
//! worker dies:
//! - a watchdog thread ends the worker when one call overruns the per-call deadline, after writing
//!   a `call_hung` event that names the call and its arguments;
//! - a handler of the fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) writes a
//!   `crashed_in` event naming the entry point in flight (and, for an abort with a C++
//!   exception in flight, that the exception escaped from it), then lets the signal kill the
//!   worker as it would have (the supervisor still sees the same signal).
//!
//! The watchdog also sends the worker's pending events every tick, and each guard sends them
//! before its own line, as an exit handler does when the library calls `exit`
//! ([`crate::worker::stream`]).
//!
//! The in-flight call is the loader's ([`ompd_loader::library::watch`]). The lines are written
//! here by hand (the signal handler may not allocate); the worker's tests read them back as its
//! `Event`s.
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use ompd_loader::library::watch;
use std::os::fd::{BorrowedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use crate::outbox::OUTBOX;

/// The exit code of a worker the watchdog ended.
pub const EXIT_HUNG: i32 = 124;

/// The result stream's descriptor, for the signal handler (-1: none).
static EVENTS_FD: AtomicI32 = AtomicI32::new(-1);

/// The fatal signals whose entry point is reported.
const FATAL: [Signal; 5] = [
    Signal::SIGSEGV,
    Signal::SIGBUS,
    Signal::SIGILL,
    Signal::SIGFPE,
    Signal::SIGABRT,
];

/// Installs both guards for a worker whose result stream is `events`; no watchdog without a
/// `deadline`. True when a watchdog sends the pending events.
pub fn install(events: RawFd, deadline: Option<Duration>) -> bool {
    EVENTS_FD.store(events, Ordering::Relaxed);
    // SAFETY: the handler only sends the outbox's bytes (no allocation, no lock).
    unsafe { nix::libc::atexit(on_exit) };
    let action = SigAction::new(
        SigHandler::Handler(on_fatal_signal),
        SaFlags::SA_RESETHAND | SaFlags::SA_ONSTACK,
        SigSet::empty(),
    );
    for sig in FATAL {
        // SAFETY: the handler only reads atomics and calls write(2) and raise(3), both
        // async-signal-safe.
        let _ = unsafe { sigaction(sig, &action) };
    }
    deadline.is_some_and(|d| {
        std::thread::Builder::new()
            .spawn(move || watch_calls(d))
            .is_ok()
    })
}

/// The watchdog: polls the call in flight and ends the worker once one has run past `deadline`.
fn watch_calls(deadline: Duration) {
    let tick = (deadline / 20).clamp(Duration::from_millis(5), Duration::from_millis(100));
    loop {
        std::thread::sleep(tick);
        if let Some(fd) = events_fd() {
            OUTBOX.send_pending(fd);
        }
        let Some(call) = watch::in_flight() else {
            continue;
        };
        if call.elapsed < deadline || !watch::still_in_flight(call.seq) {
            continue;
        }
        write_last(&call_hung_line(&call));
        // SAFETY: _exit ends the process at once. The hung call holds the main thread: no
        // destructor or exit handler may run.
        unsafe { nix::libc::_exit(EXIT_HUNG) };
    }
}

/// The result stream, once installed.
fn events_fd() -> Option<BorrowedFd<'static>> {
    let fd = EVENTS_FD.load(Ordering::Relaxed);
    // SAFETY: the descriptor stays open for the life of the worker.
    (fd >= 0).then(|| unsafe { BorrowedFd::borrow_raw(fd) })
}

/// Sends the pending events before the worker ends (a guard's first word); the result stream,
/// once installed.
fn send_pending_last() -> Option<BorrowedFd<'static>> {
    let fd = events_fd()?;
    OUTBOX.send_before_end(fd);
    Some(fd)
}

/// Writes the pending events, then `bytes` (a line under PIPE_BUF arrives whole), to the result
/// stream: a guard's last word before the worker ends.
fn write_last(bytes: &[u8]) {
    if let Some(fd) = send_pending_last() {
        let _ = nix::unistd::write(fd, bytes);
    }
}

/// The exit handler: a library that calls `exit` ends the worker with its events sent.
extern "C" fn on_exit() {
    send_pending_last();
}

/// The fatal-signal handler: names the entry point in flight, then re-raises the signal (the
/// disposition is back to the default on entry), which kills the worker.
extern "C" fn on_fatal_signal(sig: nix::libc::c_int) {
    if let Some(ep) = watch::current_entry() {
        let mut buf = [0u8; 128];
        let exception = sig == nix::libc::SIGABRT && watch::uncaught_exceptions() > 0;
        let n = crashed_in_line(ep.name(), exception, &mut buf);
        write_last(&buf[..n]);
    } else {
        send_pending_last();
    }
    // SAFETY: raise is async-signal-safe.
    unsafe {
        nix::libc::raise(sig);
    }
}

/// The `call_hung` event line of `call`.
pub(crate) fn call_hung_line(call: &watch::InFlight) -> Vec<u8> {
    let event = serde_json::json!({
        "event": "call_hung",
        "entry_point": call.entry_point.name(),
        "call": call.describe(),
        "after_ms": u64::try_from(call.elapsed.as_millis()).unwrap_or(u64::MAX),
    });
    let mut line = event.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// Writes the `crashed_in` event line for `name` into `buf` without allocating; its length.
/// `exception`: the process aborts with a C++ exception in flight, which escaped from `name`.
pub(crate) fn crashed_in_line(name: &str, exception: bool, buf: &mut [u8]) -> usize {
    let mut n = 0;
    let end = if exception {
        "\",\"exception\":true}\n"
    } else {
        "\"}\n"
    };
    for part in ["{\"event\":\"crashed_in\",\"entry_point\":\"", name, end] {
        let part = part.as_bytes();
        let end = (n + part.len()).min(buf.len());
        buf[n..end].copy_from_slice(&part[..end - n]);
        n = end;
    }
    n
}
