//! Breakpoint tours: a fixture program run with the breakpoint-stop shim (`libbp_stop.so`,
//! `fixture-protocol`'s `c/bp_stop.c`) preloaded, which stops the whole process each time the
//! OpenMP runtime passes one of its `ompd_bp_*` functions and announces the stop on stderr as
//! `BP <seq> <name> <tid>`. [`Tour::next_stop`] waits for the next announced stop (the process
//! then sits in a group stop, ready for any tracer to attach and detach), [`Tour::resume`]
//! continues it with `SIGCONT`. [`breakpoint_offsets`] reads what the shim needs from the
//! runtime's file: the runtimes keep `ompd_bp_*` out of `.dynsym`.
//!
//! The child is started like [`Running`](crate::spawn::Running): its own process group,
//! `PR_SET_PDEATHSIG(SIGKILL)`; dropping a [`Tour`] kills its process group and reaps it.

use crate::elf::SymbolTable;
use crate::spawn::{arrange_child, kill_and_reap, wait_timeout, SpawnError};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The environment variable the shim reads its breakpoints from.
pub const BREAKPOINTS_ENV: &str = "OMPD_FIXTURE_BREAKPOINTS";

/// One stop of a tour: the process is stopped because thread `tid` passed `breakpoint`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    /// Its number in the tour, from 1.
    pub seq: u64,
    /// The breakpoint function (`ompd_bp_parallel_begin`).
    pub breakpoint: String,
    /// The thread that passed it.
    pub tid: u32,
    /// The runtime's own OMPT view of the thread there, when the OMPT truth tool is loaded: the
    /// tool data of its parallel region, that region's team size, the tool data of its task and
    /// of the region OMPT binds that task to (ancestor level 0; 0 where OMPT did not answer).
    pub view: Option<[u64; 4]>,
}

impl Stop {
    /// Parses the shim's `BP <seq> <name> <tid> [<4 view values>]` line.
    pub fn parse(line: &str) -> Option<Stop> {
        let mut words = line.strip_prefix("BP ")?.split_whitespace();
        let seq = words.next()?.parse().ok()?;
        let breakpoint = words.next()?.to_string();
        let tid = words.next()?.parse().ok()?;
        let rest: Vec<u64> = words.map(str::parse).collect::<Result<_, _>>().ok()?;
        let view = match rest.len() {
            0 => None,
            _ => Some(rest.try_into().ok()?),
        };
        Some(Stop {
            seq,
            breakpoint,
            tid,
            view,
        })
    }
}

/// The `NAME=OFFSET` pairs (OFFSET in hex from the load base) of the breakpoint functions the
/// runtime file at `runtime` defines, as the shim reads them from [`BREAKPOINTS_ENV`]; `Err`
/// when the file defines none.
pub fn breakpoint_offsets(runtime: &Path) -> Result<String, String> {
    let table = SymbolTable::cached(runtime).map_err(|e| e.to_string())?;
    let pairs: Vec<String> = ompd_abi::breakpoint::all()
        .filter_map(|name| table.get(name))
        .map(|s| format!("{}={:x}", s.name, s.value - table.load_vaddr()))
        .collect();
    match pairs.is_empty() {
        true => Err(format!(
            "{} defines no ompd_bp_* function in its symbol tables",
            runtime.display()
        )),
        false => Ok(pairs.join(" ")),
    }
}

/// A fixture on a breakpoint tour.
#[derive(Debug)]
pub struct Tour {
    child: Option<Child>,
    pid: i32,
    lines: mpsc::Receiver<String>,
    /// The number of the last stop announced (0 before the first).
    last: u64,
    /// A stop announced as the process exited, so that it never stopped there ([`Tour::lost`]).
    lost: Option<Stop>,
}

impl Tour {
    /// Starts `cmd` (stderr taken over, where the shim announces its stops; stdout and stdin
    /// null); the caller has set the shim's environment.
    pub fn start(mut cmd: Command) -> Result<Tour, SpawnError> {
        let program = cmd.get_program().to_string_lossy().into_owned();
        cmd.stderr(Stdio::piped())
            .stdout(Stdio::null())
            .stdin(Stdio::null())
            .process_group(0);
        arrange_child(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|source| SpawnError::Start { program, source })?;
        let (tx, rx) = mpsc::channel();
        if let Some(stderr) = child.stderr.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Ok(Tour {
            pid: child.id() as i32,
            child: Some(child),
            lines: rx,
            last: 0,
            lost: None,
        })
    }

    /// Its process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Waits up to `timeout` for the next stop, and for the process to be stopped there;
    /// `Ok(None)` once the program closed its stderr (it ended), or once it exited after
    /// announcing a stop it then never made ([`Tour::lost`]): a thread passing a breakpoint while
    /// another ends the process (a runtime's workers pass `ompd_bp_thread_end` as the program
    /// exits) cannot stop a process already exiting.
    pub fn next_stop(&mut self, timeout: Duration) -> Result<Option<Stop>, SpawnError> {
        let deadline = Instant::now() + timeout;
        let stop = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => match Stop::parse(&line) {
                    Some(stop) => {
                        self.last = stop.seq;
                        break stop;
                    }
                    None => continue,
                },
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(None),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(self.late(&format!("the stop after stop {}", self.last)))
                }
            }
        };
        while !self.stopped() {
            if self.exited() {
                self.lost = Some(stop);
                return Ok(None);
            }
            if Instant::now() > deadline {
                return Err(self.late(&format!("the group stop of stop {}", stop.seq)));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(Some(stop))
    }

    /// The stop announced as the process exited, which it never made (see [`Tour::next_stop`]).
    pub fn lost(&self) -> Option<&Stop> {
        self.lost.as_ref()
    }

    /// Continues the stopped process (`SIGCONT`).
    pub fn resume(&self) -> Result<(), SpawnError> {
        kill(Pid::from_raw(self.pid), Signal::SIGCONT).map_err(|e| SpawnError::Failed {
            pid: self.pid,
            step: "sending SIGCONT".into(),
            reason: e.to_string(),
        })
    }

    /// Waits up to `timeout` for the program to exit (then kills it) and gives its status.
    pub fn finish(mut self, timeout: Duration) -> Result<ExitStatus, SpawnError> {
        let pid = self.pid;
        let mut child = self.child.take().ok_or_else(|| SpawnError::Failed {
            pid,
            step: "finishing".into(),
            reason: "already reaped".into(),
        })?;
        match wait_timeout(&mut child, timeout) {
            Ok(Some(status)) => Ok(status),
            other => {
                kill_and_reap(&mut child);
                Err(SpawnError::Timeout {
                    pid,
                    what: format!("did not exit after its tour ({other:?}; killed)"),
                })
            }
        }
    }

    /// Whether the process is in a stop (`T`, or `t` while a tracer holds it).
    fn stopped(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .ok()
            .and_then(|s| {
                s.rsplit_once(") ")
                    .map(|(_, rest)| rest.starts_with(['T', 't']))
            })
            .unwrap_or(false)
    }

    /// Every thread of the process with its state letter (`/proc/PID/task/*/stat`).
    fn thread_states(&self) -> Vec<(String, char)> {
        std::fs::read_dir(format!("/proc/{}/task", self.pid))
            .map(|d| {
                d.flatten()
                    .filter_map(|e| {
                        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
                        let state = stat.rsplit_once(") ")?.1.chars().next()?;
                        Some((e.file_name().to_string_lossy().into_owned(), state))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the process has exited: no thread is left but zombies (or none at all).
    fn exited(&self) -> bool {
        self.thread_states()
            .iter()
            .all(|(_, state)| matches!(state, 'Z' | 'X'))
    }

    fn late(&self, what: &str) -> SpawnError {
        let states: Vec<String> = (self.thread_states().iter())
            .map(|(tid, state)| format!("{tid}:{state}"))
            .collect();
        SpawnError::Timeout {
            pid: self.pid,
            what: format!(
                "waiting for {what} of the breakpoint tour (threads {})",
                states.join(" ")
            ),
        }
    }
}

impl Drop for Tour {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_and_reap(&mut child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_line_names_its_number_breakpoint_and_thread() {
        assert_eq!(
            Stop::parse("BP 3 ompd_bp_parallel_begin 4711"),
            Some(Stop {
                seq: 3,
                breakpoint: "ompd_bp_parallel_begin".into(),
                tid: 4711,
                view: None,
            })
        );
        let viewed = Stop::parse("BP 4 ompd_bp_task_begin 12 8194 2 16385 8194").unwrap();
        assert_eq!(viewed.view, Some([8194, 2, 16385, 8194]));
        assert_eq!(Stop::parse("BP 4 ompd_bp_task_begin 12 8194 2"), None);
        assert_eq!(Stop::parse("BPSTOP armed 6"), None);
        assert_eq!(Stop::parse("BP x ompd_bp_task_end 1"), None);
        assert_eq!(Stop::parse("READY 12"), None);
    }

    /// A stop announced by a program that then exits is lost, not waited for: the tour ends
    /// at once, as the program did, and names the stop it could not make.
    #[test]
    fn a_stop_announced_as_the_program_exits_ends_the_tour() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo 'BP 1 ompd_bp_thread_end 7' >&2; exit 0"]);
        let mut tour = Tour::start(cmd).unwrap();
        // Waiting out the deadline for a group stop would be an error, not `None`.
        assert_eq!(tour.next_stop(Duration::from_secs(30)).unwrap(), None);
        assert_eq!(tour.lost().map(|s| (s.seq, s.tid)), Some((1, 7)));
        assert!(tour.finish(Duration::from_secs(5)).unwrap().success());
    }
}
