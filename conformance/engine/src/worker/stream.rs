//! The worker's events on their way to the supervisor ([`Emit`]). A check's start and result are
//! kept in the outbox ([`Outbox`]) rather than written one by one: the watchdog sends what is
//! pending every tick, a unit's other events send it at once, and before a crash, a hung call or
//! an exit of the library ends the worker, its guards send it ahead of their own line. The
//! supervisor therefore sees every event in order, a tick late at most, for a write every tick
//! instead of one per check. A worker without a watchdog (no per-call deadline) writes each event
//! at once.

use super::Event;
use crate::outbox::{send_with, Outbox};
use std::io::Write;

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
        let out = &mut self.out;
        send_with(&mut h, |b| out.write(b)).is_ok() && out.flush().is_ok()
    }

    fn flush(&mut self) -> bool {
        self.outbox.clear_failed();
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
        let sent_by_watchdog = self.by_watchdog && !self.outbox.failed();
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
        assert!(s.outbox.failed(), "no reader");
        assert!(s.emit_soon(&Event::Done), "the main thread sends itself");
        assert_eq!(s.out.0.len(), 1);
        assert_eq!(events(&s.out.0[0]), [Event::Done, Event::Done]);
    }
}
