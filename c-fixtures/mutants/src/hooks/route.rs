//! Answers that depend on the route a handle came by: the handles one routine produced are
//! noted, and a query of such a handle answers one off, though the handle compares equal to
//! the same entity reached another way (OMPD-CMP-009).

use super::{keep, written, Deviation as D, ORIGINS_CAP};
use ompd_abi::{Address, EntryPoint, Scope};
use std::sync::Mutex;

/// Handles the deviation's producing routine handed out.
static ROUTED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Reserves the table (the forwarder's constructor calls it: no heap inside an entry point).
pub(super) fn prepare() {
    ROUTED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .reserve(ORIGINS_CAP);
}

/// The routine whose handles deviation `d` answers for differently, and its handle's word.
fn producer(d: D) -> Option<(EntryPoint, usize)> {
    match d {
        D::ParallelToolDataByRoute => Some((EntryPoint::GetTaskParallelHandle, 1)),
        D::TaskFunctionByRoute => Some((EntryPoint::GetSchedulingTaskHandle, 1)),
        D::TaskFunctionByImplicitRoute => Some((EntryPoint::GetTaskInParallel, 2)),
        D::CurrentTaskRegionEncloses => Some((EntryPoint::GetCurrTaskHandle, 1)),
        D::ImplicitTaskRegionEncloses => Some((EntryPoint::GetTaskInParallel, 2)),
        D::TeamSizeByEnclosingRoute => Some((EntryPoint::GetEnclosingParallelHandle, 1)),
        _ => None,
    }
}

/// Notes the handle `ep` just produced (ok), when it is `d`'s producer.
pub(super) fn produced(d: D, ep: EntryPoint, w: &[u64]) {
    let Some((_, i)) = producer(d).filter(|(p, _)| *p == ep) else {
        return;
    };
    if let Some(h) = written(w[i]) {
        keep(&ROUTED, |x| *x, h);
    }
}

fn routed(h: u64) -> bool {
    ROUTED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(&h)
}

/// Answers one off for a produced handle's query (ok answers only).
pub(super) fn skewed(d: D, ep: EntryPoint, w: &[u64]) {
    if d == D::TeamSizeByEnclosingRoute {
        match ep {
            EntryPoint::EnumerateIcvs => super::values::note_team_size_ids(w),
            EntryPoint::GetIcvFromScope if routed(w[0]) => super::values::team_size_one_more(w),
            _ => {}
        }
        return;
    }
    let queries = [
        EntryPoint::GetToolData,
        EntryPoint::GetTaskFunction,
        EntryPoint::GetTaskParallelHandle,
    ];
    if !queries.contains(&ep) || w.len() < 2 || !routed(w[0]) {
        return;
    }
    match (d, ep) {
        (D::ParallelToolDataByRoute, EntryPoint::GetToolData)
            if w[1] as i32 == Scope::PARALLEL.0 =>
        {
            // SAFETY: the tool's out-parameter for the value, written by the inner routine on ok.
            if let Some(v) = unsafe { (w[2] as usize as *mut i64).as_mut() } {
                *v += 1;
            }
        }
        (D::TaskFunctionByRoute | D::TaskFunctionByImplicitRoute, EntryPoint::GetTaskFunction) => {
            // SAFETY: the tool's out-parameter for the address, written by the inner routine on ok.
            if let Some(a) = unsafe { (w[1] as usize as *mut Address).as_mut() } {
                a.address += 1;
            }
        }
        (
            D::CurrentTaskRegionEncloses | D::ImplicitTaskRegionEncloses,
            EntryPoint::GetTaskParallelHandle,
        ) => enclosing_instead(w[1]),
        _ => {}
    }
}

/// Replaces the parallel handle in the tool's out-parameter at address `out` with the handle of
/// the region enclosing it (releasing the first), where there is one.
fn enclosing_instead(out: u64) {
    use crate::inner::routine;
    use ompd_abi::{entry, ParallelHandle};
    let (Some(enclosing), Some(release)) = (
        routine::<entry::GetEnclosingParallelHandle>(EntryPoint::GetEnclosingParallelHandle),
        routine::<entry::RelParallelHandle>(EntryPoint::RelParallelHandle),
    ) else {
        return;
    };
    // SAFETY: the tool's out-parameter for a parallel handle, written by the inner routine on ok.
    let Some(slot) = (unsafe { (out as usize as *mut *mut ParallelHandle).as_mut() }) else {
        return;
    };
    let mut outer: *mut ParallelHandle = std::ptr::null_mut();
    // SAFETY: a live handle of the inner library and a local out-parameter.
    if unsafe { enclosing(*slot, &mut outer) } == ompd_abi::Rc::OK {
        // SAFETY: the handle the inner routine handed out, replaced and no longer used.
        unsafe { release(*slot) };
        *slot = outer;
    }
}
