//! The worker's events on their way to the supervisor ([`Emit`]): each sent at once, but a
//! check's result, which goes out with the next check's start (no library call comes between
//! them), so that a check costs the stream one write, not two.

use super::Event;
use std::io::Write;

/// Where a worker's events go: the result stream (the worker), or a list (tests, the bench).
pub trait Emit {
    /// Sends `e` now: the supervisor has it before the worker goes on. False when it cannot
    /// (the stream is gone, or the receiver wants no more).
    fn emit(&mut self, e: &Event) -> bool;

    /// Sends `e` with the next event sent by [`Emit::emit`]: a check's result, which the next
    /// check's start carries along (no library call comes between them). By default, now.
    fn emit_with_next(&mut self, e: &Event) -> bool {
        self.emit(e)
    }
}

impl<F: FnMut(&Event) -> bool> Emit for F {
    fn emit(&mut self, e: &Event) -> bool {
        self(e)
    }
}

/// The worker's result stream: one JSON line an event, written out at each [`Emit::emit`].
pub(super) struct Stream<W: Write>(pub(super) std::io::BufWriter<W>);

impl<W: Write> Stream<W> {
    fn add(&mut self, e: &Event) -> bool {
        serde_json::to_writer(&mut self.0, e).is_ok() && self.0.write_all(b"\n").is_ok()
    }
}

impl<W: Write> Emit for Stream<W> {
    fn emit(&mut self, e: &Event) -> bool {
        if self.add(e) && self.0.flush().is_ok() {
            return true;
        }
        // A library may have closed the stream's descriptor with a raw system call, which the
        // probes see only at their next full reading: the change is recorded, the vital
        // descriptors are restored, and what is buffered goes out once more.
        super::probes::stream_failed();
        self.0.flush().is_ok()
    }

    fn emit_with_next(&mut self, e: &Event) -> bool {
        self.add(e)
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

    #[test]
    fn a_result_goes_out_with_the_next_start() {
        let start = |c: &str| Event::Start { check: c.into() };
        let mut stream = Stream(std::io::BufWriter::new(Writes::default()));
        assert!(stream.emit(&start("a")));
        assert!(stream.emit_with_next(&Event::Done));
        assert_eq!(stream.0.get_ref().0.len(), 1, "held back");
        assert!(stream.emit(&start("b")));
        let writes = &stream.0.get_ref().0;
        assert_eq!(writes.len(), 2);
        let lines: Vec<Event> = writes[1]
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines, vec![Event::Done, start("b")]);
    }
}
