//! How the cost of the thread, parallel and task queries grows with the target's size: for each
//! [`Probe`], runtime states of growing size (one team of 1 → 4,096 threads; nesting depth
//! 1 → 64; a chain of 1 → 10,000 explicit tasks), each timed in a fresh worker
//! ([`crate::timing`]).

use crate::supervisor::{self, Exec};
use crate::timing::{self, Probe};
use crate::worker::{Scenario, Target, Unit};
use ompd_serve::arch::Arch;
use ompd_vendors::Resolved;
use serde::{Deserialize, Serialize};
use sim_target::layout::Policy;
use sim_target::model::{Model, ModelBuilder};

/// The sizes each probe is timed at.
pub const SIZES: [(Probe, &[usize]); 3] = [
    (Probe::Threads, &[1, 4, 16, 64, 256, 1024, 4096]),
    (Probe::Nesting, &[1, 2, 4, 8, 16, 32, 64]),
    (Probe::Tasks, &[1, 10, 100, 1000, 10000]),
];

/// What one probe measured at one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The probe.
    pub probe: Probe,
    /// The target's size: threads in the team, nesting depth, or tasks in the chain.
    pub size: usize,
    /// Median microseconds of one query set.
    pub us: Option<f64>,
    /// Target-access callbacks of one query set.
    pub callbacks: Option<u64>,
    /// Why nothing was measured, when nothing was.
    pub error: Option<String>,
}

/// Every probe at every size of [`SIZES`] on `lib`.
pub fn measure(lib: &Resolved, exec: Exec) -> Vec<Point> {
    SIZES
        .iter()
        .flat_map(|(probe, sizes)| sizes.iter().map(move |n| (*probe, *n)))
        .map(|(probe, size)| point(lib, exec, probe, size))
        .collect()
}

fn point(lib: &Resolved, exec: Exec, probe: Probe, size: usize) -> Point {
    let mut p = Point {
        probe,
        size,
        us: None,
        callbacks: None,
        error: None,
    };
    let model = match model(probe, size) {
        Ok(m) => m,
        Err(e) => {
            p.error = Some(e);
            return p;
        }
    };
    for (path, value) in crate::collect::run_one(&unit(lib, probe, size, model), exec) {
        match path.as_str() {
            timing::US => p.us = value.parse().ok(),
            timing::CALLBACKS => p.callbacks = value.parse().ok(),
            _ => p.error = Some(format!("{path}: {value}")),
        }
    }
    p
}

fn unit(lib: &Resolved, probe: Probe, size: usize, model: Model) -> Unit {
    let target = Target::Simulated {
        scenario: Scenario::model(format!("scaling-{probe:?}-{size}"), model),
        arch: Arch::LP64_LE,
        layout: Policy::Natural,
    };
    Unit {
        timing: Some(probe),
        ..supervisor::unit_of(lib, ompd_checks::Stage::Target, target, Vec::new())
    }
}

/// The runtime state of `size` for `probe`, its last thread the one the probe queries.
pub fn model(probe: Probe, size: usize) -> Result<Model, String> {
    let mut b = ModelBuilder::new();
    let initial = b.initial_thread();
    match probe {
        Probe::Threads => {
            b.parallel(initial, size);
        }
        Probe::Nesting => {
            let mut t = initial;
            for _ in 0..size {
                let r = b.parallel(t, 2);
                t = b.member(r, 1);
            }
        }
        Probe::Tasks => {
            let r = b.parallel(initial, 2);
            let t = b.member(r, 1);
            for _ in 0..size {
                b.explicit_task(t);
            }
        }
    }
    b.build().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_builds_a_valid_model_of_that_size() {
        for (probe, sizes) in SIZES {
            for &n in sizes {
                let m = model(probe, n).unwrap_or_else(|e| panic!("{probe:?} {n}: {e}"));
                let last = m.threads.len() - 1;
                match probe {
                    Probe::Threads => assert_eq!(m.threads.len(), n),
                    Probe::Nesting => assert_eq!(m.level(m.threads[last].region), n),
                    Probe::Tasks => assert_eq!(m.tasks.len(), 1 + 2 + n),
                }
            }
        }
    }
}
