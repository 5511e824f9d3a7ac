//! Starting a fixture program that is never left behind, and producing core files of it.
//!
//! [`Running::start`] runs a command whose program prints `READY <pid>` on stdout once it is
//! ready to be inspected and exits when it gets `SIGUSR1`. The child gets its own process group,
//! an unlimited core size limit (up to the hard limit) and `PR_SET_PDEATHSIG(SIGKILL)`: it is
//! killed when the thread that started it ends, even if the whole harness is killed. Dropping a
//! [`Running`] kills its process group and reaps it; [`Running::release`] lets it finish.
//! [`gcore`] and [`kernel_core`] produce core files of a fixture; [`ptrace_permitted`] tells
//! whether this process may trace its children at all.

use nix::sys::ptrace;
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long [`Running::start`] waits for the `READY` line.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`Running::release`] waits for the fixture to exit before killing it.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`gcore`] lets gdb work.
pub const GCORE_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a fixture could not be started, released, or dumped.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The program could not be started.
    #[error("starting {program}: {source}")]
    Start {
        /// The program.
        program: String,
        /// The error.
        source: std::io::Error,
    },
    /// It never printed `READY <pid>` (it exited, closed stdout, or took too long).
    #[error("{program} never printed `READY <pid>`: {reason}; its stdout: {lines:?}")]
    NotReady {
        /// The program.
        program: String,
        /// What happened instead.
        reason: String,
        /// What it printed.
        lines: Vec<String>,
    },
    /// It did not exit in time after `SIGUSR1` (and was killed).
    #[error("pid {pid}: {what}")]
    Timeout {
        /// The process.
        pid: i32,
        /// What did not happen in time.
        what: String,
    },
    /// A system call on the fixture failed.
    #[error("pid {pid}: {step}: {reason}")]
    Failed {
        /// The process.
        pid: i32,
        /// What was being done.
        step: String,
        /// Why it failed.
        reason: String,
    },
    /// gdb is not installed.
    #[error("gdb is not available ({0}); install gdb to write gcore core files")]
    GdbMissing(String),
    /// What is asked cannot be done on this machine (for example the kernel's `core_pattern`
    /// does not write core files into the process's working directory).
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// How a released fixture ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
    /// Every stdout line after `READY`.
    pub lines: Vec<String>,
}

/// A fixture program that printed `READY <pid>` and is waiting.
#[derive(Debug)]
pub struct Running {
    child: Option<Child>,
    pid: i32,
    program: String,
    lines: Arc<Mutex<Vec<String>>>,
    eof: mpsc::Receiver<()>,
}

/// Makes the child die with the thread that starts it, lets it dump core, and runs it without
/// address-space randomization.
///
/// A debugger starts its inferior that way (gdb's `disable-randomization` is on by default),
/// and it makes a fixture's addresses the same on every run: a library that reads a word its
/// runtime lays out elsewhere then reads the same wrong value each time, so its results (and
/// the gate's expectations of them) do not change from run to run.
#[allow(unsafe_code)]
pub(crate) fn arrange_child(cmd: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec. It only makes system calls
    // that are async-signal-safe (prctl, getppid, getrlimit, setrlimit, personality),
    // allocates nothing, and touches no lock; errors become raw OS errors, which allocate
    // nothing either.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            let persona = nix::sys::personality::get()?;
            nix::sys::personality::set(
                persona | nix::sys::personality::Persona::ADDR_NO_RANDOMIZE,
            )?;
            // The parent may have died before the line above: then nobody would kill us.
            if nix::unistd::getppid() != parent {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            let (_, hard) = getrlimit(Resource::RLIMIT_CORE)?;
            setrlimit(Resource::RLIMIT_CORE, hard, hard)?;
            Ok(())
        });
    }
}

impl Running {
    /// Starts `cmd` (stdout is taken over, stdin is null, stderr is left as set) and waits up
    /// to [`READY_TIMEOUT`] for its `READY <pid>` line.
    ///
    /// The fixture gets `SIGKILL` when the *thread* calling this ends (`PR_SET_PDEATHSIG`
    /// follows the creating thread): keep the [`Running`] in the thread that started it.
    pub fn start(cmd: Command) -> Result<Running, SpawnError> {
        Running::start_with_timeout(cmd, READY_TIMEOUT)
    }

    /// [`Running::start`] with another timeout for the `READY` line.
    pub fn start_with_timeout(mut cmd: Command, timeout: Duration) -> Result<Running, SpawnError> {
        let program = cmd.get_program().to_string_lossy().into_owned();
        cmd.stdout(Stdio::piped())
            .stdin(Stdio::null())
            .process_group(0);
        arrange_child(&mut cmd);
        let mut child = cmd.spawn().map_err(|source| SpawnError::Start {
            program: program.clone(),
            source,
        })?;
        let stdout = child.stdout.take();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        let (eof_tx, eof_rx) = mpsc::channel();
        let before_ready = Arc::new(Mutex::new(Vec::new()));
        if let Some(stdout) = stdout {
            let (lines, before_ready) = (lines.clone(), before_ready.clone());
            std::thread::spawn(move || {
                let mut ready = Some(ready_tx);
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if ready.is_some() {
                        if let Some(pid) = line
                            .strip_prefix("READY ")
                            .and_then(|p| p.trim().parse::<i32>().ok())
                        {
                            if let Some(tx) = ready.take() {
                                let _ = tx.send(pid);
                            }
                            continue;
                        }
                        lock(&before_ready).push(line);
                    } else {
                        lock(&lines).push(line);
                    }
                }
                let _ = eof_tx.send(());
            });
        }
        let mut running = Running {
            pid: child.id() as i32,
            child: Some(child),
            program: program.clone(),
            lines,
            eof: eof_rx,
        };
        let not_ready = |reason: String| SpawnError::NotReady {
            program: program.clone(),
            reason,
            lines: lock(&before_ready).clone(),
        };
        match ready_rx.recv_timeout(timeout) {
            Ok(pid) if pid > 0 => {
                running.pid = pid;
                Ok(running)
            }
            Ok(pid) => Err(not_ready(format!("it printed READY {pid}"))),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(not_ready(format!(
                "no READY line within {} s",
                timeout.as_secs()
            ))),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // stdout closed: say how it ended.
                let status = running
                    .child
                    .as_mut()
                    .and_then(|c| wait_timeout(c, Duration::from_secs(5)).ok().flatten());
                Err(not_ready(match status {
                    Some(s) => format!("it ended first ({s})"),
                    None => "it closed stdout".into(),
                }))
            }
        }
        // On every error path `running` drops here, which kills and reaps the child.
    }

    /// The process id the fixture printed (`READY <pid>`).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The program that was started.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The stdout lines printed after `READY` so far.
    pub fn lines(&self) -> Vec<String> {
        lock(&self.lines).clone()
    }

    /// Sends `SIGUSR1` and waits up to [`EXIT_TIMEOUT`] for the fixture to exit (then kills it
    /// and reports a timeout). Nothing may trace it any more.
    pub fn release(mut self) -> Result<Finished, SpawnError> {
        let pid = self.pid;
        kill(Pid::from_raw(pid), Signal::SIGUSR1).map_err(|e| SpawnError::Failed {
            pid,
            step: "sending SIGUSR1".into(),
            reason: e.to_string(),
        })?;
        let Some(mut child) = self.child.take() else {
            return Err(SpawnError::Failed {
                pid,
                step: "releasing".into(),
                reason: "already reaped".into(),
            });
        };
        match wait_timeout(&mut child, EXIT_TIMEOUT) {
            Ok(Some(status)) => {
                // The reader thread sees EOF once the process (and its stdout) is gone.
                let _ = self.eof.recv_timeout(Duration::from_secs(5));
                Ok(Finished {
                    status,
                    lines: self.lines(),
                })
            }
            Ok(None) => {
                kill_and_reap(&mut child);
                Err(SpawnError::Timeout {
                    pid,
                    what: format!(
                        "did not exit within {} s of SIGUSR1 (killed)",
                        EXIT_TIMEOUT.as_secs()
                    ),
                })
            }
            Err(e) => {
                kill_and_reap(&mut child);
                Err(SpawnError::Failed {
                    pid,
                    step: "waiting for the exit".into(),
                    reason: e.to_string(),
                })
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_and_reap(&mut child);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills the child's process group (it leads its own) and reaps the child.
pub(crate) fn kill_and_reap(child: &mut Child) {
    let pid = Pid::from_raw(child.id() as i32);
    let _ = killpg(pid, Signal::SIGKILL);
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits up to `timeout` for `child` to exit.
pub(crate) fn wait_timeout(
    child: &mut Child,
    timeout: Duration,
) -> std::io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        if Instant::now() > deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Writes a core file of process `pid` to `path` with `gdb -p PID -batch -ex 'gcore PATH'`
/// (gdb stops and resumes it). The caller must not be tracing `pid` (detach any
/// [`LiveTarget`](crate::LiveTarget) first). gdb reads no shared library's symbols
/// (`auto-solib-add off`): what it dumps (memory by `/proc/PID/smaps`, the mapped files, every
/// thread's registers, the auxiliary vector) does not depend on them, and indexing a runtime's
/// debug information was most of gdb's time.
pub fn gcore(pid: i32, path: &Path) -> Result<PathBuf, SpawnError> {
    let mut cmd = Command::new("gdb");
    cmd.args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
        .args(["-iex", "set auto-solib-add off", "-p"])
        .arg(pid.to_string())
        .arg("-ex")
        .arg(format!("gcore {}", path.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(SpawnError::GdbMissing(e.to_string()))
        }
        Err(e) => {
            return Err(SpawnError::Start {
                program: "gdb".into(),
                source: e,
            })
        }
    };
    // Collect gdb's output in threads so a full pipe cannot stall it.
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(child.stdout.take().map(|r| Box::new(r) as _));
    let err = drain(child.stderr.take().map(|r| Box::new(r) as _));
    let status = wait_timeout(&mut child, GCORE_TIMEOUT);
    let status = match status {
        Ok(Some(s)) => s,
        other => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(SpawnError::Timeout {
                pid,
                what: match other {
                    Err(e) => format!("waiting for gdb: {e}"),
                    _ => format!(
                        "gdb did not write the core within {} s",
                        GCORE_TIMEOUT.as_secs()
                    ),
                },
            });
        }
    };
    let text = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    let written = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if !status.success() || written == 0 {
        return Err(SpawnError::Failed {
            pid,
            step: format!("gdb gcore {}", path.display()),
            reason: format!(
                "{status}, {written} bytes written; gdb said: {}",
                text.trim()
            ),
        });
    }
    Ok(path.to_path_buf())
}

/// Kills `running` with `SIGABRT` so that the kernel writes its core, and returns the core's
/// path. The fixture must have been started with `dir` as its working directory; the kernel's
/// `core_pattern` must be a plain relative name (`core`, giving `core` or `core.PID`), else
/// this is [`SpawnError::Unavailable`] naming the pattern.
pub fn kernel_core(running: Running, dir: &Path) -> Result<PathBuf, SpawnError> {
    let pid = running.pid;
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern")
        .map_err(|e| SpawnError::Unavailable(format!("reading core_pattern: {e}")))?;
    let pattern = pattern.trim_end_matches('\n').to_string();
    if pattern.is_empty()
        || pattern.starts_with('|')
        || pattern.contains('/')
        || pattern.contains('%')
    {
        return Err(SpawnError::Unavailable(format!(
            "kernel core_pattern is {pattern:?}, not a plain name in the working directory"
        )));
    }
    let mut running = running;
    let Some(mut child) = running.child.take() else {
        return Err(SpawnError::Failed {
            pid,
            step: "dumping core".into(),
            reason: "already reaped".into(),
        });
    };
    if let Err(e) = kill(Pid::from_raw(pid), Signal::SIGABRT) {
        kill_and_reap(&mut child);
        return Err(SpawnError::Failed {
            pid,
            step: "sending SIGABRT".into(),
            reason: e.to_string(),
        });
    }
    let status = match wait_timeout(&mut child, EXIT_TIMEOUT) {
        Ok(Some(s)) => s,
        _ => {
            kill_and_reap(&mut child);
            return Err(SpawnError::Timeout {
                pid,
                what: "did not die of SIGABRT".into(),
            });
        }
    };
    for name in [format!("{pattern}.{pid}"), pattern.clone()] {
        let p = dir.join(&name);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(SpawnError::Unavailable(format!(
        "no core file `{pattern}` or `{pattern}.{pid}` in {} after {status}{} \
         (core_pattern {pattern:?}; RLIMIT_CORE, fs.suid_dumpable or a container may prevent it)",
        dir.display(),
        if status.core_dumped() {
            ", the kernel says it dumped core"
        } else {
            ", no core dumped"
        },
    )))
}

/// Whether this process may trace a child: starts `sleep`, seizes it, detaches and kills it.
/// `Err` says why not (callers skip live targets with that reason).
pub fn ptrace_permitted() -> Result<(), String> {
    crate::live::host_supported()
        .map_err(|host| format!("live targets need an x86-64 Linux host, not {host}"))?;
    let mut child = Command::new("sleep")
        .arg("30")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start `sleep` to probe ptrace: {e}"))?;
    let pid = Pid::from_raw(child.id() as i32);
    let result = ptrace::seize(pid, ptrace::Options::empty())
        .map_err(|e| format!("PTRACE_SEIZE of a child process (sleep, pid {pid}) failed: {e}"));
    // Killing the tracee ends the trace: PTRACE_DETACH would fail on a tracee never stopped.
    let _ = child.kill();
    let _ = child.wait();
    result
}
