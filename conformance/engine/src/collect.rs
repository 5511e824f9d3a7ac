//! Recording answer snapshots: runs the [`snapshot`](crate::snapshot) probes of a library in
//! fresh workers (every default scenario × [`ARCHS`], natural layout) and gathers the answers.

use crate::snapshot::{Answers, ARCHS, LAYOUT};
use crate::supervisor::Exec;
use crate::worker::{Event, Scenario, Target};
use ompd_vendors::Resolved;
use std::time::Instant;

/// Runs the snapshot units of `lib` (every default scenario × [`ARCHS`], natural layout), each in
/// a fresh worker, and returns the answers. A worker that dies or hangs is an answer too.
pub fn collect(lib: &Resolved, exec: Exec) -> Answers {
    let mut units = Vec::new();
    for s in Scenario::default_set() {
        for a in ARCHS {
            let target = Target::Simulated {
                scenario: s.clone(),
                arch: a,
                layout: LAYOUT,
            };
            let mut u =
                crate::supervisor::unit_of(lib, ompd_checks::Stage::Target, target, Vec::new());
            u.snapshot = true;
            units.push(u);
        }
    }
    let mut results = Answers::default();
    for (u, got) in units
        .iter()
        .zip(crate::parallel::parallel_map(units.len(), 2, |i| {
            run_one(&units[i], exec)
        }))
    {
        let prefix = format!("{}/{}", u.target.scenario_name(), u.target.arch().name());
        for (k, v) in got {
            results.insert(format!("{prefix}/{k}"), v);
        }
    }
    results
}

/// One snapshot unit in a fresh worker: its answers, plus `worker` when it did not end cleanly.
pub(crate) fn run_one(unit: &crate::worker::Unit, exec: Exec) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut child, _capture) = match crate::process::Worker::start(exec.spawn, exec.keep_env, unit)
    {
        Ok(c) => c,
        Err(e) => return vec![("worker".into(), e)],
    };
    let mut rx = child.stream(unit);
    let deadline = Instant::now() + exec.timeout;
    let mut done = false;
    loop {
        if let Some(why) = exec.stop.reason() {
            child.stop();
            out.push(("worker".into(), format!("stopped: {why}")));
            return out;
        }
        let now = Instant::now();
        if now >= deadline {
            child.stop();
            out.push(("worker".into(), "timeout".into()));
            return out;
        }
        match rx.recv_timeout((deadline - now).min(crate::supervisor::STOP_POLL)) {
            Ok(l) => match serde_json::from_str::<Event>(&l) {
                Ok(Event::Answer { path, value }) => out.push((path, value)),
                Ok(Event::LoadFailed { message }) => {
                    out.push(("worker".into(), format!("load failed: {message}")))
                }
                Ok(Event::HarnessFailed { failure }) => {
                    out.push(("worker".into(), format!("harness error: {failure}")))
                }
                Ok(Event::Done) => done = true,
                _ => {}
            },
            Err(crate::process::NoLine::Timeout) => {}
            Err(crate::process::NoLine::Ended) => break,
        }
    }
    let status = child.wait().ok();
    if !done {
        let how = status
            .map(crate::supervisor::describe_exit)
            .unwrap_or_else(|| "worker vanished".into());
        out.push(("worker".into(), format!("ended early: {how}")));
    }
    out
}
