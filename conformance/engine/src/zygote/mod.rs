//! The fork server: a zygote process (this binary re-executed as [`crate::host::Entry::Zygote`], in the scrubbed environment a worker gets) that has done everything a worker does
//! before it loads the library, and forks one worker per request. A fork costs a fraction of an
//! exec, a dynamic link and a runtime start, and each worker still loads its own fresh instance
//! of the library.
//!
//! The zygote is single-threaded (it forks), never loads a vendor library and never runs a
//! check; it loads the system C/C++ runtimes and initializes the C++ standard streams, which a
//! worker's library would otherwise do first thing. Its control channel is a Unix socket on its
//! stdin; a request (`wire.rs`) carries the worker's three descriptors and what its units need:
//! the keys of their targets ([`crate::worker::keys`]) and their library file. Before it forks,
//! the zygote
//! - lowers each simulated target once ([`crate::worker::prelower`], kept for later requests,
//!   whatever their library) and hands them to the worker, so the worker neither builds the
//!   models nor lowers the images again (units that share a target take a copy each, the last
//!   one the image); for a real target it parses the symbol tables of the files the target maps
//!   once, and every worker inherits them;
//! - makes sealed copies of the library file once (`stock.rs`), from which the worker loads its
//!   first fresh instances (through the zygote's descriptors) instead of copying the file again.
//!
//! The zygote forks, answers the worker's pid (4 bytes), waits for it and answers its raw wait
//! status (4 bytes), so the supervisor sees exits and signals exactly as from a child of its
//! own, and may signal the pid until the status arrives (the zygote reaps nothing before). One
//! worker at a time per zygote; the supervisor keeps a pool of them.
//!
//! Lifetimes: each zygote is started from one long-lived thread of the supervisor with a
//! parent-death signal, so it dies with the supervisor; each worker sets its own parent-death
//! signal (`worker::main`), so it dies with its zygote. A closed control socket ends the zygote.
//! Forked workers share the zygote's address-space layout (no fresh ASLR draw per worker).

use sim_target::image::Image;
use sim_target::model::Model;
use std::io::{Read, Write};
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};

mod stock;
mod wire;

pub(crate) use wire::Needs;

/// The system's C and C++ runtime libraries, which most OMPD libraries link: the zygote loads
/// them (never a vendor's own file) so that workers do not relocate them again.
const SYSTEM_RUNTIMES: &[&str] = &["libstdc++.so.6", "libgcc_s.so.1", "libm.so.6"];

/// The zygote's main loop ([`crate::host::Entry::Zygote`]): serves fork requests on stdin until the
/// supervisor closes it. Returns the process exit code.
pub fn serve() -> i32 {
    // Its workers inherit the limit.
    crate::worker::no_core_dumps();
    let ctl = match control_socket() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("zygote: {e}");
            return 1;
        }
    };
    // Missing ones are the workers' to load (or fail to load) themselves.
    let _ = ompd_loader::library::keep_loaded(SYSTEM_RUNTIMES);
    let _ = ompd_loader::library::init_cxx_streams();
    // What every worker builds or reads first, done once for all of them.
    let _ = ompd_checks::find("");
    ompd_loader::inspect::prepare();
    let mut lowered = Lowered::default();
    let mut stock = stock::Stock::default();
    loop {
        let request = match wire::receive(&ctl) {
            Ok(Some(request)) => request,
            Ok(None) => return 0,
            Err(e) => {
                eprintln!("zygote: {e}");
                return 1;
            }
        };
        for key in &request.keys {
            lowered.prepare(key);
        }
        stock.prepare(&request.library, request.units);
        if let Err(e) = fork_one(&ctl, request, &mut lowered, &stock) {
            eprintln!("zygote: {e}");
            return 1;
        }
    }
}

/// The control socket, moved off fd 0 (a forked worker gets its own stdin there).
fn control_socket() -> Result<UnixStream, String> {
    // The lowest free descriptor: 3 or above, which a forked worker closes.
    let fd = nix::unistd::dup(std::io::stdin())
        .map_err(|e| format!("cannot move the control socket: {e}"))?;
    let null = std::fs::File::open("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
    nix::unistd::dup2_stdin(&null).map_err(|e| format!("cannot close stdin: {e}"))?;
    Ok(UnixStream::from(fd))
}

/// Targets prepared for earlier requests, by key.
#[derive(Default)]
struct Lowered {
    /// Simulated targets, lowered (at most [`LOWERED_CAP`]).
    images: std::collections::HashMap<String, (Model, Image)>,
    /// Real targets whose module symbols were read.
    read: std::collections::HashSet<String>,
}

/// Lowered targets a zygote keeps.
const LOWERED_CAP: usize = 2048;

impl Lowered {
    /// Prepares the target of `key` unless that was done already (a target that cannot be
    /// prepared is left to the worker, which reports why).
    fn prepare(&mut self, key: &str) {
        if key.is_empty() || self.images.contains_key(key) || self.read.contains(key) {
            return;
        }
        let prepared = std::panic::catch_unwind(|| crate::worker::prelower(key));
        match prepared {
            Ok(Ok(Some(t))) => {
                if self.images.len() >= LOWERED_CAP {
                    self.images.clear();
                }
                self.images.insert(key.to_string(), t);
            }
            Ok(Ok(None)) => {
                self.read.insert(key.to_string());
            }
            _ => {}
        }
    }
}

/// Forks one worker for `request` (handing it the targets of its keys that are lowered, and the
/// stock of its library), answers its pid, waits for it and answers its wait status.
fn fork_one(
    ctl: &UnixStream,
    request: wire::Request,
    lowered: &mut Lowered,
    stock: &stock::Stock,
) -> Result<(), String> {
    let wire::Request {
        fds, keys, library, ..
    } = request;
    use nix::unistd::{fork, ForkResult};
    // SAFETY: the zygote is single-threaded, so the child may run any code.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            // The child's own copy of the kept targets: taking one copies no image.
            for key in &keys {
                if let Some((model, image)) = lowered.images.remove(key) {
                    let uses = keys.iter().filter(|k| *k == key).count();
                    crate::worker::hand_over(key.clone(), model, image, uses);
                }
            }
            let numbers = stock.numbers(&library);
            become_worker(fds, library, numbers)
        }
        Ok(ForkResult::Parent { child }) => {
            drop(fds);
            let mut ctl = ctl;
            ctl.write_all(&child.as_raw().to_le_bytes())
                .map_err(|e| format!("cannot answer a pid: {e}"))?;
            let status = raw_status(nix::sys::wait::waitpid(child, None));
            ctl.write_all(&status.to_le_bytes())
                .map_err(|e| format!("cannot answer a status: {e}"))
        }
        Err(e) => {
            let mut ctl = ctl;
            ctl.write_all(&(-(e as i32)).to_le_bytes())
                .map_err(|e| format!("cannot answer: {e}"))
        }
    }
}

/// In the forked child: the request's descriptors become stdin, stdout and stderr, every other
/// descriptor is closed, and the worker runs, with the zygote's copies of the request's
/// `library` (its descriptor `numbers`) in its stock. No value of the zygote's that owns a
/// descriptor outlives the `close_range`: the request's descriptors are given up as raw numbers
/// first, so nothing the worker does (not even an unwind out of it) can close a number the
/// worker has reused since.
fn become_worker(fds: Vec<OwnedFd>, library: PathBuf, numbers: Vec<RawFd>) -> ! {
    use std::os::fd::IntoRawFd;
    let raw: Vec<RawFd> = fds.into_iter().map(IntoRawFd::into_raw_fd).collect();
    // SAFETY: the three descriptors are open (received with the request) and owned by no value.
    let [stdin, stdout, stderr] = raw
        .iter()
        .map(|&fd| unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) })
        .collect::<Vec<_>>()[..]
    else {
        std::process::exit(1)
    };
    let arranged = nix::unistd::dup2_stdin(stdin)
        .and_then(|_| nix::unistd::dup2_stdout(stdout))
        .and_then(|_| nix::unistd::dup2_stderr(stderr));
    if arranged.is_err() {
        std::process::exit(1);
    }
    // SAFETY: close_range takes no pointers; descriptors from 3 up are this child's copies of
    // the zygote's own (the control socket, the request's, the stock's), which the worker must
    // not hold.
    unsafe { nix::libc::syscall(nix::libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    let zygote = nix::unistd::getppid().as_raw();
    ompd_loader::library::stock::give(library, zygote, numbers);
    std::process::exit(crate::worker::main())
}

/// The raw wait status (as `waitpid(2)` stores it) of a wait's answer.
fn raw_status(w: nix::Result<nix::sys::wait::WaitStatus>) -> i32 {
    use nix::sys::wait::WaitStatus;
    match w {
        Ok(WaitStatus::Exited(_, code)) => (code & 0xff) << 8,
        Ok(WaitStatus::Signaled(_, sig, core)) => sig as i32 | if core { 0x80 } else { 0 },
        // Not waited for (cannot happen for a child waited on without flags): a SIGKILL.
        _ => nix::libc::SIGKILL,
    }
}

/// The descriptors a worker starts with: its stdin (one end of a socket pair), its stdout (the
/// events file) and its stderr (the capture file).
pub(crate) struct Descriptors {
    /// The worker's stdin.
    pub(crate) stdin: OwnedFd,
    /// The worker's stdout.
    pub(crate) events: std::fs::File,
    /// The worker's stderr.
    pub(crate) capture: std::fs::File,
}

/// A running zygote, as the supervisor holds it.
pub(crate) struct Zygote {
    process: Child,
    ctl: UnixStream,
    key: Key,
}

/// What makes zygotes interchangeable: the executable and the environment kept.
#[derive(Clone, PartialEq, Eq)]
struct Key {
    exe: PathBuf,
    keep_env: Vec<String>,
}

/// A worker forked by a zygote: its pid and its zygote, which answers the worker's wait status.
pub(crate) struct Forked {
    /// The worker's pid (valid for signals until its status is read).
    pid: i32,
    zygote: Option<Zygote>,
    status: Option<ExitStatus>,
}

impl Forked {
    /// The worker's exit status, if it has ended (without blocking when `block` is false).
    pub(crate) fn wait(&mut self, block: bool) -> std::io::Result<Option<ExitStatus>> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        let Some(z) = self.zygote.as_mut() else {
            return Err(std::io::Error::other("the zygote is gone"));
        };
        z.ctl.set_nonblocking(!block)?;
        let mut raw = [0u8; 4];
        match z.ctl.read_exact(&mut raw) {
            Ok(()) => {
                let s = ExitStatus::from_raw(i32::from_le_bytes(raw));
                self.status = Some(s);
                let _ = z.ctl.set_nonblocking(false);
                Ok(Some(s))
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => {
                // The zygote died: it cannot serve again, and its worker died with it.
                self.zygote = None;
                Err(e)
            }
        }
    }

    /// Sends `sig` to the worker, while it has not been waited for.
    pub(crate) fn signal(&self, sig: nix::sys::signal::Signal) {
        if self.status.is_none() {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid), sig);
        }
    }
}

impl Drop for Forked {
    /// A worker not waited for is killed and waited for; its zygote returns to the pool.
    fn drop(&mut self) {
        if self.status.is_none() {
            self.signal(nix::sys::signal::Signal::SIGKILL);
            if self.wait(true).is_err() {
                return;
            }
        }
        if let Some(z) = self.zygote.take() {
            POOL.lock().unwrap_or_else(|e| e.into_inner()).push(z);
        }
    }
}

/// Idle zygotes.
static POOL: Mutex<Vec<Zygote>> = Mutex::new(Vec::new());

/// Ends every idle zygote and reaps it (at the end of a run; a zygote left running would end
/// with the process anyway, by its parent-death signal, but unreaped).
pub fn release_all() {
    let idle = std::mem::take(&mut *POOL.lock().unwrap_or_else(|e| e.into_inner()));
    drop(idle);
}

/// Forks a worker of `exe` with `keep_env` on `fds` from an idle zygote (starting one when none
/// is idle), for units that need `needs`.
pub(crate) fn fork_worker(
    exe: &Path,
    keep_env: &[String],
    fds: Descriptors,
    needs: &Needs,
) -> Result<Forked, String> {
    let key = Key {
        exe: exe.to_path_buf(),
        keep_env: keep_env.to_vec(),
    };
    let idle = {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        pool.iter()
            .position(|z| z.key == key)
            .map(|i| pool.swap_remove(i))
    };
    // An idle zygote may have died (killed from outside): one fresh retry.
    if let Some(z) = idle {
        if let Ok(f) = request(z, &fds, needs) {
            return Ok(f);
        }
    }
    request(start(key)?, &fds, needs)
}

/// Asks `z` for a worker on `fds` whose units need `needs`.
fn request(mut z: Zygote, fds: &Descriptors, needs: &Needs) -> Result<Forked, String> {
    wire::send(&z.ctl, fds, needs)?;
    let mut answer = [0u8; 4];
    z.ctl
        .read_exact(&mut answer)
        .map_err(|e| format!("the zygote does not answer: {e}"))?;
    let pid = i32::from_le_bytes(answer);
    if pid <= 0 {
        let err = std::io::Error::from_raw_os_error(-pid);
        POOL.lock().unwrap_or_else(|e| e.into_inner()).push(z);
        return Err(format!("the zygote cannot fork: {err}"));
    }
    Ok(Forked {
        pid,
        zygote: Some(z),
        status: None,
    })
}

/// Starts a zygote (from the keeper thread, whose life is the process's).
fn start(key: Key) -> Result<Zygote, String> {
    let (ours, theirs) =
        UnixStream::pair().map_err(|e| format!("cannot make a control socket: {e}"))?;
    let mut cmd = Command::new(&key.exe);
    cmd.arg(crate::host::Entry::Zygote.arg())
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    crate::worker::scrub(&mut cmd, &key.keep_env);
    let process = on_keeper(cmd).map_err(|e| format!("cannot start a zygote: {e}"))?;
    Ok(Zygote {
        process,
        ctl: ours,
        key,
    })
}

impl Drop for Zygote {
    /// Closing the control socket ends the zygote; it is reaped here.
    fn drop(&mut self) {
        let _ = self.ctl.shutdown(std::net::Shutdown::Both);
        let _ = self.process.wait();
    }
}

/// A spawn request to the keeper thread.
type Spawn = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Spawns `cmd` from the keeper thread: a zygote's parent-death signal fires when the thread
/// that started it ends, and the keeper lives as long as the process.
fn on_keeper(mut cmd: Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    static KEEPER: OnceLock<Mutex<mpsc::Sender<Spawn>>> = OnceLock::new();
    // SAFETY: the closure runs between fork and exec and calls only prctl.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            Ok(())
        })
    };
    let keeper = KEEPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Spawn>();
        std::thread::spawn(move || {
            for (mut cmd, answer) in rx {
                let _ = answer.send(cmd.spawn());
            }
        });
        Mutex::new(tx)
    });
    let (tx, rx) = mpsc::channel();
    keeper
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((cmd, tx))
        .map_err(|_| std::io::Error::other("the keeper thread is gone"))?;
    rx.recv()
        .map_err(|_| std::io::Error::other("the keeper thread is gone"))?
}
