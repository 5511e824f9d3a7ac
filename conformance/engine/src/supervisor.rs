//! The supervisor: runs a unit (library × scenario × arch × layout, planned by [`crate::run`]) in
//! a fresh worker process ([`crate::process`]: forked by a zygote or executed again, never a fork
//! of the multi-threaded supervisor; [`crate::batch`] runs several units in one worker), and
//! turns the streamed events into results. A crash or timeout is attributed to the check in
//! flight; the checks after it run in a new worker.
//!
//! A fresh worker per unit is also how each target setup gets a fresh library instance: the
//! LLVM-family libraries latch type sizes and state in process-wide globals ([`crate::batch`]
//! runs several units in one worker, each with an instance of its own).

use crate::process::{Events, NoLine, Spawn, Worker as Process};
use crate::quarantine::{Cause, Quarantine, Where};
use crate::worker::{Contract, Event, HarnessFailure, Target, Unit, NOT_RUN};
use ompd_checks::{self as checks, Stage};
use ompd_report::{Outcome, ResultRecord};
use ompd_vendors::Resolved;
use std::os::unix::process::ExitStatusExt;
use std::sync::Mutex;
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
    /// Time one call into the library may take before the worker's watchdog ends it (none: only
    /// the per-check timeout).
    pub call_deadline: Option<Duration>,
    /// The run's quarantine of entry points that hung or crashed.
    pub quarantine: &'a Quarantine,
    /// How fresh workers start.
    pub spawn: Spawn,
}

/// Whether check `id` passes the `--check` filters: none, or any of them matches it as an
/// [`ompd_report::glob`].
pub fn selected(id: &str, filters: &[String]) -> bool {
    filters.is_empty() || filters.iter().any(|f| ompd_report::glob(f, id))
}

/// The one registry filter: the checks of `stage` that pass the `--check` filters, in
/// registry order.
pub fn stage_checks<'a>(
    stage: Stage,
    filters: &'a [String],
) -> impl Iterator<Item = &'static checks::Check> + 'a {
    checks::registry()
        .iter()
        .copied()
        .filter(move |c| c.stage == stage && selected(c.id, filters))
}

/// The ids of [`stage_checks`].
pub fn stage_check_ids(stage: Stage, filters: &[String]) -> Vec<String> {
    stage_checks(stage, filters)
        .map(|c| c.id.to_string())
        .collect()
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
        call_deadline_ms: None,
        quarantined: Vec::new(),
        timing: None,
        fresh_everywhere: false,
        then: Vec::new(),
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
        replay: None,
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

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// How often a worker's stream is left to look at the run's [`Stop`].
pub(crate) const STOP_POLL: Duration = Duration::from_millis(100);

/// How a worker's stream ended.
#[derive(Default)]
enum Ending {
    /// The worker finished or died on its own (EOF on its stream).
    #[default]
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
/// the crash reproduced; true when it crashed again in a call it made (not a quarantined one).
fn rerun_crashed(unit: &Unit, rec: &mut ResultRecord, exec: Exec) -> bool {
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
            return r.actual != NOT_RUN;
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
    false
}

/// Starts a fresh worker for `n` instances of `unit` with no checks, one after the other as a
/// batch runs them ([`crate::batch`]): each loads a library instance no earlier one used,
/// initializes it and the unit's address space, and ends (the cost of `n` fresh library
/// instances). The instances set up (fewer when the batch ended early, as it does after an
/// instance that changed the process), or what stopped the first.
pub(crate) fn setup_only(unit: &Unit, exec: Exec, n: usize) -> Result<usize, String> {
    let bare = Unit {
        checks: Vec::new(),
        then: Vec::new(),
        ..unit.clone()
    };
    let batch = Unit {
        then: vec![bare.clone(); n.saturating_sub(1)],
        ..bare
    };
    let (mut child, _capture) = Process::start(exec.spawn, exec.keep_env, &batch)?;
    let mut done = 0;
    let mut failed = None;
    for l in child.stream(&batch) {
        match serde_json::from_str::<Event>(&l) {
            Ok(Event::Done) => done += 1,
            Ok(Event::LoadFailed { message }) => failed = Some(message),
            Ok(Event::HarnessFailed { failure }) => failed = Some(failure.to_string()),
            _ => {}
        }
    }
    let _ = child.wait();
    match failed {
        _ if done > 0 => Ok(done),
        Some(why) => Err(why),
        None => Err("the worker ended before setting up the target".to_string()),
    }
}

/// Runs one unit to the end, replacing workers that die; a stop ends it early with the checks
/// not reached reported as skipped.
pub(crate) fn run_unit(unit: &Unit, exec: Exec) -> UnitRun {
    UnitState::new(unit, exec).drive()
}

/// Up to 1 MiB of what a worker printed (its capture file) from offset `from` to `to` (none:
/// the end), as text. Positional reads: the offset the worker writes at, which its descriptor
/// shares with this one, is left alone.
pub(crate) fn captured(capture: &std::fs::File, from: u64, to: Option<u64>) -> String {
    use std::os::unix::fs::FileExt;
    let end = to.unwrap_or_else(|| capture.metadata().map_or(0, |m| m.len()));
    let want = usize::try_from(end.saturating_sub(from).min(1 << 20)).unwrap_or(0);
    let mut buf = vec![0u8; want];
    let mut got = 0;
    while got < want {
        match capture.read_at(&mut buf[got..], from + got as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    buf.truncate(got);
    String::from_utf8_lossy(&buf).into_owned()
}

impl<'u, 'a> UnitState<'u, 'a> {
    /// `unit` before any of its workers ran.
    pub(crate) fn new(unit: &'u Unit, exec: Exec<'a>) -> Self {
        UnitState {
            unit,
            exec,
            out: UnitRun::default(),
            remaining: unit.checks.clone(),
            carried: unit.carried.clone(),
            culprit: None,
            printed_from: 0,
        }
    }

    /// Where the unit's part of its worker's capture file begins (a batch's later unit starts
    /// where the worker said the earlier one ended).
    pub(crate) fn printed_from(&mut self, at: u64) {
        self.printed_from = at;
    }

    /// The unit as its next worker runs it: the checks not run yet, what earlier workers saw,
    /// the run's per-call deadline and the library's quarantine as it stands.
    pub(crate) fn next_worker_unit(&self) -> Unit {
        let mut u = self.unit.clone();
        u.checks = self.remaining.clone();
        u.carried = self.carried.clone();
        u.call_deadline_ms = self
            .exec
            .call_deadline
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        u.quarantined = self.exec.quarantine.active(&self.unit.path);
        u
    }

    /// Runs the checks not run yet to the end, a fresh worker at a time.
    pub(crate) fn drive(mut self) -> UnitRun {
        while !self.remaining.is_empty() {
            if let Some(why) = self.exec.stop.reason() {
                self.all(Outcome::Skip, "", "", &format!("not reached: {why}"));
                return self.out;
            }
            let u = self.next_worker_unit();
            let began = crate::phases::thread_cpu();
            let started = Process::start(self.exec.spawn, self.exec.keep_env, &u);
            let start = crate::phases::thread_cpu().saturating_sub(began);
            crate::phases::add(crate::phases::Phase::Start, start);
            let (mut child, capture) = match started {
                Ok(started) => started,
                Err(detail) => {
                    self.all(Outcome::HarnessError, "", "", &detail);
                    return self.out;
                }
            };
            // A worker of its own: all it prints is the unit's.
            self.printed_from = 0;
            let mut rx = child.stream(&u);
            let mut w = self.watch(&mut child, &mut rx, false);
            let status = child.wait().ok();
            let handling = crate::phases::thread_cpu().saturating_sub(began + start);
            crate::phases::add(crate::phases::Phase::Supervise, handling);
            if self.ended(&mut w, status, &capture) == Next::Finish {
                return self.out;
            }
        }
        self.out
    }

    /// Books how a worker ended, with what it printed (`capture`).
    pub(crate) fn ended(
        &mut self,
        w: &mut Worker,
        status: Option<std::process::ExitStatus>,
        capture: &std::fs::File,
    ) -> Next {
        let stderr_text = captured(capture, self.printed_from, None);
        self.out.output.push_str(&stderr_text);
        self.worker_ended(w, status, &stderr_text)
    }

    /// Takes what the unit printed in its worker's capture file, up to `to` (where the worker
    /// said the unit ended), as its output (a batch's unit that ended cleanly, as a lone unit's
    /// worker's whole output would be).
    pub(crate) fn took_output(&mut self, capture: &std::fs::File, to: Option<u64>) {
        self.out.output = captured(capture, self.printed_from, to);
    }

    /// True when the unit needs no further worker: its library failed to load, the harness
    /// failed, or every check has its result.
    pub(crate) fn complete(&self) -> bool {
        self.out.load_failed.is_some()
            || self.out.harness_failed.is_some()
            || self.remaining.is_empty()
    }

    /// True when no worker has said anything of the unit yet.
    pub(crate) fn unstarted(&self) -> bool {
        self.out.loaded.is_none()
            && self.out.load_failed.is_none()
            && self.out.harness_failed.is_none()
            && self.out.records.is_empty()
    }

    /// What the unit's workers gave.
    pub(crate) fn finish(self) -> UnitRun {
        self.out
    }
}

/// A unit in progress: what its workers answered so far and the checks still to run.
pub(crate) struct UnitState<'u, 'a> {
    unit: &'u Unit,
    exec: Exec<'a>,
    out: UnitRun,
    remaining: Vec<String>,
    /// What replaced workers of this unit saw, for the contract checks of the next one.
    carried: Contract,
    /// The entry point the last worker hung or crashed in, until the check is booked.
    culprit: Option<String>,
    /// Where the unit's part of the current worker's capture file begins.
    printed_from: u64,
}

/// What one worker of a unit did: how it ended, the check it was running, whether it said done,
/// and the call it hung in (entry point, call) or the entry point it crashed in.
#[derive(Default)]
pub(crate) struct Worker {
    ending: Ending,
    in_flight: Option<String>,
    pub(crate) done: bool,
    hung: Option<(String, String)>,
    /// The entry point a fatal signal hit in, and whether a C++ exception escaped from it.
    crashed_in: Option<(String, bool)>,
    /// How much of the capture file the worker had written when the unit ended (`Spent`).
    pub(crate) printed: Option<u64>,
}

impl Worker {
    /// True when the worker ended (or timed out) without a word of the unit: no event, no call
    /// in flight.
    pub(crate) fn silent(&self) -> bool {
        !matches!(self.ending, Ending::Stopped(_))
            && self.in_flight.is_none()
            && !self.done
            && self.hung.is_none()
            && self.crashed_in.is_none()
    }
}

/// Whether a unit goes on with a fresh worker after one ended.
#[derive(PartialEq, Eq)]
pub(crate) enum Next {
    Replace,
    Finish,
}

/// A per-call deadline in words: `3s`, `500ms`.
fn seconds(d: Option<Duration>) -> String {
    match d {
        Some(d) if d.subsec_millis() == 0 => format!("{}s", d.as_secs()),
        Some(d) => format!("{}ms", d.as_millis()),
        None => "the deadline".into(),
    }
}

impl UnitState<'_, '_> {
    /// Books the entry point a check hung in, or crashed in `reproduced`ly (a crash re-run alone
    /// crashed again; without re-runs, as in the property phase, no crash counts), for the
    /// quarantine, when the check calls with well-formed input.
    fn book_culprit(&mut self, rec: &ResultRecord, reproduced: bool) {
        let Some(ep) = self.culprit.take() else {
            return;
        };
        let cause = match rec.outcome {
            Outcome::Timeout => Cause::Hang,
            Outcome::Crash if reproduced => Cause::Crash,
            _ => return,
        };
        if checks::find(&rec.check).is_some_and(|c| c.input == checks::Input::WellFormed) {
            let first = format!("{} on {}: {}", rec.check, rec.place(), rec.actual);
            let place = rec.place();
            let at = Where {
                check: &rec.check,
                unit: &place,
            };
            let lib = &self.unit.path;
            self.exec.quarantine.note(lib, &ep, cause, at, first);
        }
    }

    /// Records every remaining check with the same outcome.
    pub(crate) fn all(&mut self, outcome: Outcome, expected: &str, actual: &str, detail: &str) {
        let remaining = self.remaining.clone();
        record_all(
            &mut self.out,
            self.unit,
            &remaining,
            outcome,
            expected,
            actual,
            detail,
        );
    }

    /// Takes one worker's events until it ends, times out or the run is stopped, or, with
    /// `until_done`, until it says the unit is done (a batch's worker goes on to its next unit).
    pub(crate) fn watch(
        &mut self,
        child: &mut Process,
        rx: &mut Events,
        until_done: bool,
    ) -> Worker {
        let mut w = Worker::default();
        let mut deadline = Instant::now() + self.exec.timeout;
        w.ending = loop {
            if let Some(why) = self.exec.stop.reason() {
                child.stop();
                break Ending::Stopped(why);
            }
            let now = Instant::now();
            if now >= deadline {
                child.stop();
                break Ending::TimedOut;
            }
            match rx.recv_timeout((deadline - now).min(STOP_POLL)) {
                Ok(l) => {
                    self.event(&l, &mut w, &mut deadline);
                    if until_done && w.done {
                        break Ending::Closed;
                    }
                }
                Err(NoLine::Timeout) => {}
                Err(NoLine::Ended) => break Ending::Closed,
            }
        };
        w
    }

    /// One line of a worker's event stream.
    fn event(&mut self, l: &str, w: &mut Worker, deadline: &mut Instant) {
        match serde_json::from_str::<Event>(l) {
            Ok(Event::Start { check }) => {
                *deadline = Instant::now() + self.exec.timeout;
                w.in_flight = Some(check);
            }
            Ok(Event::Result {
                check,
                outcome,
                expected,
                actual,
                detail,
                contract,
            }) => {
                self.carried.extend(contract);
                let r = record(self.unit, &check, outcome, &expected, actual, detail);
                self.out.records.push(r);
                self.remaining.retain(|c| *c != check);
                w.in_flight = None;
            }
            Ok(e @ Event::Loaded { .. }) => {
                self.out.loaded.get_or_insert(e);
                *deadline = Instant::now() + self.exec.timeout;
            }
            Ok(Event::LoadFailed { message }) => self.out.load_failed = Some(message),
            Ok(Event::HarnessFailed { failure }) => self.out.harness_failed = Some(failure),
            Ok(Event::Done) => w.done = true,
            Ok(Event::Spent { phases, printed }) => {
                crate::phases::absorb(&phases);
                w.printed = Some(printed);
            }
            Ok(Event::Answer { .. }) => {}
            Ok(Event::CallHung {
                entry_point, call, ..
            }) => w.hung = Some((entry_point, call)),
            Ok(Event::CrashedIn {
                entry_point,
                exception,
            }) => w.crashed_in = Some((entry_point, exception)),
            Err(e) => self
                .out
                .output
                .push_str(&format!("unparsable worker line ({e}): {l}\n")),
        }
    }

    /// Books how a worker ended: a load or harness failure ends the unit, a stop skips what is
    /// left, a crash or timeout is the check in flight's (or, outside any check, every remaining
    /// check's, ending the unit).
    fn worker_ended(
        &mut self,
        w: &mut Worker,
        status: Option<std::process::ExitStatus>,
        stderr_text: &str,
    ) -> Next {
        if let Some(msg) = self.out.load_failed.clone() {
            self.all(
                Outcome::HarnessError,
                "the library loads",
                "load failed",
                &msg,
            );
            return Next::Finish;
        }
        if let Some(failure) = &self.out.harness_failed {
            // The harness's failure, not the library's: no crash, whatever the exit.
            let detail = format!("harness: {failure}");
            self.all(
                Outcome::HarnessError,
                "the harness sets the unit up",
                "",
                &detail,
            );
            return Next::Finish;
        }
        if w.done && self.remaining.is_empty() {
            return Next::Finish;
        }
        let how = match &w.ending {
            Ending::Stopped(why) => {
                if let Some(check) = w.in_flight.take() {
                    let detail = format!("interrupted while running: {why}");
                    let r = record(self.unit, &check, Outcome::Skip, "", String::new(), detail);
                    self.out.records.push(r);
                    self.remaining.retain(|c| *c != check);
                }
                self.all(Outcome::Skip, "", "", &format!("not reached: {why}"));
                return Next::Finish;
            }
            Ending::TimedOut => format!(
                "no answer within {}s (stopped with SIGTERM, then SIGKILL)",
                self.exec.timeout.as_secs()
            ),
            Ending::Closed => match (&w.hung, &w.crashed_in) {
                (Some((_, call)), _) => format!(
                    "{call} did not return within {} (the per-call deadline, --call-timeout); \
                     the worker was ended",
                    seconds(self.exec.call_deadline)
                ),
                (None, Some((ep, false))) => format!(
                    "{} in {ep}",
                    status.map_or_else(|| "worker vanished".into(), describe_exit)
                ),
                (None, Some((ep, true))) => format!(
                    "a C++ exception escaped from {ep}, a C entry point: no tool can catch it, \
                     and the process aborts (SIGABRT)"
                ),
                (None, None) => status.map_or_else(|| "worker vanished".into(), describe_exit),
            },
        };
        let outcome = match (&w.ending, &w.hung) {
            (Ending::TimedOut, _) | (_, Some(_)) => Outcome::Timeout,
            _ => Outcome::Crash,
        };
        let culprit =
            (w.hung.as_ref().map(|(ep, _)| ep)).or(w.crashed_in.as_ref().map(|(ep, _)| ep));
        self.culprit = culprit.cloned();
        let last = match tail(stderr_text, 3) {
            t if t.trim().is_empty() => "the worker printed nothing".to_string(),
            t => format!("worker output: {t}"),
        };
        self.died(w.in_flight.take(), outcome, how, last)
    }

    /// A worker that crashed or timed out: in a check (re-run alone when it crashed), or outside
    /// any check (loading, setup), when nothing further can run in this unit.
    fn died(
        &mut self,
        in_flight: Option<String>,
        outcome: Outcome,
        how: String,
        last: String,
    ) -> Next {
        let Some(check) = in_flight else {
            let actual = format!("worker {how} before the check");
            let when = if self.out.loaded.is_none() {
                "while loading the library"
            } else {
                "during target setup"
            };
            self.out.died_loading = self.out.loaded.is_none();
            self.all(
                outcome,
                "the check runs",
                &actual,
                &format!("{when}; {last}"),
            );
            return Next::Finish;
        };
        let mut rec = record(self.unit, &check, outcome, "the check completes", how, last);
        let reproduced = outcome == Outcome::Crash
            && self.exec.rerun_crashes
            && rerun_crashed(self.unit, &mut rec, self.exec);
        self.book_culprit(&rec, reproduced);
        self.out.records.push(rec);
        self.remaining.retain(|c| *c != check);
        Next::Replace
    }
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
