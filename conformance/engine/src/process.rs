//! Worker processes: how a fresh worker starts (re-executed, or forked by a zygote of
//! [`crate::zygote`]), the unit sent to it, its result stream, and stopping and waiting for it.
//! The supervisor reads a worker's events in the thread that waits for it (no thread of its own
//! per worker). Either way a worker is a process of its own with a fresh library instance, a
//! scrubbed environment, its output captured in a file of its own, its exit status and signals
//! seen exactly, in a process group apart from the terminal's.

use crate::worker::Unit;
use crate::zygote::{Descriptors, Forked};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How fresh workers start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spawn {
    /// Forked by a zygote that has done everything but load the library (the default).
    #[default]
    Fork,
    /// This binary executed again for every worker.
    Exec,
}

/// A started worker.
pub(crate) struct Worker {
    how: How,
    /// The supervisor's end of the worker's stdin: the unit goes out on it, and it reads as
    /// end-of-file once the worker has ended (the worker never writes to it).
    link: Option<UnixStream>,
    /// The file the worker writes its events to (its stdout), read at the supervisor's own offset.
    events: Option<std::fs::File>,
}

enum How {
    Exec(Child),
    Forked(Forked),
}

impl Worker {
    /// Starts a worker `spawn`'s way for `unit` (a zygote lowers its simulated target before it
    /// forks). Its events go to a file (each written whole by a single `write`, so a crash loses
    /// none, and no event wakes the supervisor), and its stderr (and the stdout it redirects
    /// there) to another, returned too: the file survives a crash, and the worker reads it back
    /// to attribute output to checks.
    pub(crate) fn start(
        spawn: Spawn,
        keep_env: &[String],
        unit: &Unit,
    ) -> Result<(Worker, std::fs::File), String> {
        let exe = own_exe()?;
        let io = |e: std::io::Error| format!("cannot set up a worker's descriptors: {e}");
        let capture = memory_file("ompd-worker-output").map_err(io)?;
        let events = memory_file("ompd-worker-events").map_err(io)?;
        let (link, theirs) = UnixStream::pair().map_err(io)?;
        let fds = Descriptors {
            stdin: theirs.into(),
            events: events.try_clone().map_err(io)?,
            capture: capture.try_clone().map_err(io)?,
        };
        let how = match spawn {
            Spawn::Exec => How::Exec(exec(&exe, keep_env, fds)?),
            Spawn::Fork => {
                let targets = crate::worker::keys(unit);
                let needs = crate::zygote::Needs {
                    targets: &targets,
                    library: &unit.path,
                    units: 1 + unit.then.len(),
                };
                How::Forked(
                    crate::zygote::fork_worker(&exe, keep_env, fds, &needs)
                        .map_err(|e| format!("cannot start a worker: {e}"))?,
                )
            }
        };
        let worker = Worker {
            how,
            link: Some(link),
            events: Some(events),
        };
        Ok((worker, capture))
    }

    /// Sends `unit` and returns the result stream, one line per event.
    pub(crate) fn stream(&mut self, unit: &Unit) -> Events {
        let line = serde_json::to_string(unit).expect("units serialize");
        let (link, events) = (self.link.take(), self.events.take());
        if let Some(mut l) = link.as_ref() {
            let _ = writeln!(l, "{line}");
        }
        Events {
            link,
            events,
            seen: 0,
            partial: Vec::new(),
            lines: std::collections::VecDeque::new(),
        }
    }

    /// Waits for the worker to end.
    pub(crate) fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match &mut self.how {
            How::Exec(c) => c.wait(),
            How::Forked(f) => f
                .wait(true)?
                .ok_or_else(|| std::io::Error::other("no status")),
        }
    }

    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        match &mut self.how {
            How::Exec(c) => c.try_wait(),
            How::Forked(f) => f.wait(false),
        }
    }

    fn signal(&mut self, sig: nix::sys::signal::Signal) {
        match &mut self.how {
            How::Exec(c) => {
                let pid = nix::unistd::Pid::from_raw(c.id() as i32);
                let _ = nix::sys::signal::kill(pid, sig);
            }
            How::Forked(f) => f.signal(sig),
        }
    }

    /// Stops the worker: SIGTERM, then SIGKILL after two seconds.
    pub(crate) fn stop(&mut self) {
        use nix::sys::signal::Signal;
        self.signal(Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.signal(Signal::SIGKILL);
        let _ = self.wait();
    }
}

/// This binary, to execute again as a worker or zygote: `/proc/self/exe`, which names this
/// process's own image even when its file was replaced during the run (a rebuild unlinks it),
/// else the path it was started from.
fn own_exe() -> Result<PathBuf, String> {
    let image = Path::new("/proc/self/exe");
    if image.exists() {
        return Ok(image.to_path_buf());
    }
    std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))
}

/// Starts a worker by executing `exe` again as [`crate::host::Entry::Worker`] on `fds`.
fn exec(exe: &Path, keep_env: &[String], fds: Descriptors) -> Result<Child, String> {
    let mut cmd = Command::new(exe);
    cmd.arg(crate::host::Entry::Worker.arg())
        .stdin(Stdio::from(fds.stdin))
        .stdout(Stdio::from(fds.events))
        .stderr(Stdio::from(fds.capture));
    crate::worker::scrub(&mut cmd, keep_env);
    cmd.spawn()
        .map_err(|e| format!("cannot start a worker: {e}"))
}

/// A worker's result stream: the complete lines of its events file, read as they appear, until
/// the worker has ended (its end of the stdin socket is closed) and the last are read.
pub(crate) struct Events {
    link: Option<UnixStream>,
    events: Option<std::fs::File>,
    seen: u64,
    partial: Vec<u8>,
    lines: std::collections::VecDeque<String>,
}

/// Why [`Events::recv_timeout`] has no line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoLine {
    /// None yet.
    Timeout,
    /// The worker has ended and every line was read.
    Ended,
}

impl Events {
    /// The next line, waiting at most `wait` (it may return [`NoLine::Timeout`] sooner).
    pub(crate) fn recv_timeout(&mut self, wait: Duration) -> Result<String, NoLine> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;
        if let Some(l) = self.lines.pop_front() {
            return Ok(l);
        }
        let Some(link) = self.link.as_ref() else {
            return Err(NoLine::Ended);
        };
        let ms = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX).max(1);
        let mut fds = [PollFd::new(link.as_fd(), PollFlags::POLLIN)];
        let ended = match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => false,
            Ok(_) => link_closed(link),
            Err(_) => true,
        };
        self.read_lines();
        if ended {
            self.link = None;
        }
        match self.lines.pop_front() {
            Some(l) => Ok(l),
            None if ended => Err(NoLine::Ended),
            None => Err(NoLine::Timeout),
        }
    }

    /// Queues the complete lines written to the events file since the last read.
    fn read_lines(&mut self) {
        use std::os::unix::fs::FileExt;
        let Some(events) = self.events.as_ref() else {
            return;
        };
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = events.read_at(&mut buf, self.seen) {
            self.seen += n as u64;
            self.partial.extend_from_slice(&buf[..n]);
        }
        // One pass over what arrived, then one drain: draining line by line would move the
        // rest of the buffer once per line.
        let mut start = 0;
        while let Some(n) = self.partial[start..].iter().position(|b| *b == b'\n') {
            let line = &self.partial[start..start + n];
            self.lines
                .push_back(String::from_utf8_lossy(line).into_owned());
            start += n + 1;
        }
        self.partial.drain(..start);
    }
}

impl Iterator for Events {
    type Item = String;

    /// The next line, waiting for it as long as the worker runs.
    fn next(&mut self) -> Option<String> {
        loop {
            match self.recv_timeout(Duration::from_secs(1)) {
                Ok(l) => return Some(l),
                Err(NoLine::Timeout) => {}
                Err(NoLine::Ended) => return None,
            }
        }
    }
}

/// Whether the worker's end of `link` is closed (it never writes, so any wake-up is the end).
fn link_closed(mut link: &UnixStream) -> bool {
    let mut byte = [0u8; 1];
    !matches!(link.read(&mut byte), Ok(n) if n > 0)
}

/// A file a worker writes and the supervisor reads: in memory (`memfd_create`), or an unlinked
/// temporary file.
fn memory_file(name: &str) -> std::io::Result<std::fs::File> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    match memfd_create(name, MFdFlags::MFD_CLOEXEC) {
        Ok(fd) => Ok(fd.into()),
        Err(_) => tempfile::tempfile(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_stream_gives_whole_lines_in_order_and_keeps_a_partial_one() {
        let mut file = tempfile::tempfile().unwrap();
        let mut ev = Events {
            link: None,
            events: Some(file.try_clone().unwrap()),
            seen: 0,
            partial: Vec::new(),
            lines: std::collections::VecDeque::new(),
        };
        file.write_all(b"a\nbb\n\nccc").unwrap();
        ev.read_lines();
        assert_eq!(ev.lines, ["a", "bb", ""]);
        assert_eq!(ev.partial, b"ccc");
        file.write_all(b"c\nd\n").unwrap();
        ev.read_lines();
        assert_eq!(ev.lines, ["a", "bb", "", "cccc", "d"]);
        assert!(ev.partial.is_empty());
    }
}
