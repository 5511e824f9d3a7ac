//! Where a run's time goes (`cargo xtask bench`'s breakdown): busy time per [`Phase`], summed
//! over the run's threads and worker processes, so that with two jobs the phases add up to
//! about twice the wall time. Workers keep their own tally and send it with their last event
//! ([`crate::worker::Event::Spent`]); the supervisor adds it to the run's. A shrinking step's
//! whole unit counts as shrinking ([`Phase::Shrink`]), not as the phases inside it.

use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A phase of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Drawing the property phase's generated cases.
    Generate,
    /// Lowering a model into a target image in the worker (a zygote's lowering of a built-in
    /// scenario, once per target, counts in [`Phase::Start`]).
    Lower,
    /// Starting a worker process: the fork (or exec) and handing it its unit.
    Start,
    /// Loading the library, its version queries, `ompd_initialize` and
    /// `ompd_process_initialize`.
    Load,
    /// The checks' own work: their calls into the library and their judging of the answers.
    Checks,
    /// The harness's probes around each check (signals, descriptors, threads, heap watch).
    Probes,
    /// The rest of a unit's life as the supervisor saw it: event streaming, the worker's exit.
    Stream,
    /// Shrinking failing generated cases (every unit a shrinking step runs, whole).
    Shrink,
    /// The expectations gate.
    Judge,
    /// Writing the report files.
    Report,
}

impl Phase {
    /// Every phase, in the order a run meets them.
    pub const ALL: [Phase; 10] = [
        Phase::Generate,
        Phase::Lower,
        Phase::Start,
        Phase::Load,
        Phase::Checks,
        Phase::Probes,
        Phase::Stream,
        Phase::Shrink,
        Phase::Judge,
        Phase::Report,
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
            Phase::Stream => "stream",
            Phase::Shrink => "shrink",
            Phase::Judge => "judge",
            Phase::Report => "report",
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
            Phase::Stream => "event streaming and exit",
            Phase::Shrink => "shrinking",
            Phase::Judge => "judging (gate)",
            Phase::Report => "report assembly",
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

/// Runs `f`, adding its time to phase `p`.
pub fn timed<T>(p: Phase, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let v = f();
    add(p, start.elapsed());
    v
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

/// The run's breakdown as written by `run --phases FILE`: wall seconds, then seconds per phase.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Breakdown {
    /// The run's wall time in seconds.
    pub wall_s: f64,
    /// Busy seconds per phase, every phase in order.
    pub phases: Vec<Spent>,
}

/// One phase's time in a [`Breakdown`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Spent {
    /// The phase.
    pub phase: Phase,
    /// The phase in words ([`Phase::describe`]).
    pub what: String,
    /// Busy seconds.
    pub seconds: f64,
}

impl Breakdown {
    /// This process's tally as a breakdown of a run that took `wall`.
    pub fn now(wall: Duration) -> Breakdown {
        let busy = tally();
        Breakdown {
            wall_s: wall.as_secs_f64(),
            phases: Phase::ALL
                .iter()
                .map(|&p| {
                    let ns = busy.iter().find(|(q, _)| *q == p).map_or(0, |x| x.1);
                    Spent {
                        phase: p,
                        what: p.describe().to_string(),
                        seconds: ns as f64 / 1e9,
                    }
                })
                .collect(),
        }
    }
}

/// The breakdowns of several runs (library name, breakdown) as a Markdown table: a row per
/// library, busy seconds per phase, with the share of the busiest phases; then a legend.
pub fn table(runs: &[(String, Breakdown)]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let names: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
    let _ = writeln!(s, "| library | wall s | {} |", names.join(" | "));
    let _ = writeln!(s, "|---|---:|{}", "---:|".repeat(names.len()));
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
        let _ = writeln!(s, "| {lib} | {:.2} | {} |", b.wall_s, cells.join(" | "));
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
