//! Worker processes: how a fresh worker starts (re-executed, or forked by a zygote of
//! [`crate::zygote`]), its scrubbed environment, the unit sent to it, its result stream, and
//! stopping and waiting for it. Either way a worker is a process of its own with a fresh
//! library instance, its output captured in a file of its own, its exit status and signals
//! seen exactly, in a process group apart from the terminal's.

use crate::worker::Unit;
use crate::zygote::Forked;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
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
    stdin: Option<std::fs::File>,
    stdout: Option<std::fs::File>,
}

enum How {
    Exec(Child),
    Forked(Forked),
}

impl Worker {
    /// Starts a worker `spawn`'s way. Its stderr (and the stdout it redirects there) goes to an
    /// unlinked file, returned too: the file survives a crash, and the worker reads it back to
    /// attribute output to checks.
    pub(crate) fn start(
        spawn: Spawn,
        keep_env: &[String],
    ) -> Result<(Worker, std::fs::File), String> {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
        let capture =
            capture_file().map_err(|e| format!("cannot create the output capture file: {e}"))?;
        let worker = match spawn {
            Spawn::Exec => exec(&exe, keep_env, &capture)?,
            Spawn::Fork => {
                let (f, stdin, stdout) = crate::zygote::fork_worker(&exe, keep_env, &capture)
                    .map_err(|e| format!("cannot start a worker: {e}"))?;
                Worker {
                    how: How::Forked(f),
                    stdin: Some(stdin),
                    stdout: Some(stdout),
                }
            }
        };
        Ok((worker, capture))
    }

    /// Sends `unit` and returns the result stream, one line per event (read by a thread of its
    /// own, so the caller can wait with a timeout).
    pub(crate) fn stream(&mut self, unit: &Unit) -> mpsc::Receiver<String> {
        let line = serde_json::to_string(unit).expect("units serialize");
        if let Some(mut stdin) = self.stdin.take() {
            let _ = writeln!(stdin, "{line}");
        }
        let (tx, rx) = mpsc::channel();
        if let Some(stdout) = self.stdout.take() {
            std::thread::spawn(move || {
                for l in BufReader::new(stdout).lines() {
                    let Ok(l) = l else { break };
                    if tx.send(l).is_err() {
                        break;
                    }
                }
            });
        }
        rx
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

/// Starts a worker by executing `exe __worker` again.
fn exec(exe: &Path, keep_env: &[String], capture: &std::fs::File) -> Result<Worker, String> {
    let for_child = capture
        .try_clone()
        .map_err(|e| format!("cannot create the output capture file: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("__worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(for_child));
    crate::worker::scrub(&mut cmd, keep_env);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start a worker: {e}"))?;
    let stdin = child
        .stdin
        .take()
        .map(|s| std::fs::File::from(std::os::fd::OwnedFd::from(s)));
    let stdout = child
        .stdout
        .take()
        .map(|s| std::fs::File::from(std::os::fd::OwnedFd::from(s)));
    Ok(Worker {
        how: How::Exec(child),
        stdin,
        stdout,
    })
}

/// A file for a worker's output: in memory (`memfd_create`), or an unlinked temporary file.
fn capture_file() -> std::io::Result<std::fs::File> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    match memfd_create("ompd-worker-output", MFdFlags::MFD_CLOEXEC) {
        Ok(fd) => Ok(fd.into()),
        Err(_) => tempfile::tempfile(),
    }
}
