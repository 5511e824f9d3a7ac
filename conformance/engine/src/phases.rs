//! Where a run's time goes (`cargo xtask bench`'s breakdown): processor time per [`Phase`],
//! summed over the run's threads and worker processes (the CPU time of the thread that ran the
//! phase, so a busy machine's waiting is in none of them). Workers keep their own tally and send
//! it with their last event ([`crate::worker::Event::Spent`]), with what the worker process
//! spent outside its phases ([`Phase::Worker`], from its own resource usage); the supervisor adds
//! it to the run's. The phases of a shrinking step's units count as shrinking
//! ([`Phase::Shrink`]). The rest of the run's processor time, once its zygotes are reaped (the
//! kernel forking and tearing down workers, the zygotes, planning), is [`Phase::Other`], so the
//! phases add up to the run's processor time.

use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A phase of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Drawing the property phase's generated cases.
    Generate,
    /// Preparing the unit's target in the worker: lowering a model into an image (a zygote's
    /// lowering of a built-in scenario, once per target, is the zygote's and not counted), or
    /// opening a real target.
    Lower,
    /// The supervisor starting a worker process: its descriptors and the request to the zygote
    /// (or the exec).
    Start,
    /// Loading the library, its version queries, `ompd_initialize` and
    /// `ompd_process_initialize`.
    Load,
    /// The checks' own work: their calls into the library and their judging of the answers.
    Checks,
    /// The harness's probes around each check (signals, descriptors, threads, heap watch).
    Probes,
    /// A worker process's time outside its phases: its start after the fork, reading its unit,
    /// writing its events.
    Worker,
    /// The supervisor's handling of a unit's events (results, records) besides starting it.
    Supervise,
    /// Shrinking failing generated cases (every phase of the units a shrinking step runs; their
    /// workers' creation and teardown are in [`Phase::Other`]).
    Shrink,
    /// The expectations gate.
    Judge,
    /// Writing the report files.
    Report,
    /// The rest of the run's processor time: the kernel forking and tearing down workers, the
    /// zygotes, the workers' exit, the supervisor's planning (the run's whole processor time,
    /// its own and its reaped children's, less every phase above).
    Other,
}

impl Phase {
    /// Every phase, in the order a run meets them.
    pub const ALL: [Phase; 12] = [
        Phase::Generate,
        Phase::Lower,
        Phase::Start,
        Phase::Load,
        Phase::Checks,
        Phase::Probes,
        Phase::Worker,
        Phase::Supervise,
        Phase::Shrink,
        Phase::Judge,
        Phase::Report,
        Phase::Other,
    ];

    /// The phase's short name (as serialized).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Generate => "generate",
            Phase::Lower => "lower",
            Phase::Start => "start",
            Phase::Load => "load",
            Phase::Checks => "checks",
            Phase::Probes => "probes",
            Phase::Worker => "worker",
            Phase::Supervise => "supervise",
            Phase::Shrink => "shrink",
            Phase::Judge => "judge",
            Phase::Report => "report",
            Phase::Other => "other",
        }
    }

    /// The phase in words, for the bench's table.
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Generate => "model generation",
            Phase::Lower => "lowering",
            Phase::Start => "process start",
            Phase::Load => "library load and initialize",
            Phase::Checks => "check execution",
            Phase::Probes => "harness probes",
            Phase::Worker => "worker process outside its phases (start, unit, events)",
            Phase::Supervise => "supervisor handling a unit's events",
            Phase::Shrink => "shrinking",
            Phase::Judge => "judging (gate)",
            Phase::Report => "report assembly",
            Phase::Other => "process creation and teardown, zygotes, planning (the rest)",
        }
    }
}

/// Nanoseconds per phase in this process.
static TALLY: [AtomicU64; Phase::ALL.len()] = [const { AtomicU64::new(0) }; Phase::ALL.len()];

thread_local! {
    /// Set while this thread runs a shrinking step: its time is the step's.
    static SHRINKING: Cell<bool> = const { Cell::new(false) };
}

/// Adds `d` to phase `p` (to [`Phase::Shrink`] instead inside [`shrinking`]).
pub fn add(p: Phase, d: Duration) {
    let p = if SHRINKING.with(Cell::get) {
        Phase::Shrink
    } else {
        p
    };
    let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    TALLY[p as usize].fetch_add(ns, Ordering::Relaxed);
}

/// The processor time this thread has used.
pub fn thread_cpu() -> Duration {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
}

/// The processor time (user and system) this process has used.
pub fn process_cpu() -> Duration {
    usage(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

/// The processor time (user and system) of `who`.
fn usage(who: nix::sys::resource::UsageWho) -> Duration {
    let micros = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec().max(0) as u64)
            + Duration::from_micros(t.tv_usec().max(0) as u64)
    };
    nix::sys::resource::getrusage(who).map_or(Duration::ZERO, |u| {
        micros(u.user_time()) + micros(u.system_time())
    })
}

/// Runs `f`, adding the processor time this thread spent in it to phase `p`.
pub fn timed<T>(p: Phase, f: impl FnOnce() -> T) -> T {
    let start = thread_cpu();
    let v = f();
    add(p, thread_cpu().saturating_sub(start));
    v
}

/// A stretch of this thread's work whose processor time is read twice, at its start and at its
/// end, and shared among the phases of its [`Laps`] in proportion to their wall time. A reading
/// of the thread's processor time is a system call, and a worker laps three times around every
/// check; the laps read the monotonic clock instead (no system call). On a thread that runs
/// alone, wall and processor time agree; on a busy machine each lap's share of the waiting is
/// its share of the stretch. Its phases are added when it is dropped.
pub struct Window {
    cpu: Duration,
    wall: std::time::Instant,
    /// Wall nanoseconds lapped per phase.
    lapped: [u64; Phase::ALL.len()],
}

impl Window {
    /// Opens a window now.
    pub fn open() -> Window {
        Window {
            cpu: thread_cpu(),
            wall: std::time::Instant::now(),
            lapped: [0; Phase::ALL.len()],
        }
    }

    /// Starts laps now, in this window.
    pub fn laps(&mut self) -> Laps<'_> {
        Laps {
            at: std::time::Instant::now(),
            window: self,
        }
    }

    /// Each phase's share of `cpu`, the processor time of a window `wall` long.
    fn shares(
        &self,
        cpu: Duration,
        wall: Duration,
    ) -> impl Iterator<Item = (Phase, Duration)> + '_ {
        let (cpu, wall) = (cpu.as_nanos(), wall.as_nanos().max(1));
        Phase::ALL.into_iter().filter_map(move |p| {
            let ns = u128::from(self.lapped[p as usize]);
            let share = (ns.min(wall) * cpu / wall).min(u128::from(u64::MAX)) as u64;
            (share > 0).then(|| (p, Duration::from_nanos(share)))
        })
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        let (cpu, wall) = (thread_cpu().saturating_sub(self.cpu), self.wall.elapsed());
        let shares: Vec<_> = self.shares(cpu, wall).collect();
        for (p, d) in shares {
            add(p, d);
        }
    }
}

/// Phases that follow one another on this thread, in a [`Window`]: one reading of the
/// monotonic clock at each boundary.
pub struct Laps<'w> {
    at: std::time::Instant,
    window: &'w mut Window,
}

impl Laps<'_> {
    /// Ends the lap now, counting its time to phase `p`; the next lap starts here.
    pub fn lap(&mut self, p: Phase) {
        let now = std::time::Instant::now();
        let ns = u64::try_from(now.duration_since(self.at).as_nanos()).unwrap_or(u64::MAX);
        let slot = &mut self.window.lapped[p as usize];
        *slot = slot.saturating_add(ns);
        self.at = now;
    }
}

/// What [`worker_tally`] has sent so far: nanoseconds per phase, then the process's own.
static SENT: [AtomicU64; Phase::ALL.len() + 1] =
    [const { AtomicU64::new(0) }; Phase::ALL.len() + 1];

/// A worker's tally to send ([`crate::worker::Event::Spent`]) after each of its units: what its
/// phases and the process besides them ([`Phase::Worker`]) used since the last one it sent.
pub fn worker_tally() -> Vec<(Phase, u64)> {
    let since = |i: usize, now: u64| now.saturating_sub(SENT[i].swap(now, Ordering::Relaxed));
    let mut t: Vec<(Phase, u64)> = Phase::ALL
        .iter()
        .map(|&p| {
            (
                p,
                since(p as usize, TALLY[p as usize].load(Ordering::Relaxed)),
            )
        })
        .filter(|(_, ns)| *ns > 0)
        .collect();
    let phases: u64 = t.iter().map(|(_, ns)| ns).sum();
    let all = u64::try_from(process_cpu().as_nanos()).unwrap_or(u64::MAX);
    let all = since(Phase::ALL.len(), all);
    t.push((Phase::Worker, all.saturating_sub(phases)));
    t
}

/// Runs `f` as a shrinking step: everything it adds counts as shrinking.
pub fn shrinking<T>(f: impl FnOnce() -> T) -> T {
    let was = SHRINKING.with(|s| s.replace(true));
    let v = f();
    SHRINKING.with(|s| s.set(was));
    v
}

/// This process's tally: nanoseconds per phase, the phases with time only.
pub fn tally() -> Vec<(Phase, u64)> {
    Phase::ALL
        .iter()
        .map(|&p| (p, TALLY[p as usize].load(Ordering::Relaxed)))
        .filter(|(_, ns)| *ns > 0)
        .collect()
}

/// Adds a worker's tally to this process's (shrinking steps' to [`Phase::Shrink`]).
pub fn absorb(spent: &[(Phase, u64)]) {
    for &(p, ns) in spent {
        add(p, Duration::from_nanos(ns));
    }
}

/// The run's breakdown as written by `run --phases FILE`: wall seconds, processor seconds, then
/// processor seconds per phase.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Breakdown {
    /// The run's wall time in seconds.
    pub wall_s: f64,
    /// The run's processor seconds: its own and its reaped children's (zygotes and the workers
    /// they reaped), once the zygotes are released.
    pub cpu_s: f64,
    /// Processor seconds per phase, every phase in order.
    pub phases: Vec<Spent>,
}

/// One phase's time in a [`Breakdown`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Spent {
    /// The phase.
    pub phase: Phase,
    /// The phase in words ([`Phase::describe`]).
    pub what: String,
    /// Processor seconds.
    pub seconds: f64,
}

impl Breakdown {
    /// This process's tally as a breakdown of a run that took `wall` (call it once the run's
    /// children are reaped).
    pub fn now(wall: Duration) -> Breakdown {
        let busy = tally();
        let cpu = process_cpu() + usage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN);
        let tallied: u64 = busy.iter().map(|(_, ns)| ns).sum();
        let cpu_ns = u64::try_from(cpu.as_nanos()).unwrap_or(u64::MAX);
        let seconds = |p: Phase| match p {
            Phase::Other => cpu_ns.saturating_sub(tallied),
            p => busy.iter().find(|(q, _)| *q == p).map_or(0, |x| x.1),
        } as f64
            / 1e9;
        Breakdown {
            wall_s: wall.as_secs_f64(),
            cpu_s: cpu.as_secs_f64(),
            phases: Phase::ALL
                .iter()
                .map(|&p| Spent {
                    phase: p,
                    what: p.describe().to_string(),
                    seconds: seconds(p),
                })
                .collect(),
        }
    }
}

/// The breakdowns of several runs (library name, breakdown) as a Markdown table: a row per
/// library, processor seconds per phase with its share; then a legend.
pub fn table(runs: &[(String, Breakdown)]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let names: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
    let _ = writeln!(s, "| library | wall s | cpu s | {} |", names.join(" | "));
    let _ = writeln!(s, "|---|---:|---:|{}", "---:|".repeat(names.len()));
    for (lib, b) in runs {
        let total: f64 = b.phases.iter().map(|p| p.seconds).sum();
        let cells: Vec<String> = b
            .phases
            .iter()
            .map(|p| {
                let share = 100.0 * p.seconds / total.max(f64::MIN_POSITIVE);
                format!("{:.2} ({share:.0} %)", p.seconds)
            })
            .collect();
        let row = cells.join(" | ");
        let _ = writeln!(s, "| {lib} | {:.2} | {:.2} | {row} |", b.wall_s, b.cpu_s);
    }
    let _ = writeln!(s);
    for p in Phase::ALL {
        let _ = writeln!(s, "- `{}`: {}", p.name(), p.describe());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_shares_its_processor_time_among_its_laps_by_wall_time() {
        let mut w = Window::open();
        w.lapped[Phase::Checks as usize] = 300;
        w.lapped[Phase::Probes as usize] = 100;
        let cpu = Duration::from_nanos(500);
        let shares: Vec<_> = w.shares(cpu, Duration::from_nanos(1000)).collect();
        assert_eq!(
            shares,
            [
                (Phase::Checks, Duration::from_nanos(150)),
                (Phase::Probes, Duration::from_nanos(50))
            ]
        );
        let whole: Vec<_> = w.shares(cpu, Duration::from_nanos(400)).collect();
        let sum: Duration = whole.iter().map(|(_, d)| *d).sum();
        assert_eq!(sum, cpu, "laps that fill the window share all of it");
        let before = TALLY[Phase::Checks as usize].load(Ordering::Relaxed);
        let mut w = Window::open();
        let mut laps = w.laps();
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(2) {}
        laps.lap(Phase::Checks);
        drop(w);
        let after = TALLY[Phase::Checks as usize].load(Ordering::Relaxed);
        assert!(after > before, "a dropped window adds its laps");
    }

    #[test]
    fn time_goes_to_its_phase_and_a_shrinking_step_takes_all_of_its_own() {
        let before = |p: Phase| TALLY[p as usize].load(Ordering::Relaxed);
        let (judge, shrink) = (before(Phase::Judge), before(Phase::Shrink));
        add(Phase::Judge, Duration::from_nanos(5));
        assert!(before(Phase::Judge) >= judge + 5);
        shrinking(|| absorb(&[(Phase::Checks, 7), (Phase::Lower, 3)]));
        assert!(before(Phase::Shrink) >= shrink + 10);
        let text = serde_json::to_string(&Breakdown::now(Duration::from_secs(1))).unwrap();
        assert!(text.contains("\"shrink\""), "{text}");
        let b: Breakdown = serde_json::from_str(&text).unwrap();
        let md = table(&[("lib".into(), b)]);
        for p in Phase::ALL {
            assert!(
                text.contains(&format!("\"{}\"", p.name())),
                "{p:?} is named as serialized"
            );
            assert!(md.contains(p.describe()));
        }
    }
}
