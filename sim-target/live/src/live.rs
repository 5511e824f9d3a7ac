//! A live process as a target: every thread stopped under ptrace, memory read through
//! `/proc/PID/mem`.
//!
//! [`LiveTarget::attach`] seizes every task in `/proc/PID/task` (`PTRACE_SEIZE`, repeated until
//! no new task appears), stops each one (`PTRACE_INTERRUPT`, `waitpid(__WALL)`), and reads its
//! `fs_base` (`PTRACE_GETREGS`). Linux makes the tracing *thread*, not the process, the tracer,
//! so all ptrace requests are made by one dedicated tracer thread that lives as long as the
//! target; dropping the target tells it to detach every thread (the process then continues),
//! and if the tracer thread itself dies the kernel detaches them too.

use crate::maps::read_proc_maps;
use crate::modules::{auxv_entry, Modules};
use crate::procmem::ProcMem;
use crate::ReadMemory;
use crate::Thread;
use nix::errno::Errno;
use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use ompd_serve::arch::Arch;
use ompd_serve::source::{Source, SymbolError, TargetKind};
use std::collections::BTreeMap;
use std::fs::File;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one thread may take to stop after `PTRACE_INTERRUPT`.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// How many rounds of seizing new tasks are made before the thread set is declared unstable.
const MAX_SEIZE_ROUNDS: usize = 64;

/// Why a process could not be attached.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// Live targets are supported on x86-64 little-endian Linux hosts only.
    #[error("pid {pid}: live targets need an x86-64 little-endian Linux host; this one is {host}")]
    UnsupportedHost {
        /// The process.
        pid: i32,
        /// The host's architecture.
        host: String,
    },
    /// The process (or its main thread) disappeared.
    #[error("pid {pid}: the process vanished while {step}")]
    Vanished {
        /// The process.
        pid: i32,
        /// What was being done.
        step: String,
    },
    /// A step failed.
    #[error("pid {pid}: {step}: {reason}")]
    Failed {
        /// The process.
        pid: i32,
        /// What was being done.
        step: String,
        /// Why it failed.
        reason: String,
    },
}

fn failed(pid: i32, step: impl Into<String>, reason: impl ToString) -> AttachError {
    AttachError::Failed {
        pid,
        step: step.into(),
        reason: reason.to_string(),
    }
}

/// Whether live targets can work on this host (x86-64, little-endian, Linux).
pub(crate) fn host_supported() -> Result<(), String> {
    if cfg!(all(
        target_arch = "x86_64",
        target_endian = "little",
        target_os = "linux"
    )) {
        Ok(())
    } else {
        Err(format!(
            "{}-{}",
            std::env::consts::ARCH,
            std::env::consts::OS
        ))
    }
}

/// `fs_base` of a ptrace-stopped thread.
#[cfg(target_arch = "x86_64")]
fn fs_base(tid: Pid) -> nix::Result<u64> {
    Ok(ptrace::getregs(tid)?.fs_base)
}

/// Not reached: [`host_supported`] refuses other hosts first.
#[cfg(not(target_arch = "x86_64"))]
fn fs_base(_: Pid) -> nix::Result<u64> {
    Err(Errno::ENOTSUP)
}

/// The tracer thread: told to detach by dropping the sender, joined on drop.
#[derive(Debug)]
struct Tracer {
    detach: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Tracer {
    fn drop(&mut self) {
        drop(self.detach.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A seized task: whether it is stopped, and the signal it was stopped with for delivery (to
/// be passed on when it is detached).
#[derive(Clone, Copy, Debug, Default)]
struct Seized {
    stopped: bool,
    pending: Option<Signal>,
}

/// The tasks of `pid`, by tid.
fn list_tasks(pid: i32) -> std::io::Result<Vec<i32>> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// Waits until `tid` reports a ptrace stop. `Ok(None)`: the task is gone.
fn wait_stop(pid: i32, tid: i32) -> Result<Option<Option<Signal>>, AttachError> {
    let deadline = Instant::now() + STOP_TIMEOUT;
    let flags = WaitPidFlag::__WALL | WaitPidFlag::WNOHANG;
    loop {
        match waitpid(Pid::from_raw(tid), Some(flags)) {
            Ok(WaitStatus::StillAlive) | Ok(WaitStatus::Continued(_)) | Err(Errno::EINTR) => {
                if Instant::now() > deadline {
                    return Err(failed(
                        pid,
                        format!("waiting for thread {tid} to stop"),
                        format!("no ptrace stop within {} s", STOP_TIMEOUT.as_secs()),
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            // The interrupt's event stop, or a group stop.
            Ok(WaitStatus::PtraceEvent(..)) | Ok(WaitStatus::PtraceSyscall(_)) => {
                return Ok(Some(None))
            }
            // A signal was about to be delivered: pass it on when detaching.
            Ok(WaitStatus::Stopped(_, sig)) => return Ok(Some(Some(sig))),
            Ok(WaitStatus::Exited(..)) | Ok(WaitStatus::Signaled(..)) | Err(Errno::ECHILD) => {
                return Ok(None)
            }
            Err(e) => return Err(failed(pid, format!("waitpid of thread {tid}"), e)),
        }
    }
}

/// Seizes and stops every task of `pid` until no new one appears; records each in `seized`.
fn stop_all(pid: i32, seized: &mut BTreeMap<i32, Seized>) -> Result<Vec<Thread>, AttachError> {
    for round in 0.. {
        let tids = list_tasks(pid).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => AttachError::Vanished {
                pid,
                step: "listing /proc/PID/task".into(),
            },
            _ => failed(pid, "listing /proc/PID/task", e),
        })?;
        let new: Vec<i32> = tids
            .into_iter()
            .filter(|t| !seized.contains_key(t))
            .collect();
        if new.is_empty() {
            break;
        }
        if round == MAX_SEIZE_ROUNDS {
            return Err(failed(
                pid,
                "seizing every thread",
                format!("new threads still appear after {MAX_SEIZE_ROUNDS} rounds"),
            ));
        }
        let fresh = seize(pid, new, seized)?;
        for &tid in &fresh {
            match ptrace::interrupt(Pid::from_raw(tid)) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => return Err(failed(pid, format!("PTRACE_INTERRUPT of thread {tid}"), e)),
            }
        }
        for tid in fresh {
            match wait_stop(pid, tid)? {
                Some(pending) => {
                    seized.insert(
                        tid,
                        Seized {
                            stopped: true,
                            pending,
                        },
                    );
                }
                None => {
                    seized.remove(&tid);
                }
            }
        }
    }
    if !seized.contains_key(&pid) {
        return Err(AttachError::Vanished {
            pid,
            step: "stopping the main thread".into(),
        });
    }
    let mut threads = thread_pointers(pid, seized)?;
    crate::order_threads(&mut threads, Some(pid as u32));
    Ok(threads)
}

/// Seizes the tasks `new` of `pid`, records each in `seized`, and returns those seized (a thread
/// other than the main one may exit in between).
fn seize(
    pid: i32,
    new: Vec<i32>,
    seized: &mut BTreeMap<i32, Seized>,
) -> Result<Vec<i32>, AttachError> {
    let mut fresh = Vec::new();
    for tid in new {
        match ptrace::seize(Pid::from_raw(tid), ptrace::Options::empty()) {
            Ok(()) => {
                seized.insert(tid, Seized::default());
                fresh.push(tid);
            }
            // The thread exited in between.
            Err(Errno::ESRCH) if tid != pid => {}
            Err(Errno::ESRCH) => {
                return Err(AttachError::Vanished {
                    pid,
                    step: format!("PTRACE_SEIZE of thread {tid}"),
                })
            }
            Err(e) => return Err(failed(pid, format!("PTRACE_SEIZE of thread {tid}"), e)),
        }
    }
    Ok(fresh)
}

/// Every seized task with its `fs_base`.
fn thread_pointers(pid: i32, seized: &BTreeMap<i32, Seized>) -> Result<Vec<Thread>, AttachError> {
    let mut threads = Vec::with_capacity(seized.len());
    for &tid in seized.keys() {
        let fs_base = fs_base(Pid::from_raw(tid)).map_err(|e| match e {
            Errno::ESRCH => AttachError::Vanished {
                pid,
                step: format!("PTRACE_GETREGS of thread {tid}"),
            },
            e => failed(pid, format!("PTRACE_GETREGS of thread {tid}"), e),
        })?;
        threads.push(Thread {
            tid: tid as u32,
            fs_base,
        });
    }
    Ok(threads)
}

/// The tracer thread's body: stop everything, answer, wait for the order to detach, detach.
fn tracer_main(
    pid: i32,
    answer: mpsc::Sender<Result<Vec<Thread>, AttachError>>,
    detach: mpsc::Receiver<()>,
) {
    let mut seized = BTreeMap::new();
    let result = stop_all(pid, &mut seized);
    let ok = result.is_ok();
    if answer.send(result).is_ok() && ok {
        // Blocks until the target is dropped (the sender with it).
        let _ = detach.recv();
    }
    for (tid, s) in seized {
        // A task that is not stopped cannot be detached by request; the kernel detaches it
        // when this thread ends, which it is about to.
        if s.stopped {
            let _ = ptrace::detach(Pid::from_raw(tid), s.pending);
        }
    }
}

/// A live process with every thread stopped under ptrace.
///
/// [`Source::duplicate`] gives another handle on the same stopped process; the threads are
/// detached when the last handle is dropped.
#[derive(Clone)]
pub struct LiveTarget {
    inner: Arc<Attached>,
}

/// What one attach holds.
struct Attached {
    pid: i32,
    threads: Vec<Thread>,
    modules: Modules,
    mem: ProcMem,
    // Dropped last: the process stays stopped while anything above may read it.
    _tracer: Tracer,
}

impl std::fmt::Debug for LiveTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveTarget")
            .field("pid", &self.inner.pid)
            .field("threads", &self.inner.threads)
            .field(
                "modules",
                &self
                    .inner
                    .modules
                    .list()
                    .iter()
                    .map(|m| m.path.display().to_string())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl LiveTarget {
    /// Seizes and stops every thread of process `pid` and finds its modules. The caller must
    /// not already trace it (nor may a debugger). Errors name the pid and the step.
    pub fn attach(pid: i32) -> Result<LiveTarget, AttachError> {
        host_supported().map_err(|host| AttachError::UnsupportedHost { pid, host })?;
        if pid <= 0 {
            return Err(failed(pid, "checking the pid", "not a process id"));
        }
        if pid as u32 == std::process::id() {
            return Err(failed(
                pid,
                "checking the pid",
                "a process cannot trace itself",
            ));
        }
        let (answer_tx, answer_rx) = mpsc::channel();
        let (detach_tx, detach_rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("ptrace-{pid}"))
            .spawn(move || tracer_main(pid, answer_tx, detach_rx))
            .map_err(|e| failed(pid, "starting the tracer thread", e))?;
        let tracer = Tracer {
            detach: Some(detach_tx),
            thread: Some(thread),
        };
        let threads = answer_rx.recv().map_err(|_| {
            failed(
                pid,
                "stopping the threads",
                "the tracer thread ended without an answer",
            )
        })??;
        let mem = File::open(format!("/proc/{pid}/mem"))
            .map(|file| ProcMem::new(pid, file))
            .map_err(|e| failed(pid, "opening /proc/PID/mem", e))?;
        let maps = read_proc_maps(pid).map_err(|e| failed(pid, "reading /proc/PID/maps", e))?;
        let entry = std::fs::read(format!("/proc/{pid}/auxv"))
            .ok()
            .and_then(|a| auxv_entry(&a));
        let modules = Modules::discover(&maps, entry, &mem);
        Ok(LiveTarget {
            inner: Arc::new(Attached {
                pid,
                threads,
                modules,
                mem,
                _tracer: tracer,
            }),
        })
    }

    /// Parses the symbol tables of the files process `pid` maps into this process's cache
    /// ([`crate::modules::preload`]) without attaching to it; how many it holds, or why the
    /// mappings could not be read.
    pub fn preload_symbols(pid: i32) -> std::io::Result<usize> {
        Ok(crate::modules::preload(&read_proc_maps(pid)?))
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.inner.pid
    }

    /// The threads, main thread first, then by tid (the indices thread contexts use).
    pub fn threads(&self) -> &[Thread] {
        &self.inner.threads
    }

    /// The modules of the process.
    pub fn modules(&self) -> &Modules {
        &self.inner.modules
    }

    /// Drops this handle (the same as dropping it): when it is the last one, every thread is
    /// detached and the process continues.
    pub fn detach(self) {}
}

impl Source for LiveTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::Live
    }

    fn arch(&self) -> Arch {
        Arch::LP64_LE
    }

    fn read(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        self.inner.mem.read_memory(addr, len)
    }

    fn symbol(&self, name: &str, thread: Option<usize>) -> Result<u64, SymbolError> {
        let t = &self.inner;
        t.modules.address(name, thread, &t.threads, &t.mem)
    }

    fn is_thread_local(&self, name: &str) -> Option<bool> {
        self.inner.modules.lookup(name).map(|(_, sym)| sym.tls)
    }

    fn thread_count(&self) -> usize {
        self.inner.threads.len()
    }

    fn find_thread(&self, kind: u64, id: &[u8]) -> Option<usize> {
        crate::find_thread(&self.inner.threads, kind, id)
    }

    fn thread_id_bytes(&self, index: usize, kind: u64) -> Option<Vec<u8>> {
        crate::thread_id_bytes(&self.inner.threads, index, kind)
    }

    fn duplicate(&self) -> Option<Box<dyn Source>> {
        Some(Box::new(self.clone()))
    }
}
