//! The supervisor: runs a unit (library × scenario × arch × layout, planned by [`crate::run`]) in
//! a fresh worker process (this binary re-executed with the hidden `__worker` command, never a
//! fork of the multi-threaded supervisor), and turns the streamed events into results. A crash or
//! timeout is attributed to the check in flight; the checks after it run in a new worker.
//!
//! One process per unit is also how each target setup gets a fresh library instance: the
//! LLVM-family libraries latch type sizes and state in process-wide globals.

use crate::worker::{Event, HarnessFailure, Target, Unit};
use ompd_checks::{self as checks, Stage};
use ompd_report::{Outcome, ResultRecord};
use ompd_vendors::Resolved;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// The default layout seed for `random:SEED`.
pub const DEFAULT_SEED: u64 = 20261121;

/// Why a run ends early: an interruption (Ctrl-C, SIGTERM) or the whole-run deadline. Shared by
/// every worker thread; units not started yet and checks not reached are reported as skipped with
/// the reason, and the report is marked incomplete.
#[derive(Debug, Default)]
pub struct Stop {
    interrupted: Mutex<Option<String>>,
    deadline: Option<Instant>,
}

impl Stop {
    /// A stop that fires only when interrupted, or also once `limit` has passed from now.
    pub fn with_deadline(limit: Option<Duration>) -> Stop {
        Stop {
            interrupted: Mutex::new(None),
            deadline: limit.map(|l| Instant::now() + l),
        }
    }

    /// Ends the run early for `why` (the first reason given is kept).
    pub fn interrupt(&self, why: impl Into<String>) {
        self.interrupted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| why.into());
    }

    /// Why the run must end now, if it must.
    pub fn reason(&self) -> Option<String> {
        if let Some(why) = self
            .interrupted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Some(why);
        }
        match self.deadline {
            Some(d) if Instant::now() >= d => {
                Some("the whole-run timeout (--run-timeout) expired".into())
            }
            _ => None,
        }
    }
}

/// How units run: the time one check may take, the run's stop, and whether a crashed check is
/// re-run alone in a fresh worker to tell a flake from a reproducible crash.
#[derive(Clone, Copy, Debug)]
pub struct Exec<'a> {
    /// Time a single check may take before its worker is stopped.
    pub timeout: Duration,
    /// The run's stop.
    pub stop: &'a Stop,
    /// Re-run each crashed check once, alone, in a fresh worker.
    pub rerun_crashes: bool,
    /// Environment variables passed on to workers besides `PATH`.
    pub keep_env: &'a [String],
}

/// Whether check `id` passes the filters.
pub fn selected(id: &str, filters: &[String]) -> bool {
    filters.is_empty()
        || filters.iter().any(|f| match f.strip_suffix('*') {
            Some(prefix) => id.starts_with(prefix),
            None => id == f,
        })
}

/// A unit of `lib` running `checks` against `target`.
pub(crate) fn unit_of(lib: &Resolved, stage: Stage, target: Target, checks: Vec<String>) -> Unit {
    Unit {
        library: lib.name.clone(),
        path: lib.path.clone(),
        preload: lib.preload.clone(),
        needs_cxx_runtime: lib.needs_cxx_runtime,
        stage,
        snapshot: false,
        target,
        checks,
        carried: Default::default(),
    }
}

/// What one unit produced.
#[derive(Debug, Default)]
pub(crate) struct UnitRun {
    /// One record per check of the unit.
    pub(crate) records: Vec<ResultRecord>,
    /// The worker's `Loaded` event, if the library loaded.
    pub(crate) loaded: Option<Event>,
    /// Why the library failed to load, if it did.
    pub(crate) load_failed: Option<String>,
    /// The worker could not go on with the unit, for a reason of the harness's own.
    pub(crate) harness_failed: Option<HarnessFailure>,
    /// The worker died before the library reported itself loaded.
    pub(crate) died_loading: bool,
    /// Worker lines that were not events (what the library printed on the result stream).
    pub(crate) output: String,
}

/// The result record of `check` in `unit`.
pub(crate) fn record(
    unit: &Unit,
    check: &str,
    outcome: Outcome,
    expected: &str,
    actual: String,
    detail: String,
) -> ResultRecord {
    ResultRecord {
        library: unit.library.clone(),
        check: check.to_string(),
        requirements: checks::find(check)
            .map(|c| c.requirements.iter().map(|r| r.to_string()).collect())
            .unwrap_or_default(),
        scenario: unit.target.scenario_name().to_string(),
        arch: unit.target.arch().name().to_string(),
        layout: unit.target.layout().map(|l| l.to_string()),
        outcome,
        expected: expected.to_string(),
        actual,
        detail,
        flaky: false,
        target: unit.target.kind_name().into(),
        real: match &unit.target {
            Target::Real { info, .. } => Some(info.clone()),
            _ => None,
        },
        gate: None,
    }
}

/// Records the same result for every check of `checks` (a unit that cannot go on).
pub(crate) fn record_all(
    out: &mut UnitRun,
    unit: &Unit,
    checks: &[String],
    outcome: Outcome,
    expected: &str,
    actual: &str,
    detail: &str,
) {
    for c in checks {
        out.records.push(record(
            unit,
            c,
            outcome,
            expected,
            actual.to_string(),
            detail.to_string(),
        ));
    }
}

/// How a worker ended, in words a vendor engineer acts on: the signal and what usually raises it,
/// or the exit code of a process the library ended itself.
pub(crate) fn describe_exit(status: std::process::ExitStatus) -> String {
    use nix::sys::signal::Signal;
    if let Some(sig) = status.signal() {
        let name = Signal::try_from(sig)
            .map(|s| s.as_str().to_string())
            .unwrap_or(format!("signal {sig}"));
        let cause = match Signal::try_from(sig) {
            Ok(Signal::SIGSEGV) | Ok(Signal::SIGBUS) => " (invalid memory access)",
            Ok(Signal::SIGABRT) => {
                " (abort: an assertion, a detected stack smash or heap corruption)"
            }
            Ok(Signal::SIGFPE) => " (arithmetic fault)",
            Ok(Signal::SIGILL) => " (illegal instruction)",
            _ => "",
        };
        format!("killed by {name}{cause}")
    } else {
        let code = status.code().unwrap_or(-1);
        format!(
            "the process exited with code {code} in the middle of the unit (the library ended it)"
        )
    }
}

pub(crate) fn stop(child: &mut Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Environment variables a worker always gets, when set: the search path and the trace switch.
const WORKER_ENV: &[&str] = &["PATH", crate::worker::TRACE_ENV];

/// Starts a worker of `exe` in a scrubbed environment (only [`WORKER_ENV`] and `keep_env`), in a
/// process group of its own (a Ctrl-C at the terminal reaches the supervisor, which stops its
/// workers itself). Its stderr (and the stdout it redirects there) goes to an unlinked file,
/// returned too: the file survives a crash, and the worker reads it back to attribute output to
/// checks.
pub(crate) fn start_worker(
    exe: &std::path::Path,
    keep_env: &[String],
) -> Result<(Child, std::fs::File), String> {
    use std::os::unix::process::CommandExt;
    let capture =
        tempfile::tempfile().map_err(|e| format!("cannot create the output capture file: {e}"))?;
    let for_child = capture
        .try_clone()
        .map_err(|e| format!("cannot create the output capture file: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("__worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(for_child))
        .env_clear()
        .process_group(0);
    for name in WORKER_ENV
        .iter()
        .copied()
        .chain(keep_env.iter().map(String::as_str))
    {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start a worker: {e}"))?;
    Ok((child, capture))
}

/// Sends `unit` to a started worker and returns its result stream, one line per event (read by a
/// thread of its own, so the caller can wait with a timeout).
pub(crate) fn stream(child: &mut Child, unit: &Unit) -> mpsc::Receiver<String> {
    let line = serde_json::to_string(unit).expect("units serialize");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = writeln!(stdin, "{line}");
    }
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
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

/// How often a worker's stream is left to look at the run's [`Stop`].
pub(crate) const STOP_POLL: Duration = Duration::from_millis(100);

/// How a worker's stream ended.
enum Ending {
    /// The worker finished or died on its own (EOF on its stream).
    Closed,
    /// The check in flight took longer than the timeout.
    TimedOut,
    /// The run was stopped, for this reason.
    Stopped(String),
}

/// A unit of the single check `check` of `unit` (for a re-run).
fn alone(unit: &Unit, check: &str) -> Unit {
    Unit {
        checks: vec![check.to_string()],
        ..unit.clone()
    }
}

/// Re-runs `check` of `unit` alone in a fresh worker after it crashed, and says in `rec` whether
/// the crash reproduced.
fn rerun_crashed(unit: &Unit, rec: &mut ResultRecord, exec: Exec) {
    let again = run_unit(
        &alone(unit, &rec.check),
        Exec {
            rerun_crashes: false,
            ..exec
        },
    );
    match again.records.iter().find(|r| r.check == rec.check) {
        Some(r) if r.outcome == Outcome::Crash => {
            rec.detail
                .push_str("; reproduced: it crashed again when re-run alone in a fresh worker");
        }
        Some(r) if r.outcome == Outcome::Skip && exec.stop.reason().is_some() => {}
        Some(r) => {
            rec.flaky = true;
            rec.detail.push_str(&format!(
                "; did not reproduce: re-run alone in a fresh worker it gave {} (a flaky \
                 library, or a crash that depends on the checks before it)",
                r.outcome.as_str()
            ));
        }
        None => {}
    }
}

/// Starts a fresh worker for `unit` with no checks: it loads the library, initializes it and the
/// unit's address space, and ends (the cost of one fresh library instance).
pub(crate) fn setup_only(unit: &Unit, exec: Exec) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    let (mut child, _capture) = start_worker(&exe, exec.keep_env)?;
    let bare = Unit {
        checks: Vec::new(),
        ..unit.clone()
    };
    let mut done = Err("the worker ended before setting up the target".to_string());
    for l in stream(&mut child, &bare) {
        match serde_json::from_str::<Event>(&l) {
            Ok(Event::Done) => done = Ok(()),
            Ok(Event::LoadFailed { message }) => done = Err(message),
            Ok(Event::HarnessFailed { failure }) => done = Err(failure.to_string()),
            _ => {}
        }
    }
    let _ = child.wait();
    done
}

/// Runs one unit to the end, replacing workers that die; a stop ends it early with the checks
/// not reached reported as skipped.
pub(crate) fn run_unit(unit: &Unit, exec: Exec) -> UnitRun {
    let mut out = UnitRun::default();
    let mut remaining = unit.checks.clone();
    // What replaced workers of this unit saw, for the contract checks of the next one.
    let mut carried = unit.carried.clone();
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"));
    while !remaining.is_empty() {
        if let Some(why) = exec.stop.reason() {
            let detail = format!("not reached: {why}");
            record_all(&mut out, unit, &remaining, Outcome::Skip, "", "", &detail);
            return out;
        }
        let mut u = unit.clone();
        u.checks = remaining.clone();
        u.carried = carried.clone();
        let (mut child, mut capture) = match exe
            .clone()
            .and_then(|exe| start_worker(&exe, exec.keep_env))
        {
            Ok(started) => started,
            Err(detail) => {
                record_all(
                    &mut out,
                    unit,
                    &remaining,
                    Outcome::HarnessError,
                    "",
                    "",
                    &detail,
                );
                return out;
            }
        };
        let rx = stream(&mut child, &u);
        let mut in_flight: Option<String> = None;
        let mut done = false;
        let mut deadline = Instant::now() + exec.timeout;
        let ending = loop {
            if let Some(why) = exec.stop.reason() {
                stop(&mut child);
                break Ending::Stopped(why);
            }
            let now = Instant::now();
            if now >= deadline {
                stop(&mut child);
                break Ending::TimedOut;
            }
            match rx.recv_timeout((deadline - now).min(STOP_POLL)) {
                Ok(l) => match serde_json::from_str::<Event>(&l) {
                    Ok(Event::Start { check }) => {
                        deadline = Instant::now() + exec.timeout;
                        in_flight = Some(check);
                    }
                    Ok(Event::Result {
                        check,
                        outcome,
                        expected,
                        actual,
                        detail,
                        contract,
                    }) => {
                        carried.extend(contract);
                        out.records
                            .push(record(unit, &check, outcome, &expected, actual, detail));
                        remaining.retain(|c| *c != check);
                        in_flight = None;
                    }
                    Ok(e @ Event::Loaded { .. }) => {
                        out.loaded.get_or_insert(e);
                        deadline = Instant::now() + exec.timeout;
                    }
                    Ok(Event::LoadFailed { message }) => out.load_failed = Some(message),
                    Ok(Event::HarnessFailed { failure }) => out.harness_failed = Some(failure),
                    Ok(Event::Done) => done = true,
                    Ok(Event::Answer { .. }) => {}
                    Err(e) => out
                        .output
                        .push_str(&format!("unparsable worker line ({e}): {l}\n")),
                },
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break Ending::Closed,
            }
        };
        let status = child.wait().ok();
        let mut buf = Vec::new();
        let _ = capture.seek(std::io::SeekFrom::Start(0)).and_then(|_| {
            Read::by_ref(&mut capture)
                .take(1 << 20)
                .read_to_end(&mut buf)
        });
        let stderr_text = String::from_utf8_lossy(&buf).into_owned();
        out.output.push_str(&stderr_text);
        if let Some(msg) = &out.load_failed {
            let msg = msg.clone();
            record_all(
                &mut out,
                unit,
                &remaining,
                Outcome::HarnessError,
                "the library loads",
                "load failed",
                &msg,
            );
            return out;
        }
        if let Some(failure) = &out.harness_failed {
            // The harness's failure, not the library's: no crash, whatever the exit.
            let detail = format!("harness: {failure}");
            record_all(
                &mut out,
                unit,
                &remaining,
                Outcome::HarnessError,
                "the harness sets the unit up",
                "",
                &detail,
            );
            return out;
        }
        if done && remaining.is_empty() {
            return out;
        }
        let how = match &ending {
            Ending::Stopped(why) => {
                if let Some(check) = in_flight.take() {
                    let detail = format!("interrupted while running: {why}");
                    out.records.push(record(
                        unit,
                        &check,
                        Outcome::Skip,
                        "",
                        String::new(),
                        detail,
                    ));
                    remaining.retain(|c| *c != check);
                }
                let detail = format!("not reached: {why}");
                record_all(&mut out, unit, &remaining, Outcome::Skip, "", "", &detail);
                return out;
            }
            Ending::TimedOut => format!(
                "no answer within {}s (stopped with SIGTERM, then SIGKILL)",
                exec.timeout.as_secs()
            ),
            Ending::Closed => status
                .map(describe_exit)
                .unwrap_or_else(|| "worker vanished".into()),
        };
        let outcome = match ending {
            Ending::TimedOut => Outcome::Timeout,
            _ => Outcome::Crash,
        };
        let last = match tail(&stderr_text, 3) {
            t if t.trim().is_empty() => "the worker printed nothing".to_string(),
            t => format!("worker output: {t}"),
        };
        match in_flight {
            Some(check) => {
                let mut rec = record(unit, &check, outcome, "the check completes", how, last);
                if outcome == Outcome::Crash && exec.rerun_crashes {
                    rerun_crashed(unit, &mut rec, exec);
                }
                out.records.push(rec);
                remaining.retain(|c| *c != check);
            }
            None => {
                // Died outside any check (loading, setup): nothing further can run in this unit.
                let actual = format!("worker {how} before the check");
                let when = if out.loaded.is_none() {
                    "while loading the library"
                } else {
                    "during target setup"
                };
                let detail = format!("{when}; {last}");
                out.died_loading = out.loaded.is_none();
                record_all(
                    &mut out,
                    unit,
                    &remaining,
                    outcome,
                    "the check runs",
                    &actual,
                    &detail,
                );
                return out;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_match_ids_and_prefixes() {
        assert!(selected("icv.value.dyn-var", &[]));
        assert!(selected("icv.value.dyn-var", &["icv.*".into()]));
        assert!(selected("icv.value.dyn-var", &["icv.value.dyn-var".into()]));
        assert!(!selected("icv.value.dyn-var", &["icv.value.dyn".into()]));
    }
}
