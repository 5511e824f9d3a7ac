//! The OMPT view of a fixture's threads: tool data and frames for the lifted model (its ancestor
//! levels read as the generating chain, or as LLVM's scheduling-then-generating chain, whichever
//! every thread agrees on), cross-checked against the OpenMP API view.

use super::lift::Omp;
use fixture_protocol::truth::Ompt;
use ompd_checks::known::{Fact, Known};
use sim_target::model::{Model, TaskId};
use std::collections::BTreeMap;

/// Cross-checks the two first-party views: a thread running user code recorded its OMPT state
/// at the same point, so the OMPT state must be the one its role implies. `Err` says where they
/// disagree (the states are then not known).
pub(super) fn cross_check_states(
    model: &Model,
    order: &[usize],
    omp: &Omp,
    ompt: &Ompt,
) -> Result<(), String> {
    for (k, &i) in order.iter().enumerate() {
        let (t, _) = omp[i];
        if t.role.blocks_in_runtime() {
            continue;
        }
        if let Some(view) = ompt.threads.iter().find(|v| v.tid == t.tid) {
            if view.state != model.threads[k].state {
                return Err(format!(
                    "the OMPT view disagrees with the fixture: thread {} is {:?} but OMPT \
                     reports state {:#x}",
                    t.tid, t.role, view.state
                ));
            }
        }
    }
    Ok(())
}

/// Fills the model's tool data and frames from the OMPT view (`None`: the tool was not active)
/// and says in `known` whether they are known. `blocked`: a thread waits in the runtime.
pub(super) fn tool_data_and_frames(
    model: &mut Model,
    order: &[usize],
    omp: &Omp,
    ompt: Option<&Ompt>,
    blocked: bool,
    known: &mut Known,
) {
    let Some(ompt) = ompt else {
        let why = "the OMPT truth tool was not active in the fixture";
        known.missing(Fact::ToolData, why);
        known.missing(Fact::Frames, why);
        return;
    };
    // OMPT's ancestor levels are the generating chain in the specification; LLVM-family
    // runtimes walk the scheduling chain instead. Either reading that agrees across every
    // thread identifies each observation's task.
    let mut tried = Vec::new();
    for (name, chain) in [
        (
            "generating",
            Model::generating_chain as fn(&Model, TaskId) -> Vec<TaskId>,
        ),
        ("scheduling", scheduling_then_generating),
    ] {
        let mut m = model.clone();
        match ompt_facts(&mut m, order, omp, ompt, !blocked, chain) {
            Ok(frames) => {
                *model = m;
                known.insert(Fact::ToolData);
                match frames {
                    Ok(()) => known.insert(Fact::Frames),
                    Err(why) => known.missing(Fact::Frames, why),
                }
                return;
            }
            Err(e) => tried.push(format!("as the {name} chain: {e}")),
        }
    }
    let why = format!("the OMPT record is inconsistent {}", tried.join("; "));
    known.missing(Fact::ToolData, why.clone());
    known.missing(Fact::Frames, why);
}

/// A task's ancestors as LLVM-family runtimes report them through OMPT: the scheduling parent
/// where there is one (an explicit task), else the generating task (the encountering task of an
/// implicit task).
fn scheduling_then_generating(m: &Model, t: TaskId) -> Vec<TaskId> {
    let mut out = vec![t];
    let mut cur = t;
    while let Some(next) = m.tasks[cur.0].scheduling.or(m.tasks[cur.0].generating) {
        if out.contains(&next) {
            break;
        }
        out.push(next);
        cur = next;
    }
    out
}

/// Tool data and frames from the OMPT view: each thread's ancestor levels are its region chain
/// and its current task's generating chain. Tool data seen differently from two threads makes
/// the record unusable (`Err`). Frames are taken only when every observation of a task agrees
/// and `frames` is true (no thread entered the runtime after recording, which moves its task's
/// enter frame); the answer says whether they were taken, or why not.
fn ompt_facts(
    model: &mut Model,
    order: &[usize],
    omp: &Omp,
    ompt: &Ompt,
    frames: bool,
    chain: fn(&Model, TaskId) -> Vec<TaskId>,
) -> Result<Result<(), String>, String> {
    let mut region_data: BTreeMap<usize, u64> = BTreeMap::new();
    let mut task_data: BTreeMap<usize, u64> = BTreeMap::new();
    let mut task_frames: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    let mut frames_ok: Result<(), String> = if frames {
        Ok(())
    } else {
        Err("a thread waiting in the runtime entered it after its OMPT record, which moved its task's enter frame".into())
    };
    for (k, &i) in order.iter().enumerate() {
        let (t, _) = omp[i];
        let Some(view) = ompt.threads.iter().find(|v| v.tid == t.tid) else {
            return Err(format!("thread {} has no OMPT record", t.tid));
        };
        model.threads[k].tool_data = view.thread_data;
        let regions = model.region_chain(model.threads[k].region);
        for (level, p) in view.parallel.iter().enumerate() {
            let Some(r) = regions.get(level) else { break };
            if *region_data.entry(r.0).or_insert(p.data) != p.data {
                return Err(format!("region {} has two parallel data values", r.0));
            }
        }
        let tasks = chain(model, model.threads[k].current_task);
        for (level, x) in view.tasks.iter().enumerate() {
            let Some(task) = tasks.get(level) else { break };
            if *task_data.entry(task.0).or_insert(x.data) != x.data {
                return Err(format!("task {} has two task data values", task.0));
            }
            let f = (x.exit_frame, x.enter_frame);
            if frames_ok.is_ok() && *task_frames.entry(task.0).or_insert(f) != f {
                frames_ok = Err(format!(
                    "task {} was seen with two frames (threads recorded at different moments)",
                    task.0
                ));
            }
        }
    }
    // Every task and region gets its data from an observation, or the record does not cover
    // what the checks judge.
    if let Some(t) = (0..model.tasks.len()).find(|t| !task_data.contains_key(t)) {
        return Err(format!("task {t} is on no thread's ancestor chain"));
    }
    if let Some(r) = (0..model.regions.len()).find(|r| !region_data.contains_key(r)) {
        return Err(format!("region {r} is on no thread's ancestor chain"));
    }
    for (r, d) in region_data {
        model.regions[r].tool_data = d;
    }
    for (t, d) in task_data {
        model.tasks[t].tool_data = d;
    }
    if frames_ok.is_ok() {
        for (t, (exit, enter)) in task_frames {
            model.tasks[t].exit_frame = exit;
            model.tasks[t].enter_frame = enter;
        }
    }
    Ok(frames_ok)
}
