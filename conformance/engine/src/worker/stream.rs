//! The worker's events on their way to the supervisor ([`Emit`]). A check's start and result are
//! kept in the outbox ([`Outbox`]) rather than written one by one: the watchdog sends what is
//! pending every tick, a unit's other events send it at once, and before a crash, a hung call or
//! an exit of the library ends the worker, its guards send it ahead of their own line. The
//! supervisor therefore sees every event in order, a tick late at most, for a write every tick
//! instead of one per check. A worker without a watchdog (no per-call deadline) writes each event
//! at once.

use super::Event;
use std::cell::UnsafeCell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where a worker's events go: the result stream (the worker), or a list (tests, the bench).
pub trait Emit {
    /// Sends `e` now, with everything pending before it: the supervisor has it before the worker
    /// goes on. False when it cannot (the stream is gone, or the receiver wants no more).
    fn emit(&mut self, e: &Event) -> bool;

    /// Sends `e` soon: before the next event sent by [`Emit::emit`], within a tick of the
    /// watchdog, and before the line of a guard that ends the worker (a check's start and
    /// result). By default, now.
    fn emit_soon(&mut self, e: &Event) -> bool {
        self.emit(e)
    }
}

impl<F: FnMut(&Event) -> bool> Emit for F {
    fn emit(&mut self, e: &Event) -> bool {
        self(e)
    }
}

/// Event lines written but not yet sent, shared by the worker's main thread, its watchdog thread
/// and its guards (the fatal-signal handler, the exit handler). Whoever holds it alone may touch
/// the bytes; a guard that cannot get hold of it soon gives up rather than wait on the thread it
/// interrupted.
pub(crate) struct Outbox {
    held: AtomicBool,
    /// Set when the watchdog could not send: the main thread sends again itself.
    failed: AtomicBool,
    bytes: UnsafeCell<Vec<u8>>,
}

// SAFETY: the bytes are reached only through `Held`, which `held` makes exclusive.
unsafe impl Sync for Outbox {}

/// The worker's outbox.
pub(crate) static OUTBOX: Outbox = Outbox::new();

/// Tries a guard makes to get hold of the outbox before it gives up.
const GUARD_TRIES: u32 = 1 << 20;

impl Outbox {
    /// An empty outbox.
    pub(crate) const fn new() -> Outbox {
        Outbox {
            held: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            bytes: UnsafeCell::new(Vec::new()),
        }
    }

    fn try_hold(&self) -> Option<Held<'_>> {
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| Held(self))
    }

    /// Holds the outbox, waiting for the watchdog to finish a send.
    fn hold(&self) -> Held<'_> {
        loop {
            if let Some(h) = self.try_hold() {
                return h;
            }
            std::thread::yield_now();
        }
    }

    /// Holds the outbox within [`GUARD_TRIES`] tries, never yielding (a signal handler's way).
    fn hold_soon(&self) -> Option<Held<'_>> {
        (0..GUARD_TRIES).find_map(|_| {
            std::hint::spin_loop();
            self.try_hold()
        })
    }

    /// The watchdog's tick: sends what is pending unless another holds the outbox; a failed
    /// send is left for the main thread, which restores the stream first.
    pub(crate) fn send_pending(&self, fd: std::os::fd::BorrowedFd) {
        let Some(mut h) = self.try_hold() else {
            return;
        };
        if !h.is_empty() && !self.failed.load(Ordering::Relaxed) && send(fd, &mut h).is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
    }

    /// A guard's last word: sends what is pending, without allocating (the worker ends next).
    pub(crate) fn send_before_end(&self, fd: std::os::fd::BorrowedFd) {
        if let Some(mut h) = self.hold_soon() {
            let _ = send(fd, &mut h);
        }
    }
}

/// Writes `bytes` to `fd` and removes what was written; stops at the first error.
fn send(fd: std::os::fd::BorrowedFd, bytes: &mut Vec<u8>) -> nix::Result<()> {
    let mut from = 0;
    let sent = loop {
        if from == bytes.len() {
            break Ok(());
        }
        match nix::unistd::write(fd, &bytes[from..]) {
            Ok(n) => from += n,
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => break Err(e),
        }
    };
    bytes.drain(..from);
    sent
}

/// The outbox held alone; released when dropped.
struct Held<'a>(&'a Outbox);

impl std::ops::Deref for Held<'_> {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        // SAFETY: `held` is ours, so no one else reaches the bytes.
        unsafe { &*self.0.bytes.get() }
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.0.bytes.get() }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.held.store(false, Ordering::Release);
    }
}

/// The worker's result stream: one JSON line an event, kept in an outbox and written to `out` at
/// each [`Emit::emit`], and at each [`Emit::emit_soon`] when no watchdog sends it (`by_watchdog`).
pub(super) struct Stream<W: Write> {
    pub(super) out: W,
    pub(super) outbox: &'static Outbox,
    pub(super) by_watchdog: bool,
}

impl<W: Write> Stream<W> {
    fn add(&mut self, e: &Event) -> bool {
        let mut h = self.outbox.hold();
        serde_json::to_writer(&mut *h, e).is_ok() && {
            h.push(b'\n');
            true
        }
    }

    /// Writes what is pending to `out`, removing what was written.
    fn write_pending(&mut self) -> bool {
        let mut h = self.outbox.hold();
        let mut from = 0;
        let ok = loop {
            if from == h.len() {
                break self.out.flush().is_ok();
            }
            match self.out.write(&h[from..]) {
                Ok(0) | Err(_) => break false,
                Ok(n) => from += n,
            }
        };
        h.drain(..from);
        ok
    }

    fn flush(&mut self) -> bool {
        self.outbox.failed.store(false, Ordering::Relaxed);
        if self.write_pending() {
            return true;
        }
        // A library may have closed the stream's descriptor with a raw system call, which the
        // probes see only at their next full reading: the change is recorded, the vital
        // descriptors are restored, and what is pending goes out once more.
        super::probes::stream_failed();
        self.write_pending()
    }
}

impl<W: Write> Emit for Stream<W> {
    fn emit(&mut self, e: &Event) -> bool {
        self.add(e) && self.flush()
    }

    fn emit_soon(&mut self, e: &Event) -> bool {
        let sent_by_watchdog = self.by_watchdog && !self.outbox.failed.load(Ordering::Relaxed);
        self.add(e) && (sent_by_watchdog || self.flush())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that records each write it is given.
    #[derive(Default)]
    struct Writes(Vec<String>);

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(String::from_utf8_lossy(buf).into_owned());
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn stream(by_watchdog: bool) -> Stream<Writes> {
        Stream {
            out: Writes::default(),
            outbox: Box::leak(Box::new(Outbox::new())),
            by_watchdog,
        }
    }

    fn events(write: &str) -> Vec<Event> {
        let lines = write.lines();
        lines.map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn starts_and_results_wait_for_the_next_event_sent_now() {
        let start = |c: &str| Event::Start { check: c.into() };
        let mut s = stream(true);
        assert!(s.emit_soon(&start("a")));
        assert!(s.emit_soon(&start("b")));
        assert!(s.out.0.is_empty(), "held back");
        assert!(s.emit(&Event::Done));
        assert_eq!(s.out.0.len(), 1, "one write");
        assert_eq!(events(&s.out.0[0]), [start("a"), start("b"), Event::Done]);
    }

    #[test]
    fn without_a_watchdog_every_event_goes_out_at_once() {
        let mut s = stream(false);
        assert!(s.emit_soon(&Event::Start { check: "a".into() }));
        assert_eq!(s.out.0.len(), 1);
    }

    #[test]
    fn the_watchdog_sends_what_is_pending_and_a_failed_send_is_the_main_threads() {
        let (r, w) = nix::unistd::pipe().unwrap();
        let mut s = stream(true);
        assert!(s.emit_soon(&Event::Done));
        s.outbox.send_pending(std::os::fd::AsFd::as_fd(&w));
        let mut buf = [0u8; 64];
        let n = nix::unistd::read(&r, &mut buf).unwrap();
        assert_eq!(
            events(std::str::from_utf8(&buf[..n]).unwrap()),
            [Event::Done]
        );
        drop(r);
        assert!(s.emit_soon(&Event::Done));
        s.outbox.send_pending(std::os::fd::AsFd::as_fd(&w));
        assert!(s.outbox.failed.load(Ordering::Relaxed), "no reader");
        assert!(s.emit_soon(&Event::Done), "the main thread sends itself");
        assert_eq!(s.out.0.len(), 1);
        assert_eq!(events(&s.out.0[0]), [Event::Done, Event::Done]);
    }
}
