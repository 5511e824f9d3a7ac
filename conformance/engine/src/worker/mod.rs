//! The worker: runs the checks of one unit in this (fresh) process and streams one JSON line per
//! event to the supervisor. The vendor library is loaded only here.
//!
//! Protocol: the unit arrives as JSON on stdin (a socket the worker never writes to, so it reads
//! as closed on the supervisor's side once the worker ends); results go to the original stdout
//! (a file the supervisor follows, one `write` per event), which the worker keeps as a private
//! descriptor before pointing fd 1 at stderr, so that anything the library prints lands in the
//! captured stderr instead of corrupting the result stream.

use crate::phases::{self, Phase};
use crate::real::RealTarget;
use ompd_abi::EntryPoint;
use ompd_checks::{self as checks, Ctx, Profile, Setup, Stage};
use ompd_loader::library::{watch, Library, LoadOptions};
use ompd_serve::arch::Arch;
use ompd_serve::callbacks;
use ompd_serve::source::Source;
use serde::{Deserialize, Serialize};
use sim_target::layout::Policy;
use std::io::BufRead;
use std::path::PathBuf;

mod batch;
mod panics;
mod probes;
mod scenario;
mod stream;
mod target;

use batch::run_batch;
pub use scenario::{Scenario, ScenarioName};
pub use stream::Emit;
use stream::Stream;
pub use target::{hand_over, key, keys, prelower};
use target::{prepare, set_up_target, Prepared};

/// Set this environment variable to make workers print every callback event to stderr.
pub const TRACE_ENV: &str = "OMPD_CONFORM_TRACE";

/// What a worker runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// Library name for reports.
    pub library: String,
    /// Library path.
    pub path: PathBuf,
    /// Dependencies to preload.
    pub preload: Vec<PathBuf>,
    /// Preload the C++ runtime.
    pub needs_cxx_runtime: bool,
    /// Which stage's checks to run: library or target (static checks are judged from the file,
    /// never in a worker).
    pub stage: Stage,
    /// Also record the answer-snapshot probes (`crate::snapshot`) after the checks, against the
    /// unit's target: answers are recorded, never judged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub snapshot: bool,
    /// What the checks run against.
    pub target: Target,
    /// Check ids to run, in order.
    pub checks: Vec<String>,
    /// What earlier workers of this unit saw for the unit's contract checks.
    #[serde(default, skip_serializing_if = "Contract::is_empty")]
    pub carried: Contract,
    /// How long one call into the library may take before the worker's watchdog ends it, in
    /// milliseconds (none: no watchdog; the supervisor's per-check timeout still applies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_deadline_ms: Option<u64>,
    /// Entry points not to call (they hung or crashed in earlier checks of the library): a
    /// check that would call one is reported as the entry says, without its verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quarantined: Vec<Quarantined>,
    /// Time this query set against the target after the checks (`cargo xtask bench`'s scaling
    /// figures), streamed as answers: measured, never judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<crate::timing::Probe>,
    /// The checks that load fresh copies of the library run on this unit too, not only on the
    /// one unit of each library they run on by default (`RunOptions::fresh_everywhere`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh_everywhere: bool,
    /// More units the same worker runs after this one, in order ([`Unit::then_units`]), each
    /// against a library instance no earlier unit used: a batch (generated cases, a shrinking
    /// round's candidates) without a fork per unit. Each unit's events end with its own
    /// [`Event::Done`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<Unit>,
}

impl Unit {
    /// This unit, then each unit of [`Unit::then`], none with further units of its own.
    pub fn then_units(mut self) -> impl Iterator<Item = Unit> {
        let rest = std::mem::take(&mut self.then);
        std::iter::once(self).chain(rest.into_iter().map(|u| Unit {
            then: Vec::new(),
            ..u
        }))
    }
}

/// An entry point a unit must not call, and what a check that would call it reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quarantined {
    /// The entry point's name.
    pub entry_point: String,
    /// The outcome reported: `timeout` after hangs, `crash` after crashes.
    pub outcome: ompd_report::Outcome,
    /// The detail reported ("not run: … hung in N earlier checks (first: …)").
    pub note: String,
}

/// What a unit's checks run against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// No target: the library-level checks, reported against the host variant (scenario `none`,
    /// `lp64-le`, `natural`).
    Host,
    /// The simulated target: a scenario's model lowered for an arch under a layout policy.
    Simulated {
        /// The runtime state.
        scenario: Scenario,
        /// The arch variant.
        arch: Arch,
        /// The layout policy.
        layout: Policy,
    },
    /// A real target (a live process or a core file), whose own arch and runtime the report
    /// names.
    Real {
        /// What the worker opens.
        target: RealTarget,
        /// What the report says of it (kind, fixture, runtime, build, pid or core file).
        info: ompd_report::RealTargetInfo,
        /// The fixture's environment (empty for a process the harness did not start).
        #[serde(default)]
        env: Vec<(String, String)>,
        /// The breakpoint stop the process is at, in a breakpoint tour.
        #[serde(default)]
        stop: Option<Box<ompd_checks::known::BpStop>>,
    },
}

impl Target {
    /// The scenario reports name the unit by: the simulated scenario's name, `none` for the
    /// host, a real target's fixture scenario (or `attached`).
    pub fn scenario_name(&self) -> &str {
        match self {
            Target::Host => ompd_report::HOST_SCENARIO,
            Target::Simulated { scenario, .. } => scenario.name(),
            Target::Real { info, .. } => info.fixture.as_deref().unwrap_or(ompd_report::ATTACHED),
        }
    }

    /// The target's arch variant (the host's for library-level checks).
    pub fn arch(&self) -> Arch {
        match self {
            Target::Host => Arch::LP64_LE,
            Target::Simulated { arch, .. } => *arch,
            Target::Real { target, .. } => target.arch(),
        }
    }

    /// The layout policy of a simulated target (`natural` for the host); none on a real one.
    pub fn layout(&self) -> Option<Policy> {
        match self {
            Target::Host => Some(Policy::Natural),
            Target::Simulated { layout, .. } => Some(*layout),
            Target::Real { .. } => None,
        }
    }

    /// The kind reports name: `sim`, `live` or `core`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Target::Host | Target::Simulated { .. } => ompd_report::TARGET_SIM,
            Target::Real { target, .. } => target.kind().name(),
        }
    }
}

/// Facts the unit's contract checks judge over all of its checks: what the library printed and
/// the callback contract violations it committed, each with the check in flight. A worker
/// replaced after a crash or timeout takes its ledger and output with it, so each result
/// reports its check's facts and the supervisor hands them to the next worker of the unit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contract {
    /// Output on stdout/stderr: (check id, first bytes).
    #[serde(default)]
    pub printed: Vec<(String, String)>,
    /// Callback contract violations still recorded after the check: (check id, violation).
    #[serde(default)]
    pub violations: Vec<(String, ompd_serve::ledger::Carried)>,
}

impl Contract {
    /// True when nothing was seen.
    pub fn is_empty(&self) -> bool {
        self.printed.is_empty() && self.violations.is_empty()
    }

    /// Adds the facts of `other` after these.
    pub fn extend(&mut self, other: Contract) {
        self.printed.extend(other.printed);
        self.violations.extend(other.violations);
    }
}

/// One line of the result stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The library loaded.
    Loaded {
        /// Exported entry points.
        entry_points: Vec<String>,
        /// Loader diagnostics.
        diagnostics: Vec<String>,
        /// API version, if it answered.
        api_version: Option<i64>,
        /// Version string, if it answered.
        version_string: Option<String>,
        /// The API generation detected, which decides the checks that apply.
        profile: Profile,
    },
    /// The library could not be loaded.
    LoadFailed {
        /// The loader's message with our diagnosis.
        message: String,
    },
    /// A check is about to run.
    Start {
        /// Check id.
        check: String,
    },
    /// A check finished.
    Result {
        /// Check id.
        check: String,
        /// Outcome.
        outcome: ompd_report::Outcome,
        /// Expected.
        expected: String,
        /// Actual.
        actual: String,
        /// Detail.
        detail: String,
        /// What the check's calls printed and violated (for the unit's contract checks).
        #[serde(default, skip_serializing_if = "Contract::is_empty")]
        contract: Contract,
    },
    /// One recorded answer of the snapshot probes (snapshot stage only).
    Answer {
        /// Path of the answer within the unit (`thread[2]/state`).
        path: String,
        /// The answer, with run-specific values redacted.
        value: String,
    },
    /// A call into the library ran past the per-call deadline; the worker's watchdog ends the
    /// worker right after this event.
    CallHung {
        /// The entry point.
        entry_point: String,
        /// The call with its arguments (`ompd_x(handle=0x…, kind=3)`).
        call: String,
        /// How long it had run.
        after_ms: u64,
    },
    /// A fatal signal hit while this entry point was in flight; the signal ends the worker right
    /// after this event.
    CrashedIn {
        /// The entry point.
        entry_point: String,
        /// The process aborts because a C++ exception escaped from the entry point.
        #[serde(default)]
        exception: bool,
    },
    /// The harness could not go on with the unit, for a reason that says nothing about the
    /// library: the checks not run yet are harness errors naming `failure`.
    HarnessFailed {
        /// What the harness could not do.
        failure: HarnessFailure,
    },
    /// Where the worker's time went ([`crate::phases`]), just before [`Event::Done`].
    Spent {
        /// Nanoseconds per phase.
        phases: Vec<(crate::phases::Phase, u64)>,
        /// Bytes of the capture file written by the end of the unit: what a batch's next unit
        /// prints starts there.
        #[serde(default)]
        printed: u64,
    },
    /// Every check ran.
    Done,
}

/// Why a worker could not run (the rest of) its unit: a failure of the harness, never a finding
/// against the library.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "cause", content = "message", rename_all = "kebab-case")]
pub enum HarnessFailure {
    /// The unit did not arrive, or is not a unit (which includes naming a scenario the worker
    /// does not know).
    #[error("the worker got no valid unit: {0}")]
    MalformedUnit(String),
    /// The unit names a check the worker does not know.
    #[error("unknown check {0}")]
    UnknownCheck(String),
    /// The scenario's model cannot be lowered to a simulated target image.
    #[error("cannot lower the scenario: {0}")]
    Unlowerable(String),
    /// The real target (process, core file) cannot be opened or its fixture's truth read.
    #[error("cannot open the real target: {0}")]
    TargetUnavailable(String),
}

/// Environment variables a worker always gets, when set: the search path and the trace switch.
const WORKER_ENV: &[&str] = &["PATH", TRACE_ENV];

/// Clears `cmd`'s environment but for [`WORKER_ENV`] and `keep_env`, and puts it in a process
/// group of its own (a Ctrl-C at the terminal reaches the supervisor, which stops its workers
/// itself). Workers get the heap watch's shim preloaded ([`crate::heapwatch`]).
pub(crate) fn scrub(cmd: &mut std::process::Command, keep_env: &[String]) {
    use std::os::unix::process::CommandExt;
    cmd.env_clear().process_group(0);
    for name in WORKER_ENV
        .iter()
        .copied()
        .chain(keep_env.iter().map(String::as_str))
    {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    let kept = keep_env
        .iter()
        .any(|n| n == "LD_PRELOAD")
        .then(|| std::env::var_os("LD_PRELOAD"))
        .flatten();
    crate::heapwatch::arrange(cmd, kept);
}

/// Turns off core dumps for this process and its forks: a library crashing a worker is a
/// result the supervisor reads from the exit status, and with `ulimit -c unlimited` (or a
/// core-dump service) every such crash would write a core file, in the user's directory or
/// the system journal, and take twice the time of a run without. Only the soft limit goes:
/// the hard one stays the user's.
pub(crate) fn no_core_dumps() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_CORE) {
        let _ = setrlimit(Resource::RLIMIT_CORE, 0, hard);
    }
}

/// Runs the unit read from stdin. Returns the process exit code.
pub fn main() -> i32 {
    no_core_dumps();
    // The supervisor blocks SIGINT/SIGTERM (a stop request is its to handle) and the mask is
    // inherited: a worker must die of them again. It must also never outlive its supervisor.
    let _ = nix::sys::signal::SigSet::all().thread_unblock();
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
    panics::install_hook();
    // Never closed by the worker (the process's end closes it): a library that closed the
    // number would otherwise make its drop abort the worker.
    let results = match nix::unistd::dup(std::io::stdout()) {
        Ok(fd) => std::mem::ManuallyDrop::new(std::fs::File::from(fd)),
        Err(e) => {
            eprintln!("worker: cannot duplicate stdout: {e}");
            return 1;
        }
    };
    if let Err(e) = nix::unistd::dup2_stdout(std::io::stderr()) {
        eprintln!("worker: cannot redirect stdout: {e}");
        return 1;
    }
    let events_fd = std::os::fd::AsRawFd::as_raw_fd(&*results);
    // A library that closes a descriptor it does not own must not silence the worker.
    probes::descriptors::keep_backups(&[events_fd, 1, 2]);
    let mut input = String::new();
    let unit = std::io::stdin()
        .lock()
        .read_line(&mut input)
        .map_err(|e| format!("cannot read it: {e}"))
        .and_then(|_| serde_json::from_str::<Unit>(&input).map_err(|e| e.to_string()));
    let failed = match unit {
        Ok(unit) => {
            let deadline = unit.call_deadline_ms.map(std::time::Duration::from_millis);
            let by_watchdog = crate::watchdog::install(events_fd, deadline);
            let mut emit = stream(&results, by_watchdog);
            let ran = run_batch(unit, &mut emit);
            ompd_loader::library::release_fresh_directories();
            ran
        }
        Err(e) => Err(HarnessFailure::MalformedUnit(e)),
    };
    match failed {
        Ok(()) => 0,
        Err(failure) => {
            eprintln!("worker: {failure}");
            stream(&results, false).emit(&Event::HarnessFailed { failure });
            1
        }
    }
}

/// The worker's result stream on `results`; the watchdog sends its pending events when
/// `by_watchdog`.
fn stream(results: &std::fs::File, by_watchdog: bool) -> Stream<&std::fs::File> {
    Stream {
        out: results,
        outbox: &crate::outbox::OUTBOX,
        by_watchdog,
    }
}

/// Bytes written so far to this process's stderr (where stdout also goes), when the supervisor
/// made it a regular file; 0 otherwise.
fn captured_len() -> u64 {
    nix::sys::stat::fstat(std::io::stderr())
        .ok()
        .filter(|st| st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFREG)
        .map(|st| st.st_size as u64)
        .unwrap_or(0)
}

/// The captured output between two offsets (lossy UTF-8).
fn captured_range(from: u64, to: u64) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let fd = nix::unistd::dup(std::io::stderr()).ok()?;
    let f = std::fs::File::from(fd);
    let mut buf = vec![0u8; usize::try_from((to - from).min(4096)).ok()?];
    // Positional read: the shared write offset of fds 1 and 2 is left alone.
    let n = f.read_at(&mut buf, from).ok()?;
    buf.truncate(n);
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Loads the unit's library and reports it (`Loaded`, or `LoadFailed` and `None`), after the
/// version queries a debugger makes first. Each unit of a worker gets an instance no earlier
/// unit used ([`Library::load_unused`]).
fn load(unit: &Unit, emit: &mut dyn Emit) -> Option<(Library, Profile)> {
    let lib = match Library::load_unused(
        &unit.path,
        &LoadOptions {
            preload: unit.preload.clone(),
            needs_cxx_runtime: unit.needs_cxx_runtime,
        },
    ) {
        Ok(l) => l,
        Err(e) => {
            emit.emit(&Event::LoadFailed {
                message: e.to_string(),
            });
            return None;
        }
    };
    let api_version = lib.get_api_version().ok();
    let version_string = lib.get_version_string().ok().map(|s| s.text);
    let exported = lib.api.exported();
    let profile = checks::profile::detect(&exported, api_version);
    emit.emit(&Event::Loaded {
        entry_points: exported.iter().map(|e| e.name().to_string()).collect(),
        diagnostics: lib.diagnostics.clone(),
        api_version,
        version_string,
        profile,
    });
    Some((lib, profile))
}

/// True when the library exports a routine the check calls that is newer than the library's
/// profile: a requirement of that newer generation then applies to it (Intel's libraries report
/// 201811 and export the 5.2 device routines). Never for a pre-5.0 library: its routines share
/// names with the 5.x ones, not their forms.
fn exports_newer(check: &checks::Check, ctx: &Ctx) -> bool {
    ctx.profile >= Profile::V5_0
        && check
            .entry_points
            .iter()
            .any(|e| e.introduced() > ctx.profile && ctx.lib.api.has(*e))
}

/// The skip of a check that does not apply to this library or target, decided before any call.
fn not_called(check: &checks::Check, ctx: &Ctx, prepared: &Prepared) -> Option<checks::Verdict> {
    let not_here = prepared
        .real
        .as_ref()
        .and_then(|source| crate::real::applies(check, &prepared.known, source.kind()).err());
    if check.since > ctx.profile && !exports_newer(check, ctx) {
        Some(checks::Verdict::skip(format!(
            "a requirement of {}; the library implements {}",
            check.since, ctx.profile
        )))
    } else if let Some(why) = not_here {
        Some(checks::Verdict::skip(why))
    } else if let Some(ep) = check.older_form(ctx.profile) {
        Some(checks::Verdict::skip(format!(
            "{} declares {ep} with another form, which the check does not call",
            ctx.profile
        )))
    } else {
        // What a library exports is judged by the inventory checks against the profile it
        // claims; a check that needs a routine it lacks judges nothing.
        let ep = check
            .entry_points
            .iter()
            .find(|e| !ctx.lib.api.serves(**e))?;
        Some(checks::Verdict::skip(format!("{ep} is not exported")))
    }
}

/// Runs one check and gathers what its calls printed (from offset `printed` of the capture
/// file, which it moves on), what they changed in the process (against `probe`, which it moves
/// on) and the contract violations they committed; its check and probe time are lapped in
/// `window`.
fn run_check(
    id: &str,
    check: &checks::Check,
    ctx: &mut Ctx,
    prepared: &Prepared,
    (printed, probe, window): (&mut u64, &mut probes::Probe, &mut phases::Window),
) -> (checks::Verdict, Contract) {
    ctx.severity = check.severity.at(ctx.profile);
    ctx.cites = check.requirements;
    if let Some(skip) = not_called(check, ctx, prepared) {
        // Nothing of the library ran: there is nothing to probe, capture or take.
        return (skip, Contract::default());
    }
    let mut laps = window.laps();
    if probes::judges_process(id) {
        *probe = probes::before_judged(probe, id);
        laps.lap(Phase::Probes);
    }
    let violations_before = callbacks::ledger().violations().len();
    let v = {
        let _g = callbacks::enter("harness");
        match check.run {
            checks::Run::Worker(run) => panics::caught(|| run(ctx, check.arg)),
            checks::Run::File(_) => checks::Verdict::harness_error(
                "a file-judged check reached a worker: the supervisor judges it",
            ),
        }
    };
    laps.lap(Phase::Checks);
    // Before anything is read or written: a descriptor of the worker's that the library closed
    // is restored here.
    *probe = probes::compare(probe, id);
    laps.lap(Phase::Probes);
    // What the library printed with C stdio may still sit in a buffer.
    ompd_loader::library::flush_c_stdio();
    let mut contract = Contract::default();
    let now = captured_len();
    if now > *printed {
        if let Some(text) = captured_range(*printed, now) {
            ctx.printed.push((id.to_string(), text.clone()));
            contract.printed.push((id.to_string(), text));
        }
        *printed = now;
    }
    // Checks take the violations they provoke on purpose; the rest are the unit's.
    let mut ledger = callbacks::ledger();
    if !tracing() {
        ledger.forget_events();
    }
    let recorded = ledger.violations();
    contract.violations = recorded[violations_before.min(recorded.len())..]
        .iter()
        .map(|v| (id.to_string(), v.carried()))
        .collect();
    (v, contract)
}

/// Whether [`TRACE_ENV`] is set (read once: asked after every check).
fn tracing() -> bool {
    static TRACING: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACING.get_or_init(|| std::env::var_os(TRACE_ENV).is_some())
}

/// Debugging aid ([`TRACE_ENV`]): every callback the library made, with the entry point in
/// flight, and the busiest single call, to size the callback budget from data.
fn trace_callbacks() {
    let l = callbacks::ledger();
    for (site, e) in l.events() {
        eprintln!("trace {site}: {e:?}");
    }
    let (peak, site) = l.peak_call();
    eprintln!(
        "trace peak: {peak} target-access callbacks in one call of {site} (budget {:?})",
        l.budget()
    );
}

/// The unit's quarantined entry points, by the loader's table.
fn quarantined_entry_points(unit: &Unit) -> Result<Vec<EntryPoint>, HarnessFailure> {
    unit.quarantined
        .iter()
        .map(|q| {
            EntryPoint::from_name(&q.entry_point).ok_or_else(|| {
                HarnessFailure::MalformedUnit(format!(
                    "quarantined entry point {} is unknown",
                    q.entry_point
                ))
            })
        })
        .collect()
}

/// The `actual` of a check not run because it would have called a quarantined entry point.
pub const NOT_RUN: &str = "not run";

/// The verdict of a check that would have called the quarantined `ep`: not run, as the unit's
/// quarantine entry says.
fn quarantined_verdict(unit: &Unit, ep: EntryPoint) -> checks::Verdict {
    match unit.quarantined.iter().find(|q| q.entry_point == ep.name()) {
        Some(q) => checks::Verdict::new(q.outcome, "the check completes", NOT_RUN, &q.note),
        None => checks::Verdict::harness_error(format!("{ep} was refused but not quarantined")),
    }
}

/// Streams the unit's recorded answers after its checks: the snapshot probes and the timing
/// probe it asks for. False when the stream is gone.
fn answers(unit: &Unit, ctx: &Ctx, emit: &mut dyn Emit) -> bool {
    let snapshot = unit.snapshot.then(|| crate::snapshot::probe(ctx));
    let timing = unit.timing.map(|probe| crate::timing::run(ctx, probe));
    snapshot
        .into_iter()
        .chain(timing)
        .flatten()
        .all(|(path, value)| emit.emit(&Event::Answer { path, value }))
}

/// The checks' context for `unit`, before its target is set up.
fn new_ctx<'l>(
    unit: &'l Unit,
    lib: &'l Library,
    profile: Profile,
    prepared: &'l Prepared,
) -> Ctx<'l> {
    Ctx {
        lib,
        scenario: unit.target.scenario_name(),
        model: &prepared.model,
        arch: prepared.arch,
        policy: prepared.policy,
        target: None,
        aspace: None,
        setup: Setup::default(),
        severity: checks::Severity::Must,
        cites: &[],
        profile,
        printed: unit.carried.printed.clone(),
        earlier_violations: unit.carried.violations.clone(),
        icv_table: Default::default(),
        compare_tables: Default::default(),
        known: prepared.known.clone(),
        library: &unit.library,
        runtime: match &unit.target {
            Target::Real { info, .. } => info.runtime.as_deref(),
            _ => None,
        },
        fresh_everywhere: unit.fresh_everywhere,
    }
}

/// Runs `unit`, calling `emit` for each event (the worker streams them; tests collect them). A
/// harness failure ends the unit early; the caller reports it (as [`Event::HarnessFailed`]).
pub fn run_unit(unit: &Unit, emit: &mut dyn Emit) -> Result<(), HarnessFailure> {
    // What an earlier unit of this process recorded is not this unit's.
    callbacks::fresh_ledger();
    watch::quarantine(quarantined_entry_points(unit)?);
    let before_load = phases::timed(Phase::Probes, probes::take);
    let Some((lib, profile)) = phases::timed(Phase::Load, || load(unit, emit)) else {
        return Ok(());
    };
    phases::timed(Phase::Probes, || {
        probes::compare(&before_load, "loading the library")
    });
    // Why it cannot be armed is the no_direct_heap check's to say (it skips with the reason).
    // Arming starts the counts afresh: an earlier unit's (a batch's, or the bench's in-process
    // runs) are not this unit's.
    let _ = lib.watch_heap();
    // A real target is opened first: its truth is the model (attaching starts the tracer's
    // thread, so the probe is read again after it).
    let mut prepared = phases::timed(Phase::Lower, || prepare(unit))?;
    let mut probe = phases::timed(Phase::Probes, probes::take);
    let image = prepared.image.take();
    let mut ctx = new_ctx(unit, &lib, profile, &prepared);
    // A TR-era library has another ompd_initialize signature: the target is set up through its
    // TR form when it exports one, never through the 5.x form.
    let initializable = profile >= Profile::V5_0 || lib.tr.initialize.is_some();
    if unit.stage == Stage::Target && initializable {
        set_up_target(&mut ctx, &prepared, image)?;
        probe = phases::timed(Phase::Probes, || {
            probes::compare(&probe, "initializing the library and the address space")
        });
    }
    // A quarantined call refused while loading or setting up leaves nothing to judge.
    let setup_blocked = watch::take_blocked();
    ompd_loader::library::flush_c_stdio();
    let printed = captured_len();
    if !run_checks(
        unit,
        &mut ctx,
        &prepared,
        (printed, probe),
        setup_blocked,
        emit,
    )? {
        return Ok(());
    }
    if !answers(unit, &ctx, emit) {
        return Ok(());
    }
    // Release the address space before finalizing, as a tool must.
    drop(ctx.aspace.take());
    if tracing() {
        trace_callbacks();
    }
    ompd_loader::library::flush_c_stdio();
    emit.emit(&Event::Spent {
        phases: phases::worker_tally(),
        printed: captured_len(),
    });
    emit.emit(&Event::Done);
    Ok(())
}

/// Runs the unit's checks of its stage, emitting a start and a result for each. `Ok(false)` when
/// the supervisor asked to stop; a quarantined call refused while setting up (`setup_blocked`)
/// stands for every verdict.
fn run_checks(
    unit: &Unit,
    ctx: &mut Ctx<'_>,
    prepared: &Prepared,
    (mut printed, mut probe): (u64, probes::Probe),
    setup_blocked: Option<EntryPoint>,
    emit: &mut dyn Emit,
) -> Result<bool, HarnessFailure> {
    let mut window = phases::Window::open();
    for id in &unit.checks {
        let Some(check) = checks::find(id) else {
            return Err(HarnessFailure::UnknownCheck(id.clone()));
        };
        if check.stage != unit.stage {
            continue;
        }
        if !emit.emit_soon(&Event::Start { check: id.clone() }) {
            return Ok(false);
        }
        let (v, contract) = match setup_blocked {
            Some(ep) => (quarantined_verdict(unit, ep), Contract::default()),
            None => {
                let state = (&mut printed, &mut probe, &mut window);
                let (v, c) = run_check(id, check, ctx, prepared, state);
                let refused = watch::take_blocked();
                (refused.map_or(v, |ep| quarantined_verdict(unit, ep)), c)
            }
        };
        let result = Event::Result {
            check: id.clone(),
            outcome: v.outcome,
            expected: v.expected,
            actual: v.actual,
            detail: v.detail,
            contract,
        };
        if !emit.emit_soon(&result) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchdog_lines_are_events() {
        let mut buf = [0u8; 128];
        for exception in [false, true] {
            let n = crate::watchdog::crashed_in_line("ompd_get_thread_id", exception, &mut buf);
            let line = std::str::from_utf8(&buf[..n]).unwrap();
            assert!(line.ends_with('\n'));
            let e: Event = serde_json::from_str(line.trim_end()).unwrap();
            let entry_point = "ompd_get_thread_id".to_string();
            assert_eq!(
                e,
                Event::CrashedIn {
                    entry_point,
                    exception
                }
            );
        }
        let call = watch::InFlight {
            seq: 1,
            entry_point: EntryPoint::GetCurrTaskHandle,
            elapsed: std::time::Duration::from_millis(3001),
            args: vec![0x1000, 0x2000],
        };
        let line = crate::watchdog::call_hung_line(&call);
        let e: Event = serde_json::from_slice(line.trim_ascii_end()).unwrap();
        let Event::CallHung {
            entry_point,
            call,
            after_ms,
        } = e
        else {
            panic!("{e:?}");
        };
        assert_eq!(entry_point, "ompd_get_curr_task_handle");
        assert!(call.starts_with("ompd_get_curr_task_handle(") && call.contains("0x2000"));
        assert_eq!(after_ms, 3001);
    }
}
